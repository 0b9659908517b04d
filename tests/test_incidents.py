"""The mined-incident fixtures stay usable: every config parses and is recognised by an adapter,
trainlint does not fail on them, every folder has complete metadata, and bench/incidents.md lists
exactly the fixture folders. Whether an incident is caught is measured by bench/incidents.py,
not asserted here (rules for many of them are still to be written)."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "incidents"
CONFIG_SUFFIXES = {".yaml", ".yml", ".json", ".py"}


def _bench():
    spec = importlib.util.spec_from_file_location("bench_incidents", ROOT / "bench" / "incidents.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


BENCH = _bench()
FOLDERS = BENCH.incident_folders()


def test_there_are_incidents():
    assert len(FOLDERS) >= 30
    assert all(path.is_dir() for path in FIXTURES.iterdir() if not path.name.startswith("."))


@pytest.fixture(scope="module")
def lint_all():
    """One trainlint run over every fixture folder (GPU and world size do not change parsing)."""
    command = [sys.executable, "-m", "linter.cli", "check", str(FIXTURES), "--gpu", "A100", "--no-detect",
               "--format", "json", "--verbose"]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    return done.returncode, json.loads(done.stdout or "[]"), done.stderr


def test_fixtures_parse_without_internal_error(lint_all):
    code, findings, stderr = lint_all
    assert code in (0, 1), stderr
    assert "internal error" not in stderr
    assert [finding for finding in findings if finding["code"] == "SYN001"] == []


def test_every_config_is_recognised(lint_all):
    _, _, stderr = lint_all
    skipped = [line for line in stderr.splitlines() if "no adapter recognises" in line]
    assert skipped == []


@pytest.mark.parametrize("folder", FOLDERS, ids=[folder.name for folder in FOLDERS])
def test_metadata_is_complete(folder):
    meta = BENCH.read_meta(folder)
    assert re.fullmatch(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+#\d+", meta["source"]), meta["source"]
    assert meta["damage"] in BENCH.DAMAGE_ORDER
    assert meta["expect"].split()
    cause_file = folder / meta["file"]
    assert cause_file.is_file() and cause_file.suffix in CONFIG_SUFFIXES
    assert not meta["key"] or meta["key"] in cause_file.read_text("utf-8")
    target = folder / "target.txt"
    if target.is_file():
        assert target.read_text("utf-8").split() and len(target.read_text("utf-8").split()) == 1


def test_table_rows_match_fixture_folders():
    rows = BENCH.table_ids((ROOT / "bench" / "incidents.md").read_text("utf-8"))
    assert sorted(rows) == sorted(folder.name for folder in FOLDERS)
    assert len(rows) == len(set(rows))
