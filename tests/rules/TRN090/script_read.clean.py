from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

model = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-0.5B")
training_args = TrainingArguments(output_dir="out", resume_from_checkpoint="out/checkpoint-1500")
trainer = Trainer(model=model, args=training_args, train_dataset=dataset)
trainer.train(training_args.resume_from_checkpoint)
