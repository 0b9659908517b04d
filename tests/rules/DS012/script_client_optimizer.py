"""DeepSpeed gets the script's own optimizer and scheduler: the config's blocks are not used,
but the batch numbers still come from ds.json."""
import deepspeed
import torch

model = torch.nn.Linear(16, 16)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 1.0)
engine, optimizer, _, scheduler = deepspeed.initialize(
    model=model, optimizer=optimizer, lr_scheduler=scheduler, config="ds.json"
)
