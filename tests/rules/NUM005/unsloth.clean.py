import torch
from trl import SFTConfig, SFTTrainer
from unsloth import FastLanguageModel

model, tokenizer = FastLanguageModel.from_pretrained(
    model_name="unsloth/llama-3-8b-bnb-4bit", max_seq_length=2048, dtype=torch.float16, load_in_4bit=True)
model = FastLanguageModel.get_peft_model(model, r=16, lora_alpha=16)

trainer = SFTTrainer(
    model=model,
    tokenizer=tokenizer,
    args=SFTConfig(per_device_train_batch_size=2, max_grad_norm=1.0, fp16=True, bf16=False, output_dir="outputs"),
)
trainer.train()
