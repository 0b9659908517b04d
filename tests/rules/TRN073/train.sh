accelerate launch --config_file accelerate.yaml -m trl.scripts.sft --config sft.yaml
