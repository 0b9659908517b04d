#!/bin/bash
accelerate launch --num_processes 8 grpo.py --config trl_colocate_default.clean.yaml
