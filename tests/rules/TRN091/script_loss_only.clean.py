from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

model = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-0.5B")
args = TrainingArguments(output_dir="out", eval_strategy="steps", prediction_loss_only=True)
trainer = Trainer(model=model, args=args, train_dataset=train, eval_dataset=valid, compute_metrics=compute_metrics)
trainer.train()
