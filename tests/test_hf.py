"""HF family: TRL / TrainingArguments YAML, accelerate config, PEFT adapter_config.json."""

from __future__ import annotations

import json
import shutil

from conftest import FIXTURES, trainlint


def codes(result):
    return sorted(f["code"] for f in json.loads(result.out))


def test_trl_yaml_linked_to_mismatched_deepspeed_json(tmp_path):
    for name in ("sft_bf16.yaml", "ds.json"):
        shutil.copy(FIXTURES / "hf" / name, tmp_path / name)
    findings = json.loads(trainlint("check", tmp_path / "sft_bf16.yaml", tmp_path / "ds.json", "--gpu", "A100",
                                    "--format", "json").out)
    ds003 = sorted((f["line"], f["message"].split(" = ")[0]) for f in findings if f["code"] == "DS003")
    assert ds003 == [(2, "DeepSpeed train_micro_batch_size_per_gpu"), (5, "DeepSpeed fp16.enabled")]
    assert all(f["fix"]["applicability"] == "safe" and f["file"].endswith("ds.json")
               for f in findings if f["code"] == "DS003")
    assert "PRE003" in [f["code"] for f in findings]
    # The safe fix sets the DeepSpeed values to "auto"; the run then agrees and nothing is left.
    result = trainlint("check", tmp_path, "--gpu", "A100", "--fix")
    assert (tmp_path / "ds.json").read_text() == (FIXTURES / "hf" / "ds.json").read_text().replace(
        '"train_micro_batch_size_per_gpu": 4', '"train_micro_batch_size_per_gpu": "auto"').replace(
        '"enabled": true', '"enabled": "auto"')
    assert (tmp_path / "sft_bf16.yaml").read_bytes() == (FIXTURES / "hf" / "sft_bf16.yaml").read_bytes()
    assert result.code == 0, result.out


def test_deepspeed_json_linked_from_a_yaml_is_linted_once(tmp_path):
    for name in ("sft_bf16.yaml", "ds.json"):
        shutil.copy(FIXTURES / "hf" / name, tmp_path / name)
    findings = json.loads(trainlint("check", tmp_path, "--gpu", "A100", "--format", "json").out)
    keys = [(f["code"], f["file"], f["line"]) for f in findings]
    assert len(keys) == len(set(keys))


def test_trl_fp16_on_a100_fix_writes_fp16_false_bf16_true(tmp_path):
    path = tmp_path / "sft.yaml"
    path.write_bytes(b"model_name_or_path: Qwen/Qwen2.5-0.5B\ndataset_name: d\nfp16: true  # old habit\n"
                     b"learning_rate: 1.0e-4\n")
    result = trainlint("check", path, "--gpu", "A100", "--format", "json")
    assert codes(result) == ["PRE002"]
    trainlint("check", path, "--gpu", "A100", "--fix")
    fixed = (b"model_name_or_path: Qwen/Qwen2.5-0.5B\ndataset_name: d\nfp16: false  # old habit\nbf16: true\n"
             b"learning_rate: 1.0e-4\n")
    assert path.read_bytes() == fixed
    trainlint("check", path, "--gpu", "A100", "--fix")
    assert path.read_bytes() == fixed


def test_trl_bf16_default_on_t4_is_pre001(tmp_path):
    path = tmp_path / "sft.yaml"
    path.write_text("model_name_or_path: Qwen/Qwen2.5-0.5B\ndataset_name: d\nlearning_rate: 1.0e-4\n")
    findings = json.loads(trainlint("check", path, "--gpu", "T4", "--format", "json").out)
    assert [f["code"] for f in findings] == ["PRE001"]
    assert codes(trainlint("check", path, "--gpu", "A100", "--format", "json")) == []
    trainlint("check", path, "--gpu", "T4", "--fix", "--unsafe-fixes")
    assert path.read_text() == ("model_name_or_path: Qwen/Qwen2.5-0.5B\ndataset_name: d\nlearning_rate: 1.0e-4\n"
                                "fp16: true\nbf16: false\n")


def test_plain_training_arguments_yaml_has_no_bf16_default(tmp_path):
    path = tmp_path / "args.yaml"
    path.write_text("output_dir: out\nper_device_train_batch_size: 4\nnum_train_epochs: 1\n")
    assert codes(trainlint("check", path, "--gpu", "T4", "--format", "json")) == []


def test_trl_4bit_fp16_dtype_on_a100(tmp_path):
    path = tmp_path / "sft.yaml"
    path.write_text("model_name_or_path: m\ndataset_name: d\nload_in_4bit: true\nuse_peft: true\n"
                    "dtype: float16\nbf16: true\n")
    findings = json.loads(trainlint("check", path, "--gpu", "A100", "--format", "json").out)
    assert sorted(f["code"] for f in findings) == ["PRE002", "QNT001"]
    trainlint("check", path, "--gpu", "A100", "--fix")
    assert path.read_text() == ("model_name_or_path: m\ndataset_name: d\nload_in_4bit: true\nuse_peft: true\n"
                                "dtype: bfloat16\nbf16: true\n")


def test_trl_4bit_without_peft_is_qnt005(tmp_path):
    path = tmp_path / "sft.yaml"
    path.write_text("model_name_or_path: m\ndataset_name: d\nload_in_4bit: true\ndtype: bfloat16\n")
    assert "QNT005" in codes(trainlint("check", path, "--gpu", "A100", "--format", "json"))


def test_accelerate_fp16_zero2_missing_file(tmp_path):
    path = tmp_path / "accelerate.yaml"
    shutil.copy(FIXTURES / "hf" / "accelerate_fp16.yaml", path)
    findings = json.loads(trainlint("check", path, "--gpu", "A100", "--format", "json").out)
    assert sorted(f["code"] for f in findings) == ["DS001", "LNK001", "PRE002"]
    lnk = next(f for f in findings if f["code"] == "LNK001")
    assert (lnk["line"], lnk["column"]) == (4, 26)
    trainlint("check", path, "--gpu", "A100", "--fix")
    assert path.read_text() == (FIXTURES / "hf" / "accelerate_fp16.yaml").read_text().replace(
        "mixed_precision: 'fp16'", "mixed_precision: 'bf16'")


def test_accelerate_fp8_on_a100_and_cpu_jobs(tmp_path):
    path = tmp_path / "accelerate.yaml"
    path.write_text("compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\nmixed_precision: fp8\n"
                    "num_processes: 2\n")
    assert codes(trainlint("check", path, "--gpu", "A100", "--format", "json")) == ["PRE005"]
    assert codes(trainlint("check", path, "--gpu", "H100", "--format", "json")) == []
    path.write_text("compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_CPU\nmixed_precision: bf16\n"
                    "num_processes: 2\nuse_cpu: true\n")
    assert codes(trainlint("check", path, "--gpu", "T4", "--format", "json")) == []


def test_peft_adapter_config_is_read_not_edited(tmp_path):
    path = tmp_path / "adapter_config.json"
    path.write_text('{"peft_type": "LORA", "r": 8, "lora_alpha": 16, "target_modules": ["q_proj", "v_proj"],'
                    ' "base_model_name_or_path": "google/gemma-7b"}')
    result = trainlint("check", path, "--gpu", "A100", "--format", "json", "--verbose")
    assert codes(result) == [] and "skipped" not in result.err


def test_unrelated_yaml_is_not_claimed(tmp_path):
    path = tmp_path / "docker-compose.yml"
    path.write_text("services:\n  web:\n    image: nginx\n")
    assert "skipped: no adapter" in trainlint("check", path, "--gpu", "A100", "--verbose").err
