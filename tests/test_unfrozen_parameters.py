"""TRN069 unfrozen-parameters-freeze-adapter: Axolotl's freeze_layers_except runs after the adapter is
attached, so patterns that cannot match a PEFT-wrapped name freeze the LoRA weights too."""

from __future__ import annotations

import json

import pytest

from conftest import trainlint
from rules.peft_layers import _literal_start, freezes_every_adapted_name


@pytest.fixture(autouse=True)
def _pins_only(nothing_installed):
    """Versions come from the pins each test writes."""


_BASE = ("base_model: mistralai/Mistral-7B-v0.1\nload_in_4bit: true\nlora_r: 16\nlora_alpha: 16\n"
         "lora_target_linear: true\nmicro_batch_size: 1\ngradient_accumulation_steps: 1\n"
         "datasets:\n  - path: tatsu-lab/alpaca\n    type: alpaca\n")


def found(tmp_path, extra: str, pin: str | None = None) -> list[str]:
    (tmp_path / "axolotl.yaml").write_text(_BASE + extra)
    if pin:
        (tmp_path / "requirements.txt").write_text(f"axolotl=={pin}\n")
    result = trainlint("check", tmp_path / "axolotl.yaml", "--no-detect", "--format", "json", "--select", "TRN069")
    assert result.code in (0, 1), result.err
    return [finding["message"] for finding in json.loads(result.out)]


_PATTERNS = "unfrozen_parameters:\n  - ^lm_head.weight$\n  - ^model.embed_tokens.weight$[:32000]\n"


@pytest.mark.parametrize("extra, pin, fires", [
    ("adapter: qlora\n" + _PATTERNS, None, True),
    ("adapter: lora\n" + _PATTERNS, "0.8.0", True),
    ("adapter: lora\n" + _PATTERNS, "0.3.0", False),  # before unfrozen_parameters (v0.4.0)
    ("adapter: lora\nunfrozen_parameters:\n  - model.layers.3[0-9]+\n", None, True),  # re.match: from the start
    (_PATTERNS, None, False),  # full fine-tuning: what the key is for
    ("adapter: lora\nunfrozen_parameters:\n  - ^base_model.model.lm_head\n", None, False),
    ("adapter: lora\nunfrozen_parameters:\n  - .*lora_.*\n", None, False),
    ("adapter: lora\nunfrozen_parameters:\n  - (lm_head|base_model).*\n", None, False),
    ("adapter: lora\nrl: dpo\n" + _PATTERNS, None, False),  # DPO: the trainer attaches the adapter later
    ("adapter: lora\nunfrozen_parameters: []\n", None, False),
])
def test_patterns_that_freeze_the_adapter(tmp_path, extra, pin, fires):
    messages = found(tmp_path, extra, pin)
    assert bool(messages) is fires, messages


@pytest.mark.parametrize("pattern, start", [
    ("^lm_head.weight$", "lm_head.weight"), ("^model.embed_tokens.weight$[:32000]", "model.embed_tokens.weight"),
    ("layers.2[0-9]+.mlp", "layers.2"), ("model.layers.1?", "model.layers."), ("model.*", "model"),
    ("b+ase", "b"), ("a|b", ""), ("\\w+", ""),
])
def test_literal_start(pattern, start):
    assert _literal_start(pattern) == start


def test_a_prefix_of_the_peft_name_may_match():
    assert not freezes_every_adapted_name(["^base"])
    assert not freezes_every_adapted_name(["^lm_head", "base_model.model.model.layers.0"])
    assert freezes_every_adapted_name(["^lm_head", "model.norm"])
