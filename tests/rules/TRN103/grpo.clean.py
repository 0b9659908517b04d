from transformers import AutoModelForCausalLM
from trl import GRPOConfig, GRPOTrainer

model = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-0.5B")
args = GRPOConfig(output_dir="out", beta=0.0, learning_rate=5e-7)
trainer = GRPOTrainer(model=model, args=args, train_dataset=None)
trainer.train()
