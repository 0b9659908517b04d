from unsloth import FastLanguageModel

model, tokenizer = FastLanguageModel.from_pretrained("Qwen/Qwen2.5-3B-Instruct", max_seq_length=2048, load_in_4bit=True)
model = FastLanguageModel.get_peft_model(model, r=16, lora_alpha=16, init_lora_weights="loftq",
                                         loftq_config={"loftq_bits": 4, "loftq_iter": 1})
