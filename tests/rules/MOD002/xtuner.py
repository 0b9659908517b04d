from peft import LoraConfig
from transformers import AutoModelForCausalLM

from xtuner.model import SupervisedFinetune

model = dict(
    type=SupervisedFinetune,
    llm=dict(
        type=AutoModelForCausalLM.from_pretrained,
        pretrained_model_name_or_path='google/gemma-2-9b',
        attn_implementation='sdpa'),
    lora=dict(type=LoraConfig, r=64, lora_alpha=16))
