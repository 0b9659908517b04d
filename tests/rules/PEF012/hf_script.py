from peft import AdaLoraConfig, get_peft_model
from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

model = AutoModelForCausalLM.from_pretrained("01-ai/Yi-6B")
peft_config = AdaLoraConfig(task_type="CAUSAL_LM", init_r=24, target_r=4, tinit=5, tfinal=2, deltaT=1, total_step=20, target_modules=["q_proj", "v_proj"])
model = get_peft_model(model, peft_config)
args = TrainingArguments(output_dir="out", per_device_train_batch_size=4, max_steps=20)
trainer = Trainer(model=model, args=args, train_dataset=train_data, eval_dataset=eval_data)
trainer.train()
