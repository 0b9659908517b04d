#!/bin/bash
torchrun --nproc_per_node 4 grpo.py --config trl_server_only.yaml
