from unsloth import FastLanguageModel
from trl import SFTConfig, SFTTrainer
from datasets import load_dataset

model, tokenizer = FastLanguageModel.from_pretrained("unsloth/Qwen2.5-0.5B", max_seq_length=2048, load_in_4bit=True)
model = FastLanguageModel.get_peft_model(model, r=16, lora_alpha=16)
splits = load_dataset("yahma/alpaca-cleaned", split="train").train_test_split(test_size=0.05)
trainer = SFTTrainer(
    model=model,
    tokenizer=tokenizer,
    train_dataset=splits["train"],
    eval_dataset=splits["test"],
    args=SFTConfig(
        per_device_train_batch_size=2,
        gradient_accumulation_steps=4,
        eval_steps=50,
        output_dir="outputs",
    ),
)
trainer.args.eval_strategy = "steps"
trainer.train()
