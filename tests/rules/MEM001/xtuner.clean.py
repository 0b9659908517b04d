import torch
from peft import LoraConfig
from mmengine.optim import AmpOptimWrapper
from torch.optim import AdamW
from transformers import AutoModelForCausalLM

from xtuner.model import SupervisedFinetune

model = dict(
    type=SupervisedFinetune,
    llm=dict(type=AutoModelForCausalLM.from_pretrained,
             pretrained_model_name_or_path='Qwen/Qwen2.5-1.5B',
             torch_dtype=torch.bfloat16),
    lora=dict(type=LoraConfig, r=16, lora_alpha=16))

train_dataloader = dict(batch_size=1)

optim_wrapper = dict(type=AmpOptimWrapper, optimizer=dict(type=AdamW, lr=2e-5), dtype='bfloat16')
