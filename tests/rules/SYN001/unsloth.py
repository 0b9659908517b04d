import torch
from unsloth import FastLanguageModel

model, tokenizer = FastLanguageModel.from_pretrained("unsloth/llama-3-8b-bnb-4bit", dtype=torch.float16
