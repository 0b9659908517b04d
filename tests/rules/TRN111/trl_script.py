from peft import PromptEncoderConfig
from trl import SFTConfig, SFTTrainer

peft_config = PromptEncoderConfig(task_type="CAUSAL_LM", num_virtual_tokens=32, encoder_reparameterization_type="MLP")
args = SFTConfig(output_dir="out", per_device_train_batch_size=1, report_to="none")
trainer = SFTTrainer(model="Qwen/Qwen3-1.7B", args=args, train_dataset=train_data, peft_config=peft_config)
trainer.train()
