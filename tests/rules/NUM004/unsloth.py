from trl import SFTConfig, SFTTrainer
from unsloth import FastLanguageModel

model, tokenizer = FastLanguageModel.from_pretrained(model_name="unsloth/gemma-7b-bnb-4bit", max_seq_length=2048)
model = FastLanguageModel.get_peft_model(
    model, r=16, lora_alpha=16,
    target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "embed_tokens", "lm_head"])

trainer = SFTTrainer(model=model, tokenizer=tokenizer, args=SFTConfig(output_dir="outputs"))
trainer.train()
