"""Misconfiguration is loud, and the basics an editor, a hook or a CI job needs: --version,
--show-files, --show-settings, stdin, key-path ignores for JSON, baselines, rule pages, and the
`rules` import-name check."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, trainlint
from linter import registry

FP16_ZERO2 = '{\n  "fp16": {"enabled": true},\n  "zero_optimization": {"stage": 2}\n}\n'


@pytest.fixture
def ds(tmp_path):
    path = tmp_path / "ds.json"
    path.write_text(FP16_ZERO2)
    return path


def check(*args):
    """One CLI run, as a fresh process would see the settings files (they change between runs here)."""
    from linter import settings

    settings.for_directory.cache_clear()
    return trainlint(*args)


def codes(result) -> list[str]:
    document = json.loads(result.out)
    return sorted(f["code"] for f in document)


# ---- unknown selectors, keys, noqa codes, GPU names ---------------------------------------------

@pytest.mark.parametrize("flag", ["--select", "--ignore", "--extend-select"])
def test_unknown_selector_on_the_command_line_is_a_usage_error(ds, flag):
    result = check("check", ds, "--gpu", "A100", flag, "QNTX")
    assert result.code == 2
    assert f"{flag}: unknown rule selector 'QNTX' (did you mean 'QNT'?)" in result.err
    assert check("check", ds, "--gpu", "A100", flag, "FOO").code == 2
    assert check("check", ds, "--gpu", "A100", flag, "qnt0,ALL").code in (0, 1)


def test_unknown_selector_in_settings_is_a_usage_error(tmp_path, ds):
    (tmp_path / "trainlint.toml").write_text('select = ["QNTX"]\n')
    result = check("check", ds, "--gpu", "A100")
    assert result.code == 2 and "`select`: unknown rule selector 'QNTX' (did you mean 'QNT'?)" in result.err
    (tmp_path / "trainlint.toml").write_text('[per-file-ignores]\n"*.json" = ["PRE02"]\n')
    result = check("check", ds, "--gpu", "A100")
    assert result.code == 2 and "unknown rule selector 'PRE02'" in result.err


def test_unknown_setting_says_did_you_mean(tmp_path, ds):
    (tmp_path / "trainlint.toml").write_text('target-gpu = ["A100"]\n')
    result = check("check", ds)
    assert result.code == 2 and "unknown setting `target-gpu` (did you mean 'target-gpus'?)" in result.err


def test_unknown_gpu_in_settings_is_a_usage_error(tmp_path, ds):
    (tmp_path / "trainlint.toml").write_text('target-gpus = ["A100-80G"]\n')
    result = check("check", ds)
    assert result.code == 2 and "did you mean 'A100-80GB'" in result.err


def test_noqa_naming_an_unknown_trainlint_code_is_a_usage_error(tmp_path):
    path = tmp_path / "sft.yaml"
    path.write_text("model_name_or_path: x\ndataset_name: d\nfp16: true  # noqa: PRE999\nlearning_rate: 1.0e-5  # noqa: E501\n")
    result = check("check", path, "--gpu", "A100")
    assert result.code == 2
    assert f"{path}:3: `# noqa: PRE999` names no trainlint rule (the PRE rules are PRE001, PRE002" in result.err
    path.write_text("model_name_or_path: x\ndataset_name: d\nfp16: true  # noqa: PRE0002\n")
    assert "`# noqa: PRE0002` names no trainlint rule (did you mean 'PRE002'?)" in check("check", path).err
    path.write_text("model_name_or_path: x\ndataset_name: d\nfp16: true  # noqa: PRE002\nlearning_rate: 1.0e-5  # noqa: E501\n")
    result = check("check", path, "--gpu", "A100")
    assert result.code == 0, result.err  # another tool's code (E501) is left alone


@pytest.mark.parametrize("name, hint", [("A100-80G", "'A100-80GB'"), ("RTX6000", "'RTX 6000 Ada'"),
                                        ("H10", "'H100-80GB'")])
def test_unknown_gpu_names_say_did_you_mean(ds, name, hint):
    result = check("check", ds, "--gpu", name)
    assert result.code == 2 and f"unknown GPU {name!r} (did you mean" in result.err and hint in result.err


def test_empty_gpu_is_a_usage_error(ds):
    result = check("check", ds, "--gpu", "")
    assert result.code == 2 and "--gpu names no GPU" in result.err


@pytest.mark.parametrize("spec, cc", [("sm_80", "8.0"), ("sm_100", "10.0"), ("sm_90a", "9.0"), ("sm_120", "12.0"),
                                      ("sm_121", "12.1"), ("sm_103", "10.3"), ("sm_110", "11.0"), ("sm_75", "7.5"),
                                      ("compute_89", "8.9"), ("10.0", "10.0")])
def test_every_real_compute_capability_is_a_target(spec, cc):
    data = json.loads(trainlint("hardware", "--gpu", spec, "--format", "json").out)
    assert data["targets"][0]["compute_capability"] == cc


@pytest.mark.parametrize("spec", ["sm_85", "sm_99", "4.0", "sm_1000"])
def test_compute_capabilities_no_gpu_has_are_usage_errors(ds, spec):
    result = check("check", ds, "--gpu", spec)
    assert result.code == 2 and "not a compute capability any NVIDIA GPU has" in result.err


def test_flags_are_not_abbreviated_and_typos_say_did_you_mean(ds, capsys):
    from linter.cli import main

    for argv, hint in ((["--gp", "A100"], "--gp (did you mean '--gpu'?)"),
                       (["--gpus", "A100"], "--gpus (did you mean '--gpu'?)"),
                       (["--stat"], "--stat (did you mean '--statistics'?)")):
        with pytest.raises(SystemExit) as exit_info:
            main(["check", str(ds), *argv])
        assert exit_info.value.code == 2
        assert hint in capsys.readouterr().err


# ---- extend, require-gpu-target ----------------------------------------------------------------

def test_extend_inherits_the_parent_settings(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.trainlint]\ntarget-gpus = ["A100"]\nignore = ["DS001"]\n'
                                             '[tool.trainlint.per-file-ignores]\n"sub/legacy.json" = ["PRE"]\n')
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "ds.json").write_text(FP16_ZERO2)
    (sub / "legacy.json").write_text(FP16_ZERO2)
    # a nested settings file without `extend` starts from the defaults: no target, DS001 on
    (sub / "pyproject.toml").write_text('[tool.trainlint]\nworld-size = 2\n')
    assert codes(check("check", sub / "ds.json", "--format", "json", "--no-detect")) == ["DS001"]
    (sub / "pyproject.toml").write_text('[tool.trainlint]\nextend = "../pyproject.toml"\nworld-size = 2\n')
    assert codes(check("check", sub, "--format", "json", "--no-detect")) == ["PRE002"]
    shown = json.loads(check("check", sub, "--show-settings").out)
    assert shown["target-gpus"] == ["A100"] and shown["ignore"] == ["DS001"] and shown["world-size"] == 2
    assert shown["extend"] == "../pyproject.toml"
    (sub / "pyproject.toml").write_text('[tool.trainlint]\nextend = "../pyproject.toml"\ntarget-gpus = ["V100"]\n')
    assert codes(check("check", sub / "ds.json", "--format", "json")) == []  # own key wins


def test_extend_errors(tmp_path, ds):
    (tmp_path / "trainlint.toml").write_text('extend = "missing.toml"\n')
    assert "`extend` names 'missing.toml', which is not a file" in check("check", ds).err
    (tmp_path / "trainlint.toml").write_text('extend = "trainlint.toml"\n')
    result = check("check", ds)
    assert result.code == 2 and "cycle" in result.err


def test_require_target(tmp_path, ds, no_gpu):
    assert check("check", ds).code == 1  # DS001 needs no target; PRE002 is skipped with a note
    result = check("check", ds, "--require-target")
    assert result.code == 2 and "a target is required" in result.err
    (tmp_path / "trainlint.toml").write_text("require-gpu-target = true\n")
    assert check("check", ds).code == 2
    assert check("check", ds, "--gpu", "A100").code == 1


# ---- version, show-files, show-settings, no config files, stdin ----------------------------------

def test_version():
    from linter import __version__

    completed = subprocess.run([sys.executable, "-m", "linter", "--version"], capture_output=True, text=True)
    assert completed.returncode == 0 and completed.stdout == f"trainlint {__version__}\n"


def test_show_files(tmp_path, ds, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "trainlint.toml").write_text('exclude = ["old"]\n')
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "ds.json").write_text(FP16_ZERO2)
    (tmp_path / "notes.txt").write_text("x")
    result = check("check", ".", "--show-files")
    assert result.code == 0 and result.out.splitlines() == ["ds.json"]


def test_show_settings_names_the_file(tmp_path, ds):
    (tmp_path / "trainlint.toml").write_text('select = ["PRE"]\n')
    shown = json.loads(check("check", ds, "--show-settings").out)
    assert shown["settings-file"] == str(tmp_path / "trainlint.toml") and shown["select"] == ["PRE"]


def test_empty_folder_says_no_config_files_found(tmp_path):
    result = check("check", tmp_path)
    assert result.code == 0 and "no config files found" in result.err


def test_stdin_with_stdin_filename(tmp_path, monkeypatch):
    (tmp_path / "trainlint.toml").write_text('target-gpus = ["A100"]\n')
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(FP16_ZERO2.encode())))
    path = tmp_path / "unsaved.json"  # need not exist: an editor's unsaved buffer
    result = check("check", "-", "--stdin-filename", path, "--format", "json")
    assert result.code == 1
    findings = json.loads(result.out)
    assert {f["code"] for f in findings} == {"PRE002", "DS001"} and {f["file"] for f in findings} == {str(path)}
    assert not path.exists()


def test_stdin_needs_a_filename_and_no_fix(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"{}")))
    assert "needs --stdin-filename" in check("check", "-").err
    result = check("check", "-", "--stdin-filename", tmp_path / "x.json", "--fix")
    assert result.code == 2 and "--fix cannot write to stdin" in result.err


# ---- key-path ignores for JSON, baselines ---------------------------------------------------------

def test_per_file_ignores_with_a_key_path(tmp_path, ds):
    (tmp_path / "trainlint.toml").write_text('[per-file-ignores]\n"*.json" = ["DS001:zero_optimization.stage"]\n')
    assert codes(check("check", ds, "--gpu", "A100", "--format", "json")) == ["PRE002"]
    (tmp_path / "trainlint.toml").write_text('[per-file-ignores]\n"*.json" = ["DS001:fp16"]\n')
    assert codes(check("check", ds, "--gpu", "A100", "--format", "json")) == ["DS001", "PRE002"]
    (tmp_path / "trainlint.toml").write_text('[per-file-ignores]\n"*.json" = ["PRE:fp16", "DS001:zero_optimization"]\n')
    assert codes(check("check", ds, "--gpu", "A100", "--format", "json")) == []
    (tmp_path / "trainlint.toml").write_text('[per-file-ignores]\n"*.json" = ["DS001:"]\n')
    assert "names no key path" in check("check", ds, "--gpu", "A100").err


def test_baseline(tmp_path, ds):
    baseline = tmp_path / "trainlint-baseline.json"
    written = check("check", tmp_path, "--gpu", "A100", "--write-baseline", baseline)
    assert written.code == 0 and "wrote 2 findings" in written.err
    data = json.loads(baseline.read_text())
    assert data["version"] == 1 and {entry["file"] for entry in data["findings"]} == {"ds.json"}
    assert check("check", tmp_path, "--gpu", "A100", "--baseline", baseline).code == 0
    # lines moving do not matter; a new finding does
    ds.write_text("\n" + FP16_ZERO2)
    assert check("check", tmp_path, "--gpu", "A100", "--baseline", baseline).code == 0
    (tmp_path / "new.json").write_text(FP16_ZERO2)
    result = check("check", tmp_path, "--gpu", "A100", "--baseline", baseline, "--format", "json")
    assert result.code == 1 and {f["file"] for f in json.loads(result.out)} == {str(tmp_path / "new.json")}
    baseline.write_text("[]")
    assert "not a trainlint baseline" in check("check", tmp_path, "--gpu", "A100", "--baseline", baseline).err


# ---- rule pages ------------------------------------------------------------------------------------

def test_rule_pages_match_the_registry():
    from linter.rule_docs import rule_pages

    folder = ROOT / "docs" / "rules"
    pages = rule_pages()
    assert {path.name for path in folder.glob("*.md")} == set(pages), \
        "docs/rules drifted: regenerate with `trainlint rules --write-pages docs/rules`"
    for name, text in pages.items():
        assert (folder / name).read_text("utf-8") == text, \
            f"docs/rules/{name} drifted: regenerate with `trainlint rules --write-pages docs/rules`"


@pytest.mark.parametrize("rule", registry.all_rules(), ids=lambda rule: rule.code)
def test_rule_documentation_cites_nothing_that_is_not_shipped(rule):
    text = trainlint("rule", rule.code).out
    for unshipped in ("INCIDENTS.md", "SPEC §", "SPEC.md", "ARCHITECTURE.md"):
        assert unshipped not in text
    page = (ROOT / "docs" / "rules" / f"{rule.code}.md").read_text()
    assert "## What it does" in page and text.split("\n", 1)[1].strip().split("\n")[0] in page


# ---- the `rules` import name -------------------------------------------------------------------------

def test_a_shadowing_rules_package_is_a_loud_usage_error(tmp_path, ds):
    """What `pip install rules` (django-rules) does to an environment with trainlint in it."""
    shadow = tmp_path / "site"
    (shadow / "rules").mkdir(parents=True)
    (shadow / "rules" / "__init__.py").write_text("# django-rules stand-in\nVERSION = (3, 5, 0)\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(shadow), str(ROOT)])}
    completed = subprocess.run([sys.executable, "-c", "import sys; from linter.cli import main; "
                                f"sys.exit(main(['check', {str(ds)!r}, '--gpu', 'A100']))"],
                               capture_output=True, text=True, env=env, cwd=tmp_path)
    assert completed.returncode == 2, completed.stdout + completed.stderr
    assert f"the module `rules` imported from {shadow / 'rules' / '__init__.py'} is not trainlint's built-in " \
        "rule pack" in completed.stderr
    assert "django-rules" in completed.stderr
    listed = subprocess.run([sys.executable, "-c", "import sys; from linter.cli import main; "
                             "sys.exit(main(['rules']))"], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert listed.returncode == 2


def test_a_pack_that_registers_no_rule_is_reported(tmp_path, ds):
    pack = tmp_path / "site"
    (pack / "empty_pack").mkdir(parents=True)
    (pack / "empty_pack" / "__init__.py").write_text("")
    dist = pack / "empty_pack-1.0.dist-info"
    dist.mkdir()
    (dist / "entry_points.txt").write_text("[trainlint.rules]\nempty = empty_pack\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(pack), str(ROOT)])}
    completed = subprocess.run([sys.executable, "-m", "linter", "check", str(ds), "--gpu", "A100"],
                               capture_output=True, text=True, env=env, cwd=tmp_path)
    assert completed.returncode == 1
    assert "rule pack `empty_pack` registered no rule" in completed.stderr


def test_mem001_hint_names_the_file_as_given_from_where_trainlint_runs(monkeypatch):
    """The hint is a command to copy: a bare file name fails from the repository root."""
    monkeypatch.chdir(ROOT)
    relative = Path("tests/fixtures/memory/llama2_full_fp16.yaml")
    findings = json.loads(trainlint("check", relative, "--gpu", "A10G", "--format", "json").out)
    [mem] = [f for f in findings if f["code"] == "MEM001"]
    assert f"`trainlint estimate {relative}` for the breakdown" in mem["message"]
    assert trainlint("estimate", relative, "--gpu", "A10G").code == 0
