"""A custom training loop: DeepSpeed reads ds.json as written."""
import deepspeed
import torch

model = torch.nn.Linear(16, 16)
engine, optimizer, _, scheduler = deepspeed.initialize(
    model=model, model_parameters=model.parameters(), config="ds.json"
)
for step in range(10):
    loss = engine(torch.randn(4, 16)).sum()
    engine.backward(loss)
    engine.step()
