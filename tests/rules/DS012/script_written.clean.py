"""Every value DeepSpeed reads as written is a number; reduce_bucket_size "auto" is dropped by
DeepSpeed's ZeRO config, which then uses its default."""
import deepspeed
import torch

model = torch.nn.Linear(16, 16)
engine, _, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config="ds_written.json")
