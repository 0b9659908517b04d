from unsloth import FastLanguageModel
from trl import GRPOConfig, GRPOTrainer

model, tokenizer = FastLanguageModel.from_pretrained(
    model_name="unsloth/Qwen2.5-3B-Instruct",
    max_seq_length=1024,
    load_in_4bit=True,
    fast_inference=True,
    gpu_memory_utilization=0.6,
)
model = FastLanguageModel.get_peft_model(model, r=128, lora_alpha=128, use_gradient_checkpointing="unsloth")
training_args = GRPOConfig(learning_rate=5e-6, per_device_train_batch_size=6, num_generations=6, output_dir="outputs")
trainer = GRPOTrainer(model=model, processing_class=tokenizer, reward_funcs=[], args=training_args, train_dataset=None)
trainer.train()
