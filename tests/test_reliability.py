"""Reliability and security: mutation fuzz, faults, hostile input. The original bytes are never lost."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import CORPUS, corpus_run, trainlint

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
    """PyYAML skips a leading BOM, so a YAML file keeps it through a fix (a JSON one is SYN001)."""
    path = tmp_path / "axolotl.yaml"
    original = b"base_model: m\nmicro_batch_size: 2\ndatasets:\n  - path: d\nfp16: true\n"
    path.write_bytes(b"\xef\xbb\xbf" + original.replace(b"\n", b"\r\n"))
    trainlint("check", path, "--gpu", "A100", "--fix")
    fixed = original.replace(b"fp16: true\n", b"fp16: false\nbf16: true\n")
    assert path.read_bytes() == b"\xef\xbb\xbf" + fixed.replace(b"\n", b"\r\n")


def test_json_with_a_bom_is_syn001_and_never_rewritten(tmp_path):
    """json.load refuses a BOM ("Unexpected UTF-8 BOM"): the framework cannot read the file,
    and trainlint used to 'fix' it (issue 19, fault 10)."""
    path = tmp_path / "ds.json"
    path.write_bytes(b"\xef\xbb\xbf" + FP16)
    result = trainlint("check", path, "--gpu", "A100", "--fix", "--format", "json")
    [finding] = json.loads(result.out)
    assert finding["code"] == "SYN001" and "byte order mark" in finding["message"]
    assert path.read_bytes() == b"\xef\xbb\xbf" + FP16


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
    # `trainlint check <corpus> --gpu A100 --format json`, with every file's mtime before and after
    # it (the run is shared with the other tests that read it)
    _, before, after = corpus_run("--gpu", "A100", "--format", "json")
    assert after == before


# ---- issue 19, fault 7: one bad entry in a walked tree must not hang, eat memory or stop the run ----

DS_FP16 = b'{"train_batch_size": 8, "fp16": {"enabled": true}}\n'


def bounded_cli(*args, seconds: int = 30, memory_mb: int = 1024):
    """The CLI in a child process with a wall-clock and an address-space limit: a hang or an
    unbounded read fails the test instead of the machine."""
    import resource
    import subprocess
    import sys

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (memory_mb << 20, memory_mb << 20))

    return subprocess.run([sys.executable, "-m", "linter", *map(str, args)], capture_output=True, text=True,
                          timeout=seconds, preexec_fn=limit, cwd=Path(__file__).resolve().parents[1])


def hostile_tree(tmp_path: Path) -> Path:
    import socket

    tree = tmp_path / "tree"
    (tree / "sub").mkdir(parents=True)
    (tree / "sub" / "ds.json").write_bytes(DS_FP16)
    os.mkfifo(tree / "fifo.yaml")
    (tree / "zero.yaml").symlink_to("/dev/zero")
    (tree / "dangling.yaml").symlink_to(tree / "nowhere.yaml")
    (tree / "loop.yaml").symlink_to(tree / "loop.yaml")
    outside = tmp_path / "outside.json"
    outside.write_bytes(DS_FP16)
    (tree / "escape.json").symlink_to(outside)
    inside = tree / "sub" / "ds.json"
    (tree / "alias.json").symlink_to(inside)  # a link inside the tree: the same file, read once
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(tree / "sock.yaml"))
    server.close()
    return tree


def test_hostile_walked_tree_is_linted_around_its_bad_entries(tmp_path):
    tree = hostile_tree(tmp_path)
    result = bounded_cli("check", tree, "--gpu", "A100", "--verbose", "--format", "json")
    assert result.returncode == 1, result.stderr
    findings = json.loads(result.stdout)
    # The link inside the tree and its target are one file, linted once (under the first name walked).
    assert [(Path(f["file"]).name, f["code"]) for f in findings] == [("alias.json", "PRE002")]
    for name, why in [("fifo.yaml", "not a regular file (a FIFO)"), ("sock.yaml", "not a regular file (a socket)"),
                      ("zero.yaml", "a symlink that leaves the walked folder"), ("dangling.yaml", "a dangling symlink"),
                      ("loop.yaml", "a symlink loop"), ("escape.json", "a symlink that leaves the walked folder")]:
        assert f"{name}: skipped: {why}" in result.stderr
    quiet = bounded_cli("check", tree, "--gpu", "A100")
    assert quiet.returncode == 1 and "skipped" not in quiet.stderr  # the notes are --verbose only


def test_fix_in_a_hostile_tree_fixes_the_good_file(tmp_path):
    tree = hostile_tree(tmp_path)
    result = bounded_cli("check", tree, "--gpu", "A100", "--fix")
    assert result.returncode == 0, result.stderr + result.stdout
    assert b'"bf16"' in (tree / "sub" / "ds.json").read_bytes()
    assert (tmp_path / "outside.json").read_bytes() == DS_FP16  # reached only through a link out of the tree


@pytest.mark.parametrize("name, make", [
    ("fifo.yaml", lambda path: os.mkfifo(path)),
    ("zero.yaml", lambda path: path.symlink_to("/dev/zero")),
])
def test_named_non_regular_file_is_one_finding_without_blocking(tmp_path, name, make):
    path = tmp_path / name
    make(path)
    result = bounded_cli("check", path, "--no-detect", "--format", "json")
    [finding] = json.loads(result.stdout)
    assert finding["code"] == "SYN001" and "not a regular file" in finding["message"]


def test_reads_are_bounded_by_bytes_read_not_by_stat(tmp_path, monkeypatch):
    """A /proc-like file: stat says 0 bytes, reading never ends."""
    from linter import source as source_module

    path = tmp_path / "proc.yaml"
    path.write_bytes(b"a: 1\n")
    real_read = os.read
    monkeypatch.setattr(source_module.os, "read", lambda fd, n: b"x" * n if n else real_read(fd, n))
    with pytest.raises(source_module.SourceError, match="over the"):
        source_module.read_bounded(path, limit=1 << 20)


def test_blocking_read_is_not_waited_for(tmp_path):
    """/proc/kmsg blocks a reader until the kernel logs; opened O_NONBLOCK it answers EAGAIN."""
    from linter.source import SourceError, read_bounded

    if not os.access("/proc/kmsg", os.R_OK):
        pytest.skip("/proc/kmsg is not readable here")
    try:
        read_bounded(Path("/proc/kmsg"))
    except SourceError as error:
        assert "cannot read" in error.message


def test_unlistable_and_unreadable_entries_are_one_note_or_finding_each(tmp_path, monkeypatch):
    from linter import source as source_module
    from linter import walk as walk_module

    tree = tmp_path / "tree"
    (tree / "closed").mkdir(parents=True)
    (tree / "closed" / "ds.json").write_bytes(DS_FP16)
    (tree / "locked.json").write_bytes(DS_FP16)
    (tree / "ok.json").write_bytes(DS_FP16)
    real_scandir, real_open = os.scandir, os.open

    def scandir(path):
        if Path(path).name == "closed":
            raise PermissionError(13, "Permission denied")
        return real_scandir(path)

    def open_(path, *args, **kwargs):
        if Path(path).name == "locked.json":
            raise PermissionError(13, "Permission denied")
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(walk_module.os, "scandir", scandir)
    monkeypatch.setattr(source_module.os, "open", open_)
    result = trainlint("check", tree, "--gpu", "A100", "--verbose", "--format", "json")
    assert result.code == 1
    findings = sorted((Path(f["file"]).name, f["code"]) for f in json.loads(result.out))
    assert findings == [("locked.json", "SYN001"), ("ok.json", "PRE002")]
    assert "closed: skipped: cannot list this folder (Permission denied)" in result.err


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads and enters every folder")
def test_listable_but_not_searchable_folder_does_not_stop_the_run(tmp_path):
    tree = tmp_path / "tree"
    (tree / "closed").mkdir(parents=True)
    (tree / "closed" / "ds.json").write_bytes(DS_FP16)
    (tree / "ok.json").write_bytes(DS_FP16)
    (tree / "closed").chmod(0o644)
    try:
        result = trainlint("check", tree, "--gpu", "A100", "--format", "json")
    finally:
        (tree / "closed").chmod(0o755)
    assert result.code == 1 and "ok.json" in result.out


# ---- issue 19, faults 8 and 10: values, never exceptions; the framework loader's verdict ----

AXOLOTL = "base_model: m\nmicro_batch_size: 2\ndatasets:\n  - path: d\n"


@pytest.mark.parametrize("line", ["lora_dropout: 0b_", "lora_dropout: 0x_", "lora_dropout: -0b_",
                                  "seed: " + "1" * 4301, "seed: !!int " + "9" * 5000, "lora_dropout: !!float x",
                                  "lora_dropout: !!bool maybe", "lora_dropout: !!timestamp x", "lora_dropout: ="])
def test_values_safe_load_cannot_construct_are_syn001_not_internal_errors(tmp_path, line):
    """PyYAML raises on these (int('', 2), int() past 4,300 digits, a failed !!float ...):
    the framework cannot load the file. They were internal errors (exit 2)."""
    path = tmp_path / "axolotl.yaml"
    path.write_text(AXOLOTL + line + "\n")
    result = trainlint("check", path, "--gpu", "A100", "--format", "json")
    assert result.code == 1 and "internal error" not in result.err
    assert [f["code"] for f in json.loads(result.out)] == ["SYN001"]


@pytest.mark.parametrize("line, value", [("lora_dropout: ._", "._"), ("lora_dropout: ._e+1", "._e+1"),
                                         ("lora_dropout: ._5", "._5")])
def test_plain_scalars_pyyaml_reads_as_strings_are_strings(tmp_path, line, value):
    from linter.yaml_reader import parse_yaml
    from linter.source import Source

    document = parse_yaml(Source(Path("t.yaml"), AXOLOTL + line + "\n"))
    assert document.find("lora_dropout").value == value
    path = tmp_path / "axolotl.yaml"
    path.write_text(AXOLOTL + line + "\n")
    result = trainlint("check", path, "--gpu", "A100", "--format", "json")
    assert "internal error" not in result.err and "SYN001" not in result.out


def test_json_integer_over_4300_digits_is_syn001(tmp_path):
    path = tmp_path / "ds.json"
    path.write_text('{"train_batch_size": ' + "7" * 5000 + ', "fp16": {"enabled": true}}')
    result = trainlint("check", path, "--gpu", "A100", "--format", "json")
    assert result.code == 1 and "internal error" not in result.err
    [finding] = json.loads(result.out)
    assert finding["code"] == "SYN001" and "4,300-digit" in finding["message"]


@pytest.mark.parametrize("text, why", [
    ("fp16: true\nmodel: !custom {x: 1}\n", "no constructor for the tag"),
    ("fp16: true\nmodel: !!python/object/apply:os.system ['true']\n", "no constructor for the tag"),
    ("fp16: true\n---\nbf16: true\n", "second document"),
    ("fp16: true\n---\n", "second document"),
    ("fp16: true\nrun_name: a\tb\n", "tab"),
    ("fp16:\ttrue\n", "tab"),
    ("fp16: true\t# comment\n", "tab"),
])
def test_yaml_safe_load_refuses_is_syn001(tmp_path, text, why):
    path = tmp_path / "axolotl.yaml"
    path.write_text(AXOLOTL + text)
    result = trainlint("check", path, "--gpu", "A100", "--fix", "--format", "json")
    findings = json.loads(result.out)
    assert [f["code"] for f in findings] == ["SYN001"] and why in findings[0]["message"], findings
    assert path.read_text() == AXOLOTL + text  # nothing is "fixed" in a file the framework cannot load


def test_second_document_is_reported_where_it_starts(tmp_path):
    path = tmp_path / "axolotl.yaml"
    path.write_text(AXOLOTL + "---\nbf16: true\n")
    [finding] = json.loads(trainlint("check", path, "--gpu", "A100", "--format", "json").out)
    assert (finding["line"], finding["column"]) == (5, 1)


@pytest.mark.parametrize("text", ["run_name: 'a\tb'\n", "run_name: x  # a\tcomment\n",
                                  "chat_template: |\n  {{ a }}\tb\n", "run_name: x\n...\n"])
def test_what_safe_load_accepts_is_not_syn001(tmp_path, text):
    import yaml as pyyaml  # the oracle (pre-commit, a test dependency, brings PyYAML)

    pyyaml.safe_load(AXOLOTL + text)
    path = tmp_path / "axolotl.yaml"
    path.write_text(AXOLOTL + text)
    assert "SYN001" not in trainlint("check", path, "--gpu", "A100").out


def test_yaml_reader_agrees_with_pyyaml_on_hostile_scalars():
    import math

    import yaml as pyyaml

    from linter.document import ParseError
    from linter.source import Source
    from linter.yaml_reader import parse_yaml

    cases = ["._", "0b_", "0x_", "._e+1", "-0b_", "0_", "1._", ".5_", "._5", "0o17", "0b", "0x", "+0b1_", "1:30",
             "190:20:30", "1_000:30", "2001-01-01", "2001-02-30", "2001-01-01 10:00:00 +1", "=", "!!bool YeS",
             "!!int 0x_", "!!float .inf", "!!null x", "!!str 1", "! x", "! 5", "! '5'", "&a 5", "!!binary AAAA", "!!binary a",
             "!!timestamp 2002-12-14", ".NaN", "-.Inf", "0x1F", "0755", "1e5", "1.0e+5", "~", "Null", "NO", "On"]
    for case in cases:
        text = f"a: {case}\n"
        try:
            expected = ("ok", pyyaml.safe_load(text)["a"])
        except Exception:  # noqa: BLE001 - any exception is a refusal
            expected = ("refused", None)
        try:
            found = ("ok", parse_yaml(Source(Path("t.yaml"), text)).find("a").value)
        except ParseError:
            found = ("refused", None)
        if expected[0] == found[0] == "ok" and isinstance(expected[1], float) and math.isnan(expected[1]):
            assert math.isnan(found[1])
            continue
        assert found == expected, case


def test_yaml_tab_verdicts_agree_with_pyyaml(corpus):
    """Random tabs in corpus YAML files: accepted or refused exactly as yaml.safe_load does."""
    import random

    import yaml as pyyaml

    from linter.document import ParseError
    from linter.source import Source
    from linter.yaml_reader import parse_yaml

    files = sorted(p for p in corpus.rglob("*") if p.suffix in (".yaml", ".yml"))
    rng = random.Random(11)
    for _ in range(300):
        text = rng.choice(files).read_text(encoding="utf-8")
        for _ in range(rng.randint(1, 3)):
            at = rng.randrange(len(text) + 1)
            text = text[:at] + rng.choice(["\t", " \t", "\t#x", "\t "]) + text[at:]
        try:
            pyyaml.safe_load(text)
            expected = True
        except RecursionError:
            continue
        except Exception:  # noqa: BLE001
            expected = False
        try:
            parse_yaml(Source(Path("t.yaml"), text))
            found = True
        except ParseError:
            found = False
        assert found == expected, text


def test_valid_300_deep_json_is_read_and_1001_deep_is_syn001(tmp_path):
    deep = tmp_path / "ds.json"
    deep.write_text('{"train_batch_size": 8, "fp16": {"enabled": true}, "x": ' + "[" * 300 + "]" * 300 + "}")
    result = trainlint("check", deep, "--gpu", "A100", "--format", "json")
    assert "SYN001" not in result.out and "PRE002" in result.out and result.code == 1
    deeper = tmp_path / "deeper.json"
    deeper.write_text('{"train_batch_size": 8, "x": ' + '{"a": ' * 999 + "1" + "}" * 999 + "}")
    result = trainlint("check", deeper, "--gpu", "A100", "--fix")
    assert "internal error" not in result.err and "SYN001" not in result.out
    too_deep = tmp_path / "too_deep.json"
    too_deep.write_text('{"train_batch_size": 8, "x": ' + "[" * 1001 + "]" * 1001 + "}")
    [finding] = json.loads(trainlint("check", too_deep, "--gpu", "A100", "--format", "json").out)
    assert finding["code"] == "SYN001"


UNSLOTH = ("from unsloth import FastLanguageModel\n"
           "model, tokenizer = FastLanguageModel.from_pretrained(model_name='m', load_in_4bit=True)\n")


def test_python_with_a_latin1_coding_cookie_is_read(tmp_path):
    from linter.source import Source

    path = tmp_path / "train.py"
    path.write_bytes(b"# -*- coding: latin-1 -*-\n# caf\xe9\n" + UNSLOTH.encode())
    source = Source.read(path)
    assert "café" in source.text and source.encode() == path.read_bytes()
    result = trainlint("check", path, "--gpu", "A100", "--format", "json")
    assert "SYN001" not in result.out, result.out


def test_python_with_a_bogus_coding_cookie_is_syn001(tmp_path):
    path = tmp_path / "train.py"
    path.write_bytes(b"# -*- coding: no-such-codec -*-\n" + UNSLOTH.encode())
    with pytest.raises(SyntaxError):
        compile(path.read_bytes(), str(path), "exec")  # what Python itself says
    [finding] = json.loads(trainlint("check", path, "--gpu", "A100", "--format", "json").out)
    assert finding["code"] == "SYN001" and "no-such-codec" in finding["message"]


def test_truncated_deepspeed_json_in_a_walked_folder_is_syn001(tmp_path):
    (tmp_path / "ds_config.json").write_text('{\n    "bfloat16": {\n        "enabled": "auto"\n    },\n\n    "o')
    result = trainlint("check", tmp_path, "--gpu", "A100", "--format", "json")
    assert result.code == 1 and [f["code"] for f in json.loads(result.out)] == ["SYN001"]


# ---- merge keys and anchors (faults 4 and 10) ----

HF_MERGE = """common: &common
  learning_rate: 0.0002
  fp16: true
output_dir: out
<<: *common
per_device_train_batch_size: 4
"""


def test_merge_keys_are_resolved_as_pyyaml_resolves_them():
    import yaml as pyyaml

    from linter.source import Source
    from linter.yaml_reader import parse_yaml

    text = ("a: &a {x: 1, y: 1}\nb: &b {x: 2, z: 2}\nc:\n  <<: [*a, *b]\n  y: 3\nd:\n  <<: *b\n  <<: {w: 4}\n")
    document = parse_yaml(Source(Path("t.yaml"), text))
    assert document.root.plain() == pyyaml.safe_load(text)
    c = document.find("c")
    assert [pair.key.value for pair in c.written] == ["<<", "y"]  # where edits go
    assert document.find("c", "x").shared == "a" and not document.find("c", "y").shared


def test_merge_key_is_not_an_unknown_key_and_rules_see_merged_values(tmp_path):
    path = tmp_path / "trainer.yaml"
    path.write_text(HF_MERGE)
    result = trainlint("check", path, "--gpu", "A100", "--format", "json")
    codes = [f["code"] for f in json.loads(result.out)]
    assert "<<" not in result.out, result.out
    assert "PRE002" in codes  # fp16 comes in through the merge


def test_fix_inside_an_anchored_mapping_that_aliases_use_is_refused_and_said(tmp_path):
    path = tmp_path / "trainer.yaml"
    path.write_text(HF_MERGE)
    result = trainlint("check", path, "--gpu", "A100", "--fix", "--format", "json")
    assert path.read_text() == HF_MERGE
    [finding] = [f for f in json.loads(result.out) if f["code"] == "PRE002"]
    assert "anchored node &common" in finding["fix"]["message"]


def test_anchored_nodes_know_they_are_shared():
    from linter.document import RenderError
    from linter.source import Source
    from linter.yaml_reader import parse_yaml

    document = parse_yaml(Source(Path("t.yaml"), "quantization: &q\n  bits: 4\nother: *q\nlone: &l {a: 1}\n"))
    assert document.find("quantization").shared == "q" and document.find("quantization", "bits").shared == "q"
    assert document.find("lone").shared == ""  # anchored, but no alias uses it: safe to edit
    with pytest.raises(RenderError, match="anchored node &q"):
        document.insert_pair(document.find("quantization"), "bnb_4bit_compute_dtype", "bfloat16")
    with pytest.raises(RenderError, match="anchored node &q"):
        document.replace_scalar(document.find("other", "bits"), 8)


# ---- issue 19, faults 3 and 6: writes that cannot race, keep owner and links, leave no temp files ----

FIXED_DS = b'{"train_batch_size": 8, "fp16": {"enabled": false}, "bf16": {"enabled": true}}\n'


@pytest.mark.parametrize("how", ["rename", "in place"])
def test_a_save_landing_during_the_write_is_never_overwritten(tmp_path, monkeypatch, how):
    """Another program saves after the last check and before the rename (issue 19, fault 3)."""
    path = tmp_path / "ds.json"
    path.write_bytes(DS_FP16)
    theirs = b'{"train_batch_size": 9, "fp16": {"enabled": true}}\n'
    real_fsync = os.fsync
    saved = []

    def fsync_then_someone_saves(descriptor):
        real_fsync(descriptor)
        if not saved:
            saved.append(True)
            if how == "rename":
                (tmp_path / "editor.swp").write_bytes(theirs)
                os.replace(tmp_path / "editor.swp", path)
            else:
                with open(path, "r+b") as stream:
                    stream.write(theirs)
                os.utime(path, ns=(1, 1))  # a save in place always moves mtime

    monkeypatch.setattr(os, "fsync", fsync_then_someone_saves)
    result = trainlint("check", path, "--gpu", "A100", "--fix")
    assert saved and path.read_bytes() == theirs
    assert result.code == 1 and "changed on disk" in result.err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ds.json"]


def test_hard_links_are_kept_and_both_names_see_the_fix(tmp_path):
    path = tmp_path / "ds.json"
    path.write_bytes(DS_FP16)
    other = tmp_path / "linked.json"
    os.link(path, other)
    inode = path.stat().st_ino
    trainlint("check", path, "--gpu", "A100", "--fix")
    assert path.stat().st_ino == inode and path.stat().st_nlink == 2
    assert path.read_bytes() == other.read_bytes() == FIXED_DS
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ds.json", "linked.json"]


def test_mode_is_kept(tmp_path):
    path = tmp_path / "ds.json"
    path.write_bytes(DS_FP16)
    path.chmod(0o640)
    trainlint("check", path, "--gpu", "A100", "--fix")
    assert path.read_bytes() == FIXED_DS and (path.stat().st_mode & 0o7777) == 0o640


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a file to another user")
def test_fix_as_root_keeps_the_owner_and_group(tmp_path):
    path = tmp_path / "ds.json"
    path.write_bytes(DS_FP16)
    os.chown(path, 65534, 65534)
    trainlint("check", path, "--gpu", "A100", "--fix")
    assert path.read_bytes() == FIXED_DS
    assert (path.stat().st_uid, path.stat().st_gid) == (65534, 65534)


def test_an_owner_that_cannot_be_kept_means_a_write_in_place(tmp_path, monkeypatch):
    """Not root, and the file is another user's (group-writable): the file keeps its inode,
    so its owner stays, rather than becoming ours."""
    path = tmp_path / "ds.json"
    path.write_bytes(DS_FP16)
    inode = path.stat().st_ino
    real_stat = os.stat

    def stat_as_if_owned_by_another(target, *args, **kwargs):
        status = real_stat(target, *args, **kwargs)
        if Path(target) == path:
            fields = list(status)
            fields[4] = status.st_uid + 1  # st_uid
            return os.stat_result(fields, {name: getattr(status, name) for name in
                                           ("st_mtime_ns", "st_atime_ns", "st_ctime_ns")})
        return status

    def refuse(*args):
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "stat", stat_as_if_owned_by_another)
    monkeypatch.setattr(os, "fchown", refuse)
    result = trainlint("check", path, "--gpu", "A100", "--fix")
    assert result.code == 0, result.err
    assert path.read_bytes() == FIXED_DS and real_stat(path).st_ino == inode
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ds.json"]


@pytest.mark.parametrize("signal_name", ["SIGTERM", "SIGINT"])
def test_a_signal_during_the_write_leaves_no_temporary_file(tmp_path, signal_name):
    """Ctrl-C or SIGTERM while --fix writes (issue 19, fault 6): the file is whole, old or new,
    and no .NAME.XXXX.trainlint-tmp remains."""
    import subprocess
    import sys

    path = tmp_path / "ds.json"
    path.write_bytes(DS_FP16)
    script = (
        "import os, signal, sys\n"
        "real = os.fsync\n"
        f"def fsync(fd):\n    os.kill(os.getpid(), signal.{signal_name})\n    real(fd)\n"
        "os.fsync = fsync\n"
        "from linter.cli import main\n"
        f"sys.exit(main(['check', {str(path)!r}, '--gpu', 'A100', '--fix']))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
                            cwd=Path(__file__).resolve().parents[1])
    assert result.returncode != 0  # the signal still ends the run
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ds.json"]
    assert path.read_bytes() in (DS_FP16, FIXED_DS)


# ---- issue 19, fault 11: resources ----

def test_valid_yaml_with_over_a_million_nodes_is_not_invalid_yaml(tmp_path):
    """A node cap of 1,000,000 called a valid 10 MB YAML (700k keys) "invalid YAML"."""
    path = tmp_path / "axolotl.yaml"
    path.write_text(AXOLOTL + "extra:\n" + "".join(f"  k{index}: {index % 7}\n" for index in range(550_000)))
    result = trainlint("check", path, "--gpu", "A100", "--format", "json")
    assert "SYN001" not in result.out and "internal error" not in result.err


def test_python_reading_walks_the_syntax_tree_once(monkeypatch):
    """A 10 MB script took ~55 s: the tree was walked ~13 times (calls(), imports(), constants)."""
    import ast

    from linter.adapters import adapters_for
    from linter.python_reader import parse_python
    from linter.source import Source

    body = "".join(f"value_{index} = dict(a={index}, b=call_{index % 10}(value_{max(index - 1, 0)}))\n"
                   for index in range(300))
    text = UNSLOTH + body + "trainer = SFTTrainer(model=model, args=TrainingArguments(fp16=True))\n"
    nodes = sum(1 for _ in ast.walk(ast.parse(text)))
    visits = 0
    real = ast.iter_child_nodes

    def counted(node):
        nonlocal visits
        visits += 1
        return real(node)

    monkeypatch.setattr(ast, "iter_child_nodes", counted)
    document = parse_python(Source(Path("train.py"), text))
    for adapter in adapters_for("python"):
        if adapter.claims(document):
            adapter.parse(document)
    assert visits <= nodes * 1.1, (visits, nodes)


def test_python_file_too_large_to_parse_is_one_finding_not_gigabytes(tmp_path):
    from linter.python_reader import MAX_PYTHON_CHARS

    path = tmp_path / "train.py"
    line = "x = dict(a=1, b=[1, 2], c='v')\n"
    path.write_text(UNSLOTH + line * (MAX_PYTHON_CHARS // len(line) + 1))
    result = bounded_cli("check", path, "--gpu", "A100", "--format", "json", memory_mb=1024)
    [finding] = json.loads(result.stdout)
    assert finding["code"] == "SYN001" and "limit for Python files" in finding["message"]


@pytest.mark.parametrize("text, why", [("a: &x 1\nb: &x 2\n", "duplicate anchor"), ("a: *nowhere\n", "undefined alias"),
                                       ("? [1]\n: 2\n", "unhashable key"), ("<<: 1\n", "merging")])
def test_anchor_and_key_errors_safe_load_raises_are_parse_errors(text, why):
    from linter.document import ParseError
    from linter.source import Source
    from linter.yaml_reader import parse_yaml

    with pytest.raises(ParseError, match=why):
        parse_yaml(Source(Path("t.yaml"), text))


def _comparable(value):
    """PyYAML's value with NaN made equal to itself and a set as the dict of None the tree keeps."""
    import math

    if isinstance(value, float) and math.isnan(value):
        return "nan"
    if isinstance(value, dict):
        return {key if not isinstance(key, (dict, list)) else repr(key): _comparable(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_comparable(item) for item in value]
    if isinstance(value, set):
        return dict.fromkeys(value)
    return value


def test_yaml_reader_reads_mutated_corpus_files_as_safe_load_does(corpus):
    """Differential check against PyYAML (the frameworks' loader): the same verdict, and the same
    values where both accept, over corpus YAML files and their mutations."""
    import random

    import yaml as pyyaml

    from linter.document import ParseError
    from linter.source import Source, SourceError
    from linter.yaml_reader import parse_yaml
    from tests.fuzz.mutations import mutate

    files = sorted(p for p in corpus.rglob("*") if p.suffix in (".yaml", ".yml"))
    rng = random.Random(23)
    for _ in range(400):
        name, data = mutate(rng.choice(files).read_bytes(), rng)
        try:
            text = Source.from_bytes(Path("t.yaml"), data).text
        except SourceError:
            continue
        try:
            expected = ("ok", _comparable(pyyaml.safe_load(text)))
        except RecursionError:
            continue
        except Exception:  # noqa: BLE001 - any exception is a refusal
            expected = ("refused", None)
        try:
            document = parse_yaml(Source(Path("t.yaml"), text))
            found = ("ok", _comparable(document.root.plain() if document.root is not None else None))
        except ParseError:
            found = ("refused", None)
        assert found == expected, (name, text[:300])


def test_json_reader_reads_mutated_corpus_files_as_json_load_does(corpus):
    """Differential check against json.load as the frameworks call it (text opened as UTF-8)."""
    import random

    from linter.document import ParseError
    from linter.json_reader import parse_json
    from linter.source import Source, SourceError
    from tests.fuzz.mutations import mutate

    files = sorted(corpus.rglob("*.json"))
    rng = random.Random(29)
    for _ in range(400):
        name, data = mutate(rng.choice(files).read_bytes(), rng)
        try:
            source = Source.from_bytes(Path("t.json"), data)
        except SourceError:
            continue
        try:
            expected = ("ok", _comparable(json.loads(data.decode("utf-8"))))
        except ValueError:  # JSONDecodeError, and int() past 4,300 digits
            expected = ("refused", None)
        try:
            found = ("ok", _comparable(parse_json(source).root.plain()))
        except ParseError:
            found = ("refused", None)
        assert found == expected, (name, data[:300])


def test_without_rename_exchange_the_write_still_checks_before_replacing(tmp_path, monkeypatch):
    """Where the kernel or file system cannot exchange names, the fallback checks just before
    os.replace: a save that landed earlier is still kept."""
    from linter import fixes

    monkeypatch.setattr(fixes, "_rename_exchange", lambda a, b: False)
    path = tmp_path / "ds.json"
    path.write_bytes(DS_FP16)
    assert trainlint("check", path, "--gpu", "A100", "--fix").code == 0
    assert path.read_bytes() == FIXED_DS
    path.write_bytes(DS_FP16)
    theirs = b'{"train_batch_size": 9, "fp16": {"enabled": true}}\n'
    real_fsync = os.fsync

    def fsync_then_someone_saves(descriptor):
        real_fsync(descriptor)
        (tmp_path / "editor.swp").write_bytes(theirs)
        os.replace(tmp_path / "editor.swp", path)

    monkeypatch.setattr(os, "fsync", fsync_then_someone_saves)
    result = trainlint("check", path, "--gpu", "A100", "--fix")
    assert result.code == 1 and "changed on disk" in result.err and path.read_bytes() == theirs
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ds.json"]


def _without_root_file_access() -> list[str] | None:
    """A command prefix that runs a child as root minus CAP_DAC_OVERRIDE/CAP_DAC_READ_SEARCH, so
    file permissions apply to it; None where that is not possible here."""
    import shutil
    import subprocess

    setpriv = shutil.which("setpriv")
    if os.geteuid() != 0 or setpriv is None:
        return None
    prefix = [setpriv, "--bounding-set=-dac_override,-dac_read_search", "--inh-caps=-dac_override,-dac_read_search"]
    probe = subprocess.run([*prefix, "true"], capture_output=True)
    return prefix if probe.returncode == 0 else None


def test_real_permissions_unreadable_file_unlistable_and_unsearchable_folders(tmp_path):
    """At 3b1935a this tree stopped the whole run with exit 2 (PermissionError on a folder that can
    be listed but not entered)."""
    import subprocess
    import sys

    prefix = _without_root_file_access()
    if prefix is None:
        pytest.skip("needs root with setpriv to drop the file-access capabilities")
    tree = tmp_path / "tree"
    for folder in ("closed", "unlisted"):
        (tree / folder).mkdir(parents=True)
        (tree / folder / "ds.json").write_bytes(DS_FP16)
    (tree / "ok.json").write_bytes(DS_FP16)
    (tree / "locked.json").write_bytes(DS_FP16)
    (tree / "locked.json").chmod(0o000)
    (tree / "closed").chmod(0o644)  # listable, not searchable
    (tree / "unlisted").chmod(0o311)  # searchable, not listable
    try:
        result = subprocess.run([*prefix, sys.executable, "-m", "linter", "check", str(tree), "--gpu", "A100",
                                 "--verbose", "--format", "json"], capture_output=True, text=True, timeout=60,
                                cwd=Path(__file__).resolve().parents[1])
    finally:
        (tree / "closed").chmod(0o755)
        (tree / "unlisted").chmod(0o755)
    assert result.returncode == 1, result.stderr
    findings = sorted((Path(f["file"]).name, f["code"]) for f in json.loads(result.stdout))
    assert findings == [("locked.json", "SYN001"), ("ok.json", "PRE002")]
    assert "closed/ds.json: skipped: Permission denied" in result.stderr
    assert "unlisted: skipped: cannot list this folder (Permission denied)" in result.stderr
