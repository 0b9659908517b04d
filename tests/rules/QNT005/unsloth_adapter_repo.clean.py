# a local folder may hold a saved LoRA adapter, which Unsloth loads as a trainable PeftModel
from unsloth import FastLanguageModel
from trl import SFTConfig, SFTTrainer

model, tokenizer = FastLanguageModel.from_pretrained("lora_model", load_in_4bit=True)
trainer = SFTTrainer(model=model, tokenizer=tokenizer, args=SFTConfig(output_dir="outputs"))
