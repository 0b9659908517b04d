# SFTTrainer wraps the model itself when it is given a peft_config
from peft import LoraConfig
from unsloth import FastLanguageModel
from trl import SFTConfig, SFTTrainer

model, tokenizer = FastLanguageModel.from_pretrained("unsloth/llama-3-8b-bnb-4bit", load_in_4bit=True)
trainer = SFTTrainer(
    model=model,
    tokenizer=tokenizer,
    peft_config=LoraConfig(r=16, task_type="CAUSAL_LM"),
    args=SFTConfig(output_dir="outputs"),
)
