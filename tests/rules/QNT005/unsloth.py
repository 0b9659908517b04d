# unslothai/unsloth#1110: a 4-bit model handed to the trainer without get_peft_model
from unsloth import FastLanguageModel
from trl import SFTConfig, SFTTrainer

model, tokenizer = FastLanguageModel.from_pretrained(
    model_name="unsloth/llama-3-8b-bnb-4bit",
    max_seq_length=2048,
    load_in_4bit=True,
)
trainer = SFTTrainer(
    model=model,
    tokenizer=tokenizer,
    args=SFTConfig(per_device_train_batch_size=2, output_dir="outputs"),
)
trainer.train()
