from unsloth import FastLanguageModel
from trl import SFTConfig, SFTTrainer

model, tokenizer = FastLanguageModel.from_pretrained("unsloth/Meta-Llama-3.1-8B-bnb-4bit", max_seq_length=2048,
                                                     load_in_4bit=True)
model = FastLanguageModel.get_peft_model(model, r=16, lora_alpha=16)
trainer = SFTTrainer(model=model, tokenizer=tokenizer, train_dataset=None,
                     args=SFTConfig(per_device_train_batch_size=2, output_dir="outputs"))
trainer.train()
model.save_pretrained_merged("merged", tokenizer, save_method="merged_4bit")
