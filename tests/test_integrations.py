"""Integrations: pre-commit (the real client), SARIF (official schema), GitHub annotations,
statistics, show-fixes, third-party rule packs, and the README's generated rule table."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from conftest import ROOT, trainlint

FP16_ZERO2 = '{\n  "fp16": {"enabled": true},\n  "zero_optimization": {"stage": 2}\n}\n'


@pytest.fixture
def project(tmp_path):
    (tmp_path / "ds.json").write_text(FP16_ZERO2)
    return tmp_path


def test_sarif_validates_against_the_official_schema(project):
    (project / "bad.json").write_text('{"train_batch_size": X}')
    result = trainlint("check", project, "--gpu", "A100", "--format", "sarif")
    assert result.code == 1
    log = json.loads(result.out)
    schema = json.loads((ROOT / "schemas" / "vendor" / "sarif-schema-2.1.0.json").read_text())
    jsonschema.Draft4Validator(schema).validate(log)
    run = log["runs"][0]
    rules = {rule["id"]: rule for rule in run["tool"]["driver"]["rules"]}
    assert "## Why is this bad?" in rules["PRE002"]["help"]["text"]
    results = {result["ruleId"]: result for result in run["results"]}
    assert set(results) == {"PRE002", "DS001", "SYN001"}
    assert run["tool"]["driver"]["rules"][results["PRE002"]["ruleIndex"]]["id"] == "PRE002"
    replacement = results["PRE002"]["fixes"][0]["artifactChanges"][0]["replacements"][0]
    assert replacement["insertedContent"]["text"] == "false"
    assert replacement["deletedRegion"] == {"startLine": 2, "startColumn": 23, "endLine": 2, "endColumn": 27}
    assert results["DS001"]["fixes"][0]["description"]["text"].endswith("(unsafe)")
    assert "fixes" not in results["SYN001"]


def test_github_annotations_and_auto_selection(project, monkeypatch):
    monkeypatch.chdir(project)
    annotations = [
        "::warning file=ds.json,line=2,endLine=2,col=23,endColumn=27,title=PRE002 fp16-where-bf16::"
        "ds.json:2:23: fp16 mixed precision while every target supports bf16 (A100-40GB (cc 8.0)): use bf16",
        "::warning file=ds.json,line=3,endLine=3,col=34,endColumn=35,title=DS001 zero2-fp16::"
        "ds.json:3:34: ZeRO stage 2 with fp16 has produced NaN losses; use bf16, or ZeRO stage 1 or 3",
    ]
    text = trainlint("check", ".", "--gpu", "A100", "--format", "text").out.splitlines()
    expected = [*annotations, "::group::trainlint: every finding", *text[:-1], "::endgroup::", text[-1]]
    assert text[-1] == "Found 2 problems (1 fixable with --fix, 1 with --unsafe-fixes)."
    assert trainlint("check", ".", "--gpu", "A100", "--format", "github").out.splitlines() == expected
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    assert trainlint("check", ".", "--gpu", "A100").out.splitlines() == expected
    assert trainlint("check", ".", "--gpu", "A100", "--format", "text").out.startswith("ds.json")
    (project / "ds.json").write_text('{"zero_optimization": {"stage": 2, "offload_param": {"device": "cpu"}}}')
    assert trainlint("check", ".", "--no-detect").out.startswith("::error file=")


def test_github_paths_are_relative_to_the_workspace_from_a_subfolder(project, monkeypatch):
    """GitHub resolves `file=` against $GITHUB_WORKSPACE, not the step's working directory."""
    sub = project / "configs"
    sub.mkdir()
    (sub / "ds.json").write_text(FP16_ZERO2)
    monkeypatch.chdir(sub)
    monkeypatch.setenv("GITHUB_WORKSPACE", str(project))
    first = trainlint("check", "ds.json", "--gpu", "A100", "--format", "github").out.splitlines()[0]
    assert first.startswith("::warning file=configs/ds.json,line=2,endLine=2,col=23,endColumn=27,")
    assert first.endswith("::ds.json:2:23: fp16 mixed precision while every target supports bf16 "
                          "(A100-40GB (cc 8.0)): use bf16")


def test_github_point_findings_have_a_one_column_range(project, monkeypatch):
    monkeypatch.chdir(project)
    (project / "ds.json").write_text('{"train_batch_size": X}')
    out = trainlint("check", "ds.json", "--format", "github").out
    assert out.startswith("::error file=ds.json,line=1,endLine=1,col=22,endColumn=23,title=SYN001 unparseable-config::"
                          "ds.json:1:22: invalid JSON")
    assert out.splitlines()[-1] == "Found 1 problem (0 fixable with --fix, 0 with --unsafe-fixes)."


def test_github_escapes_newlines_and_percent():
    from linter.report import _escape_data, _escape_property

    assert _escape_data("50%\nnext") == "50%25%0Anext"
    assert _escape_property("a:b,c") == "a%3Ab%2Cc"


def test_statistics(project):
    (project / "other.json").write_text(FP16_ZERO2)
    result = trainlint("check", project, "--gpu", "A100", "--statistics")
    assert result.out.splitlines() == ["    2\tDS001  \t[ ] zero2-fp16", "    2\tPRE002 \t[*] fp16-where-bf16"]
    assert result.code == 1


def test_show_fixes(project):
    result = trainlint("check", project, "--gpu", "A100", "--fix", "--unsafe-fixes", "--show-fixes")
    assert result.out.splitlines()[-3:] == [f"- {project / 'ds.json'}:", "    1 × DS001 (zero2-fp16)",
                                            "    1 × PRE002 (fp16-where-bf16)"]
    assert "Fixed 2 problems:" in result.out


def test_readme_rule_table_matches_the_registry():
    from linter.rule_docs import rules_markdown

    readme = (ROOT / "README.md").read_text()
    start, end = "<!-- rules-table:start -->\n", "<!-- rules-table:end -->"
    assert start in readme and end in readme, "README lacks the generated rule table markers"
    table = readme.split(start, 1)[1].split(end, 1)[0]
    assert table == rules_markdown(), "README rule table drifted: regenerate with `trainlint rules --format markdown`"


def test_third_party_rule_pack_via_entry_point(tmp_path, project):
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(target),
                    str(ROOT / "tests" / "example_pack")], check=True, capture_output=True)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(target), str(ROOT)])}
    (project / "zero0.json").write_text('{"zero_optimization": {"stage": 0}, "bf16": {"enabled": true}}')
    listed = subprocess.run([sys.executable, "-m", "linter", "rules", "--format", "json"],
                            capture_output=True, text=True, env=env, check=True)
    assert "EXT001" in {row["code"] for row in json.loads(listed.stdout)}
    checked = subprocess.run([sys.executable, "-m", "linter", "check", str(project / "zero0.json"), "--gpu", "A100"],
                             capture_output=True, text=True, env=env)
    assert checked.returncode == 1 and "EXT001 ZeRO is off (stage 0)" in checked.stdout
    # without the pack installed the rule does not exist
    plain = subprocess.run([sys.executable, "-m", "linter", "rule", "EXT001"], capture_output=True, text=True,
                           env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert plain.returncode == 2


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
                        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"})


def _checkout_as_committed(clone: Path) -> tuple[Path, str]:
    """(repository, commit) holding this checkout's files as they are now, its uncommitted changes
    to tracked files included (a clone with them committed, as try-repo's shadow repository)."""
    changes = subprocess.run(["git", "diff", "HEAD", "--binary"], cwd=ROOT, check=True, capture_output=True).stdout
    if not changes:
        return ROOT, subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, check=True, capture_output=True,
                                    text=True).stdout.strip()
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True, capture_output=True)
    subprocess.run(["git", "apply", "--index", "--binary", "-"], cwd=clone, input=changes, check=True,
                   capture_output=True)
    _git(clone, "commit", "-q", "-m", "uncommitted changes")
    return clone, subprocess.run(["git", "rev-parse", "HEAD"], cwd=clone, check=True, capture_output=True,
                                 text=True).stdout.strip()


@pytest.mark.skipif(shutil.which("git") is None, reason="pre-commit needs git")
def test_pre_commit_hooks_with_the_real_client(tmp_path):
    pre_commit = shutil.which("pre-commit", path=str(Path(sys.executable).parent)) or shutil.which("pre-commit")
    if pre_commit is None:
        pytest.skip("pre-commit is not installed (pip install '.[test]')")
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "trainlint.toml").write_text('target-gpus = ["A100"]\n')
    (repo / "ds.json").write_text(FP16_ZERO2)
    # Files pre-commit passes that are not training configs: JSONC, a Helm template, a conda
    # recipe, a tokenizer in a git-ignored checkpoint folder (not staged, so never passed).
    (repo / ".vscode").mkdir()
    (repo / ".vscode" / "settings.json").write_text('{\n  // editor\n  "editor.tabSize": 2,\n}\n')
    (repo / "chart" / "templates").mkdir(parents=True)
    (repo / "chart" / "templates" / "job.yaml").write_text("kind: {{ .Values.kind }}\nmetadata:\n  name: {{ .name }}\n")
    (repo / "meta.yaml").write_text("{% set version = \"1.0\" %}\npackage:\n  version: {{ version }}\n")
    (repo / "tsconfig.json").write_text('{"compilerOptions": {"strict": true}}\n')
    (repo / ".gitignore").write_text("checkpoints/\n")
    (repo / "checkpoints").mkdir()
    (repo / "checkpoints" / "tokenizer.json").write_text('{"version": "1.0", "truncated":')
    _git(repo, "add", ".")
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "cache"), "SKIP": ""}
    env.pop("GITHUB_ACTIONS", None)
    # As `pre-commit try-repo ROOT <hook>` does (this checkout with its uncommitted changes), but
    # through a config naming that commit, as a user's does: try-repo installs the hooks'
    # environment afresh on every call, this installs it once for the four runs.
    hooks, rev = _checkout_as_committed(tmp_path / "hooks-repo")
    config = tmp_path / "pre-commit-config.yaml"
    config.write_text(f"repos:\n- repo: {hooks}\n  rev: {rev}\n  hooks:\n  - id: trainlint\n  - id: trainlint-fix\n")

    def hook(hook_id: str) -> subprocess.CompletedProcess:
        return subprocess.run([pre_commit, "run", hook_id, "--all-files", "--config", str(config)], cwd=repo,
                              capture_output=True, text=True, env=env, timeout=600)

    failing = hook("trainlint")
    assert failing.returncode == 1, failing.stdout + failing.stderr
    assert "PRE002" in failing.stdout
    fixing = hook("trainlint-fix")
    assert fixing.returncode == 1  # files were modified
    assert (repo / "ds.json").read_text() == FP16_ZERO2.replace(
        '"fp16": {"enabled": true}', '"fp16": {"enabled": false},\n  "bf16": {"enabled": true}')
    passing = hook("trainlint")
    assert passing.returncode == 0, passing.stdout + passing.stderr
    assert "SYN001" not in passing.stdout
    detected = subprocess.run([sys.executable, "-m", "linter", "hardware", "--format", "json"], env=env,
                              capture_output=True, text=True, cwd=ROOT)
    if not json.loads(detected.stdout)["targets"]:  # on a machine with a GPU, detection names a target
        (repo / "trainlint.toml").unlink()
        _git(repo, "add", "-A")
        no_target = hook("trainlint")
        assert no_target.returncode == 1 and "a target is required" in no_target.stdout, no_target.stdout
