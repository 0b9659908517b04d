"""The script fills the "auto" values itself before DeepSpeed reads them."""
import json

import deepspeed
import torch

config = json.load(open("ds.json"))
config["train_micro_batch_size_per_gpu"] = 4
model = torch.nn.Linear(16, 16)
engine, _, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=config)
