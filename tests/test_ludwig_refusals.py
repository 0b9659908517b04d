"""Ludwig refusals read from its schema classes: TRN035's `adapters:` rows (79c226a6a, 0.15.0),
TRN105 (model_parameters.rope_scaling: `type` to 0.10.x, `rope_type` from 0.11.0, 86a97e521), and
adapter.target_modules read as Ludwig types it (a list; a string is never split into characters)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import trainlint

LLM = """model_type: llm
base_model: meta-llama/Llama-2-7b-hf
input_features:
  - name: question
    type: text
output_features:
  - name: answer
    type: text
trainer:
  type: finetune
"""


@pytest.fixture(autouse=True)
def _pins_only(nothing_installed):
    """Versions come from the pins each test writes (conftest.nothing_installed)."""


def lint(tmp_path, extra: str, ludwig: str | None = None, select: str = "TRN105") -> list[tuple[str, str]]:
    (tmp_path / "train.yaml").write_text(LLM + extra)
    if ludwig is not None:
        (tmp_path / "requirements.txt").write_text(f"ludwig=={ludwig}\n")
    result = trainlint("check", tmp_path / "train.yaml", "--no-detect", "--format", "json", "--select", select)
    assert result.code in (0, 1), result.err
    return [(finding["code"], finding["message"]) for finding in json.loads(result.out)]


def rope(*lines: str) -> str:
    return "model_parameters:\n  rope_scaling:\n" + "".join(f"    {line}\n" for line in lines)


@pytest.mark.parametrize("block, ludwig, fires", [
    (rope("type: linear", "factor: 2.0"), "0.11.0", True),      # renamed rope_type in 0.11.0
    (rope("type: linear", "factor: 2.0"), "0.17.8", True),
    (rope("type: linear", "factor: 2.0"), "0.10.4", False),
    (rope("rope_type: linear", "factor: 2.0"), "0.10.4", True),  # not read before 0.11.0
    (rope("rope_type: linear", "factor: 2.0"), "0.8", True),
    (rope("rope_type: linear", "factor: 2.0"), "0.11.0", False),
    (rope("type: linear", "rope_type: linear", "factor: 2.0"), "0.10.4", False),
    (rope("type: linear", "rope_type: linear", "factor: 2.0"), "0.11.0", False),
    (rope("type: linear", "factor: 2.0"), None, False),          # right for some releases: not judged
    (rope("rope_type: linear", "factor: 2.0"), None, False),
    (rope("factor: 2.0"), None, True),                          # no method under either key: every release
    (rope("rope_type: dynamic"), "0.11.0", True),               # no factor
    (rope("rope_type: dynamic"), None, True),                   # before 0.11.0 for the method, then the factor
    (rope("type: dynamic", "rope_type: dynamic"), None, True),  # no factor, every release
    ("model_parameters:\n  neftune_noise_alpha: 5\n", "0.11.0", False),
])
def test_rope_scaling_as_the_release_reads_it(tmp_path, block, ludwig, fires):
    found = lint(tmp_path, block, ludwig)
    assert bool(found) is fires, found


def test_rope_scaling_message_names_the_key_the_release_reads(tmp_path):
    [(code, message)] = lint(tmp_path, rope("type: linear", "factor: 2.0"), "0.11.0")
    assert code == "TRN105" and "`rope_type`" in message and "86a97e521" in message


ADAPTER = "adapter:\n  type: lora\n"
NAMED = "adapters:\n  adapters:\n    a:\n      type: lora\n"


@pytest.mark.parametrize("extra, ludwig, fires", [
    (ADAPTER + NAMED, "0.15.0", True),
    (ADAPTER + NAMED, None, True),         # every release that reads adapters: refuses it
    (ADAPTER + NAMED, "0.14.0", False),    # adapters: is an unknown key there, dropped
    (NAMED, "0.17.8", False),
    (ADAPTER, "0.17.8", False),
    ("adapter: null\n" + NAMED, "0.17.8", False),
    ("adapters:\n  active: a\n", "0.17.8", True),  # no adapters in the map
    ("adapters:\n  adapters: {}\n", "0.17.8", True),
])
def test_adapter_and_adapters_forms(tmp_path, extra, ludwig, fires):
    found = lint(tmp_path, extra, ludwig, select="TRN035")
    assert bool(found) is fires, found
    if fires:
        assert "79c226a6a" in found[0][1]


def _parse(text: str):
    from linter.adapters.ludwig import LudwigAdapter
    from linter.source import Source
    from linter.yaml_reader import parse_yaml

    return LudwigAdapter().parse(parse_yaml(Source(Path("train.yaml"), text)))


def test_target_modules_string_is_not_split_into_characters():
    config = _parse(LLM + "adapter:\n  type: lora\n  target_modules: all-linear\n")
    assert config.get("adapter.target_modules") is None  # Ludwig types it list[str] and refuses a string
    assert [key for key, _, _ in config.type_errors] == ["adapter.target_modules"]
    config = _parse(LLM + "adapter:\n  type: lora\n  target_modules: [q_proj, v_proj]\n")
    assert config.value("adapter.target_modules") == ["q_proj", "v_proj"]
