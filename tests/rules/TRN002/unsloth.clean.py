# Unsloth SFT script: pad token set to EOS, but the collator pads labels with -100 instead of matching ids
from transformers import DataCollatorForSeq2Seq, TrainingArguments
from trl import SFTTrainer
from unsloth import FastLanguageModel

model, tokenizer = FastLanguageModel.from_pretrained("unsloth/llama-3-8b-bnb-4bit", max_seq_length=2048)
model = FastLanguageModel.get_peft_model(model, r=16)
tokenizer.pad_token = tokenizer.eos_token

collator = DataCollatorForSeq2Seq(tokenizer=tokenizer)
trainer = SFTTrainer(
    model=model,
    tokenizer=tokenizer,
    data_collator=collator,
    args=TrainingArguments(per_device_train_batch_size=2, output_dir="outputs"),
)
trainer.train()
