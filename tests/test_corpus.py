"""The shared corpus of real configs: no crash, no false errors, byte-faithful idempotent fixes.

Reads ../shared/corpus (skipped with a reason where it is absent) and fixes copies only.
"""

from __future__ import annotations

import difflib
import json
import shutil
from pathlib import Path

import pytest

from conftest import trainlint

TARGETS = ["V100", "A100"]


def errors(findings):
    return [f for f in findings if f["severity"] == "error"]


@pytest.fixture(scope="module")
def corpus_copy(tmp_path_factory):
    from conftest import CORPUS

    if not CORPUS.is_dir():
        pytest.skip(f"the shared corpus is not beside this checkout ({CORPUS}); corpus tests need ../shared")
    copy = tmp_path_factory.mktemp("corpus") / "corpus"
    shutil.copytree(CORPUS, copy)
    return copy


@pytest.mark.parametrize("gpu", TARGETS)
def test_corpus_lints_without_crash_and_without_false_errors(corpus, gpu):
    result = trainlint("check", corpus, "--gpu", gpu, "--format", "json")
    assert result.code in (0, 1), result.err
    assert "internal error" not in result.err
    findings = json.loads(result.out)
    frameworks = {f["framework"] for f in findings}
    assert {"deepspeed", "ludwig"} <= frameworks if gpu == "A100" else "deepspeed" in frameworks
    syntax = sorted(f["file"].split("/")[-1] for f in findings if f["code"] == "SYN001")
    assert syntax == sorted(p.name for p in corpus.rglob("*_TEMPLATE.json"))
    for finding in findings:
        if finding["code"] == "SYN001":
            assert finding["line"] > 1 and finding["column"] > 1
    unexplained = [f for f in errors(findings) if f["code"] != "SYN001"]
    if gpu == "A100":
        assert unexplained == []
    else:  # bf16 configs aimed at a V100 are real errors
        assert {f["code"] for f in unexplained} <= {"PRE001"}
        assert all("bf16" in f["message"] for f in unexplained)


def _touched_lines(findings_by_file):
    lines = {}
    for finding in findings_by_file:
        fix = finding["fix"]
        for edit in (fix or {}).get("edits", []):
            lines.setdefault(edit["file"], set()).update(range(edit["line"], edit["end_line"] + 1))
    return lines


@pytest.mark.parametrize("gpu", TARGETS)
def test_corpus_fix_changes_only_edited_lines_and_is_idempotent(corpus_copy, gpu, tmp_path):
    work = tmp_path / "work"
    shutil.copytree(corpus_copy, work)
    before = {path: path.read_bytes() for path in work.rglob("*") if path.is_file()}
    planned = json.loads(trainlint("check", work, "--gpu", gpu, "--unsafe-fixes", "--format", "json").out)
    touched = {str(Path(name).resolve()): lines for name, lines in _touched_lines(planned).items()}
    first = trainlint("check", work, "--gpu", gpu, "--fix", "--unsafe-fixes", "--format", "json")
    assert "fix dropped" not in first.err and "error" not in first.err, first.err
    after = {path: path.read_bytes() for path in work.rglob("*") if path.is_file()}
    changed = [path for path in before if before[path] != after[path]]
    assert changed, "the corpus has fixable findings; some file must change"
    for path in changed:
        allowed = touched.get(str(path.resolve()), set())
        old_lines = before[path].decode("utf-8-sig").splitlines(keepends=True)
        new_lines = after[path].decode("utf-8-sig").splitlines(keepends=True)
        for tag, i1, i2, _j1, _j2 in difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False).get_opcodes():
            if tag in ("replace", "delete"):
                assert set(range(i1 + 1, i2 + 1)) <= allowed, f"{path}: lines {i1 + 1}-{i2} changed without an edit"
            elif tag == "insert":
                assert {i1, i1 + 1} & allowed, f"{path}: lines inserted at {i1} away from any edit"
        assert before[path].startswith(b"\xef\xbb\xbf") == after[path].startswith(b"\xef\xbb\xbf")
        assert before[path].endswith(b"\n") == after[path].endswith(b"\n")
        assert (b"\r\n" in before[path]) == (b"\r\n" in after[path])
    # Re-parses: no file that parsed before is a SYN001 now.
    syntax = {f["file"] for f in json.loads(first.out) if f["code"] == "SYN001"}
    assert all(name.endswith("_TEMPLATE.json") for name in syntax)
    second = trainlint("check", work, "--gpu", gpu, "--fix", "--unsafe-fixes")
    assert {path: path.read_bytes() for path in work.rglob("*") if path.is_file()} == after
    assert "fixed" not in second.out
