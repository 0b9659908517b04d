# xtuner train xtuner.py, with the HF Trainer (framework = "huggingface")
from transformers import AutoModelForCausalLM, TrainingArguments

from xtuner.utils import PROMPT_TEMPLATE

framework = 'huggingface'
pretrained_model_name_or_path = 'internlm/internlm-7b'

model = dict(
    type=AutoModelForCausalLM.from_pretrained,
    pretrained_model_name_or_path=pretrained_model_name_or_path)

training_args = dict(
    type=TrainingArguments,
    output_dir='./work_dirs',
    per_device_train_batch_size=1,
    learning_rate=2e-5,
    fp16=True,
    tf32=False)
