"""Shared helpers: run the CLI in-process, locate the shared corpus, write fixture copies."""

from __future__ import annotations

import io
import shutil
import sys
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path

import pytest

from linter import hardware, project_args, settings, source
from linter.cli import main

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
CORPUS = ROOT.parent / "shared" / "corpus"


@dataclass
class Result:
    code: int
    out: str
    err: str


def trainlint(*args: str) -> Result:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main([str(arg) for arg in args])
    return Result(code, out.getvalue(), err.getvalue())


@pytest.fixture(autouse=True)
def fresh_state(monkeypatch):
    """Each test sees no GPU environment variable and no cached settings or detection."""
    monkeypatch.delenv("TRAINLINT_GPU", raising=False)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    settings.for_directory.cache_clear()
    source.real_path.cache_clear()
    hardware.detect.cache_clear()
    project_args._root_of_folder.cache_clear()
    yield
    settings.for_directory.cache_clear()
    hardware.detect.cache_clear()


@pytest.fixture
def nothing_installed(monkeypatch):
    """Versions come from the pins each test writes, never from this machine's packages."""
    from linter import versions

    monkeypatch.setattr(versions, "installed", lambda package: None)
    versions.forget()
    yield
    versions.forget()


@pytest.fixture
def empty_hub_cache(tmp_path_factory, monkeypatch):
    """No test reads the Hugging Face cache of the machine it runs on: HF_HUB_CACHE is an empty
    folder, and checkpoint configs read before are forgotten."""
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path_factory.mktemp("hub")))
    from linter import models

    models.checkpoint_config.cache_clear()
    yield
    models.checkpoint_config.cache_clear()


def write_file(path: Path, text: str) -> Path:
    """Write `text` to `path`, making its folders."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, "utf-8")
    return path


@pytest.fixture
def no_gpu(monkeypatch):
    """A machine without a GPU: NVML cannot load its library, torch is absent."""

    class FakeNVML:
        def nvmlInit(self):
            raise RuntimeError("NVML Shared Library Not Found")

    monkeypatch.setitem(sys.modules, "pynvml", FakeNVML())
    monkeypatch.setattr(hardware, "_detect_torch", lambda: (_ for _ in ()).throw(RuntimeError("torch is not installed")))


@pytest.fixture
def fixture_copy(tmp_path):
    """Copy a fixture (relative to tests/fixtures) into tmp_path and return the copy's path."""

    def copy(relative: str, transform=None) -> Path:
        source = FIXTURES / relative
        target = tmp_path / source.name
        data = source.read_bytes()
        target.write_bytes(transform(data) if transform else data)
        return target

    return copy


@pytest.fixture
def corpus() -> Path:
    if not CORPUS.is_dir():
        pytest.skip(f"the shared corpus is not beside this checkout ({CORPUS}); corpus tests need ../shared")
    return CORPUS


_CORPUS_RUNS: dict[tuple[str, ...], tuple[Result, dict, dict]] = {}


def corpus_run(*args: str) -> tuple[Result, dict, dict]:
    """`trainlint check <corpus> *args`, run once per session for every test that reads that same
    run (a corpus check takes seconds): its result, and each corpus file's modification time (ns)
    just before and just after it. Call it from a test body (after `fresh_state`), never from a
    fixture of wider scope."""
    if args not in _CORPUS_RUNS:
        def stamps() -> dict:
            return {path: path.stat().st_mtime_ns for path in CORPUS.rglob("*") if path.is_file()}

        before = stamps()
        result = trainlint("check", CORPUS, *args)
        _CORPUS_RUNS[args] = (result, before, stamps())
    return _CORPUS_RUNS[args]


def copy_tree(source: Path, target: Path) -> None:
    shutil.copytree(source, target)
