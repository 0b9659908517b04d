# Unsloth SFT script: pad token set to EOS, and a causal-LM collator that labels every pad id -100
from transformers import DataCollatorForLanguageModeling, TrainingArguments
from trl import SFTTrainer
from unsloth import FastLanguageModel

model, tokenizer = FastLanguageModel.from_pretrained("unsloth/llama-3-8b-bnb-4bit", max_seq_length=2048)
model = FastLanguageModel.get_peft_model(model, r=16)
tokenizer.pad_token = tokenizer.eos_token

collator = DataCollatorForLanguageModeling(tokenizer=tokenizer, mlm=False)
trainer = SFTTrainer(
    model=model,
    tokenizer=tokenizer,
    data_collator=collator,
    args=TrainingArguments(per_device_train_batch_size=2, output_dir="outputs"),
)
trainer.train()
