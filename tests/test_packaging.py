"""Packaging: the GitHub Action runs as written, runtime dependencies are what a lint imports,
and the README's snippets point at things that exist."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

FP16_ZERO2 = '{\n  "fp16": {"enabled": true},\n  "zero_optimization": {"stage": 2}\n}\n'


def _action() -> dict:
    from ruamel.yaml import YAML

    return YAML(typ="safe", pure=True).load((ROOT / "action.yml").read_text())


# The `github` context of a run in another repository that uses trainlint at a commit.
GITHUB_CONTEXT = {"action_path": str(ROOT), "server_url": "https://github.com", "repository": "user/project",
                  "sha": "0123abc", "action_repository": "owner/trainlint", "action_ref": "4567def"}


def _expand(text: str, inputs: dict, github: dict = GITHUB_CONTEXT) -> str:
    """${{ ... }}: context values, and `a || b` (the first non-empty)."""
    def value(match):
        for alternative in match.group(1).split("||"):
            scope, _, name = alternative.strip().partition(".")
            found = {"inputs": inputs, "github": github}[scope][name]
            if found:
                return found
        return ""

    return re.sub(r"\$\{\{\s*(.*?)\s*\}\}", value, text)


def _condition(expression: str, inputs: dict) -> bool:
    """The `if:` forms action.yml uses: comparisons of inputs joined by && and ||."""
    python = re.sub(r"inputs\.([\w-]+)", lambda m: repr(inputs[m.group(1)]), expression)
    python = python.replace("&&", " and ").replace("||", " or ")
    return bool(eval(python, {"__builtins__": {}}))  # noqa: S307 - our own action.yml, inputs quoted by repr


def run_action(workspace: Path, venv: Path, **given) -> list[tuple[str, subprocess.CompletedProcess | None]]:
    """Each step of the composite action, as the runner would execute it (the `uses:` steps are
    GitHub's own actions and are only recorded)."""
    action = _action()
    inputs = {name: spec.get("default", "") for name, spec in action["inputs"].items()}
    inputs.update(given)
    bin_dir = venv / ("Scripts" if os.name == "nt" else "bin")
    base_env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "GITHUB_ACTIONS": "true",
                "GITHUB_WORKSPACE": str(workspace)}
    base_env.pop("PYTHONPATH", None)
    done = []
    for step in action["runs"]["steps"]:
        if "if" in step and not _condition(step["if"], inputs):
            continue
        if "uses" in step:
            done.append((step["uses"], None))
            continue
        assert step["shell"] == "bash"
        env = {**base_env, **{key: _expand(str(value), inputs) for key, value in step.get("env", {}).items()}}
        assert "${{" not in step["run"], "inputs must reach the script through env, not be spliced into it"
        completed = subprocess.run(["bash", "-e", "-c", step["run"]], cwd=workspace, env=env,
                                   capture_output=True, text=True, timeout=600)
        done.append((step["name"], completed))
        if completed.returncode != 0:
            break
    return done


@pytest.fixture(scope="module")
def action_venv(tmp_path_factory):
    """A fresh virtual environment, as actions/setup-python leaves the runner."""
    venv = tmp_path_factory.mktemp("action") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
    return venv


def test_action_steps_install_lint_and_write_sarif(tmp_path, action_venv):
    workspace = tmp_path / "workspace"
    (workspace / "configs").mkdir(parents=True)
    (workspace / "configs" / "ds.json").write_text(FP16_ZERO2)
    steps = run_action(workspace, action_venv, paths="configs", gpu="A100", sarif="trainlint.sarif",
                       args="--select PRE,DS --require-target")
    names = [name for name, _ in steps]
    assert names == ["actions/setup-python@v5", "Install trainlint", "Write SARIF", "Lint"]
    install = dict(steps)["Install trainlint"]
    assert install.returncode == 0, install.stderr
    lint = dict(steps)["Lint"]
    assert lint.returncode == 1, lint.stderr
    lines = lint.stdout.splitlines()
    assert lines[0].startswith("::warning file=configs/ds.json,line=2,endLine=2,col=23,endColumn=27,"
                               "title=PRE002 fp16-where-bf16::configs/ds.json:2:23: ")
    assert "::group::trainlint: every finding" in lines and lines[-1].startswith("Found 2 problems")
    log = json.loads((workspace / "trainlint.sarif").read_text())
    run = log["runs"][0]
    assert run["automationDetails"] == {"id": "trainlint/A100-40GB/"}
    assert {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]} == \
        {"configs/ds.json"}
    help_uris = {rule["id"]: rule["helpUri"] for rule in run["tool"]["driver"]["rules"]}
    assert help_uris["PRE002"] == "https://github.com/owner/trainlint/blob/4567def/docs/rules/PRE002.md"
    # upload only when asked
    (workspace / "configs" / "ds.json").write_text('{"bf16": {"enabled": true}, "zero_optimization": {"stage": 3}}')
    steps = run_action(workspace, action_venv, paths="configs", gpu="A100", sarif="out.sarif", **{"upload-sarif": "true"})
    assert [name for name, _ in steps][-2:] == ["github/codeql-action/upload-sarif@v3", "Lint"]
    assert dict(steps)["Lint"].returncode == 0 and dict(steps)["Write SARIF"].returncode == 0


def test_action_fails_on_a_usage_error(tmp_path, action_venv):
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "ds.json").write_text(FP16_ZERO2)
    steps = run_action(workspace, action_venv, gpu="A100-80G", sarif="x.sarif")
    name, sarif_step = steps[-1]
    assert name == "Write SARIF" and sarif_step.returncode == 2
    assert "did you mean 'A100-80GB'" in sarif_step.stderr


def test_runtime_dependencies_are_what_a_lint_imports():
    """Each runtime dependency is imported by the linter; jsonschema only by the tests."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = {re.split(r"[<>=;\[ ]", requirement, maxsplit=1)[0] for requirement in project["dependencies"]}
    imported_as = {"ruamel.yaml": "ruamel.yaml", "ruamel.yaml.clib": "pure=False", "nvidia-ml-py": "pynvml",
                   "packaging": "packaging", "tomli": "tomli"}
    assert names == set(imported_as)
    source = "\n".join(path.read_text() for path in [*ROOT.glob("linter/**/*.py"), *ROOT.glob("rules/*.py")])
    for name, marker in imported_as.items():
        assert marker in source, f"{name} is a runtime dependency that nothing imports"
    assert "jsonschema" not in names and any("jsonschema" in r for r in project["optional-dependencies"]["test"])
    assert not re.search(r"^\s*(import|from) jsonschema", source, re.M)
    readme = (ROOT / "README.md").read_text()
    dependencies = readme.split("## Dependencies", 1)[1].split("\n## ", 1)[0]
    for name in [*names, "jsonschema"]:
        assert f"`{name}`" in dependencies, f"README's Dependencies section does not give {name}'s reason"


def test_readme_snippets_point_at_what_exists():
    readme = (ROOT / "README.md").read_text()
    assert "pip install trainlint" not in readme  # there is no package index entry
    assert "rev: v0.1.0" not in readme
    for hook in re.findall(r"- id: (trainlint[\w-]*)", readme):
        assert f"- id: {hook}\n" in (ROOT / ".pre-commit-hooks.yaml").read_text()
    for page in re.findall(r"\]\((docs/[^)]+)\)", readme):
        assert (ROOT / page).exists(), page
    inputs = set(_action()["inputs"])
    steps = [step for block in _yaml_blocks(readme) if isinstance(block, dict) and "steps" in block
             for step in block["steps"]]
    ours = [step for step in steps if step.get("uses") == "./"]
    assert ours, "README shows no use of the action"
    for step in ours:
        assert set(step.get("with", {})) <= inputs


def _yaml_blocks(text: str) -> list:
    from ruamel.yaml import YAML

    return [YAML(typ="safe", pure=True).load(block) for block in re.findall(r"```yaml\n(.*?)```", text, re.S)]


@pytest.mark.skipif(shutil.which("git") is None, reason="pre-commit needs git")
def test_readme_local_pre_commit_hook_works_as_written(tmp_path):
    pre_commit = shutil.which("pre-commit", path=str(Path(sys.executable).parent)) or shutil.which("pre-commit")
    if pre_commit is None:
        pytest.skip("pre-commit is not installed (pip install '.[test]')")
    config = next(block for block in _yaml_blocks((ROOT / "README.md").read_text())
                  if isinstance(block, dict) and block.get("repos", [{}])[0].get("repo") == "local")
    repo = tmp_path / "repo"
    repo.mkdir()
    git_env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
               "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True, env=git_env)
    (repo / ".pre-commit-config.yaml").write_text(json.dumps(config))
    (repo / "ds.json").write_text(FP16_ZERO2)
    subprocess.run(["git", "add", "."], cwd=repo, check=True, env=git_env)
    env = {**git_env, "PRE_COMMIT_HOME": str(tmp_path / "cache"), "TRAINLINT_GPU": "",
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    env.pop("GITHUB_ACTIONS", None)

    def hook():
        return subprocess.run([pre_commit, "run", "--all-files"], cwd=repo, capture_output=True, text=True,
                              env=env, timeout=300)

    detected = subprocess.run([sys.executable, "-m", "linter", "hardware", "--format", "json"], env=env,
                              capture_output=True, text=True, cwd=ROOT)
    if not json.loads(detected.stdout)["targets"]:  # a machine with a GPU has a target without settings
        no_target = hook()
        assert no_target.returncode == 1 and "a target is required" in no_target.stdout, no_target.stdout
    (repo / "trainlint.toml").write_text('target-gpus = ["A100"]\n')
    subprocess.run(["git", "add", "."], cwd=repo, check=True, env=git_env)
    findings = hook()
    assert findings.returncode == 1 and "PRE002" in findings.stdout
