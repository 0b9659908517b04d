# Phi-3 targets its fused qkv_proj
from unsloth import FastLanguageModel

model, tokenizer = FastLanguageModel.from_pretrained(model_name="microsoft/Phi-3-mini-4k-instruct", max_seq_length=2048)
model = FastLanguageModel.get_peft_model(model, r=16, lora_alpha=16, target_modules=["qkv_proj", "o_proj"])
