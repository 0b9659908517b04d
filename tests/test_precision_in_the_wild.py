"""Issue 15: know what a file is, which version reads it, and which script; stay quiet on what is
not ours; check a run as a whole even when a commit stages one file of it."""

from __future__ import annotations

import json

import pytest

from conftest import trainlint
from linter import versions

DS_FP16 = '{\n  "train_micro_batch_size_per_gpu": 4,\n  "zero_optimization": {"stage": 2},\n  "fp16": {"enabled": true}\n}\n'


@pytest.fixture(autouse=True)
def nothing_installed(monkeypatch):
    """Versions come from the pins each test writes, never from this machine's packages."""
    monkeypatch.setattr(versions, "installed", lambda package: None)


@pytest.fixture
def repo(tmp_path):
    """A checkout: the folder with .git is the repository root."""
    (tmp_path / ".git").mkdir()
    return tmp_path


def findings(*args: str) -> list[dict]:
    result = trainlint("check", *args, "--no-detect", "--format", "json")
    assert result.code in (0, 1), result.err
    return json.loads(result.out)


def codes(*args: str) -> list[tuple[str, str]]:
    return sorted((finding["file"].rsplit("/", 1)[-1], finding["code"]) for finding in findings(*args))


def test_training_arguments_json_is_the_hf_adapters_with_its_deepspeed_link(repo):
    """Firefly-style train_args JSON (HfArgumentParser.parse_json_file): boolean fp16 and output_dir
    say TrainingArguments, not DeepSpeed; its `deepspeed:` link is followed."""
    (repo / "ds.json").write_text(DS_FP16)
    args = repo / "train_args.json"
    args.write_text(json.dumps({"output_dir": "out", "model_name_or_path": "m", "per_device_train_batch_size": 2,
                                "num_train_epochs": 1, "fp16": True, "deepspeed": "ds.json"}, indent=2))
    found = findings(args, "--gpu", "A100")
    assert {f["framework"] for f in found if f["file"].endswith("train_args.json")} <= {"hf"}
    assert not any(f["code"] == "SCH001" and f["file"].endswith("train_args.json") for f in found)
    # The link is followed: DeepSpeed's micro batch 4 against the trainer's 2 (DS003).
    assert ("ds.json", "DS003") in {(f["file"].rsplit("/", 1)[-1], f["code"]) for f in found}


def test_torch_dtype_is_known_under_trl_0_18_pinned_in_setup_py_and_renamed_under_a_recent_pin(repo):
    recipe = repo / "recipes" / "sft.yaml"
    recipe.parent.mkdir()
    recipe.write_text("model_name_or_path: m\ndataset_name: d\ntorch_dtype: bfloat16\n")
    (repo / "setup.py").write_text("from setuptools import setup\nsetup(install_requires=['trl==0.18.0'])\n")
    assert [f for f in findings(recipe, "--select", "SCH") if "torch_dtype" in f["message"]] == []
    (repo / "setup.py").write_text("from setuptools import setup\nsetup(install_requires=['trl==0.27.1'])\n")
    versions.forget()
    [finding] = [f for f in findings(recipe, "--select", "SCH") if "torch_dtype" in f["message"]]
    assert "renamed dtype in trl 0.23.0 and removed in 0.27.0" in finding["message"]
    assert "pinned" in finding["message"] or "setup.py" in finding["message"]


def test_llamafactory_before_0_9_4_reads_2e_5_as_a_string(repo):
    config = repo / "sft.yaml"
    config.write_text("model_name_or_path: m\nstage: sft\nfinetuning_type: lora\nlearning_rate: 2e-5\n")
    (repo / "requirements.txt").write_text("llamafactory==0.7.1\n")
    assert ("sft.yaml", "SCH003") in codes(config, "--select", "SCH")
    old = repo / "new"
    old.mkdir()
    (old / "sft.yaml").write_text(config.read_text())
    (old / "requirements.txt").write_text("llamafactory==0.9.4\n")
    assert codes(old / "sft.yaml", "--select", "SCH") == []  # OmegaConf reads 2e-5 as a float


def test_a_conf_deepspeed_file_linked_from_a_trainer_is_read(repo):
    (repo / "ds_config.conf").write_text(DS_FP16)
    trainer = repo / "sft.yaml"
    trainer.write_text("model_name_or_path: m\ndataset_name: d\nper_device_train_batch_size: 2\nbf16: true\n"
                       "deepspeed: ds_config.conf\n")
    found = codes(trainer, "--gpu", "A100")
    assert ("ds_config.conf", "DS003") in found and ("ds_config.conf", "PRE003") in found
    assert ("sft.yaml", "LNK001") not in found
    # Named on its own, a .conf is read as DeepSpeed JSON too; walked, it is not a config suffix.
    assert ("ds_config.conf", "DS001") in codes(repo / "ds_config.conf", "--gpu", "V100")


def test_an_accelerate_config_written_as_json_is_read(repo):
    config = repo / "accelerate.json"
    config.write_text(json.dumps({"compute_environment": "LOCAL_MACHINE", "distributed_type": "MULTI_GPU",
                                  "mixed_precision": "bf16", "num_processes": 2}))
    assert ("accelerate.json", "PRE001") in codes(config, "--gpu", "V100")


@pytest.mark.parametrize("name, text", [
    (".vscode/settings.json", '{\n  // editor settings\n  "editor.tabSize": 2,\n}\n'),
    ("chart/templates/deployment.yaml", "apiVersion: apps/v1\nkind: {{ .Values.kind }}\nmetadata:\n"
                                         "  name: {{ include \"app.fullname\" . }}\n"),
    ("recipe/meta.yaml", "{% set version = \"1.0\" %}\npackage:\n  name: x\n  version: {{ version }}\n"),
    ("tsconfig.json", '{"compilerOptions": {"strict": true}}\n'),
])
def test_files_that_are_not_training_configs_are_skipped_when_named(repo, name, text):
    path = repo / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    result = trainlint("check", path, "--no-detect", "--gpu", "A100")
    assert result.code == 0 and "SYN001" not in result.out, result.out


def test_an_excluded_path_is_skipped_also_when_named(repo):
    (repo / "pyproject.toml").write_text('[tool.trainlint]\nexclude = ["vendor/*"]\n')
    (repo / "vendor").mkdir()
    (repo / "vendor" / "ds.json").write_text(DS_FP16)
    assert trainlint("check", repo / "vendor" / "ds.json", "--gpu", "A100").code == 0


def test_a_gitignored_folder_is_not_walked(repo):
    (repo / ".gitignore").write_text("checkpoints/\n")
    (repo / "checkpoints" / "step-100").mkdir(parents=True)
    (repo / "checkpoints" / "step-100" / "ds.json").write_text(DS_FP16)
    (repo / "tokenizer.json").write_text('{"version": "1.0", "model": {"type": "BPE"}}')
    assert trainlint("check", repo, "--gpu", "A100").code == 0


def test_staging_only_the_deepspeed_json_checks_the_run_it_belongs_to(repo):
    (repo / "ds.json").write_text(DS_FP16)
    (repo / "configs").mkdir()
    (repo / "configs" / "sft.yaml").write_text("model_name_or_path: m\ndataset_name: d\nbf16: true\n"
                                               "per_device_train_batch_size: 2\ndeepspeed: ds.json\n")
    found = codes(repo / "ds.json", "--gpu", "A100")
    assert ("ds.json", "DS003") in found  # the trainer's batch of 2 against DeepSpeed's 4
    assert ("ds.json", "PRE003") in found or ("sft.yaml", "PRE003") in found  # bf16 there, fp16 here


def test_check_of_a_trainer_fixes_its_linked_json_in_the_same_checkout(repo):
    (repo / "ds.json").write_text(DS_FP16)
    trainer = repo / "sft.yaml"
    trainer.write_text("model_name_or_path: m\ndataset_name: d\nfp16: true\nper_device_train_batch_size: 4\n"
                       "deepspeed: ds.json\n")
    result = trainlint("check", trainer, "--gpu", "A100", "--fix", "--unsafe-fixes", "--no-detect")
    assert "not written" not in result.err
    assert trainer.read_text() == ("model_name_or_path: m\ndataset_name: d\nfp16: false\nbf16: true\n"
                                   "per_device_train_batch_size: 4\ndeepspeed: ds.json\n")
    assert json.loads((repo / "ds.json").read_text())["bf16"] == {"enabled": True}
    assert json.loads((repo / "ds.json").read_text())["fp16"] == {"enabled": False}


def test_a_linked_file_outside_the_checkout_withholds_the_whole_runs_fix(tmp_path):
    outside = tmp_path / "shared"
    outside.mkdir()
    (outside / "ds.json").write_text(DS_FP16)
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    trainer = project / "sft.yaml"
    text = (f"model_name_or_path: m\ndataset_name: d\nfp16: true\nper_device_train_batch_size: 4\n"
            f"deepspeed: {outside / 'ds.json'}\n")
    trainer.write_text(text)
    result = trainlint("check", trainer, "--gpu", "A100", "--fix", "--no-detect")
    assert trainer.read_text() == text and (outside / "ds.json").read_text() == DS_FP16
    assert "pass it to trainlint check" in result.err and str(outside / "ds.json") in result.err
