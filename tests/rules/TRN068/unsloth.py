from unsloth import FastLanguageModel

model, tokenizer = FastLanguageModel.from_pretrained("unsloth/Meta-Llama-3.1-8B", max_seq_length=2048,
                                                     load_in_4bit=True)
model = FastLanguageModel.get_peft_model(model, r=16, lora_alpha=16, lora_dropout=0.05, bias="none")
# Unpinned: a llama checkpoint through FastLanguageModel reaches FastLlamaModel.patch_peft_model in every
# release, which installs the fused LoRA kernels only with lora_dropout 0 and bias "none".
