"""QNT010 bnb-quantization-on-prequantized-model: the transformers release bounds read from each
wheel's from_pretrained / merge_quantization_configs, and the frameworks whose loaders reach it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import FIXTURES, trainlint


pytestmark = pytest.mark.usefixtures("empty_hub_cache", "nothing_installed")


_TRL = "model_name_or_path: {model}\ndataset_name: d\noutput_dir: o\nload_in_4bit: true\n"


def _check(folder: Path, model: str, pin: str | None, quantization: dict | None = None) -> list[str]:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "trl.yaml").write_text(_TRL.format(model=model))
    if pin:
        (folder / "requirements.txt").write_text(f"transformers=={pin}\n")
    if quantization is not None:
        (folder / model).mkdir(parents=True)
        (folder / model / "config.json").write_text(json.dumps({"model_type": "llama",
                                                                 "quantization_config": quantization}))
    result = trainlint("check", folder / "trl.yaml", "--no-detect", "--format", "json", "--select", "QNT010")
    assert result.code in (0, 1), result.err
    return [finding["message"] for finding in json.loads(result.out)]


@pytest.mark.parametrize("pin, expected", [
    ("4.31.0", None), ("4.33.0", "get_loading_attributes"), ("4.36.2", "You can't quantize it again"),
    ("4.45.2", "get_loading_attributes"), ("4.57.6", "The model is quantized with GPTQConfig"),
    (None, "every transformers release that reads GPTQ"),
])
def test_gptq_by_release(tmp_path, pin, expected):
    found = _check(tmp_path, "TheBloke/Llama-2-7B-GPTQ", pin)
    assert (found == []) if expected is None else (len(found) == 1 and expected in found[0]), found


def test_awq_needs_a_known_release(tmp_path):
    assert not _check(tmp_path / "a", "TheBloke/Mistral-7B-v0.1-AWQ", None)
    assert not _check(tmp_path / "b", "TheBloke/Mistral-7B-v0.1-AWQ", "4.35.2")
    assert _check(tmp_path / "c", "TheBloke/Mistral-7B-v0.1-AWQ", "4.36.0")


def test_other_methods_from_the_class_check(tmp_path):
    fp8 = {"quant_method": "fp8", "weight_block_size": [128, 128]}
    assert not _check(tmp_path / "a", "fp8-model", "4.55.0", fp8)
    assert "The model is quantized with FineGrainedFP8Config" in _check(tmp_path / "b", "fp8-model", "5.23.0", fp8)[0]
    bnb = {"quant_method": "bitsandbytes", "load_in_4bit": True}
    assert not _check(tmp_path / "c", "bnb-model", "5.23.0", bnb)


def test_incident_caught():
    folder = FIXTURES / "incidents" / "ludwig-bnb-quantization-on-gptq-model"
    result = trainlint("check", folder, "--no-detect", "--format", "json", "--select", "QNT010")
    assert len(json.loads(result.out)) == 1
