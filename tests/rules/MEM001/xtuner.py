import torch
from mmengine.optim import AmpOptimWrapper
from torch.optim import AdamW
from transformers import AutoModelForCausalLM

from xtuner.model import SupervisedFinetune

model = dict(
    type=SupervisedFinetune,
    llm=dict(type=AutoModelForCausalLM.from_pretrained,
             pretrained_model_name_or_path='meta-llama/Llama-2-7b-hf',
             torch_dtype=torch.bfloat16))

train_dataloader = dict(batch_size=1)

optim_wrapper = dict(type=AmpOptimWrapper, optimizer=dict(type=AdamW, lr=2e-5), dtype='bfloat16')
