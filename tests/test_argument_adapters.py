"""TRN021 rows of rules/argument_adapters.py: LLaMA-Factory model/adapter.py _setup_lora_tuning."""

from __future__ import annotations

import json

import pytest

from conftest import trainlint


@pytest.fixture(autouse=True)
def _pins_only(nothing_installed):
    """Versions come from the pins each test writes."""


_DS = {"zero_optimization": {"stage": 3}, "train_micro_batch_size_per_gpu": "auto"}


def messages(tmp_path, extra: str, pin: str | None, kind: str = "lora") -> list[str]:
    (tmp_path / "train.yaml").write_text(
        f"model_name_or_path: Qwen/Qwen2-7B\nstage: sft\ndo_train: true\nfinetuning_type: {kind}\n"
        f"dataset: alpaca_en_demo\ntemplate: qwen\noutput_dir: out\n{extra}")
    (tmp_path / "ds_z3.json").write_text(json.dumps(_DS))
    if pin:
        (tmp_path / "requirements.txt").write_text(f"llamafactory=={pin}\n")
    result = trainlint("check", tmp_path / "train.yaml", "--no-detect", "--format", "json", "--select", "TRN021")
    assert result.code in (0, 1), result.err
    return [finding["message"] for finding in json.loads(result.out)]


@pytest.mark.parametrize("extra, kind, pin, wanted", [
    ("use_unsloth: true\n", "oft", None, "Unsloth is currently not supported for OFT."),   # every release with OFT
    ("use_unsloth: true\n", "lora", None, None),
    ("use_unsloth: true\nadapter_name_or_path: a,b\n", "lora", "0.9.4", "Unsloth model only accepts a single adapter."),
    ("use_unsloth: true\nadapter_name_or_path: a,b\n", "lora", None, None),       # from 0.7.0 only: unpinned, silent
    ("use_unsloth: true\nadapter_name_or_path: a\n", "lora", "0.9.4", None),
    ("use_kt: true\nadapter_name_or_path: a,b\n", "lora", None, "KTransformers model only accepts a single adapter"),
    ("use_kt: true\n", "oft", "0.9.5", "KTransformers only supports LoRA finetuning."),
    ("use_kt: true\n", "oft", "0.9.4", None),                                     # before 887ee2b12
    ("deepspeed: ds_z3.json\nadapter_name_or_path: a,b\n", "lora", "0.9.4", "Cannot use multiple adapters in DeepSpeed"),
    ("deepspeed: ds_z3.json\nadapter_name_or_path: a\n", "lora", "0.9.4", None),
])
def test_adapter_rows(tmp_path, extra, kind, pin, wanted):
    found = messages(tmp_path, extra, pin, kind)
    if wanted is None:
        assert not any("_setup_lora_tuning" in message for message in found), found
    else:
        assert any(wanted in message for message in found), found


@pytest.mark.parametrize("model, extra, pin, fires", [
    ("Qwen/Qwen2-7B-Instruct-GPTQ-Int4", "use_dora: true\n", "0.9.4", True),
    ("Qwen/Qwen2-7B-Instruct-GPTQ-Int4", "use_dora: true\n", None, False),       # from 0.6.0: unpinned, silent
    ("Qwen/Qwen2-7B-Instruct-GPTQ-Int4", "", "0.9.4", False),
    ("Qwen/Qwen2-7B-Instruct", "use_dora: true\n", "0.9.4", False),
    ("unsloth/Qwen2-7B-Instruct-bnb-4bit", "use_dora: true\n", "0.9.4", False),  # bitsandbytes: DoRA works
    ("Qwen/Qwen2-7B-Instruct-GPTQ-Int4", "use_dora: true\nadapter_name_or_path: a\n", "0.9.4", False),  # resumed
])
def test_dora_on_a_ptq_checkpoint(tmp_path, model, extra, pin, fires):
    found = messages(tmp_path, f"{extra}", pin)
    (tmp_path / "train.yaml").write_text((tmp_path / "train.yaml").read_text().replace("Qwen/Qwen2-7B", model, 1))
    result = trainlint("check", tmp_path / "train.yaml", "--no-detect", "--format", "json", "--select", "TRN021")
    found = [finding["message"] for finding in json.loads(result.out)]
    assert any("DoRA is not compatible" in message for message in found) is fires, found
