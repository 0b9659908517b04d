from unsloth import FastModel
from trl import SFTConfig, SFTTrainer
from datasets import load_dataset

model, tokenizer = FastModel.from_pretrained(
    model_name="unsloth/gemma-3-1b-it",
    max_seq_length=1024,
    load_in_4bit=False,
)
model = FastModel.get_peft_model(model, r=8, lora_alpha=8, lora_dropout=0)
dataset = load_dataset("yahma/alpaca-cleaned", split="train")
trainer = SFTTrainer(model=model, tokenizer=tokenizer, train_dataset=dataset,
                     args=SFTConfig(per_device_train_batch_size=1, output_dir="outputs"))
trainer.train()
model.save_pretrained_gguf("gemma-3-finetune", tokenizer, quantization_method="q4_k_m")
