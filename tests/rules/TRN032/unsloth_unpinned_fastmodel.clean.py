from unsloth import FastModel

model, tokenizer = FastModel.from_pretrained("unsloth/llama-3-8b", max_seq_length=2048, load_in_4bit=True)
model = FastModel.get_peft_model(model, r=16, lora_alpha=16, init_lora_weights="loftq",
                                         loftq_config={"loftq_bits": 4, "loftq_iter": 1})
