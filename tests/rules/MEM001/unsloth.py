import torch
from trl import SFTConfig, SFTTrainer
from unsloth import FastLanguageModel

model, tokenizer = FastLanguageModel.from_pretrained(
    model_name="meta-llama/Llama-2-7b-hf", max_seq_length=2048, dtype=torch.bfloat16, full_finetuning=True)

trainer = SFTTrainer(
    model=model,
    tokenizer=tokenizer,
    args=SFTConfig(per_device_train_batch_size=1, bf16=True, output_dir="outputs"),
)
trainer.train()
