from mmengine.optim import AmpOptimWrapper
from peft import LoraConfig
from torch.optim import AdamW
from transformers import AutoModelForCausalLM, BitsAndBytesConfig

from xtuner.model import SupervisedFinetune

model = dict(
    type=SupervisedFinetune,
    llm=dict(
        type=AutoModelForCausalLM.from_pretrained,
        pretrained_model_name_or_path='meta-llama/Meta-Llama-3-8B',
        quantization_config=dict(
            type=BitsAndBytesConfig,
            load_in_4bit=True,
            bnb_4bit_compute_dtype='bfloat16',
            bnb_4bit_quant_type='nf4')),
    lora=dict(type=LoraConfig, r=64, lora_alpha=16))

optim_wrapper = dict(type=AmpOptimWrapper, optimizer=dict(type=AdamW, lr=2e-4), dtype='bfloat16')
