"""TRN067: LLaMA-Factory `template` names against the names each release registers
(linter/data/llamafactory_templates.json, bench/llamafactory_templates.py)."""

from __future__ import annotations

import json

import pytest

from conftest import trainlint
from linter import template_registry


@pytest.fixture(autouse=True)
def _pins_only(nothing_installed):
    """Versions come from the pins each test writes."""


def messages(tmp_path, template: str, pin: str | None) -> list[str]:
    (tmp_path / "train.yaml").write_text(
        "model_name_or_path: Qwen/Qwen3-8B\nstage: sft\ndo_train: true\nfinetuning_type: lora\n"
        f"dataset: alpaca_en_demo\ntemplate: {template}\noutput_dir: out\n")
    if pin:
        (tmp_path / "requirements.txt").write_text(f"llamafactory=={pin}\n")
    result = trainlint("check", tmp_path / "train.yaml", "--no-detect", "--format", "json", "--select", "TRN067")
    assert result.code in (0, 1), result.err
    return [finding["message"] for finding in json.loads(result.out)]


@pytest.mark.parametrize("template, pin, fires", [
    ("gpt", "0.9.4", True),        # 0.9.4.dev0's name, gpt_oss in the release (#9759)
    ("gpt_oss", "0.9.4", False),
    ("gpt", None, False),           # no release registers it, but a fork may (SkyThought's qwen25)
    ("qwen3_nothink", "0.9.2", True),
    ("qwen3_nothink", None, False),  # 0.9.4 registers it: unpinned, not judged
    ("qwen", "0.9.4", False),
    ("llama3", "0.9.4.dev0", False),  # a development build the table does not hold
    ("no_such_template", "0.9.4.dev0", False),  # a dev build may be a fork: unknown, silent
])
def test_template_names_per_release(tmp_path, template, pin, fires):
    assert bool(messages(tmp_path, template, pin)) is fires


def test_message_names_the_release_and_closest_names(tmp_path):
    [message] = messages(tmp_path, "gpt", "0.9.4")
    assert "llamafactory 0.9.4" in message and "gpt_oss" in message and "does not exist" in message


def test_table_covers_every_release_and_the_renaming():
    assert template_registry.registered("llamafactory", "0.9.4") >= {"gpt_oss", "qwen3", "llama3"}
    assert "gpt" not in template_registry.ever_registered("llamafactory")
    assert template_registry.releases_with("llamafactory", "vanilla")[0] == "0.0.9"
    assert template_registry.registered("llamafactory", "0.9.6") is None
