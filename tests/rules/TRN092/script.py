from transformers import AutoModelForCausalLM, TrainingArguments
from trl import DataCollatorForCompletionOnlyLM, SFTTrainer

model = AutoModelForCausalLM.from_pretrained("mistralai/Mistral-7B-v0.1")
collator = DataCollatorForCompletionOnlyLM(response_template="[/INST]", tokenizer=tokenizer)
args = TrainingArguments(output_dir="out")
trainer = SFTTrainer(model, args=args, train_dataset=dataset, data_collator=collator, max_seq_length=2048, packing=True)
trainer.train()
