"""Incident 1 (Ludwig, Mistral-7B QLoRA): QNT001 and its one-line fix, byte for byte."""

from __future__ import annotations

import json

from conftest import trainlint

FIXTURE = "ludwig/mistral_qlora.yaml"
ORIGINAL_QUANTIZATION = b"quantization:\n  bits: 4\n  # compute dtype left at Ludwig's default\n"
FIXED_QUANTIZATION = (b"quantization:\n  bits: 4\n  bnb_4bit_compute_dtype: bfloat16\n"
                      b"  # compute dtype left at Ludwig's default\n")


def test_qnt001_reported_at_quantization_key_with_safe_fix(fixture_copy):
    path = fixture_copy(FIXTURE)
    result = trainlint("check", path, "--gpu", "A100", "--format", "json")
    assert result.code == 1
    findings = [f for f in json.loads(result.out) if f["code"] == "QNT001"]
    assert len(findings) == 1
    finding = findings[0]
    line = path.read_text().splitlines().index("quantization:") + 1
    assert (finding["line"], finding["column"]) == (line, 1)
    assert finding["fix"]["applicability"] == "safe"
    assert finding["fix"]["edits"][0]["content"] == "  bnb_4bit_compute_dtype: bfloat16\n"
    assert finding["framework"] == "ludwig"
    assert finding["targets"] == ["A100-40GB"]


def test_fix_inserts_exactly_one_line(fixture_copy):
    path = fixture_copy(FIXTURE)
    original = path.read_bytes()
    assert ORIGINAL_QUANTIZATION in original
    result = trainlint("check", path, "--gpu", "A100", "--fix")
    assert result.code == 0, result.out
    assert path.read_bytes() == original.replace(ORIGINAL_QUANTIZATION, FIXED_QUANTIZATION)
    again = trainlint("check", path, "--gpu", "A100", "--fix")
    assert again.code == 0
    assert path.read_bytes() == original.replace(ORIGINAL_QUANTIZATION, FIXED_QUANTIZATION)


def test_fix_keeps_crlf_line_endings(fixture_copy):
    path = fixture_copy(FIXTURE, lambda data: data.replace(b"\n", b"\r\n"))
    original = path.read_bytes()
    trainlint("check", path, "--gpu", "A100", "--fix")
    expected = original.replace(ORIGINAL_QUANTIZATION.replace(b"\n", b"\r\n"),
                                FIXED_QUANTIZATION.replace(b"\n", b"\r\n"))
    assert expected != original
    assert path.read_bytes() == expected
    trainlint("check", path, "--gpu", "A100", "--fix")
    assert path.read_bytes() == expected


def test_fix_uses_four_space_indentation_of_siblings(fixture_copy):
    path = fixture_copy(FIXTURE, lambda data: data.replace(b"\n  ", b"\n    "))
    original = path.read_bytes()
    trainlint("check", path, "--gpu", "A100", "--fix")
    expected = original.replace(b"    bits: 4\n", b"    bits: 4\n    bnb_4bit_compute_dtype: bfloat16\n")
    assert expected != original
    assert path.read_bytes() == expected


def test_fix_without_final_newline(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_bytes(b"model_type: llm\nbase_model: mistralai/Mistral-7B-v0.1\nadapter:\n  type: lora\n"
                     b"quantization:\n  bits: 4")
    trainlint("check", path, "--gpu", "A100", "--fix")
    assert path.read_bytes() == (b"model_type: llm\nbase_model: mistralai/Mistral-7B-v0.1\nadapter:\n  type: lora\n"
                                 b"quantization:\n  bits: 4\n  bnb_4bit_compute_dtype: bfloat16")


def test_explicit_float16_is_replaced_in_place_keeping_quotes(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_bytes(b"model_type: llm\nbase_model: m\nadapter: {type: lora}\n"
                     b"quantization:\n  bits: 4\n  bnb_4bit_compute_dtype: 'float16'  # explicit\n")
    trainlint("check", path, "--gpu", "H100", "--fix")
    assert path.read_bytes() == (b"model_type: llm\nbase_model: m\nadapter: {type: lora}\n"
                                 b"quantization:\n  bits: 4\n  bnb_4bit_compute_dtype: 'bfloat16'  # explicit\n")


def test_flow_style_quantization_gets_an_inline_member(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_bytes(b"model_type: llm\nbase_model: m\nadapter: {type: lora}\nquantization: {bits: 4}\n")
    trainlint("check", path, "--gpu", "A100", "--fix")
    assert path.read_bytes() == (b"model_type: llm\nbase_model: m\nadapter: {type: lora}\n"
                                 b"quantization: {bits: 4, bnb_4bit_compute_dtype: bfloat16}\n")


def test_v100_does_not_fire_qnt001(fixture_copy):
    path = fixture_copy(FIXTURE)
    result = trainlint("check", path, "--gpu", "V100", "--format", "json")
    assert "QNT001" not in [f["code"] for f in json.loads(result.out)]


def test_8bit_does_not_fire_qnt001(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text("model_type: llm\nbase_model: m\nadapter: {type: lora}\ntrainer: {type: finetune}\n"
                    "quantization:\n  bits: 8\n")
    result = trainlint("check", path, "--gpu", "A100", "--format", "json")
    assert json.loads(result.out) == []


def test_no_gpu_exit_zero_and_one_line_note(fixture_copy, no_gpu):
    path = fixture_copy(FIXTURE)
    result = trainlint("check", path)
    assert result.code == 0, result.out
    notes = result.err.strip().splitlines()
    assert len(notes) == 1
    assert "no GPU target" in notes[0] and "--gpu" in notes[0] and "NVML Shared Library Not Found" in notes[0]


def test_noqa_on_the_quantization_line_suppresses(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text("model_type: llm\nbase_model: m\nadapter: {type: lora}\ntrainer: {type: finetune}\n"
                    "quantization:  # noqa: QNT001\n  bits: 4\n")
    assert trainlint("check", path, "--gpu", "A100").code == 0
    path.write_text("model_type: llm\nbase_model: m\nadapter: {type: lora}\ntrainer: {type: finetune}\n"
                    "quantization:  # noqa: PRE002\n  bits: 4\n")
    assert trainlint("check", path, "--gpu", "A100").code == 1
