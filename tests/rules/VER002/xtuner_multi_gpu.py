from mmengine.dataset import DefaultSampler
from transformers import AutoModelForCausalLM, AutoTokenizer

from xtuner.dataset.collate_fns import default_collate_fn
from xtuner.model import SupervisedFinetune

pretrained_model_name_or_path = "Qwen/Qwen1.5-0.5B-Chat"
sequence_parallel_size = 1

model = dict(
    type=SupervisedFinetune,
    use_varlen_attn=False,
    llm=dict(type=AutoModelForCausalLM.from_pretrained,
             pretrained_model_name_or_path=pretrained_model_name_or_path),
)
train_dataloader = dict(batch_size=4, sampler=dict(type=DefaultSampler, shuffle=True),
                        collate_fn=dict(type=default_collate_fn))
