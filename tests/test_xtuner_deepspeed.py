"""XTuner runs under DeepSpeed: a config as mmengine dumps it after `xtuner train --deepspeed`
(linter/adapters/xtuner_deepspeed.py)."""

from __future__ import annotations

import json

import pytest

from conftest import trainlint
from linter.engine import Options, Session

# The shape xtuner/tools/train.py gives a config it runs with --deepspeed, as mmengine's
# Config.dump writes it: every object a dotted `type` string, nothing imported.
_DUMP = """\
model = dict(
    llm=dict(
        pretrained_model_name_or_path='meta-llama/Meta-Llama-3-8B-Instruct',
        quantization_config=dict(
            bnb_4bit_compute_dtype='torch.float16',
            bnb_4bit_quant_type='nf4',
            load_in_4bit=True,
            type='transformers.BitsAndBytesConfig'),
        torch_dtype='torch.float16',
        type='transformers.AutoModelForCausalLM.from_pretrained'),
    lora=dict(lora_alpha=16, r=64, task_type='CAUSAL_LM', type='peft.LoraConfig'),
    type='xtuner.model.SupervisedFinetune')
optim_wrapper = dict(
    optimizer=dict(lr=0.0002, type='torch.optim.AdamW', weight_decay=0),
    type='DeepSpeedOptimWrapper')
runner_type = '{runner}'
strategy = dict(
    config=dict(
        bf16=dict(enabled={bf16}),
        fp16=dict(enabled={fp16}, initial_scale_power=16),
        gradient_accumulation_steps='auto',
        gradient_clipping='auto',
        train_micro_batch_size_per_gpu='auto',
        zero_allow_untested_optimizer=True,
        zero_optimization=dict(overlap_comm=True, stage=2)),
    exclude_frozen_parameters=True,
    gradient_accumulation_steps=16,
    gradient_clipping=1,
    train_micro_batch_size_per_gpu=1,
    type='xtuner.engine.DeepSpeedStrategy')
train_dataloader = dict(batch_size=1)
"""


def _dump(tmp_path, bf16="True", fp16="False", runner="FlexibleRunner"):
    path = tmp_path / "llama3_8b_qlora_copy.py"
    path.write_text(_DUMP.replace("{bf16}", bf16).replace("{fp16}", fp16).replace("{runner}", runner))
    return path


def _codes(path, gpu="A100"):
    return sorted(f["code"] for f in json.loads(trainlint("check", path, "--gpu", gpu, "--format", "json",
                                                          "--no-detect").out))


def _run(path):
    session = Session(Options(detect=False))
    config = session.load(path, True).config
    return config, [link for link in config.links if link.kind == "deepspeed"]


def test_a_bf16_dump_trains_in_bf16_whatever_the_model_dtypes_say(tmp_path):
    path = _dump(tmp_path)
    config, links = _run(path)
    assert len(links) == 1 and links[0].builtin is not None
    values = links[0].builtin
    assert values["precision.bf16"] is True and values["precision.fp16"] is False
    assert values["parallel.zero_stage"] == 2
    assert values["batch.grad_accum"] == 16 and values["batch.micro"] == 1  # the strategy's keywords win
    assert values["optimizer.grad_clip"] == 1
    # Each value points where the strategy writes it: `config` or the keyword that replaces its key.
    lines = path.read_text().splitlines()
    spans = links[0].builtin_spans
    assert lines[spans["precision.bf16"].line - 1].strip() == "bf16=dict(enabled=True),"
    assert lines[spans["parallel.zero_stage"].line - 1].strip() == "zero_optimization=dict(overlap_comm=True, stage=2)),"
    assert lines[spans["batch.grad_accum"].line - 1].strip() == "gradient_accumulation_steps=16,"
    v100 = json.loads(trainlint("check", path, "--gpu", "V100", "--format", "json", "--no-detect").out)
    assert [(f["code"], lines[f["line"] - 1].strip()) for f in v100 if f["code"] == "PRE001"] == [
        ("PRE001", "bf16=dict(enabled=True),")]
    # DeepSpeed casts the model to bf16 and Linear4bit computes in the bf16 input's dtype.
    assert config.get("model.load_dtype") is None and config.get("quantization.compute_dtype") is None
    assert "PRE002" not in _codes(path) and "QNT001" not in _codes(path)


@pytest.mark.parametrize("pin, kept", [
    (None, False),                  # unknown bitsandbytes: the compute dtype is not known
    ("bitsandbytes==0.40.2", True),  # the input is cast to the compute dtype given
    ("bitsandbytes==0.41.0", False),  # set_compute_type: a bf16 input's dtype replaces it
    ("bitsandbytes==0.46.1", False),
    ("bitsandbytes==0.47.0", True),  # a compute dtype given is kept (compute_type_is_set)
])
def test_under_bf16_the_4bit_compute_dtype_follows_bitsandbytes(tmp_path, nothing_installed, pin, kept):
    path = _dump(tmp_path)
    if pin:
        (tmp_path / "requirements.txt").write_text(pin + "\n")
    config, _ = _run(path)
    assert (config.value("quantization.compute_dtype") == "float16") is kept
    assert ("QNT001" in _codes(path)) is kept


def test_an_fp16_dump_is_fp16(tmp_path):
    path = _dump(tmp_path, bf16="False", fp16="True")
    config, links = _run(path)
    assert links[0].builtin["precision.fp16"] is True
    assert config.get("model.load_dtype") is None  # cast to half
    assert config.value("quantization.compute_dtype") == "float16"  # an fp16 input keeps it
    assert "PRE002" in _codes(path)  # fp16 mixed precision where bf16 exists: true


@pytest.mark.parametrize("change", [
    dict(runner="Runner"),  # mmengine's Runner takes no strategy: the AmpOptimWrapper-less config is plain
    dict(bf16="use_bf16"),  # computed: unknown, nothing linked
])
def test_what_is_not_a_dumped_deepspeed_run(tmp_path, change):
    path = _dump(tmp_path, **change)
    config, links = _run(path)
    assert links == []
    if "bf16" in change:  # still DeepSpeed's to decide: the dtypes it may cast are left unknown
        assert config.get("model.load_dtype") is None
        assert "DeepSpeed strategy" in config.value("parallel.unmodeled")  # and its sharding: MEM001 silent
    else:
        assert config.value("model.load_dtype") == "float16"


# ---- "auto" precision resolved from the GPU (NUM003) ---------------------------------------------

_AMP = """\
from mmengine.optim import AmpOptimWrapper
from transformers import AutoModelForCausalLM
from xtuner.model import SupervisedFinetune

model = dict(type=SupervisedFinetune, llm=dict(type=AutoModelForCausalLM.from_pretrained,
             pretrained_model_name_or_path='google/gemma-7b'))
optim_wrapper = dict(type=AmpOptimWrapper, optimizer=dict(lr=2e-5), dtype='bfloat16')
"""


def _launched(tmp_path, deepspeed="deepspeed_zero2", pins=(), json_text=None):
    path = tmp_path / "gemma_full.py"
    path.write_text(_AMP)
    if json_text is not None:
        (tmp_path / deepspeed).write_text(json_text)
    (tmp_path / "trainlint.toml").write_text(f'[[runs]]\nfiles = ["gemma_full.py", "{deepspeed}"]\n')
    if pins:
        (tmp_path / "requirements.txt").write_text("\n".join(pins) + "\n")
    return path


@pytest.mark.parametrize("pins, gpu, fires", [
    (["torch==2.1.2"], "V100", True),   # is_bf16_supported() False below cc 8.0 before torch 2.3: fp16
    (["torch==2.2.2"], "T4", True),
    (["torch==2.3.0"], "V100", False),  # from 2.3 an emulated bf16 tensor answers True: bf16 wins
    (["torch==2.4.0"], "V100", False),
    ([], "V100", False),                # torch unknown: not certain
    (["torch==2.1.2"], "A100", False),  # bf16 hardware: bf16 wins
    (["torch==2.1.2", "xtuner==0.1.6"], "V100", False),  # no auto resolution before XTuner 0.1.7
])
def test_shipped_auto_precision_is_fp16_only_where_torch_makes_it_certain(tmp_path, nothing_installed, pins, gpu,
                                                                            fires):
    path = _launched(tmp_path, pins=pins)
    assert ("NUM003" in _codes(path, gpu)) is fires


def test_auto_fp16_with_bf16_off_is_fp16_on_any_torch(tmp_path, nothing_installed):
    """auto_dtype_of_deepspeed_config: fp16 "auto" is torch.cuda.is_available(); with bf16 off
    nothing overrides it, whatever torch answers for bf16."""
    path = _launched(tmp_path, deepspeed="ds.json", json_text='{"fp16": {"enabled": "auto"}, '
                     '"zero_optimization": {"stage": 2}}')
    found = json.loads(trainlint("check", path, "--gpu", "V100", "--format", "json", "--no-detect").out)
    num003 = [f for f in found if f["code"] == "NUM003"]
    assert len(num003) == 1 and "bf16 is off" in num003[0]["message"]
    assert num003[0]["line"] == 7  # the optim_wrapper the launch replaces
