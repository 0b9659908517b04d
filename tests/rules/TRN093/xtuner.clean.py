from mmengine.dataset import DefaultSampler
from torch.optim import AdamW
from transformers import AutoModelForCausalLM

from xtuner.model import SupervisedFinetune
from xtuner.parallel.sequence import SequenceParallelSampler

pretrained_model_name_or_path = "Qwen/Qwen2-7B-Instruct"
sequence_parallel_size = 4

model = dict(
    type=SupervisedFinetune,
    llm=dict(type=AutoModelForCausalLM.from_pretrained, pretrained_model_name_or_path=pretrained_model_name_or_path),
)
train_dataloader = dict(batch_size=1, sampler=dict(type=SequenceParallelSampler, seed=1024))
optim_wrapper = dict(optimizer=dict(type=AdamW, lr=2e-5), accumulative_counts=sequence_parallel_size)
