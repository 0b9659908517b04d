"""MOD007's data and rule: linter/data/peft_default_targets.json against the PEFT mirror it was
generated from (where this machine has one), and the rule's version and framework bounds."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from conftest import FIXTURES, trainlint

ROOT = Path(__file__).resolve().parent.parent
TABLE = ROOT / "linter" / "data" / "peft_default_targets.json"


pytestmark = pytest.mark.usefixtures("empty_hub_cache", "nothing_installed")


def _holders(table: dict) -> dict[str, set[str]]:
    releases = table["releases"]
    return {model_type: set(row["releases"]) if "releases" in row else set(releases[releases.index(row["since"]):])
            for model_type, row in table["model_types"].items()}


def test_table_matches_the_mirror():
    sys.path.insert(0, str(ROOT / "bench"))
    import peft_default_targets as script

    if not (script.MIRROR / "HEAD").exists():
        pytest.skip("no huggingface/peft mirror on this machine")
    shipped = json.loads(TABLE.read_text("utf-8"))
    built = script.build(script.MIRROR)
    read = set(built["releases"])
    assert read <= set(shipped["releases"])
    assert {key: held & read for key, held in _holders(shipped).items() if held & read} == _holders(built)


def test_table_bounds_of_the_incidents():
    from linter.peft_targets import first_release_with, has_default_targets, release_holding

    assert first_release_with("chatglm") == "0.3.0" and first_release_with("mistral") == "0.6.0"
    assert first_release_with("mixtral") == "0.8.0" and first_release_with("phi3") is None
    assert not has_default_targets("chatglm", "0.2.0") and has_default_targets("mistral", release_holding("0.6.1"))
    assert release_holding("0.99.0") is None and release_holding("0.13.0.dev0") is None


def _check(folder: Path, name: str, text: str, pins: str | None) -> list[str]:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(text)
    if pins:
        (folder / "requirements.txt").write_text(pins)
    result = trainlint("check", folder / name, "--no-detect", "--format", "json", "--select", "MOD007")
    assert result.code in (0, 1), result.err
    return [finding["message"] for finding in json.loads(result.out)]


_LUDWIG = """model_type: llm
base_model: mistralai/Mistral-7B-v0.1
adapter:
  type: lora
{extra}input_features:
  - name: prompt
    type: text
output_features:
  - name: response
    type: text
trainer:
  type: finetune
"""


def test_ludwig_bounds(tmp_path):
    assert _check(tmp_path / "a", "train.yaml", _LUDWIG.format(extra=""), "peft==0.5.0")
    assert not _check(tmp_path / "b", "train.yaml", _LUDWIG.format(extra=""), "peft==0.6.0")
    assert not _check(tmp_path / "c", "train.yaml", _LUDWIG.format(extra=""), None)  # unknown: mistral has defaults later
    weights = "  pretrained_adapter_weights: me/adapter\n"
    assert not _check(tmp_path / "d", "train.yaml", _LUDWIG.format(extra=weights), "peft==0.5.0")


def test_trl_target_parameters_and_shorthand(tmp_path):
    base = "model_name_or_path: microsoft/Phi-3-mini-4k-instruct\ndataset_name: d\noutput_dir: o\nuse_peft: true\n"
    assert _check(tmp_path / "a", "trl.yaml", base, "peft==0.17.0")
    assert not _check(tmp_path / "b", "trl.yaml", base + "lora_target_parameters: [mlp.experts.down_proj]\n",
                      "peft==0.17.0")
    assert not _check(tmp_path / "c", "trl.yaml", base.replace("use_peft: true", "use_peft: false"), "peft==0.17.0")


def test_adapter_config_absent_targets(tmp_path):
    text = json.dumps({"base_model_name_or_path": "THUDM/chatglm-6b", "peft_type": "LORA", "r": 8})
    assert _check(tmp_path / "a", "adapter_config.json", text, "peft==0.2.0")
    assert not _check(tmp_path / "b", "adapter_config.json", text.replace('"LORA"', '"PREFIX_TUNING"'), "peft==0.2.0")


def test_incidents_caught():
    for incident, code in (("peft-lora-no-target-modules-unmapped", "0.2.0"),
                           ("ludwig-lora-no-default-target-modules", "0.5.0")):
        folder = FIXTURES / "incidents" / incident
        result = trainlint("check", folder, "--no-detect", "--format", "json", "--select", "MOD007")
        found = json.loads(result.out)
        assert len(found) == 1 and f"peft {code}" in found[0]["message"], found


def test_model_type_if_agrees_with_model_type_of_filtered():
    """MOD007 asks only for the types no PEFT release has defaults for when the version is
    unknown (model_type_if compiles the other name rows only where a wanted row matches); it must
    answer exactly what model_type_of would, filtered."""
    from linter.models import model_type_of
    from linter.peft_targets import first_release_with, model_type_if

    names = ["THUDM/chatglm3-6b", "baichuan-inc/Baichuan2-7B-Chat", "Qwen/Qwen-7B", "internlm/internlm2-chat-7b",
             "microsoft/Phi-3-mini-4k-instruct", "mistralai/Mistral-7B-v0.1", "meta-llama/Llama-2-7b-hf",
             "Qwen/Qwen2.5-7B", "EleutherAI/pythia-1b", "not/a-known-model", "cognitivecomputations/dolphin-2.6-mistral-7b"]
    wanted = lambda model_type: first_release_with(model_type) is None  # noqa: E731
    for name in names:
        full = model_type_of(name)
        assert model_type_if(name, wanted) == (full if full is not None and wanted(full[0]) else None), name
    assert any(model_type_if(name, wanted) for name in names) and any(model_type_of(name) for name in names)
