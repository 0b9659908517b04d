from unsloth import FastLanguageModel
from trl import SFTTrainer

model, tokenizer = FastLanguageModel.from_pretrained(
    model_name="my-org/tinyllama-alpaca-bnb-4bit",
    max_seq_length=2048,
    load_in_4bit=True,
)
model = FastLanguageModel.get_peft_model(model, r=16, target_modules=["q_proj", "v_proj"])
trainer = SFTTrainer(model=model, tokenizer=tokenizer, train_dataset=None)
trainer.train()
model.save_pretrained_merged("out", tokenizer, save_method="merged_16bit")
