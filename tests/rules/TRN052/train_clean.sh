#!/bin/bash
# the server on the last GPU, training on the others
CUDA_VISIBLE_DEVICES=7 trl vllm-serve --model Qwen/Qwen2.5-0.5B-Instruct &
CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6 accelerate launch --num_processes 7 grpo.py --config trl.clean.yaml
