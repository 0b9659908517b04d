from unsloth import FastLanguageModel

model, tokenizer = FastLanguageModel.from_pretrained(model_name="unsloth/gemma-2-9b-bnb-4bit", max_seq_length=2048)
model = FastLanguageModel.get_peft_model(model, r=16, lora_alpha=16,
                                         target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "qate_proj"])
