"""A custom accelerate loop with no Trainer: accelerate fills only some "auto" values."""
import torch
from accelerate import Accelerator
from accelerate.utils import DeepSpeedPlugin, DummyOptim, DummyScheduler

plugin = DeepSpeedPlugin(hf_ds_config="ds.json")
accelerator = Accelerator(deepspeed_plugin=plugin, mixed_precision="bf16")
model = torch.nn.Linear(16, 16)
optimizer = DummyOptim(model.parameters(), lr=1e-4)
scheduler = DummyScheduler(optimizer, warmup_num_steps=10)
loader = torch.utils.data.DataLoader(torch.randn(64, 16), batch_size=4)
model, optimizer, loader, scheduler = accelerator.prepare(model, optimizer, loader, scheduler)
