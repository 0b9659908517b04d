"""TRN097 (a dataset with media columns against the template's multimodal plugin), TRN098 (one
image's tokens against cutoff_len) and TRN104 (image_resolution read as a pixel count), LLaMA-Factory."""

from __future__ import annotations

import json

import pytest

from conftest import trainlint


@pytest.fixture(autouse=True)
def _pins_only(nothing_installed):
    """Versions come from the pins each test writes."""


def codes(tmp_path, text: str, pin: str | None = None, registry: dict | None = None, select="TRN097,TRN098"):
    (tmp_path / "train.yaml").write_text(text)
    if pin:
        (tmp_path / "requirements.txt").write_text(f"llamafactory=={pin}\n")
    if registry is not None:
        (tmp_path / "data").mkdir(exist_ok=True)
        (tmp_path / "data" / "dataset_info.json").write_text(json.dumps(registry))
    result = trainlint("check", tmp_path / "train.yaml", "--no-detect", "--format", "json", "--select", select)
    assert result.code in (0, 1), result.err
    return [(finding["code"], finding["message"]) for finding in json.loads(result.out)]


def config(dataset="mllm_demo", template="qwen", extra=""):
    return (f"model_name_or_path: Qwen/Qwen2-VL-2B-Instruct\nstage: sft\ndo_train: true\nfinetuning_type: lora\n"
            f"dataset: {dataset}\ntemplate: {template}\noutput_dir: out\n{extra}")


_CUSTOM = {"shots": {"file_name": "shots.json", "formatting": "sharegpt", "columns": {"messages": "messages",
                                                                                     "images": "images"}},
           "clips": {"file_name": "clips.json", "formatting": "sharegpt", "columns": {"videos": "videos"}},
           "text": {"file_name": "text.json"}}


@pytest.mark.parametrize("dataset, template, pin, extra, fires", [
    ("shots", "llama3", "0.9.4", "", True),       # a custom image set beside the config
    ("text", "llama3", "0.9.4", "", False),       # no media columns
    ("shots", "qwen2_vl", "0.9.4", "", False),    # image plugin
    ("clips", "llava", "0.9.4", "", True),        # llava's plugin has an image token only
    ("clips", "qwen2_vl", None, "", False),
    ("shots", "llama3", None, "tokenized_path: cache\n", False),  # a saved dataset is not tokenized again
    ("shots", "llama3", "0.8.3", "visual_inputs: true\n", False),
    ("shots", "no_such_template", "0.9.4", "", False),  # TRN067's
])
def test_custom_registry(tmp_path, dataset, template, pin, extra, fires):
    found = codes(tmp_path, config(dataset, template, extra), pin, _CUSTOM, select="TRN097")
    assert bool(found) is fires, found


def test_a_registry_beside_the_config_wins_over_the_shipped_one(tmp_path):
    registry = {"mllm_demo": {"file_name": "mllm_demo.json"}}  # a text set under the built-in name
    assert codes(tmp_path, config(), None, registry, select="TRN097") == []


def test_shipped_names_only_with_the_default_dataset_dir(tmp_path):
    assert codes(tmp_path, config(extra="dataset_dir: /mnt/registry\n"), select="TRN097") == []
    [(code, message)] = codes(tmp_path, config(dataset="identity,mllm_demo"), select="TRN097")
    assert code == "TRN097" and "every" not in message and "0.9.0" in message


def test_eval_dataset_counts(tmp_path):
    found = codes(tmp_path, config(dataset="identity", extra="eval_dataset: mllm_demo\n"), "0.9.2", select="TRN097")
    assert [code for code, _ in found] == ["TRN097"]
    assert "Please check" not in found[0][1] and "0.9.2" in found[0][1]


@pytest.mark.parametrize("pin, extra, fires", [
    ("0.9.4", "cutoff_len: 700\n", True),            # 729 tokens at image_max_pixels 768 * 768
    ("0.9.4", "cutoff_len: 800\n", False),
    ("0.9.4", "cutoff_len: 700\nimage_max_pixels: 262144\n", False),  # 512 * 512: 324 tokens
    ("0.9.0", "image_resolution: 980\n", True),      # the longest side, cutoff_len default 1024 then
    ("0.9.1", "image_resolution: 980\n", False),     # a pixel count: no truncation (tiny images, not this rule)
    ("0.9.1", "image_resolution: 1048576\n", False),  # 1369 tokens under cutoff_len's default 2048
    ("0.9.1", "image_resolution: 1048576\ncutoff_len: 1024\n", True),
    ("0.9.2.dev0", "image_max_pixels: 1048576\ncutoff_len: 1024\n", True),  # the key refused before f5cd17881
    (None, "cutoff_len: 256\n", True),                # 324 tokens at every release's default
    (None, "cutoff_len: 512\n", False),               # 0.9.0 and 0.9.1: 324 tokens
])
def test_cutoff_against_image_tokens(tmp_path, pin, extra, fires):
    found = codes(tmp_path, config(template="qwen2_vl", extra=extra), pin, select="TRN098")
    assert bool(found) is fires, found


def test_cutoff_needs_an_image_dataset_and_a_known_patch(tmp_path):
    assert codes(tmp_path, config("alpaca_en_demo", "qwen2_vl", "cutoff_len: 256\n"), "0.9.4", select="TRN098") == []
    assert codes(tmp_path, config(template="llava", extra="cutoff_len: 256\n"), "0.9.4", select="TRN098") == []


@pytest.mark.parametrize("template, pin, extra, fires", [
    ("qwen3_vl", "0.9.4", "cutoff_len: 500\n", True),    # 768 / 32 = 24: 576 tokens (Qwen2-VL's 28 px: 729)
    ("qwen3_vl", "0.9.4", "cutoff_len: 600\n", False),
    ("qwen3_vl_nothink", "0.9.5", "cutoff_len: 500\n", True),
    ("qwen3_vl", "0.9.3", "cutoff_len: 256\n", False),   # no such template before 0.9.4: TRN067's
    ("qwen3_vl", None, "cutoff_len: 500\n", True),       # only 0.9.4 on: image_max_pixels' reading alone
    ("qwen3_vl", None, "cutoff_len: 600\n", False),
    ("qwen2_omni", "0.9.3", "cutoff_len: 700\n", True),  # 28 px as qwen2_vl: 729 tokens
    ("qwen2_omni", None, "cutoff_len: 700\n", True),     # 0.9.0 / 0.9.1 have no qwen2_omni: not judged by them
    ("qwen3_omni", "0.9.4", "cutoff_len: 256\n", False),  # its patch size is not confirmed: silent
    ("qwen3_5", "0.9.5", "cutoff_len: 256\n", False),
])
def test_cutoff_against_image_tokens_of_other_qwen_templates(tmp_path, template, pin, extra, fires):
    found = codes(tmp_path, config(template=template, extra=extra), pin, select="TRN098")
    assert bool(found) is fires, found
    if fires:
        patch = 32 if template.startswith("qwen3") else 28
        assert f"({patch} x {patch} pixels each)" in found[0][1]


@pytest.mark.parametrize("pin, extra, fires", [
    ("0.9.1", "image_resolution: 512\n", True),      # 22 x 22 pixels
    ("0.9.1", "image_resolution: 1024\n", True),     # 32 x 32: the most still read as a side
    ("0.9.1", "image_resolution: 2048\n", False),    # 45 x 45: may be a deliberate small cap
    ("0.9.1", "image_resolution: 262144\n", False),
    ("0.9.1", "image_resolution: 512\nstage: pt\n", False),  # pt never runs the plugin
    ("0.9.0", "image_resolution: 512\n", False),     # the longest side there
    ("0.9.1.dev0", "image_resolution: 512\n", False),  # a side before 5003820a6
    (None, "image_resolution: 512\n", False),
])
def test_image_resolution_read_as_pixel_count(tmp_path, pin, extra, fires):
    text = config(template="qwen2_vl", extra=extra)
    if "stage: pt" in extra:
        text = text.replace("stage: sft\n", "")
    found = codes(tmp_path, text, pin, select="TRN104")
    assert bool(found) is fires, found
