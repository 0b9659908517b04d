#!/bin/bash
# launches another config: how trl_unlaunched.clean.yaml is launched is not known here
accelerate launch --num_processes 8 grpo.py --config other.yaml
