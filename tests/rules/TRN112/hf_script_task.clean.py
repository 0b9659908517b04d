from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

model = AutoModelForCausalLM.from_pretrained("mistralai/Mistral-7B-v0.1")
peft_config = LoraConfig(task_type="CAUSAL_LM", r=16)
model = get_peft_model(model, peft_config)
args = TrainingArguments(output_dir="out", per_device_train_batch_size=4, remove_unused_columns=False, eval_strategy="steps", save_strategy="steps", load_best_model_at_end=True)
trainer = Trainer(model=model, args=args, train_dataset=train_data, eval_dataset=eval_data)
trainer.train()
