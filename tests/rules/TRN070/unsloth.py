from unsloth import FastLanguageModel
from trl import SFTConfig, SFTTrainer

model, tokenizer = FastLanguageModel.from_pretrained("unsloth/Meta-Llama-3.1-8B", max_seq_length=4096)
model = FastLanguageModel.get_peft_model(model, r=16, lora_alpha=16)
trainer = SFTTrainer(
    model=model,
    tokenizer=tokenizer,
    train_dataset=None,
    args=SFTConfig(max_length=4096, packing=True, output_dir="outputs"),
)
# unslothai/unsloth#3065: unsloth_zoo 2025.7.x returns the dataset unpacked.
