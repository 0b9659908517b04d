accelerate launch --config_file accelerate_fixed.clean.yaml -m trl.scripts.sft --config sft.yaml
