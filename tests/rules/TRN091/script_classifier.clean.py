from transformers import AutoModelForSequenceClassification, Trainer, TrainingArguments

model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased", num_labels=2)
args = TrainingArguments(output_dir="out", eval_strategy="epoch")
trainer = Trainer(model=model, args=args, train_dataset=train, eval_dataset=valid, compute_metrics=compute_metrics)
trainer.train()
