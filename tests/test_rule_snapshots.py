"""Per-rule snapshot tests, as ruff keeps them (tests/rules/README.md says how to add one).

Every registered rule has a folder tests/rules/<CODE>/ holding fixtures, one per framework whose
files can express the hazard, and beside each fixture `<fixture>.snap`: the rule's findings as
`line:col CODE message` lines and the unified diff `--diff --unsafe-fixes` prints. A fixture whose
name has `.clean` before its extension is a twin that must not fire; any other must fire.

Each fixture is linted alone in a fresh temporary folder (with its side files and requirements
pin), through the CLI, with only its rule selected and no GPU detection. The installed
distributions are not consulted for versions: a fixture that needs one pins it.
`TRAINLINT_UPDATE_SNAPSHOTS=1 pytest tests/test_rule_snapshots.py` rewrites the .snap files.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import sys
from pathlib import Path

import pytest

from conftest import ROOT, trainlint
from linter import registry, versions

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

RULES = ROOT / "tests" / "rules"
UPDATE = os.environ.get("TRAINLINT_UPDATE_SNAPSHOTS") == "1"
OPTION_KEYS = {"gpu", "world_size", "requirements", "files", "select", "known_bug", "checkout"}
NOT_FIXTURES = {"options.toml", "README.md"}


def _options_of(folder: Path) -> dict:
    path = folder / "options.toml"
    return tomllib.loads(path.read_text("utf-8")) if path.is_file() else {}


def fixture_options(fixture: Path) -> dict:
    """options.toml's top-level keys, overridden by its [fixtures."<name>"] table, then by
    `<fixture>.options`."""
    folder_options = _options_of(fixture.parent)
    options = {key: value for key, value in folder_options.items() if key != "fixtures"}
    options.update(folder_options.get("fixtures", {}).get(fixture.name, {}))
    own = fixture.with_name(fixture.name + ".options")
    if own.is_file():
        options.update(tomllib.loads(own.read_text("utf-8")))
    unknown = set(options) - OPTION_KEYS
    assert not unknown, f"{fixture}: unknown options {sorted(unknown)} (known: {sorted(OPTION_KEYS)})"
    return options


def side_files(folder: Path) -> set[str]:
    """Files that fixtures take along (a linked DeepSpeed JSON): not fixtures themselves."""
    named = set(_options_of(folder).get("files", []))
    for table in _options_of(folder).get("fixtures", {}).values():
        named.update(table.get("files", []))
    for options_file in folder.glob("*.options"):
        named.update(tomllib.loads(options_file.read_text("utf-8")).get("files", []))
    return named


def fixtures_in(folder: Path) -> list[Path]:
    taken = side_files(folder) | NOT_FIXTURES
    return sorted(path for path in folder.iterdir() if path.is_file() and path.name not in taken
                  and path.suffix not in (".snap", ".options"))


def is_clean(fixture: Path) -> bool:
    return ".clean." in fixture.name or fixture.name.endswith(".clean")


def all_fixtures() -> list[Path]:
    return [fixture for folder in sorted(RULES.iterdir()) if folder.is_dir() for fixture in fixtures_in(folder)]


def _arguments(code: str, options: dict) -> list[str]:
    arguments = ["--select", ",".join([code, *options.get("select", [])]), "--no-detect"]
    if "gpu" in options:
        arguments += ["--gpu", options["gpu"]]
    if "world_size" in options:
        arguments += ["--world-size", str(options["world_size"])]
    return arguments


def _stage(fixture: Path, options: dict, folder: Path) -> None:
    """Copy the fixture and its side files into `folder`, and write its requirements pin (and a
    `.git` folder where `checkout` asks for one)."""
    for name in [fixture.name, *options.get("files", [])]:
        target = folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes((fixture.parent / name).read_bytes())
    if options.get("checkout"):
        (folder / ".git").mkdir(exist_ok=True)  # a git checkout: its launch commands are read
    if "requirements" in options:
        (folder / "requirements.txt").write_text("".join(f"{line}\n" for line in options["requirements"]), "utf-8")


def _relative(text: str, folder: Path) -> str:
    """Paths under the temporary folder as the fixture folder would show them, and those above it
    (a link's candidates: the folder and each one above it) as one machine-independent mention."""
    for prefix in {str(folder), str(folder.resolve())}:
        text = text.replace(prefix + os.sep, "")
    for base in {folder, folder.resolve()}:
        for depth, ancestor in enumerate(base.parents, start=1):
            if ancestor.parent != ancestor:  # not the root: "/" is in every path
                text = text.replace(f"{ancestor}{os.sep}", "../" * depth)
    return re.sub(r"(?:, (?:\.\./)+[^,)\s]+)+(?:, /[^,)\s]+)?", ", and the same name in each folder above", text)


def render_snapshot(fixture: Path, workdir: Path, monkeypatch) -> tuple[str, list[dict]]:
    """The snapshot text for `fixture`, and the rule's findings."""
    code = fixture.parent.name
    options = fixture_options(fixture)
    arguments = _arguments(code, options)
    monkeypatch.setattr(versions, "installed", lambda package: None)
    _stage(fixture, options, workdir)
    # Side files are linted too: fixes are written only to linted files (engine: _writable).
    paths = [fixture.name, *options.get("files", [])]
    monkeypatch.chdir(workdir)
    report = trainlint("check", *paths, "--format", "json", "--quiet", *arguments)
    assert report.code in (0, 1), report.err
    findings = json.loads(_relative(report.out, workdir))
    shown = trainlint("check", *paths, "--diff", "--unsafe-fixes", *arguments)
    assert shown.code in (0, 1), shown.err
    diff = _relative(shown.out, workdir)

    # --diff must show exactly what --fix --unsafe-fixes writes (--diff wrote nothing).
    before = {path.relative_to(workdir).as_posix(): path.read_text("utf-8") for path in sorted(workdir.rglob("*"))
              if path.is_file()}
    written = trainlint("check", *paths, "--fix", "--unsafe-fixes", "--exit-zero", *arguments)
    assert written.code == 0, written.err
    wrote = ""
    for name, text in before.items():
        now = (workdir / name).read_text("utf-8")
        wrote += "".join(difflib.unified_diff(text.splitlines(keepends=True), now.splitlines(keepends=True),
                                              fromfile=f"a/{name}", tofile=f"b/{name}"))
    assert sorted(diff.split("--- a/")) == sorted(wrote.split("--- a/")), \
        f"--diff shows\n{diff}\nbut --fix --unsafe-fixes wrote\n{wrote}"
    remaining = json.loads(_relative(trainlint("check", *paths, "--format", "json", "--quiet", *arguments).out,
                                     workdir)) if diff else findings

    def listed(found: list[dict]) -> list[str]:
        return [f"{'' if item['file'] == fixture.name else item['file'] + ':'}{item['line']}:{item['column']} "
                f"{item['code']} {item['message']}" for item in found] or ["(none)"]

    lines = [f"# trainlint check {' '.join(paths)} {' '.join(arguments)}", "", "## findings", *listed(findings),
             "", "## diff (--diff --unsafe-fixes)", (diff if diff else "(none)\n").rstrip("\n")]
    if diff:  # a fix that leaves its own finding behind shows here
        lines += ["", "## findings after --fix --unsafe-fixes", *listed(remaining)]
    return "\n".join(lines) + "\n", findings


@pytest.mark.parametrize("fixture", all_fixtures(), ids=lambda path: f"{path.parent.name}/{path.name}")
def test_snapshot(fixture: Path, tmp_path, monkeypatch):
    text, findings = render_snapshot(fixture, tmp_path, monkeypatch)
    code = fixture.parent.name
    fired = [finding for finding in findings if finding["code"] == code]
    if is_clean(fixture):
        assert not fired, f"{fixture.name} is a clean twin but {code} fires:\n{text}"
    else:
        assert fired, f"{fixture.name} should fire {code} but does not:\n{text}"
    if "## findings after --fix" in text and "known_bug" not in fixture_options(fixture):
        after = text.split("## findings after --fix --unsafe-fixes\n", 1)[1]
        assert f" {code} " not in after, f"--fix --unsafe-fixes leaves {code} behind:\n{text}"
    snap = fixture.with_name(fixture.name + ".snap")
    if UPDATE:
        snap.write_text(text, "utf-8")
        return
    assert snap.is_file(), f"no snapshot {snap.relative_to(ROOT)}; run with TRAINLINT_UPDATE_SNAPSHOTS=1 and review it"
    assert text == snap.read_text("utf-8")


def builtin_rules() -> list:
    """The rules this project ships (a rule pack installed beside it keeps its own tests)."""
    return [rule for rule in registry.all_rules() if type(rule).__module__.split(".")[0] == "rules"]


def test_every_rule_has_snapshots():
    codes = {rule.code for rule in builtin_rules()}
    folders = {folder.name for folder in RULES.iterdir() if folder.is_dir()}
    assert sorted(codes - folders) == [], "rules without a tests/rules/<CODE>/ folder"
    assert sorted(folders - codes) == [], "snapshot folders for rules that are not registered"
    for code in sorted(codes):
        fixtures = fixtures_in(RULES / code)
        assert any(not is_clean(fixture) for fixture in fixtures), f"{code}: no fixture that fires"
        assert any(is_clean(fixture) for fixture in fixtures), f"{code}: no clean twin"


def test_no_stale_snapshots():
    fixtures = {fixture.with_name(fixture.name + ".snap") for fixture in all_fixtures()}
    stale = sorted(str(snap.relative_to(ROOT)) for snap in RULES.rglob("*.snap") if snap not in fixtures)
    assert stale == [], "snapshots whose fixture is gone"
