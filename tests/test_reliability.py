"""Reliability and security: mutation fuzz, faults, hostile input. The original bytes are never lost."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import CORPUS, trainlint

FP16 = b'{\n  "fp16": {"enabled": true}\n}\n'
FIXED = b'{\n  "fp16": {"enabled": false},\n  "bf16": {"enabled": true}\n}\n'
MUTATION_CASES = 150


def test_bounded_mutation_fuzz_over_the_corpus(corpus):
    from tests.fuzz.run import fuzz

    failures = fuzz(MUTATION_CASES, seed=7, crashers=None)
    assert failures == []


def test_hostile_yaml_alias_bomb_is_cheap_and_constructs_nothing(tmp_path):
    path = tmp_path / "bomb.yaml"
    levels = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for level in range(1, 12):
        levels.append(f"a{level}: &a{level} [" + ", ".join([f"*a{level - 1}"] * 10) + "]")
    path.write_text("model_type: llm\nbase_model: m\ninput_features: []\n" + "\n".join(levels)
                    + "\nquantization: *a11\nevil: !!python/object/apply:os.system ['touch " + str(tmp_path / "pwned") + "']\n")
    result = trainlint("check", path, "--gpu", "A100")
    assert result.code in (0, 1) and "internal error" not in result.err
    assert not (tmp_path / "pwned").exists()


def test_deep_nesting_is_syn001(tmp_path):
    deep_yaml = tmp_path / "deep.yaml"
    deep_yaml.write_text("base_model: m\nmicro_batch_size: " + "[" * 10000 + "]" * 10000 + "\n")
    deep_json = tmp_path / "deep.json"
    deep_json.write_text('{"zero_optimization": ' + "[" * 10000 + "]" * 10000 + "}")
    for path in (deep_yaml, deep_json):
        result = trainlint("check", path, "--no-detect", "--format", "json")
        assert [f["code"] for f in json.loads(result.out)] == ["SYN001"], result.err


def test_invalid_utf8_and_nul_are_syn001_with_position(tmp_path):
    path = tmp_path / "ds.json"
    path.write_bytes(b'{"fp16": {"enabled": true},\n "x": "\xff"}')
    [finding] = json.loads(trainlint("check", path, "--no-detect", "--format", "json").out)
    assert (finding["code"], finding["line"], finding["column"]) == ("SYN001", 2, 8)
    nul = tmp_path / "nul.yaml"
    nul.write_bytes(b"model_type: llm\x00\n")
    assert json.loads(trainlint("check", nul, "--no-detect", "--format", "json").out)[0]["code"] == "SYN001"


def test_latin1_python_file_found_by_walking_is_not_a_config(tmp_path):
    """Most .py files are not configs: one that is not UTF-8 is skipped, walked or named (a
    pre-commit hook names every staged file); one that looks like a config of ours is SYN001."""
    script = tmp_path / "legacy.py"
    script.write_bytes(b"# caf\xe9\nprint('hello')\n")
    walked = trainlint("check", tmp_path, "--no-detect", "--format", "json")
    assert walked.code == 0 and json.loads(walked.out) == []
    assert json.loads(trainlint("check", script, "--no-detect", "--format", "json").out) == []
    config = tmp_path / "train.py"
    config.write_bytes(b"# caf\xe9\nfrom unsloth import FastLanguageModel\nFastLanguageModel.from_pretrained('m')\n")
    named = json.loads(trainlint("check", config, "--no-detect", "--format", "json").out)
    assert [f["code"] for f in named] == ["SYN001"]


def test_file_over_10_mb_is_skipped_with_a_diagnostic(tmp_path):
    path = tmp_path / "big.json"
    path.write_bytes(b'{"fp16": {"enabled": true}, "pad": "' + b"x" * (10 * 1024 * 1024) + b'"}')
    [finding] = json.loads(trainlint("check", path, "--gpu", "A100", "--format", "json").out)
    assert finding["code"] == "SYN001" and "over the" in finding["message"]


def test_bom_and_crlf_survive_a_fix(tmp_path):
    path = tmp_path / "ds.json"
    path.write_bytes(b"\xef\xbb\xbf" + FP16.replace(b"\n", b"\r\n"))
    trainlint("check", path, "--gpu", "A100", "--fix")
    assert path.read_bytes() == b"\xef\xbb\xbf" + FIXED.replace(b"\n", b"\r\n")


def test_symlinked_config_fixes_the_target_and_keeps_the_link(tmp_path):
    target = tmp_path / "real" / "ds.json"
    target.parent.mkdir()
    target.write_bytes(FP16)
    link = tmp_path / "ds.json"
    link.symlink_to(target)
    trainlint("check", link, "--gpu", "A100", "--fix")
    assert link.is_symlink() and target.read_bytes() == FIXED


def test_read_only_file_is_untouched_even_as_root(tmp_path, monkeypatch):
    path = tmp_path / "ds.json"
    path.write_bytes(FP16)
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, mode: False if Path(p) == path.resolve() else real_access(p, mode))
    result = trainlint("check", path, "--gpu", "A100", "--fix")
    assert result.code == 1 and "not writable" in result.err
    assert path.read_bytes() == FP16


@pytest.mark.parametrize("change", ["replace", "delete"])
def test_file_changed_between_read_and_write_is_not_overwritten(tmp_path, monkeypatch, change):
    from linter import fixer

    path = tmp_path / "ds.json"
    path.write_bytes(FP16)
    original_fix_run = fixer.Fixer.fix_run

    def meddle(self, *args, **kwargs):
        outcome = original_fix_run(self, *args, **kwargs)
        if change == "replace":
            path.write_bytes(b'{"someone": "else"}')
        else:
            path.unlink()
        return outcome

    monkeypatch.setattr(fixer.Fixer, "fix_run", meddle)
    result = trainlint("check", path, "--gpu", "A100", "--fix")
    assert result.code == 1
    if change == "replace":
        assert "changed on disk" in result.err and path.read_bytes() == b'{"someone": "else"}'
    else:
        assert "cannot re-read" in result.err and not path.exists()
    assert [p.name for p in tmp_path.iterdir()] == (["ds.json"] if change == "replace" else [])


def test_referenced_file_outside_the_linted_paths_is_never_written(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    ds = shared / "zero2.json"
    ds.write_bytes(b'{"fp16": {"enabled": true}, "zero_optimization": {"stage": 2}}')
    project = tmp_path / "project"
    project.mkdir()
    config = project / "axolotl.yaml"
    config.write_text("base_model: m\nmicro_batch_size: 2\ndatasets:\n  - path: d\n"
                      f"deepspeed: {ds}\nbf16: true\n")
    result = trainlint("check", config, "--gpu", "A100", "--fix", "--unsafe-fixes")
    assert ds.read_bytes() == b'{"fp16": {"enabled": true}, "zero_optimization": {"stage": 2}}'
    assert "not written" in result.err
    assert "PRE003" in result.out or "DS003" in result.out or "PRE002" in result.out


@pytest.mark.skipif(not CORPUS.is_dir(), reason="needs ../shared/corpus")
def test_corpus_is_never_written_by_linting(corpus):
    before = {p: p.stat().st_mtime_ns for p in corpus.rglob("*") if p.is_file()}
    trainlint("check", corpus, "--gpu", "A100", "--format", "json")
    assert {p: p.stat().st_mtime_ns for p in corpus.rglob("*") if p.is_file()} == before
