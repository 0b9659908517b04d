#!/bin/bash
NPROC_PER_NODE=8 xtuner train xtuner.py --deepspeed deepspeed_zero2
NPROC_PER_NODE=8 xtuner train xtuner.clean.py --deepspeed deepspeed_zero2
NPROC_PER_NODE=8 xtuner train xtuner_fixed.clean.py --deepspeed deepspeed_zero2
NPROC_PER_NODE=8 xtuner train xtuner_qwen2_old.clean.py --deepspeed deepspeed_zero2
