"""Settings discovery (nearest file wins), keys, per-file-ignores, exclude, target-gpus."""

from __future__ import annotations

import json

from conftest import trainlint

FP16_ZERO2 = '{"fp16": {"enabled": true}, "zero_optimization": {"stage": 2}}'


def codes(result):
    return sorted(f["code"] for f in json.loads(result.out))


def test_pyproject_tool_section(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.trainlint]\nignore = ["DS001"]\n')
    (tmp_path / "ds.json").write_text(FP16_ZERO2)
    assert codes(trainlint("check", tmp_path, "--gpu", "A100", "--format", "json")) == ["PRE002"]


def test_pyproject_without_section_is_passed_over_for_a_parent_trainlint_toml(tmp_path):
    (tmp_path / "trainlint.toml").write_text('select = ["DS"]\n')
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text('[project]\nname = "x"\n')
    (project / "ds.json").write_text(FP16_ZERO2)
    assert codes(trainlint("check", project, "--gpu", "A100", "--format", "json")) == ["DS001"]


def test_nearest_settings_file_wins_per_file(tmp_path):
    (tmp_path / "trainlint.toml").write_text('ignore = ["PRE002"]\n')
    (tmp_path / "a.json").write_text(FP16_ZERO2)
    inner = tmp_path / "inner"
    inner.mkdir()
    (inner / ".trainlint.toml").write_text('ignore = ["DS001"]\n')
    (inner / "b.json").write_text(FP16_ZERO2)
    findings = json.loads(trainlint("check", tmp_path, "--gpu", "A100", "--format", "json").out)
    assert sorted((f["file"].split("/")[-1], f["code"]) for f in findings) == [("a.json", "DS001"), ("b.json", "PRE002")]


def test_target_gpus_and_cli_override(tmp_path):
    (tmp_path / "trainlint.toml").write_text('target-gpus = ["A100"]\n')
    (tmp_path / "ds.json").write_text('{"fp16": {"enabled": true}}')
    assert codes(trainlint("check", tmp_path, "--format", "json")) == ["PRE002"]
    assert codes(trainlint("check", tmp_path, "--gpu", "V100", "--format", "json")) == []


def test_env_gpu_between_cli_and_settings(tmp_path, monkeypatch):
    (tmp_path / "trainlint.toml").write_text('target-gpus = ["A100"]\n')
    (tmp_path / "ds.json").write_text('{"fp16": {"enabled": true}}')
    monkeypatch.setenv("TRAINLINT_GPU", "T4")
    assert codes(trainlint("check", tmp_path, "--format", "json")) == []
    assert codes(trainlint("check", tmp_path, "--gpu", "H100", "--format", "json")) == ["PRE002"]


def test_per_file_ignores_and_exclude(tmp_path):
    (tmp_path / "trainlint.toml").write_text('exclude = ["legacy"]\n\n[per-file-ignores]\n"configs/*.json" = ["PRE"]\n')
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "ds.json").write_text(FP16_ZERO2)
    (tmp_path / "legacy").mkdir()
    (tmp_path / "legacy" / "ds.json").write_text(FP16_ZERO2)
    findings = json.loads(trainlint("check", tmp_path, "--gpu", "A100", "--format", "json").out)
    assert [(f["file"].split("/")[-2], f["code"]) for f in findings] == [("configs", "DS001")]


def test_unsafe_fixes_setting(tmp_path):
    (tmp_path / "trainlint.toml").write_text("unsafe-fixes = true\n")
    path = tmp_path / "ds.json"
    path.write_text('{"bf16": {"enabled": true}, "fp16": {"enabled": true}}')
    trainlint("check", path, "--gpu", "A100", "--fix")
    assert path.read_text() == '{"bf16": {"enabled": true}, "fp16": {"enabled": false}}'


def test_explicit_config_file(tmp_path):
    settings = tmp_path / "custom.toml"
    settings.write_text('select = ["DS004"]\n')
    (tmp_path / "ds.json").write_text(FP16_ZERO2)
    assert codes(trainlint("check", tmp_path, "--gpu", "A100", "--config", settings, "--format", "json")) == []


def test_bad_settings_are_a_usage_error(tmp_path):
    (tmp_path / "trainlint.toml").write_text("selekt = ['PRE']\n")
    (tmp_path / "ds.json").write_text(FP16_ZERO2)
    result = trainlint("check", tmp_path, "--gpu", "A100")
    assert result.code == 2 and "unknown setting `selekt`" in result.err
    (tmp_path / "trainlint.toml").write_text("select = \n")
    result = trainlint("check", tmp_path, "--gpu", "A100")
    assert result.code == 2 and "invalid TOML" in result.err
