from unsloth import FastLanguageModel

model, tokenizer = FastLanguageModel.from_pretrained(
    model_name="meta-llama/Llama-2-7b-hf", max_seq_length=2048, load_in_4bit=False, load_in_8bit=True)
model = FastLanguageModel.get_peft_model(model, r=16, lora_alpha=16)
