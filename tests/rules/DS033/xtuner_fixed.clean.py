from bitsandbytes.optim import PagedAdamW32bit
from mmengine.optim import AmpOptimWrapper
from transformers import AutoModelForCausalLM
from xtuner.model import SupervisedFinetune

optim_type = PagedAdamW32bit
lr = 2e-4

model = dict(
    type=SupervisedFinetune,
    llm=dict(type=AutoModelForCausalLM.from_pretrained, pretrained_model_name_or_path="HuggingFaceH4/zephyr-7b-beta"),
)

optim_wrapper = dict(
    type=AmpOptimWrapper,
    optimizer=dict(type=optim_type, lr=lr, betas=(0.9, 0.999), weight_decay=0),
    clip_grad=dict(max_norm=1, error_if_nonfinite=False),
    accumulative_counts=16,
    loss_scale="dynamic",
    dtype="float16",
)
