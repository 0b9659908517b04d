"""DS034 deepspeed-config-without-zero-block: a DeepSpeed JSON without zero_optimization that accelerate's
DeepSpeedPlugin reads (an accelerate config's deepspeed_config_file from accelerate 0.10.0, the HF Trainer's
`deepspeed` file from transformers 4.30.0); silent where DeepSpeed reads it itself."""

from __future__ import annotations

import json

import pytest

from conftest import trainlint

_DS = {"train_micro_batch_size_per_gpu": "auto", "bf16": {"enabled": "auto"}}
_ACCELERATE = ("distributed_type: DEEPSPEED\nnum_processes: 2\ndeepspeed_config:\n"
               "  deepspeed_config_file: ds.json\n")
_SFT = "model_name_or_path: m\ndataset_name: d\noutput_dir: out\ndeepspeed: ds.json\n"


@pytest.fixture(autouse=True)
def _pins_only(nothing_installed):
    """Versions come from the pins each test writes (conftest.nothing_installed)."""


def _codes(tmp_path, name: str, text: str, pins: str, ds: dict | None = None) -> list[str]:
    (tmp_path / name).write_text(text)
    (tmp_path / "ds.json").write_text(json.dumps(_DS if ds is None else ds))
    (tmp_path / "requirements.txt").write_text(pins)
    result = trainlint("check", str(tmp_path / name), "--select", "DS034", "--no-detect", "--format", "json")
    assert result.code in (0, 1), result.err
    return [finding["code"] for finding in json.loads(result.out)]


@pytest.mark.parametrize("pins, fires", [("", True), ("accelerate==0.10.0\n", True), ("accelerate==1.14.0\n", True),
                                         ("accelerate==0.9.0\n", False)])
def test_accelerate_deepspeed_config_file(tmp_path, pins, fires):
    assert _codes(tmp_path, "accelerate.yaml", _ACCELERATE, pins) == (["DS034"] if fires else [])


def test_zero_block_present_is_silent(tmp_path):
    ds = {**_DS, "zero_optimization": {"stage": 0}}
    assert _codes(tmp_path, "accelerate.yaml", _ACCELERATE, "", ds) == []
    assert _codes(tmp_path, "sft.yaml", _SFT, "transformers==4.40.0\n", ds) == []


@pytest.mark.parametrize("pins, fires", [("transformers==4.30.0\n", True), ("transformers==4.29.2\n", False),
                                         ("", False)])  # transformers unknown: a --verbose note
def test_hf_trainer_deepspeed_file(tmp_path, pins, fires):
    assert _codes(tmp_path, "sft.yaml", _SFT, pins) == (["DS034"] if fires else [])


def test_deepspeed_initialize_reads_it_as_stage_0(tmp_path):
    script = ("import deepspeed\nengine, _, _, _ = deepspeed.initialize(model=model, model_parameters=params, "
              "config='ds.json')\n")
    ds = {"train_micro_batch_size_per_gpu": 8, "fp16": {"enabled": True}}
    assert _codes(tmp_path, "train.py", script, "transformers==4.40.0\naccelerate==1.0.0\n", ds) == []
