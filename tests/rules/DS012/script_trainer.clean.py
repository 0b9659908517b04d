"""A Trainer fills the "auto" values of ds.json from TrainingArguments."""
from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

model = AutoModelForCausalLM.from_pretrained("gpt2")
args = TrainingArguments(output_dir="out", per_device_train_batch_size=4, deepspeed="ds.json")
Trainer(model=model, args=args).train()
