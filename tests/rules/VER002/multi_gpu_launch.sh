#!/bin/bash
NPROC_PER_NODE=4 xtuner train xtuner_multi_gpu.py
