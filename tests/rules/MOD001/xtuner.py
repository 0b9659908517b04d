# Qwen-1 (model_type qwen) has c_attn, c_proj, w1, w2
from peft import LoraConfig
from transformers import AutoModelForCausalLM

from xtuner.model import SupervisedFinetune

model = dict(
    type=SupervisedFinetune,
    llm=dict(
        type=AutoModelForCausalLM.from_pretrained,
        pretrained_model_name_or_path='Qwen/Qwen-7B',
        trust_remote_code=True),
    lora=dict(type=LoraConfig, r=64, lora_alpha=16, target_modules=['q_proj', 'v_proj']))
