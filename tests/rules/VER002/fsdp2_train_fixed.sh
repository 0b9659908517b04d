#!/bin/sh
accelerate launch --config_file accelerate_fsdp2_upcast_fixed.clean.yaml -m trl.scripts.sft --config fsdp2_trl.yaml
