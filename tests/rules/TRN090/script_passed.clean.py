from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

model = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-0.5B")
args = TrainingArguments(output_dir="out", save_steps=500, resume_from_checkpoint="out/checkpoint-1500")
trainer = Trainer(model=model, args=args, train_dataset=dataset)
trainer.train(resume_from_checkpoint="out/checkpoint-1500")
