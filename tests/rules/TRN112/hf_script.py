from peft import LoraConfig, get_peft_model
from transformers import AutoModelForImageClassification, Trainer, TrainingArguments

model = AutoModelForImageClassification.from_pretrained("google/vit-base-patch16-224-in21k")
peft_config = LoraConfig(r=16, lora_alpha=16, target_modules=["query", "value"], modules_to_save=["classifier"])
model = get_peft_model(model, peft_config)
args = TrainingArguments(output_dir="out", per_device_train_batch_size=4, remove_unused_columns=False, eval_strategy="steps", save_strategy="steps", load_best_model_at_end=True, metric_for_best_model="loss")
trainer = Trainer(model=model, args=args, train_dataset=train_data, eval_dataset=eval_data)
trainer.train()
