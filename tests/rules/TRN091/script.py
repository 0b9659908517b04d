from transformers import AutoModelForCausalLM, AutoTokenizer, Trainer, TrainingArguments

tokenizer = AutoTokenizer.from_pretrained("Qwen/Qwen2.5-0.5B")
model = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-0.5B")
data = raw.map(lambda batch: tokenizer(batch["text"], truncation=True, max_length=1024), batched=True)
args = TrainingArguments(output_dir="out", eval_strategy="steps", eval_steps=100)
trainer = Trainer(model=model, args=args, train_dataset=data["train"], eval_dataset=data["test"],
                  compute_metrics=compute_metrics)
trainer.train()
