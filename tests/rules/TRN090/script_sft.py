from trl import SFTConfig, SFTTrainer

config = SFTConfig(output_dir="out", resume_from_checkpoint=True)
SFTTrainer(model="Qwen/Qwen2.5-0.5B", args=config, train_dataset=dataset).train()
