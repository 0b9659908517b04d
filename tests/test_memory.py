"""Memory estimate (MEM001, `trainlint estimate`) against hand computations.

GPU validation (measured peaks on a real GPU) is still owed: this task had no GPU machine.
"""

from __future__ import annotations

import json
import shutil

import pytest

from conftest import FIXTURES, trainlint

GIB = 2**30
LLAMA2_7B = 6.74e9


def estimate_json(path, *args):
    result = trainlint("estimate", path, "--format", "json", *args)
    assert result.code == 0, result.err
    data = json.loads(result.out)
    return data, {row["component"].split(" (")[0]: row["gib"] for row in data["components"]}


def test_full_fp16_adamw_model_states_by_hand():
    data, parts = estimate_json(FIXTURES / "memory" / "llama2_full_fp16.yaml", "--gpu", "A10G")
    assert parts["weights"] == pytest.approx(LLAMA2_7B * 2 / GIB, rel=1e-3)
    assert parts["gradients"] == pytest.approx(LLAMA2_7B * 2 / GIB, rel=1e-3)
    assert parts["optimizer states"] == pytest.approx(LLAMA2_7B * 8 / GIB, rel=1e-3)  # Adam moments, fp32
    # checkpointed activations: 32 layer inputs of 2048 x 4096 in 16-bit, plus one layer (34 bytes/elem)
    tokens, hidden = 2048, 4096
    assert parts["activations"] == pytest.approx((32 * tokens * hidden * 2 + tokens * hidden * 34) / GIB, rel=1e-3)
    assert parts["logits and loss"] == pytest.approx(tokens * 32000 * 6 / GIB, rel=1e-3)
    assert data["total_gib"] > 24
    assert data["targets"] == [{"target": "A10G", "memory_gib": 24.0, "used_percent": round(100 * data["total_gib"] / 24, 1)}]


def test_incident_scale_full_finetune_is_mem001_error_on_a10g():
    findings = json.loads(trainlint("check", FIXTURES / "memory" / "llama2_full_fp16.yaml", "--gpu", "A10G",
                                    "--extend-select", "MEM001", "--format", "json").out)
    [mem] = [f for f in findings if f["code"] == "MEM001"]
    assert mem["severity"] == "error" and mem["fix"]["applicability"] == "display-only"
    assert "does not fit A10G (24 GiB)" in mem["message"]


def test_qlora_paged_8bit_fits_in_single_digit_gib():
    data, parts = estimate_json(FIXTURES / "memory" / "llama2_qlora.yaml", "--gpu", "A10G")
    quantized = LLAMA2_7B - 2 * 32000 * 4096
    assert parts["weights"] == pytest.approx((quantized * 0.5 + quantized * 0.127 / 8) / GIB, rel=1e-3)
    lora = 16 * (2 * 4096 + 2 * 4096) * 32  # r x (in + out) for q_proj and v_proj, 32 layers
    assert parts["adapter weights"] == pytest.approx(lora * 4 / GIB, abs=1e-3)  # the report rounds to 1 MiB
    assert parts["optimizer states"] == pytest.approx(lora * 2 / GIB, abs=1e-3)  # 8-bit Adam: 2 bytes/param
    assert 3 < data["total_gib"] < 10
    assert "MEM001" not in [f["code"] for f in json.loads(trainlint(
        "check", FIXTURES / "memory" / "llama2_qlora.yaml", "--gpu", "A10G", "--extend-select", "MEM001",
        "--format", "json").out)]


def test_mem001_is_off_by_default_until_validated_on_a_gpu():
    from linter.registry import get

    assert not get("MEM001").default_enabled
    findings = json.loads(trainlint("check", FIXTURES / "memory" / "llama2_full_fp16.yaml", "--gpu", "A10G",
                                    "--format", "json").out)
    assert "MEM001" not in [f["code"] for f in findings]


def test_zero3_partitions_everything_and_offload_removes_optimizer(tmp_path):
    shutil.copy(FIXTURES / "memory" / "llama2_full_fp16.yaml", tmp_path / "c.yaml")
    (tmp_path / "ds.json").write_text('{"zero_optimization": {"stage": 3, "offload_optimizer": {"device": "cpu"}}}')
    (tmp_path / "c.yaml").write_text((tmp_path / "c.yaml").read_text() + "deepspeed: ds.json\n")
    _, parts = estimate_json(tmp_path / "c.yaml", "--world-size", "8", "--no-detect")
    assert parts["weights"] == pytest.approx(LLAMA2_7B * 2 / GIB / 8, rel=1e-3)
    assert parts["gradients"] == pytest.approx(LLAMA2_7B * 2 / GIB / 8, rel=1e-3)
    assert parts["optimizer states"] == 0


def test_zero2_partitions_optimizer_and_gradients_with_fp32_master(tmp_path):
    shutil.copy(FIXTURES / "memory" / "llama2_full_fp16.yaml", tmp_path / "c.yaml")
    (tmp_path / "ds.json").write_text('{"zero_optimization": {"stage": 2}}')
    (tmp_path / "c.yaml").write_text((tmp_path / "c.yaml").read_text() + "deepspeed: ds.json\n")
    _, parts = estimate_json(tmp_path / "c.yaml", "--world-size", "4", "--no-detect")
    assert parts["weights"] == pytest.approx(LLAMA2_7B * 2 / GIB, rel=1e-3)
    assert parts["gradients"] == pytest.approx(LLAMA2_7B * 2 / GIB / 4, rel=1e-3)
    assert parts["optimizer states"] == pytest.approx(LLAMA2_7B * 12 / GIB / 4, rel=1e-3)  # moments + master


def test_mem001_warns_above_90_percent(tmp_path):
    # QLoRA total is ~5.7 GiB: 6 GiB target -> above 90 %, below 100 %.
    data, _ = estimate_json(FIXTURES / "memory" / "llama2_qlora.yaml", "--no-detect")
    from linter.hardware import Target
    from linter.registry import Context, get
    from linter.hardware import Hardware
    from linter.engine import Options, Outcome, Session

    session = Session(Options(detect=False))
    run = session.build_runs([session.load(FIXTURES / "memory" / "llama2_qlora.yaml", True).config], Outcome())[0]
    target = Target("small", (8, 0), round(data["total_gib"] / 0.95, 2))
    [finding] = get("MEM001").check(run, Context(Hardware([target], "--gpu")))
    assert finding.severity == "warning" and "above 90%" in finding.message
    big = Target("big", (8, 0), 80.0)
    assert list(get("MEM001").check(run, Context(Hardware([big], "--gpu")))) == []


def test_estimate_works_for_every_adapter(tmp_path):
    for path in [FIXTURES / "ludwig" / "mistral_qlora.yaml", FIXTURES / "xtuner" / "llama3_8b_qlora.py",
                 FIXTURES / "unsloth" / "train_tinyllama.py", FIXTURES / "llamafactory" / "llama3_lora_sft.yaml"]:
        if path.exists():
            data, _ = estimate_json(path, "--no-detect")
            assert data["total_gib"] > 0, path
    trl = tmp_path / "sft.yaml"
    trl.write_text("model_name_or_path: Qwen/Qwen2.5-1.5B\ndataset_name: d\nper_device_train_batch_size: 2\n"
                   "max_length: 1024\nbf16: true\n")
    data, _ = estimate_json(trl, "--no-detect")
    assert data["total_gib"] > 1


def test_unknown_model_is_a_usage_error(tmp_path):
    path = tmp_path / "sft.yaml"
    path.write_text("model_name_or_path: someone/unknown-model\ndataset_name: d\n")
    result = trainlint("estimate", path)
    assert result.code == 2 and "dimensions are unknown" in result.err


def test_estimate_on_files_without_a_model_says_what_to_do(tmp_path):
    ds = tmp_path / "ds.json"
    ds.write_text('{"zero_optimization": {"stage": 2}, "bf16": {"enabled": true}}')
    result = trainlint("estimate", ds)
    assert result.code == 2 and "names no model" in result.err
    adapter = tmp_path / "adapter_config.json"
    adapter.write_text('{"peft_type": "LORA", "r": 8, "target_modules": ["q_proj", "v_proj"], '
                       '"base_model_name_or_path": "mistralai/Mistral-7B-v0.1"}')
    data, parts = estimate_json(adapter, "--no-detect")
    assert parts["adapter weights"] > 0 and data["total_gib"] > 13  # 16-bit Mistral-7B weights alone are 13.5 GiB
