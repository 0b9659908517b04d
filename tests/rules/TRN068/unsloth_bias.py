from unsloth import FastLanguageModel

model, tokenizer = FastLanguageModel.from_pretrained("mistralai/Mistral-7B-v0.1", max_seq_length=2048)
model = FastLanguageModel.get_peft_model(model, r=16, lora_alpha=16, bias="lora_only")
