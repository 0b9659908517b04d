"""Blind batch 11 misses as rows of existing tables: accelerate fp8 under FSDP / DeepSpeed before 0.34
(TRN073 / TRN074, rules/release_bugs.py) and LLaMA-Factory's Unsloth additional_target and DPO
reference model under ZeRO-1/2 (TRN021, rules/argument_fixed_bugs.py). Each fires on the releases the
upstream history names, stays silent on the fixed release, outside the hazard, and unpinned."""

from __future__ import annotations

import json

import pytest

from conftest import FIXTURES, trainlint
from linter import versions

INCIDENTS = FIXTURES / "incidents"


@pytest.fixture(autouse=True)
def _pins_only(nothing_installed):
    """Versions come from the pins each test writes (conftest.nothing_installed)."""


def _found(folder, incident: str, pins: str | None, replace=(), select: str | None = None) -> list[dict]:
    for source in sorted((INCIDENTS / incident).iterdir()):
        if source.name in ("expect.txt", "target.txt", "requirements.txt"):
            continue
        text = source.read_text()
        for old, new in replace:
            text = text.replace(old, new)
        (folder / source.name).write_text(text)
    if pins is not None:
        (folder / "requirements.txt").write_text(pins)
    versions.forget()
    args = ("--select", select) if select else ()
    result = trainlint("check", folder, "--no-detect", "--format", "json", *args)
    assert result.code in (0, 1), result.err
    return json.loads(result.out)


_FP8 = "accel-fsdp-fp8-before-0-34"


@pytest.mark.parametrize("pins, replace, code, count", [
    ("accelerate==0.28.0\n", (), "TRN073", 1),
    ("accelerate==0.33.0\n", (), "TRN073", 1),
    ("accelerate==0.16.0\n", (), "TRN073", 1),     # the launcher refuses fp8 itself
    ("accelerate==0.34.0\n", (), "TRN073", 0),
    ("", (), "TRN073", 0),                         # unknown version: 0.34 and later run it
    ("accelerate==0.28.0\n", (("mixed_precision: fp8", "mixed_precision: bf16"),), "TRN073", 0),
    ("accelerate==0.28.0\n", (("distributed_type: FSDP", "distributed_type: MULTI_GPU"),), "TRN073", 0),
    # under DeepSpeed (the config's own deepspeed_config) fp8 is dropped silently on 0.17 to 0.33
    ("accelerate==0.28.0\n", (("distributed_type: FSDP", "distributed_type: DEEPSPEED"),), "TRN074", 1),
    ("accelerate==0.28.0\n", (("distributed_type: FSDP", "distributed_type: DEEPSPEED"),), "TRN073", 0),
    ("accelerate==0.34.0\n", (("distributed_type: FSDP", "distributed_type: DEEPSPEED"),), "TRN074", 0),
    ("accelerate==0.16.0\n", (("distributed_type: FSDP", "distributed_type: DEEPSPEED"),), "TRN074", 0),
    ("", (("distributed_type: FSDP", "distributed_type: DEEPSPEED"),), "TRN074", 0),
])
def test_accelerate_fp8_rows(tmp_path, pins, replace, code, count):
    found = _found(tmp_path, _FP8, pins, replace)
    hits = [finding for finding in found if finding["code"] == code]
    assert len(hits) == count, found
    if count:
        assert "mixed_precision" in (tmp_path / "accelerate.yaml").read_text().splitlines()[hits[0]["line"] - 1]


@pytest.mark.parametrize("precision, count", [("bf16: true", 0), ("fp16: true", 0), ("learning_rate: 1.0e-5", 1)])
def test_fp8_replaced_by_the_trainer(tmp_path, precision, count):
    """TrainingArguments' bf16 / fp16 replace the launcher's mixed_precision before the Accelerator is built."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "train.sh").write_text("accelerate launch --config_file accelerate.yaml -m trl.scripts.sft "
                                       "--config sft.yaml\n")
    (tmp_path / "sft.yaml").write_text(f"model_name_or_path: m\ndataset_name: d\noutput_dir: out\n{precision}\n")
    assert [f["code"] for f in _found(tmp_path, _FP8, "accelerate==0.28.0\n")].count("TRN073") == count


def test_fp8_deepspeed_file_left_to_ds006(tmp_path):
    (tmp_path / "ds.json").write_text('{"zero_optimization": {"stage": 2}}')
    found = _found(tmp_path, _FP8, "accelerate==0.28.0\n", (
        ("distributed_type: FSDP", "distributed_type: DEEPSPEED\ndeepspeed_config:\n  deepspeed_config_file: ds.json"),))
    assert "TRN074" not in [f["code"] for f in found]


_UNSLOTH = "lf-unsloth-additional-target-dropped"


@pytest.mark.parametrize("pins, replace, count", [
    ("llmtuner==0.5.0\n", (), 1),
    ("llmtuner==0.6.1\n", (), 1),
    ("llmtuner==0.6.2\n", (), 1),                  # the release commit reverted the fix (7468f2535)
    ("llmtuner==0.6.3\n", (), 0),
    ("llmtuner==0.4.0\n", (), 0),                  # no use_unsloth yet
    ("", (), 0),
    ("llmtuner==0.6.0\n", (("additional_target: embed_tokens,lm_head\n", ""),), 0),
    ("llmtuner==0.6.0\n", (("use_unsloth: true", "use_unsloth: false"),), 0),
    ("llmtuner==0.6.0\n", (("bf16: true", "bf16: true\nadapter_name_or_path: saves/lora"),), 0),  # resumed
])
def test_unsloth_additional_target(tmp_path, pins, replace, count):
    found = _found(tmp_path, _UNSLOTH, pins, replace, "TRN021")
    hits = [finding for finding in found if "modules_to_save" in finding["message"]]
    assert len(hits) == count, found
    if count:
        assert "additional_target" in (tmp_path / "train.yaml").read_text().splitlines()[hits[0]["line"] - 1]


_DPO = "lf-dpo-full-zero2-no-optimizer"


@pytest.mark.parametrize("pins, replace, count", [
    ("llmtuner==0.1.8\n", (), 1),
    ("llmtuner==0.2.0\n", (), 1),
    ("llmtuner==0.2.1\n", (), 0),
    ("llmtuner==0.1.7\n", (), 0),
    ("", (), 0),
    ("llmtuner==0.2.0\n", (("finetuning_type: full", "finetuning_type: freeze"),), 1),
    ("llmtuner==0.2.0\n", (("finetuning_type: full", "finetuning_type: lora"),), 0),
    ("llmtuner==0.2.0\n", (("stage: dpo", "stage: sft"),), 0),
    ("llmtuner==0.2.0\n", (('"stage": 2', '"stage": 1'),), 1),
    ("llmtuner==0.2.0\n", (('"stage": 2', '"stage": 3'),), 0),
    ("llmtuner==0.2.0\n", (('"zero_allow', '"optimizer": {"type": "AdamW"},\n  "zero_allow'),), 0),
])
def test_dpo_reference_model_zero12(tmp_path, pins, replace, count):
    found = _found(tmp_path, _DPO, pins, replace, "TRN021")
    hits = [finding for finding in found if "requires an optimizer" in finding["message"]]
    assert len(hits) == count, found


@pytest.mark.parametrize("extra, pin, count", [
    ("ref_model_quantization_bit: 2\n", None, 1),       # every release with the key has the assert
    ("reward_model_quantization_bit: 16\n", "0.9.5", 1),
    ("ref_model_quantization_bit: 4\nreward_model_quantization_bit: 8\n", None, 0),
    ("ref_model_quantization_bit: 3\nreward_model_quantization_bit: 3\n", "0.6.0", 2),
])
def test_model_quantization_bits(tmp_path, extra, pin, count):
    (tmp_path / "lf.yaml").write_text("model_name_or_path: m\nstage: dpo\ndo_train: true\nfinetuning_type: lora\n"
                                      f"dataset: d\ntemplate: qwen\noutput_dir: out\n{extra}")
    if pin:
        (tmp_path / "requirements.txt").write_text(f"llamafactory=={pin}\n")
    versions.forget()
    result = trainlint("check", tmp_path / "lf.yaml", "--no-detect", "--format", "json", "--select", "TRN021")
    found = [f for f in json.loads(result.out) if "4-bit or 8-bit" in f["message"]]
    assert len(found) == count, found
