#!/bin/bash
CONFIG=${1:-trl.yaml}
accelerate launch --num_processes 7 \
    grpo.py --config "$CONFIG"
