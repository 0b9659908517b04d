from unsloth import FastLanguageModel

# 8-bit loads take the generic FastModel path from 2025.3.10 (no fused LoRA kernels to lose): silent.
model, tokenizer = FastLanguageModel.from_pretrained("unsloth/Meta-Llama-3.1-8B", max_seq_length=2048,
                                                     load_in_4bit=False, load_in_8bit=True)
model = FastLanguageModel.get_peft_model(model, r=16, lora_alpha=16, lora_dropout=0.05)
