# xtuner builds LoraConfig(target_modules="all-linear") and hands it to PEFT's get_peft_model
from peft import LoraConfig
from transformers import AutoModelForCausalLM
from xtuner.model import SupervisedFinetune

model = dict(
    type=SupervisedFinetune,
    llm=dict(type=AutoModelForCausalLM.from_pretrained, pretrained_model_name_or_path="Qwen/Qwen2-7B"),
    lora=dict(type=LoraConfig, r=64, lora_alpha=16, target_modules="all-linear", task_type="CAUSAL_LM"),
)
