from mmengine.optim import AmpOptimWrapper
from torch.optim import AdamW
from transformers import AutoModelForCausalLM

from xtuner.model import SupervisedFinetune

model = dict(
    type=SupervisedFinetune,
    llm=dict(type=AutoModelForCausalLM.from_pretrained,
             pretrained_model_name_or_path='google/gemma-7b'))

# `--deepspeed deepspeed_zero2` replaces this wrapper; the shipped JSON's "auto" fp16/bf16 are
# decided from the GPU: on a T4 with torch 2.4.0, is_bf16_supported() is True (emulated), so bf16.
optim_wrapper = dict(
    type=AmpOptimWrapper,
    optimizer=dict(type=AdamW, lr=2e-5),
    dtype='bfloat16')
