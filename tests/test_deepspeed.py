"""DeepSpeed JSON: PRE002 + DS001 fixes byte for byte, DS002 batch arithmetic, DS004 offload."""

from __future__ import annotations

import json

import pytest

from conftest import trainlint

ZERO2_FP16 = b"""{
  "train_micro_batch_size_per_gpu": 4,
  "gradient_accumulation_steps": 4,
  "fp16": {
    "enabled": true,
    "loss_scale": 0,
    "initial_scale_power": 16
  },
  "zero_optimization": {
    "stage": 2,
    "overlap_comm": true
  }
}
"""
AFTER_PRE002 = b"""{
  "train_micro_batch_size_per_gpu": 4,
  "gradient_accumulation_steps": 4,
  "fp16": {
    "enabled": false,
    "loss_scale": 0,
    "initial_scale_power": 16
  },
  "bf16": {
    "enabled": true
  },
  "zero_optimization": {
    "stage": 2,
    "overlap_comm": true
  }
}
"""


def codes(result) -> list[str]:
    return [finding["code"] for finding in json.loads(result.out)]


@pytest.fixture
def ds_config(tmp_path):
    def write(data: bytes, name: str = "ds_config.json"):
        path = tmp_path / name
        path.write_bytes(data)
        return path

    return write


def test_fixture_matches_inline_copy(fixture_copy):
    assert fixture_copy("deepspeed/zero2_fp16.json").read_bytes() == ZERO2_FP16


def test_pre002_safe_and_ds001_unsafe(ds_config):
    path = ds_config(ZERO2_FP16)
    findings = {f["code"]: f for f in json.loads(trainlint("check", path, "--gpu", "A100", "--format", "json").out)}
    assert set(findings) == {"PRE002", "DS001"}
    assert findings["PRE002"]["fix"]["applicability"] == "safe"
    assert findings["DS001"]["fix"]["applicability"] == "unsafe"
    assert (findings["DS001"]["line"], findings["DS001"]["column"]) == (10, 14)


def test_fix_applies_only_the_safe_fix(ds_config):
    path = ds_config(ZERO2_FP16)
    result = trainlint("check", path, "--gpu", "A100", "--fix")
    assert path.read_bytes() == AFTER_PRE002
    # fp16 is off now, so DS001 no longer applies: nothing remains.
    assert result.code == 0
    trainlint("check", path, "--gpu", "A100", "--fix")
    assert path.read_bytes() == AFTER_PRE002


def test_unsafe_fixes_apply_both(ds_config):
    path = ds_config(ZERO2_FP16)
    result = trainlint("check", path, "--gpu", "A100", "--fix", "--unsafe-fixes")
    assert result.code == 0
    assert path.read_bytes() == AFTER_PRE002.replace(b'"stage": 2', b'"stage": 1')
    trainlint("check", path, "--gpu", "A100", "--fix", "--unsafe-fixes")
    assert path.read_bytes() == AFTER_PRE002.replace(b'"stage": 2', b'"stage": 1')


def test_tab_indented_file_without_final_newline(ds_config):
    original = ZERO2_FP16.replace(b"    ", b"\t\t").replace(b"  ", b"\t").rstrip(b"\n")
    path = ds_config(original)
    trainlint("check", path, "--gpu", "A100", "--fix", "--unsafe-fixes")
    expected = (original.replace(b'"enabled": true', b'"enabled": false')
                .replace(b'\t},\n\t"zero', b'\t},\n\t"bf16": {\n\t\t"enabled": true\n\t},\n\t"zero')
                .replace(b'"stage": 2', b'"stage": 1'))
    assert path.read_bytes() == expected
    assert not expected.endswith(b"\n")


def test_existing_bf16_block_is_switched_on_not_duplicated(ds_config):
    path = ds_config(b'{"fp16": {"enabled": true}, "bf16": {"enabled": false}, "zero_optimization": {"stage": 1}}')
    trainlint("check", path, "--gpu", "H100", "--fix")
    assert path.read_bytes() == b'{"fp16": {"enabled": false}, "bf16": {"enabled": true}, "zero_optimization": {"stage": 1}}'


def test_legacy_bfloat16_key_is_used_when_present(ds_config):
    path = ds_config(b'{"fp16": {"enabled": true}, "bfloat16": {"enabled": false}}')
    trainlint("check", path, "--gpu", "H100", "--fix")
    assert path.read_bytes() == b'{"fp16": {"enabled": false}, "bfloat16": {"enabled": true}}'


def test_crlf_json_insertion_keeps_crlf(ds_config):
    path = ds_config(b'{\r\n  "fp16": {\r\n    "enabled": true\r\n  }\r\n}\r\n')
    trainlint("check", path, "--gpu", "A100", "--fix")
    assert path.read_bytes() == (b'{\r\n  "fp16": {\r\n    "enabled": false\r\n  },\r\n'
                                 b'  "bf16": {\r\n    "enabled": true\r\n  }\r\n}\r\n')


def test_pre002_silent_on_v100_and_with_auto(ds_config):
    assert "PRE002" not in codes(trainlint("check", ds_config(ZERO2_FP16), "--gpu", "V100", "--format", "json"))
    auto = ds_config(b'{"fp16": {"enabled": "auto"}, "zero_optimization": {"stage": 2}}', "auto.json")
    assert codes(trainlint("check", auto, "--gpu", "A100", "--format", "json")) == []


def test_pre002_needs_every_target_to_support_bf16(ds_config):
    path = ds_config(ZERO2_FP16)
    assert "PRE002" not in codes(trainlint("check", path, "--gpu", "A100,T4", "--format", "json"))
    assert "PRE002" in codes(trainlint("check", path, "--gpu", "A100,H100", "--format", "json"))


def test_pre001_bf16_on_v100_names_the_targets(ds_config):
    path = ds_config(b'{"bf16": {"enabled": true}, "zero_optimization": {"stage": 3}}')
    findings = json.loads(trainlint("check", path, "--gpu", "A100,V100", "--format", "json").out)
    assert [f["code"] for f in findings] == ["PRE001"]
    assert findings[0]["targets"] == ["V100-16GB"]
    assert "V100-16GB (cc 7.0)" in findings[0]["message"]
    assert findings[0]["fix"]["applicability"] == "unsafe"
    trainlint("check", path, "--gpu", "V100", "--fix", "--unsafe-fixes")
    assert path.read_bytes() == b'{"bf16": {"enabled": false}, "fp16": {"enabled": true}, "zero_optimization": {"stage": 3}}'
    assert codes(trainlint("check", path, "--gpu", "A100", "--format", "json")) == ["PRE002"]


def test_pre003_both_enabled(ds_config):
    path = ds_config(b'{"fp16": {"enabled": true}, "bf16": {"enabled": true}}')
    result = trainlint("check", path, "--no-detect", "--format", "json")
    assert codes(result) == ["PRE003"]
    assert json.loads(result.out)[0]["fix"] is None  # no target known: no fix offered
    trainlint("check", path, "--gpu", "A100", "--fix", "--unsafe-fixes")
    assert path.read_bytes() == b'{"fp16": {"enabled": false}, "bf16": {"enabled": true}}'
    other = ds_config(b'{"fp16": {"enabled": true}, "bf16": {"enabled": true}}', "t4.json")
    trainlint("check", other, "--gpu", "T4", "--fix", "--unsafe-fixes")
    assert other.read_bytes() == b'{"fp16": {"enabled": true}, "bf16": {"enabled": false}}'
    one = ds_config(b'{"fp16": {"enabled": false}, "bf16": {"enabled": true}}', "one.json")
    assert "PRE003" not in codes(trainlint("check", one, "--no-detect", "--format", "json"))


BATCH = b'{"train_batch_size": 64, "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 4}'


def test_ds002_batch_arithmetic(ds_config):
    path = ds_config(BATCH)
    result = trainlint("check", path, "--no-detect", "--world-size", "2", "--format", "json")
    findings = json.loads(result.out)
    assert [f["code"] for f in findings] == ["DS002"]
    assert "64" in findings[0]["message"] and "32" in findings[0]["message"]
    assert findings[0]["column"] == 22  # the train_batch_size value
    assert codes(trainlint("check", path, "--no-detect", "--world-size", "4", "--format", "json")) == []
    # world size unknown: 64 is a multiple of 16, some GPU count fits
    assert codes(trainlint("check", path, "--no-detect", "--format", "json")) == []
    odd = ds_config(BATCH.replace(b"64", b"50"), "odd.json")
    assert codes(trainlint("check", odd, "--no-detect", "--format", "json")) == ["DS002"]


def test_ds002_world_size_from_settings(ds_config, tmp_path):
    path = ds_config(BATCH)
    (tmp_path / "trainlint.toml").write_text("world-size = 2\n")
    assert codes(trainlint("check", path, "--no-detect", "--format", "json")) == ["DS002"]
    assert codes(trainlint("check", path, "--no-detect", "--world-size", "4", "--format", "json")) == []


def test_ds004_offload_param_below_stage3(ds_config):
    stage2 = ds_config(b'{"zero_optimization": {"stage": 2, "offload_param": {"device": "cpu"}}}')
    findings = json.loads(trainlint("check", stage2, "--no-detect", "--format", "json").out)
    assert [f["code"] for f in findings] == ["DS004"]
    assert findings[0]["fix"] is None
    stage3 = ds_config(b'{"zero_optimization": {"stage": 3, "offload_param": {"device": "cpu"}}}', "s3.json")
    assert codes(trainlint("check", stage3, "--no-detect", "--format", "json")) == []
    none_device = ds_config(b'{"zero_optimization": {"stage": 2, "offload_param": {"device": "none"}}}', "n.json")
    assert codes(trainlint("check", none_device, "--no-detect", "--format", "json")) == []
    legacy = ds_config(b'{"zero_optimization": {"stage": 1, "cpu_offload_param": true}}', "legacy.json")
    assert codes(trainlint("check", legacy, "--no-detect", "--format", "json")) == ["DS004"]


def test_ds004_partial_optimizer_offload_below_stage3(ds_config):
    partial = ds_config(b'{"zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu", "ratio": 0.3}}}')
    findings = json.loads(trainlint("check", partial, "--no-detect", "--format", "json").out)
    assert [f["code"] for f in findings] == ["DS004"] and "0.3" in findings[0]["message"]
    full = ds_config(b'{"zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu", "ratio": 1.0}}}', "f.json")
    assert codes(trainlint("check", full, "--no-detect", "--format", "json")) == []
    stage3 = ds_config(b'{"zero_optimization": {"stage": 3, "offload_optimizer": {"device": "cpu", "ratio": 0.3}}}', "3.json")
    assert codes(trainlint("check", stage3, "--no-detect", "--format", "json")) == []


def test_ds001_not_without_fp16(ds_config):
    path = ds_config(b'{"bf16": {"enabled": true}, "zero_optimization": {"stage": 2}}')
    assert codes(trainlint("check", path, "--gpu", "A100", "--format", "json")) == []


def test_duplicate_key_last_wins_like_json(ds_config):
    path = ds_config(b'{"fp16": {"enabled": true}, "fp16": {"enabled": false}, "zero_optimization": {"stage": 2}}')
    assert codes(trainlint("check", path, "--gpu", "A100", "--format", "json")) == []
