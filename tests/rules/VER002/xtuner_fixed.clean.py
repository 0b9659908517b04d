import torch
from mmengine.optim import AmpOptimWrapper
from torch.optim import AdamW
from transformers import AutoModelForCausalLM, BitsAndBytesConfig
from peft import LoraConfig
from xtuner.model import SupervisedFinetune

pretrained_model_name_or_path = "Qwen/Qwen2-7B-Instruct"
use_varlen_attn = False
pack_to_max_length = False

model = dict(
    type=SupervisedFinetune,
    use_varlen_attn=use_varlen_attn,
    llm=dict(
        type=AutoModelForCausalLM.from_pretrained,
        pretrained_model_name_or_path=pretrained_model_name_or_path,
        trust_remote_code=True,
        torch_dtype=torch.bfloat16,
    ),
    lora=dict(type=LoraConfig, r=64, lora_alpha=16, lora_dropout=0.1, bias="none", task_type="CAUSAL_LM"),
)

optim_wrapper = dict(
    type=AmpOptimWrapper,
    optimizer=dict(type=AdamW, lr=2e-4, betas=(0.9, 0.999), weight_decay=0),
    accumulative_counts=16,
    loss_scale="dynamic",
    dtype="bfloat16",
)
