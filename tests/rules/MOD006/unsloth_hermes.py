# Hermes 3 speaks ChatML: its Llama 3 header rows were never trained
from unsloth import FastLanguageModel
from unsloth.chat_templates import get_chat_template
from datasets import load_dataset
from trl import SFTTrainer
from transformers import TrainingArguments

model, tokenizer = FastLanguageModel.from_pretrained(model_name="NousResearch/Hermes-3-Llama-3.1-8B", max_seq_length=2048)
tokenizer = get_chat_template(tokenizer, chat_template="llama-3.1")
model = FastLanguageModel.get_peft_model(model, r=16, target_modules=["q_proj", "k_proj", "v_proj", "o_proj"])
dataset = load_dataset("json", data_files="chats.jsonl", split="train")
dataset = dataset.map(lambda row: {"text": tokenizer.apply_chat_template(row["messages"], tokenize=False)})
trainer = SFTTrainer(model=model, tokenizer=tokenizer, train_dataset=dataset, dataset_text_field="text",
                     args=TrainingArguments(per_device_train_batch_size=2, output_dir="outputs"))
trainer.train()
