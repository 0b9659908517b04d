import torch
from trl import SFTConfig, SFTTrainer
from unsloth import FastLanguageModel

model, tokenizer = FastLanguageModel.from_pretrained(
    model_name="unsloth/Qwen2.5-0.5B", max_seq_length=2048, dtype=torch.float32, full_finetuning=True)

trainer = SFTTrainer(
    model=model,
    tokenizer=tokenizer,
    args=SFTConfig(per_device_train_batch_size=2, fp16=True, bf16=False, output_dir="outputs"),
)
trainer.train()
