"""Blind batch 11: a LoRA on lm_head / embed_tokens of a tied-embedding checkpoint (MOD014), and
PEF001 reading whether the framework hands use_dora to PEFT (Ludwig 0.10.2 drops it, TRN095).
Snapshot fixtures live in tests/rules/MOD014; these pin the edges."""

from __future__ import annotations

import json

import pytest

from conftest import trainlint, write_file


pytestmark = pytest.mark.usefixtures("empty_hub_cache", "nothing_installed")


def codes(*args):
    return sorted(f["code"] for f in json.loads(trainlint("check", *args, "--no-detect", "--format", "json").out))


def _adapter(model="google/gemma-2-2b-it", targets=("q_proj", "lm_head"), **extra):
    return json.dumps({"peft_type": "LORA", "task_type": "CAUSAL_LM", "base_model_name_or_path": model,
                       "r": 8, "lora_alpha": 16, "target_modules": targets if isinstance(targets, str)
                       else list(targets), **extra})


@pytest.mark.parametrize("targets", [["lm_head"], ["q_proj", "embed_tokens"], ["model.embed_tokens", "lm_head"]])
def test_mod014_fires_on_a_tied_layer_target(tmp_path, targets):
    path = write_file(tmp_path / "adapter_config.json", _adapter(targets=targets))
    assert codes(path, "--select", "MOD014") == ["MOD014"]


@pytest.mark.parametrize("model, targets, extra", [
    ("google/gemma-2-2b-it", ["q_proj", "v_proj"], {}),                      # no tied layer targeted
    ("mistralai/Mistral-7B-v0.1", ["lm_head"], {}),                          # untied checkpoint
    ("acme/house-model-2b", ["lm_head"], {}),                                # unknown model: silent
    ("google/gemma-2-2b-it", ".*lm_head", {}),                               # a regex: not judged
])
def test_mod014_silent(tmp_path, model, targets, extra):
    path = write_file(tmp_path / "adapter_config.json", _adapter(model, targets, **extra))
    assert codes(path, "--select", "MOD014") == []


def _message(path):
    found = json.loads(trainlint("check", path, "--select", "MOD014", "--no-detect", "--format", "json").out)
    assert [f["code"] for f in found] == ["MOD014"]
    return found[0]["message"]


def test_mod014_ensure_weight_tying_fires_on_every_release(tmp_path):
    """PEFT < 0.19 does not tie target_modules; from 0.19.0 the tied LoRA is merged from both layers (W + 2 delta)."""
    path = write_file(tmp_path / "adapter_config.json", _adapter(ensure_weight_tying=True))
    write_file(tmp_path / "requirements.txt", "peft==0.18.1\n")
    assert "ties modules_to_save only" in _message(path)
    write_file(tmp_path / "requirements.txt", "peft==0.21.2\n")
    message = _message(path)
    assert "carries it twice" in message and "before PEFT 0.19.0" not in message
    (tmp_path / "requirements.txt").unlink()
    message = _message(path)  # PEFT unknown: both ranges are wrong on merge, and the message says so
    assert "carries it twice" in message and "before PEFT 0.19.0" in message


def test_mod014_reads_the_local_config(tmp_path):
    path = write_file(tmp_path / "adapter_config.json", _adapter(model="models/m"))
    write_file(tmp_path / "models" / "m" / "config.json", json.dumps({"model_type": "qwen2", "tie_word_embeddings": True}))
    assert codes(path, "--select", "MOD014") == ["MOD014"]
    write_file(tmp_path / "models" / "m" / "config.json", json.dumps({"model_type": "qwen2", "tie_word_embeddings": False}))
    from linter import models

    models.checkpoint_config.cache_clear()
    assert codes(path, "--select", "MOD014") == []


LF = """model_name_or_path: meta-llama/Llama-3.2-1B-Instruct
stage: sft
do_train: {train}
finetuning_type: lora
lora_target: q_proj,lm_head
template: llama3
{extra}"""


def test_mod014_llamafactory_edges(tmp_path):
    assert codes(write_file(tmp_path / "a" / "lf.yaml", LF.format(train="true", extra="")), "--select", "MOD014") == ["MOD014"]
    # Unsloth's get_peft_model decides what happens to lm_head / embed_tokens itself
    assert codes(write_file(tmp_path / "b" / "lf.yaml", LF.format(train="true", extra="use_unsloth: true\n")),
                 "--select", "MOD014") == []


LUDWIG_DORA = """model_type: llm
base_model: mistralai/Mistral-7B-v0.1
quantization:
  bits: 4
adapter:
  type: {kind}
  use_dora: true
input_features:
  - name: prompt
    type: text
output_features:
  - name: output
    type: text
trainer:
  type: finetune
"""


@pytest.mark.parametrize("kind, ludwig, expected", [
    ("lora", "ludwig==0.10.2\n", []),             # LoraConfig.to_config drops use_dora (TRN095): no DoRA layers
    ("lora", "ludwig==0.10.3\n", ["PEF001"]),     # passed from 337f40746: Linear4bit refuses DoRA on PEFT 0.9
    ("lora", "", []),                             # Ludwig unknown: 0.10.2 or 0.10.3 both allow peft 0.9
    ("adalora", "ludwig==0.10.3\n", []),          # AdaloraConfig.to_config never passes use_dora
])
def test_pef001_reads_whether_ludwig_hands_use_dora_to_peft(tmp_path, kind, ludwig, expected):
    path = write_file(tmp_path / "train.yaml", LUDWIG_DORA.format(kind=kind))
    write_file(tmp_path / "requirements.txt", ludwig + "peft==0.9.0\n")
    assert codes(path, "--select", "PEF001") == expected


@pytest.mark.parametrize("kind, ludwig, reaches", [
    ("lora", "ludwig==0.10.2\n", False), ("lora", "ludwig==0.10.3\n", True), ("lora", "", None),
    ("adalora", "", False),
])
def test_ludwig_records_whether_use_dora_reaches_peft(tmp_path, kind, ludwig, reaches):
    from linter.adapters.ludwig import LudwigAdapter
    from linter.source import Source
    from linter.yaml_reader import parse_yaml

    write_file(tmp_path / "requirements.txt", ludwig)
    document = parse_yaml(Source(tmp_path / "train.yaml", LUDWIG_DORA.format(kind=kind)))
    config = LudwigAdapter().parse(document)
    assert config.get("adapter.dora_reaches_peft") is not None
    assert config.value("adapter.dora_reaches_peft") is reaches
