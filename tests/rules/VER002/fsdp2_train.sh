#!/bin/sh
accelerate launch --config_file accelerate_fsdp2_upcast.yaml -m trl.scripts.sft --config fsdp2_trl.yaml
