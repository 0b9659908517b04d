from unsloth import FastLanguageModel
from trl import GRPOConfig, GRPOTrainer

max_seq_length = 256
model, tokenizer = FastLanguageModel.from_pretrained(
    model_name="Qwen/Qwen2.5-3B-Instruct",
    max_seq_length=max_seq_length,
    load_in_4bit=True,
)
model = FastLanguageModel.get_peft_model(model, r=64, lora_alpha=64, use_gradient_checkpointing="unsloth")
training_args = GRPOConfig(
    learning_rate=1e-4,
    per_device_train_batch_size=4,
    num_generations=4,
    max_prompt_length=1024,
    max_completion_length=4096,
    output_dir="outputs",
)
trainer = GRPOTrainer(model=model, processing_class=tokenizer, reward_funcs=[], args=training_args, train_dataset=None)
trainer.train()
