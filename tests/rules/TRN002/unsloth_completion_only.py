# Unsloth SFT script: pad id set to the EOS id, and TRL's completion-only collator (TRL < 0.20)
from trl import DataCollatorForCompletionOnlyLM, SFTConfig, SFTTrainer
from unsloth import FastLanguageModel

model, tokenizer = FastLanguageModel.from_pretrained("unsloth/mistral-7b-v0.3-bnb-4bit", max_seq_length=2048)
model = FastLanguageModel.get_peft_model(model, r=16)
tokenizer.pad_token_id = tokenizer.eos_token_id

collator = DataCollatorForCompletionOnlyLM("### Response:", tokenizer=tokenizer)
trainer = SFTTrainer(model=model, tokenizer=tokenizer, data_collator=collator,
                     args=SFTConfig(per_device_train_batch_size=2, output_dir="outputs"))
trainer.train()
