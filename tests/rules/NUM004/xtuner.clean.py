import torch
from mmengine.optim import AmpOptimWrapper
from peft import LoraConfig
from torch.optim import AdamW
from transformers import AutoModelForCausalLM

from xtuner.model import SupervisedFinetune

model = dict(
    type=SupervisedFinetune,
    llm=dict(type=AutoModelForCausalLM.from_pretrained,
             pretrained_model_name_or_path='google/gemma-7b',
             torch_dtype=torch.bfloat16),
    lora=dict(type=LoraConfig, r=64, lora_alpha=16,
              target_modules=['q_proj', 'v_proj', 'embed_tokens', 'lm_head']))

optim_wrapper = dict(type=AmpOptimWrapper, optimizer=dict(type=AdamW, lr=2e-4), dtype='bfloat16')
