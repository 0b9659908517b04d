from unsloth import FastVisionModel

model, tokenizer = FastVisionModel.from_pretrained("unsloth/Qwen2-VL-7B-Instruct", load_in_4bit=False,
                                                   use_gradient_checkpointing="unsloth")
model = FastVisionModel.get_peft_model(model, r=16, lora_alpha=16, finetune_vision_layers=True)
