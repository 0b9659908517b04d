import torch
from peft import LoraConfig
from transformers import AutoModelForCausalLM, BitsAndBytesConfig

from xtuner.model import SupervisedFinetune

model = dict(
    type=SupervisedFinetune,
    llm=dict(
        type=AutoModelForCausalLM.from_pretrained,
        pretrained_model_name_or_path='meta-llama/Llama-2-7b-hf',
        torch_dtype=torch.float16,
        quantization_config=dict(type=BitsAndBytesConfig, load_in_4bit=True, bnb_4bit_compute_dtype=torch.float16,
                                 bnb_4bit_quant_type='nf4')),
    lora=dict(type=LoraConfig, r=64, lora_alpha=16))
