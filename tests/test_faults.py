"""Issue 19 faults handled above the readers: odd value types reach no rule (fault 8), output
never fails on text the terminal cannot encode (fault 5)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import trainlint

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("name, text", [
    ("ludwig.yaml", "model_type: llm\nbase_model: m\ninput_features: []\nadapter:\n  type: lora\n  target_modules:\n"),
    ("adapter_config.json", '{"peft_type": "LORA", "base_model_name_or_path": "m", "r": 8, "modules_to_save": true}'),
    ("axolotl.yaml", "base_model: m\nmicro_batch_size: 2\nadapter: lora\nlora_r: auto\nlora_target_modules: 7\n"),
    ("sft.yaml", "model_name_or_path: m\nstage: sft\nfinetuning_type: [lora]\nlora_rank: [1, 2]\n"),
])
def test_values_of_an_unexpected_type_are_findings_never_internal_errors(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    result = trainlint("check", path, "--gpu", "A100", "--format", "json")
    assert result.code in (0, 1) and "internal error" not in result.err, result.err
    assert all(finding["code"] != "SYN001" for finding in json.loads(result.out))


def test_a_wrong_type_in_a_python_config_is_sch002(tmp_path):
    """Python configs have no schema: the adapter's own type check reports the value."""
    path = tmp_path / "train.py"
    path.write_text("from unsloth import FastLanguageModel\nfrom peft import LoraConfig\n"
                    "model, tok = FastLanguageModel.from_pretrained('unsloth/llama-3-8b', max_seq_length=2048)\n"
                    "model = FastLanguageModel.get_peft_model(model, r='sixteen', target_modules=['q_proj'])\n")
    found = json.loads(trainlint("check", path, "--gpu", "A100", "--format", "json").out)
    assert any(f["code"] == "SCH002" and "'sixteen'" in f["message"] for f in found)


def test_a_lone_surrogate_key_and_an_undecodable_file_name_are_written_escaped(tmp_path):
    (tmp_path / "ds.json").write_text('{"\\ud800": 1, "zero_optimization": {"stage": 2}, "fp16": {"enabled": true}}')
    odd = tmp_path / os.fsdecode(b"x\xff.json")
    odd.write_text((tmp_path / "ds.json").read_text())
    env = {**os.environ, "PYTHONIOENCODING": "utf-8", "PYTHONPATH": str(ROOT)}
    for fmt in ("text", "github", "json", "sarif"):
        done = subprocess.run([sys.executable, "-m", "linter", "check", str(tmp_path), "--gpu", "A100", "--fix",
                               "--format", fmt], capture_output=True, text=True, env=env, errors="replace")
        assert done.returncode in (0, 1) and "internal error" not in done.stderr, (fmt, done.stderr)


def test_an_empty_selector_is_a_usage_error_not_every_rule_off(tmp_path):
    """Fault 9: `ignore = [""]` and `--select ''` switched every rule off, exit 0."""
    path = tmp_path / "ds.json"
    path.write_text('{"zero_optimization": {"stage": 2}, "fp16": {"enabled": true}}')
    with pytest.raises(SystemExit) as exit_:
        trainlint("check", path, "--gpu", "A100", "--select", "")
    assert exit_.value.code == 2
    (tmp_path / "pyproject.toml").write_text('[tool.trainlint]\nignore = [""]\n')
    result = trainlint("check", path, "--gpu", "A100")
    assert result.code == 2 and "empty rule selector" in result.err


def test_an_edit_inside_an_anchored_mapping_is_refused_and_said(tmp_path):
    """Fault 4: editing `quantization: &q` also changed every `*q` alias, silently."""
    path = tmp_path / "ludwig.yaml"
    text = ("model_type: llm\nbase_model: mistralai/Mistral-7B-v0.1\ninput_features: [{name: p, type: text}]\n"
            "output_features: [{name: r, type: text}]\nquantization: &q\n  bits: 4\n"
            "  bnb_4bit_compute_dtype: float16\nbackup: *q\n")
    path.write_text(text)
    result = trainlint("check", path, "--gpu", "A100", "--fix", "--unsafe-fixes", "--select", "QNT001",
                       "--format", "json")
    assert path.read_text() == text
    [finding] = json.loads(result.out)
    assert "not applied automatically" in finding["fix"]["message"] and "alias" in finding["fix"]["message"]


def test_the_files_of_a_run_are_written_together_or_not_at_all(tmp_path, monkeypatch):
    """Fault 2: when a later file of the run could not be written, the earlier one stayed rewritten."""
    from linter import fixer
    from linter.fixes import WriteError

    (tmp_path / ".git").mkdir()
    ds_text = '{\n  "zero_optimization": {"stage": 2},\n  "fp16": {"enabled": true}\n}\n'
    yaml_text = "model_name_or_path: m\ndataset_name: d\nfp16: true\ndeepspeed: ds.json\n"
    (tmp_path / "ds.json").write_text(ds_text)
    (tmp_path / "sft.yaml").write_text(yaml_text)
    real_write = fixer.write_atomic

    def failing(path, data, expected):
        if Path(path).name == "ds.json" and data != expected:
            raise WriteError("file is not writable; not written")
        return real_write(path, data, expected)

    monkeypatch.setattr(fixer, "write_atomic", failing)
    result = trainlint("check", tmp_path / "sft.yaml", "--gpu", "A100", "--fix", "--no-detect")
    assert (tmp_path / "sft.yaml").read_text() == yaml_text and (tmp_path / "ds.json").read_text() == ds_text
    assert result.code == 1 and "restored" in result.err
