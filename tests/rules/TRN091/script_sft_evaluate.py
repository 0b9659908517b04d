from transformers import AutoModelForMaskedLM
from trl import SFTConfig, SFTTrainer

model = AutoModelForMaskedLM.from_pretrained("answerdotai/ModernBERT-base")
config = SFTConfig(output_dir="out")
trainer = SFTTrainer(model=model, args=config, train_dataset=train, eval_dataset=valid, compute_metrics=metrics)
trainer.train()
trainer.evaluate()
