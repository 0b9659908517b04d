from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

model = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-0.5B")
args = TrainingArguments(output_dir="out", eval_strategy="steps", eval_steps=100)
trainer = Trainer(model=model, args=args, train_dataset=train, eval_dataset=valid, compute_metrics=compute_metrics,
                  preprocess_logits_for_metrics=lambda logits, labels: logits.argmax(-1))
trainer.train()
