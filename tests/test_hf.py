"""HF family: TRL / TrainingArguments YAML, accelerate config, PEFT adapter_config.json."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

from conftest import FIXTURES, trainlint
from linter.engine import Options, Session
from linter.json_reader import parse_json
from linter.source import Source
from linter.yaml_reader import parse_yaml


def codes(result):
    return sorted(f["code"] for f in json.loads(result.out))


def parse(text: str, name: str = "config.yaml"):
    """The IR the HF adapter reads from `text` (None where no adapter claims it)."""
    source = Source(Path(name), text)
    document = parse_json(source) if name.endswith(".json") else parse_yaml(source)
    return Session(Options()).claim(document)


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
    (tmp_path / "requirements.txt").write_text("trl==0.19.0\n")  # bf16 = not fp16 from TRL 0.19
    path = tmp_path / "sft.yaml"
    path.write_text("model_name_or_path: Qwen/Qwen2.5-0.5B\ndataset_name: d\nlearning_rate: 1.0e-4\n")
    findings = json.loads(trainlint("check", path, "--gpu", "T4", "--format", "json").out)
    assert [f["code"] for f in findings] == ["PRE001"]
    # TRL's default has no line of its own: the finding points at the file's first line.
    assert (findings[0]["line"], findings[0]["column"]) == (1, 1)
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
    assert codes(result) == [] and "skipped: no adapter" not in result.err


def test_unrelated_yaml_is_not_claimed(tmp_path):
    path = tmp_path / "docker-compose.yml"
    path.write_text("services:\n  web:\n    image: nginx\n")
    assert "skipped: no adapter" in trainlint("check", path, "--gpu", "A100", "--verbose").err


# ---- TRL / TrainingArguments YAML ------------------------------------------------------------


def test_trl_bf16_default_follows_fp16(monkeypatch):
    from linter import versions

    monkeypatch.setattr(versions, "installed", lambda package: None)  # no TRL here: its version unknown
    # No TRL pin: TRL's version-dependent defaults (bf16 = not fp16 from 0.19, gradient
    # checkpointing from 0.22; TrainingArguments' False before) are not known.
    neither = parse("model_name_or_path: m\ndataset_name: d\n")
    assert neither.framework == "hf" and neither.get("precision.bf16") is None
    assert neither.get("memory.gradient_checkpointing") is None
    with_fp16 = parse("model_name_or_path: m\ndataset_name: d\nfp16: true\n")
    assert (with_fp16.value("precision.fp16"), with_fp16.value("precision.bf16")) == (True, False)
    plain = parse("output_dir: out\nper_device_train_batch_size: 4\nnum_train_epochs: 1\n")
    assert (plain.value("precision.fp16"), plain.value("precision.bf16")) == (False, False)
    assert plain.value("memory.gradient_checkpointing") is False


def test_trl_bf16_default_of_an_unknown_trl_is_silent_on_t4(tmp_path, monkeypatch):
    from linter import versions

    monkeypatch.setattr(versions, "installed", lambda package: None)
    path = tmp_path / "sft.yaml"
    path.write_text("model_name_or_path: Qwen/Qwen2.5-0.5B\ndataset_name: d\nlearning_rate: 1.0e-4\n")
    assert codes(trainlint("check", path, "--gpu", "T4", "--format", "json")) == []


@pytest.mark.parametrize("pin, bf16, checkpointing", [("0.18.2", False, False), ("0.19.0", True, False),
                                                      ("0.22.0", True, True)])
def test_trl_defaults_follow_the_pinned_trl(tmp_path, pin, bf16, checkpointing):
    """bf16=True arrived in TRL v0.19.0 (PR #3515), gradient_checkpointing=True in v0.22.0 (#3510)."""
    (tmp_path / "requirements.txt").write_text(f"trl=={pin}\n")
    path = tmp_path / "sft.yaml"
    path.write_text("model_name_or_path: Qwen/Qwen2.5-1.5B\ndataset_name: d\nper_device_train_batch_size: 2\n")
    config = Session(Options(detect=False)).load(path, True).config
    assert (config.value("precision.bf16"), config.value("memory.gradient_checkpointing")) == (bf16, checkpointing)
    on_v100 = codes(trainlint("check", path, "--gpu", "V100", "--format", "json"))
    assert ("PRE001" in on_v100) is bf16  # bf16 on a V100 only where TRL turns it on


def test_trl_4bit_compute_dtype_is_the_model_dtype():
    written = parse("model_name_or_path: m\nuse_peft: true\nload_in_4bit: true\ndtype: bfloat16\n")
    assert (written.value("quantization.bits"), written.value("quantization.compute_dtype")) == (4, "bfloat16")
    assert written.value("adapter.kind") == "lora" and written.value("adapter.r") == 16
    older = parse("model_name_or_path: m\nuse_peft: true\nload_in_4bit: true\ntorch_dtype: float16\n")
    assert older.value("quantization.compute_dtype") == "float16"
    unset = parse("model_name_or_path: m\nuse_peft: true\nload_in_4bit: true\n")
    compute = unset.get("quantization.compute_dtype")
    assert compute.value == "float32" and "get_quantization_config" in compute.origin.default_source
    assert parse("model_name_or_path: m\nuse_peft: true\nload_in_4bit: true\ndtype: auto\n").get(
        "quantization.compute_dtype") is None


def test_trl_4bit_float32_compute_fix_adds_dtype(tmp_path):
    path = tmp_path / "sft.yaml"
    original = b"model_name_or_path: m\ndataset_name: d\nload_in_4bit: true\nuse_peft: true\n"
    path.write_bytes(original)
    assert codes(trainlint("check", path, "--gpu", "A100", "--format", "json")) == []  # QNT002 is off by default
    trainlint("check", path, "--gpu", "A100", "--extend-select", "QNT002", "--fix")
    assert path.read_bytes() == original + b"dtype: bfloat16\n"
    trainlint("check", path, "--gpu", "A100", "--extend-select", "QNT002", "--fix")
    assert path.read_bytes() == original + b"dtype: bfloat16\n"


def test_trl_fp16_fix_on_a100_is_idempotent_with_bf16_written(tmp_path):
    path = tmp_path / "sft.yaml"
    path.write_bytes(b"model_name_or_path: m\ndataset_name: d\nbf16: false\nfp16: true\n")
    trainlint("check", path, "--gpu", "A100", "--fix")
    assert path.read_bytes() == b"model_name_or_path: m\ndataset_name: d\nbf16: true\nfp16: false\n"
    assert trainlint("check", path, "--gpu", "A100", "--fix").code == 0
    assert path.read_bytes() == b"model_name_or_path: m\ndataset_name: d\nbf16: true\nfp16: false\n"


def test_deepspeed_path_found_in_a_folder_above_the_config(tmp_path):
    """HF opens the path relative to the launch directory; the project root is one of the
    config's ancestors."""
    (tmp_path / "configs").mkdir()
    shutil.copy(FIXTURES / "hf" / "ds.json", tmp_path / "configs" / "ds.json")
    config = tmp_path / "configs" / "sft.yaml"
    config.write_text("model_name_or_path: m\ndataset_name: d\nbf16: true\nper_device_train_batch_size: 2\n"
                      "deepspeed: configs/ds.json\n")
    findings = json.loads(trainlint("check", config, "--gpu", "A100", "--format", "json").out)
    assert "LNK001" not in [f["code"] for f in findings]
    pre003 = [f for f in findings if f["code"] == "PRE003"]
    assert len(pre003) == 1 and pre003[0]["file"].endswith(("ds.json", "sft.yaml"))
    link = parse(config.read_text(), str(config)).links[0]
    assert link.candidates[:2] == (tmp_path / "configs" / "configs" / "ds.json", tmp_path / "configs" / "ds.json")


def test_deepspeed_missing_file_is_lnk001_at_the_path(tmp_path):
    path = tmp_path / "sft.yaml"
    path.write_text("model_name_or_path: m\ndataset_name: d\ndeepspeed: ds_missing.json\n")
    findings = json.loads(trainlint("check", path, "--gpu", "A100", "--format", "json").out)
    assert [(f["code"], f["line"], f["column"]) for f in findings] == [("LNK001", 3, 12)]


@pytest.mark.parametrize("deepspeed", ["\n  zero_optimization:\n    stage: 2",
                                       " '{\"zero_optimization\": {\"stage\": 2}}'",
                                       " ${DEEPSPEED_CONFIG}"])
def test_inline_or_templated_deepspeed_links_nothing(tmp_path, deepspeed):
    path = tmp_path / "sft.yaml"
    path.write_text(f"model_name_or_path: m\ndataset_name: d\ndeepspeed:{deepspeed}\n")
    assert parse(path.read_text(), str(path)).links == []
    assert codes(trainlint("check", path, "--gpu", "A100", "--format", "json")) == []


# ---- accelerate config YAML -------------------------------------------------------------------


def test_accelerate_fp16_zero2_on_a100(fixture_copy):
    path = fixture_copy("hf/accelerate_fp16_zero2.yaml")
    findings = json.loads(trainlint("check", path, "--gpu", "A100", "--format", "json").out)
    assert sorted((f["code"], f["line"]) for f in findings) == [("DS001", 6), ("PRE002", 7)]
    trainlint("check", path, "--gpu", "A100", "--fix")
    fixed = (FIXTURES / "hf" / "accelerate_fp16_zero2.yaml").read_bytes().replace(
        b"mixed_precision: 'fp16'", b"mixed_precision: 'bf16'")
    assert path.read_bytes() == fixed
    # In bf16 the ZeRO-2 hazard is gone: nothing is left, and a second --fix changes nothing.
    assert trainlint("check", path, "--gpu", "A100", "--fix").code == 0
    assert path.read_bytes() == fixed


def test_accelerate_values_in_the_ir(fixture_copy):
    config = parse(fixture_copy("hf/accelerate_fp16_zero2.yaml").read_text())
    assert {key: config.value(key) for key in ("precision.fp16", "precision.bf16", "parallel.zero_stage",
                                                "parallel.offload_optimizer", "batch.grad_accum",
                                                "batch.world_size")} == {
        "precision.fp16": True, "precision.bf16": False, "parallel.zero_stage": 2,
        "parallel.offload_optimizer": False, "batch.grad_accum": 4, "batch.world_size": 8}
    fsdp = parse("distributed_type: FSDP\nfsdp_config:\n  fsdp_offload_params: true\nmixed_precision: bf16\n")
    assert (fsdp.value("parallel.fsdp"), fsdp.value("parallel.offload_param")) == (True, True)


def test_accelerate_default_zero_stage_is_2(tmp_path):
    """No zero_stage and no DeepSpeed file: accelerate's DeepSpeedPlugin uses stage 2."""
    path = tmp_path / "accelerate.yaml"
    original = (b"distributed_type: DEEPSPEED\ndeepspeed_config:\n  offload_optimizer_device: none\n"
                b"mixed_precision: fp16\n")
    path.write_bytes(original)
    findings = json.loads(trainlint("check", path, "--gpu", "T4", "--format", "json").out)
    assert [(f["code"], f["line"]) for f in findings] == [("DS001", 2)]
    trainlint("check", path, "--gpu", "T4", "--fix", "--unsafe-fixes")
    fixed = original.replace(b"device: none\n", b"device: none\n  zero_stage: 1\n")
    assert path.read_bytes() == fixed
    trainlint("check", path, "--gpu", "T4", "--fix", "--unsafe-fixes")
    assert path.read_bytes() == fixed


def test_accelerate_deepspeed_file_missing(fixture_copy):
    path = fixture_copy("hf/accelerate_ds_file.yaml")
    findings = json.loads(trainlint("check", path, "--gpu", "A100", "--format", "json").out)
    assert [(f["code"], f["line"], f["column"]) for f in findings] == [("LNK001", 4, 26)]
    # The JSON holds the ZeRO settings: no stage (default or written) is read from the YAML.
    assert parse(path.read_text(), str(path)).get("parallel.zero_stage") is None


def test_accelerate_deepspeed_file_linked(tmp_path):
    shutil.copy(FIXTURES / "hf" / "ds.json", tmp_path / "ds.json")
    path = tmp_path / "accelerate.yaml"
    path.write_text("distributed_type: DEEPSPEED\ndeepspeed_config:\n  deepspeed_config_file: ds.json\n"
                    "num_processes: 2\n")
    findings = json.loads(trainlint("check", path, "--gpu", "A100", "--format", "json").out)
    assert [(f["code"], Path(f["file"]).name) for f in findings] == [("PRE002", "ds.json")]


def test_accelerate_flow_maps_repeated_key_and_yaml11_no(fixture_copy):
    path = fixture_copy("hf/accelerate_flow.yaml")
    config = parse(path.read_text())
    assert config.framework == "hf" and config.value("precision.fp16") is True
    trainlint("check", path, "--gpu", "A100", "--fix")
    # PRE002 switches to bf16; the NO that YAML 1.1 reads as false stays: with num_processes
    # written, accelerate launch treats False as NO (test_schema_rules: the accelerate NO test)
    assert path.read_bytes() == (FIXTURES / "hf" / "accelerate_flow.yaml").read_bytes().replace(
        b"mixed_precision: fp16", b"mixed_precision: bf16")


def test_accelerate_mixed_precision_no_is_fp32():
    for written in ("'no'", "no", "null"):
        config = parse(f"compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\nmixed_precision: {written}\n")
        assert config.mode() == "fp32", written


def test_accelerate_on_other_accelerators_is_not_checked_against_gpus(tmp_path):
    path = tmp_path / "accelerate.yaml"
    path.write_text('distributed_type: "MULTI_XPU"\nmixed_precision: "bf16"\nnum_processes: 2\n')
    assert codes(trainlint("check", path, "--gpu", "V100", "--format", "json")) == []
    path.write_text('distributed_type: "MULTI_GPU"\nmixed_precision: "bf16"\nnum_processes: 2\n')
    assert codes(trainlint("check", path, "--gpu", "V100", "--format", "json")) == ["PRE001"]


# ---- PEFT and what is not claimed --------------------------------------------------------------


def test_peft_adapter_config_values():
    config = parse('{"peft_type": "LORA", "r": 8, "lora_alpha": 16, "target_modules": ["q_proj", "v_proj"],'
                   ' "modules_to_save": null, "base_model_name_or_path": "google/gemma-7b"}', "adapter_config.json")
    assert {key: config.value(key) for key in ("model.name", "adapter.kind", "adapter.r", "adapter.alpha",
                                                "adapter.target_modules")} == {
        "model.name": "google/gemma-7b", "adapter.kind": "lora", "adapter.r": 8, "adapter.alpha": 16,
        "adapter.target_modules": ["q_proj", "v_proj"]}


@pytest.mark.parametrize("text, name", [
    # LLaMA-Factory v1 (output_dir and learning_rate are common words, micro_batch_size is not HF's)
    ("model: Qwen/Qwen3-0.6B\noutput_dir: out\nmicro_batch_size: 1\nlearning_rate: 1.0e-4\nmax_steps: 10\n", "x.yaml"),
    # an inference config
    ("model_name_or_path: m\nmax_length: 512\ntemperature: 0.7\n", "x.yaml"),
    # PEFT's benchmark harness (method_comparison/*/training_params.json)
    ('{"optimizer_type": "lora-fa", "optimizer_kwargs": {"r": 32, "lora_alpha": 64, "lr": 1e-4}}',
     "training_params.json"),
    ('{"model_id": "m", "dtype": "bfloat16", "batch_size": 4, "use_amp": false}', "default_training_params.json"),
])
def test_not_an_hf_config(text, name):
    assert parse(text, name) is None


def test_every_hf_family_corpus_config_is_claimed(corpus):
    """The manifest's accelerate, TRL and PEFT files are claimed by this adapter, except TRL's
    recorded test references (loss curves, not configs)."""
    rows = list(csv.reader((corpus / "MANIFEST.tsv").open(encoding="utf-8"), delimiter="\t"))[1:]
    session = Session(Options())
    for path, _repo, _commit, framework, *_ in rows:
        if framework not in ("accelerate", "trl", "peft-adapter"):
            continue
        loaded = session.load(corpus / path, explicit=False)
        claimed = loaded.config.framework if loaded.config else None
        expected = None if "/tests/invariant/references/" in path else "hf"
        assert claimed == expected, path


@pytest.mark.parametrize("gpu", ["V100", "A100"])
def test_hf_family_corpus_lints(corpus, gpu):
    """Every Hugging Face repository's files in the corpus, without crash; the errors left are
    the reviewed kinds (bf16 on V100, fp8 on both)."""
    folders = sorted(corpus.glob("huggingface__*"))
    result = trainlint("check", *folders, "--gpu", gpu, "--format", "json")
    assert result.code in (0, 1) and "internal error" not in result.err, result.err
    findings = json.loads(result.out)
    errors = {(f["code"], Path(f["file"]).name) for f in findings if f["severity"] == "error"}
    allowed = {"PRE005"} | ({"PRE001"} if gpu == "V100" else set())
    # schema findings are reviewed one by one in tests/corpus_schema_verdicts.tsv
    assert {code for code, _ in errors if not code.startswith("SCH")} <= allowed, errors
    assert any(f["framework"] == "hf" for f in findings)


def test_deepspeed_config_file_replaced_on_the_launch_command_is_checked_by_accelerate_release(tmp_path, monkeypatch):
    """accelerate >= 1.5.0 (PR #3409) keeps `--deepspeed_config_file` over the config's entry;
    older releases set the config's entry over it, so the written path is opened."""
    from linter import repository, versions

    monkeypatch.setattr(versions, "installed", lambda package: None)
    (tmp_path / ".git").mkdir()
    config = tmp_path / "accelerate_config.yaml"
    config.write_text("compute_environment: LOCAL_MACHINE\ndistributed_type: DEEPSPEED\n"
                      "deepspeed_config:\n  deepspeed_config_file: ./xxxx/ds_config.json\nnum_processes: 8\n")
    script = tmp_path / "train.slurm"
    script.write_text("CFG=accelerate_config.yaml\nsrun accelerate launch \\\n  --config_file $CFG \\\n"
                      "  --deepspeed_config_file $DS train.py\n")

    def lnk001(pin):
        if pin:
            (tmp_path / "requirements.txt").write_text(pin + "\n")
        result = trainlint("check", config, "--select", "LNK001", "--no-detect", "--format", "json")
        return [f for f in json.loads(result.out) if f["code"] == "LNK001"]

    assert lnk001(None) == []  # which accelerate runs is unknown
    assert lnk001("accelerate==1.5.0") == []
    assert "accelerate 1.4.0" in lnk001("accelerate==1.4.0")[0]["message"]
    script.write_text("srun accelerate launch --config_file accelerate_config.yaml train.py\n")
    repository.launch_scripts.cache_clear()  # read once per process, like the checkout's texts
    assert len(lnk001("accelerate==1.5.0")) == 1  # the launch command does not replace the path
