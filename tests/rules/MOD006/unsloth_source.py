# an Unsloth source install from before 2024.8 does not detect Llama 3.1 base rows: it trains with them frozen
from unsloth import FastLanguageModel
from unsloth.chat_templates import get_chat_template
from datasets import load_dataset
from trl import SFTTrainer
from transformers import TrainingArguments

model, tokenizer = FastLanguageModel.from_pretrained(model_name="unsloth/Meta-Llama-3.1-8B-bnb-4bit", max_seq_length=2048)
tokenizer = get_chat_template(tokenizer, chat_template="llama-3")
model = FastLanguageModel.get_peft_model(model, r=16, target_modules=["q_proj", "k_proj", "v_proj", "o_proj"])
dataset = load_dataset("json", data_files="chats.jsonl", split="train")
dataset = dataset.map(lambda row: {"text": tokenizer.apply_chat_template(row["messages"], tokenize=False)})
trainer = SFTTrainer(model=model, tokenizer=tokenizer, train_dataset=dataset, dataset_text_field="text",
                     args=TrainingArguments(per_device_train_batch_size=2, output_dir="outputs"))
trainer.train()
