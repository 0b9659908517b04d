from unsloth import FastLanguageModel
from trl import GRPOConfig, GRPOTrainer

model, tokenizer = FastLanguageModel.from_pretrained("unsloth/Qwen3-4B-Base", max_seq_length=2048, load_in_4bit=False)
model = FastLanguageModel.get_peft_model(model, r=32, lora_alpha=64)
training_args = GRPOConfig(learning_rate=5e-6, per_device_train_batch_size=1, gradient_accumulation_steps=8,
                           num_generations=8, max_steps=100, output_dir="outputs")
trainer = GRPOTrainer(model=model, processing_class=tokenizer, reward_funcs=[], args=training_args,
                      train_dataset=None)
trainer.train()
