from peft import LoraConfig, get_peft_model
from transformers import AutoModelForSequenceClassification, Trainer, TrainingArguments

model = AutoModelForSequenceClassification.from_pretrained("FacebookAI/roberta-large")
peft_config = LoraConfig(task_type="SEQ_CLS", r=8)
model = get_peft_model(model, peft_config)
args = TrainingArguments(output_dir="out", per_device_train_batch_size=4, eval_strategy="epoch")
trainer = Trainer(model=model, args=args, train_dataset=train_data, eval_dataset=eval_data)
trainer.train()
