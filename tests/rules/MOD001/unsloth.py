# Phi-3 fuses q/k/v into qkv_proj and gate/up into gate_up_proj
from unsloth import FastLanguageModel

model, tokenizer = FastLanguageModel.from_pretrained(model_name="microsoft/Phi-3-mini-4k-instruct", max_seq_length=2048)
model = FastLanguageModel.get_peft_model(model, r=16, lora_alpha=16, target_modules=["q_proj", "v_proj"])
