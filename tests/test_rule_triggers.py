"""Rule triggers (Rule.triggers, linter/registry.py): a run skips a rule none of whose trigger keys
any of its configs holds, and a check imports a built-in module only for a rule it can trigger.

A wrong trigger would lose findings silently, so every snapshot fixture (tests/rules/*) and every
incident fixture is linted with every rule selected and none skipped, and each finding must come
from a rule its run can trigger: the same findings as with skipping. rules/manifest.json must be
what the modules make of it (regenerate: `python -m linter.rule_manifest`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT
from linter import linting, registry, versions
from linter.catalogue import KEYS
from linter.engine import Options, Session
from linter.hardware import parse_targets
from linter.rule_manifest import manifest
from test_rule_snapshots import RULES, _stage, all_fixtures, fixture_options

INCIDENTS = ROOT / "tests" / "fixtures" / "incidents"


def test_manifest_is_current():
    written = json.loads((ROOT / "rules" / registry.MANIFEST).read_text("utf-8"))
    assert written == manifest(), "rules/manifest.json is stale: run `python -m linter.rule_manifest`"


def test_triggers_are_declared_keys():
    for rule in registry.all_rules():
        assert isinstance(rule.triggers, tuple), rule.code
        keys = {trigger for trigger in rule.triggers if not trigger.startswith("file.kind=")}
        assert keys <= set(KEYS), f"{rule.code}: triggers that are no IR key"


def test_declared_entries_match_the_rules():
    """What a check selects from before importing a module is what importing it registers."""
    for module, entry in manifest().items():
        for code, name, severity, default_enabled, needs_targets, triggers in entry["rules"]:
            rule = registry.get(code)
            assert type(rule).__module__ == f"rules.{module}"
            assert (rule.name, rule.severity, rule.default_enabled, rule.needs_targets, rule.triggers) == \
                (name, severity, default_enabled, needs_targets, tuple(triggers))


_LINT = linting.Linter.lint


def _check_unskipped(paths: list[str], options: dict, monkeypatch) -> list[str]:
    """Lint `paths` (in the current folder) with every rule and none skipped; the findings of a
    rule that skipping would have skipped in their run."""
    lost: list[str] = []
    original = _LINT  # not linting.Linter.lint: within a test that is the previous fixture's wrapper

    def lint(self, run, settings, hardware, keep_changes=False):
        monkeypatch.setattr(registry, "SKIPPING", False)
        findings = original(self, run, settings, hardware, keep_changes)
        monkeypatch.setattr(registry, "SKIPPING", True)
        held = registry.present(run)
        lost.extend(f"{finding.code} {finding.span.path.name}:{finding.span.line} {finding.message[:80]}"
                    for finding in findings if not registry.can_fire(registry.get(finding.code), held))
        return findings

    monkeypatch.setattr(linting.Linter, "lint", lint)
    gpu = options.get("gpu", "A100")
    parse_targets(gpu)
    session = Session(Options(diff=True, unsafe_fixes=True, select=["ALL"], gpu=gpu, detect=False,
                              world_size=options.get("world_size")))
    session.check([Path(path) for path in paths])
    return lost


@pytest.mark.parametrize("folder", sorted(path for path in RULES.iterdir() if path.is_dir()), ids=lambda p: p.name)
def test_snapshot_fixtures_find_the_same_unskipped(folder: Path, tmp_path, monkeypatch):
    monkeypatch.setattr(versions, "installed", lambda package: None)
    lost = []
    for number, fixture in enumerate(fixture for fixture in all_fixtures() if fixture.parent == folder):
        options = fixture_options(fixture)
        workdir = tmp_path / str(number)
        workdir.mkdir()
        _stage(fixture, options, workdir)
        monkeypatch.chdir(workdir)
        versions.forget()
        lost += _check_unskipped([fixture.name, *options.get("files", [])], options, monkeypatch)
    assert lost == [], "findings of rules whose triggers their run does not hold: fix the triggers"


def test_incident_fixtures_find_the_same_unskipped(monkeypatch):
    lost = []
    for incident in sorted(path for path in INCIDENTS.iterdir() if (path / "expect.txt").is_file()):
        options = {"gpu": _read(incident / "target.txt") or "A100"}
        flags = _read(incident / "flags.txt").split()
        if flags:
            assert flags[0] == "--world-size", flags
            options["world_size"] = int(flags[1])
        monkeypatch.chdir(ROOT)
        versions.forget()
        lost += [f"{incident.name}: {item}" for item in _check_unskipped([str(incident)], options, monkeypatch)]
    assert lost == [], "findings of rules whose triggers their run does not hold: fix the triggers"


def _read(path: Path) -> str:
    return path.read_text("utf-8").strip() if path.is_file() else ""


def test_a_check_imports_only_the_modules_it_can_trigger(tmp_path):
    """A cold one-file check leaves the modules of rules it cannot trigger unimported, and still
    finds what a check importing them all finds."""
    config = tmp_path / "ds.json"
    config.write_text('{"zero_optimization": {"stage": 0}, "bf16": {"enabled": true}}')
    script = ("import sys, json; from linter.cli import main; main(['check', sys.argv[1], '--gpu', 'A100', "
              "'--exit-zero', '-q']); print(json.dumps(sorted(m for m in sys.modules if m.startswith('rules.'))))")
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    ran = subprocess.run([sys.executable, "-c", script, str(config)], capture_output=True, text=True,
                         env=environment, cwd=tmp_path, check=True)
    *findings, imported = ran.stdout.splitlines()
    skippable = {f"rules.{module}" for module in manifest()}
    assert skippable - set(json.loads(imported)), "every skippable module was imported"
    everything = subprocess.run([sys.executable, "-c", "import sys; from linter import registry; "
                                 "registry.load(); from linter.cli import main; "
                                 "main(['check', sys.argv[1], '--gpu', 'A100', '--exit-zero', '-q'])", str(config)],
                                capture_output=True, text=True, env=environment, cwd=tmp_path, check=True)
    assert everything.stdout.splitlines() == findings
