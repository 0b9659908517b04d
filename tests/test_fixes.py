"""The fix engine: non-overlap, passes, verification, atomic writes."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from conftest import trainlint
from linter.fixes import Applicability, Edit, Fix, WriteError, apply_edits, select_non_overlapping, write_atomic

P = Path("f")


def fix(*edits):
    return Fix(Applicability.SAFE, "m", [], list(edits))


def test_apply_edits_splices_in_order():
    assert apply_edits("abcdef", [Edit(P, 4, 5, "E"), Edit(P, 0, 1, "A"), Edit(P, 3, 3, "+")]) == "Abc+dEf"


def test_overlapping_fixes_wait_for_the_next_pass():
    first, second, third = fix(Edit(P, 0, 3, "x")), fix(Edit(P, 2, 4, "y")), fix(Edit(P, 5, 6, "z"))
    assert select_non_overlapping([first, second, third]) == [first, third]
    same_point = fix(Edit(P, 5, 5, "a")), fix(Edit(P, 5, 5, "b"))
    assert select_non_overlapping(same_point) == [same_point[0]]
    other_file = fix(Edit(Path("g"), 0, 3, "q"))
    assert select_non_overlapping([first, other_file]) == [first, other_file]


def test_display_only_and_unsafe_applicability():
    unsafe = Fix(Applicability.UNSAFE, "m", [], [Edit(P, 0, 1, "x")])
    assert not unsafe.applies(False) and unsafe.applies(True)
    assert not Fix(Applicability.DISPLAY_ONLY, "m").applies(True)


def test_write_atomic_keeps_mode_and_leaves_no_temp(tmp_path):
    path = tmp_path / "c.json"
    path.write_bytes(b"old")
    os.chmod(path, 0o640)
    write_atomic(path, b"new", b"old")
    assert path.read_bytes() == b"new"
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert os.listdir(tmp_path) == ["c.json"]


def test_write_atomic_through_symlink_rewrites_target(tmp_path):
    target = tmp_path / "real.json"
    target.write_bytes(b"old")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    write_atomic(link, b"new", b"old")
    assert link.is_symlink() and target.read_bytes() == b"new"


def test_write_atomic_refuses_changed_file(tmp_path):
    path = tmp_path / "c.json"
    path.write_bytes(b"changed meanwhile")
    with pytest.raises(WriteError, match="changed on disk"):
        write_atomic(path, b"new", b"old")
    assert path.read_bytes() == b"changed meanwhile"


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores file permissions")
def test_read_only_file_is_reported_and_untouched(tmp_path):
    path = tmp_path / "ds.json"
    path.write_bytes(b'{"fp16": {"enabled": true}}')
    os.chmod(path, 0o444)
    result = trainlint("check", path, "--gpu", "A100", "--fix")
    assert result.code == 1 and "not writable" in result.err
    assert path.read_bytes() == b'{"fp16": {"enabled": true}}'


def test_read_only_folder_is_reported_and_untouched(tmp_path, monkeypatch):
    path = tmp_path / "ds.json"
    path.write_bytes(b'{"fp16": {"enabled": true}}')
    import tempfile

    def no_temp(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(tempfile, "mkstemp", no_temp)
    result = trainlint("check", path, "--gpu", "A100", "--fix")
    assert result.code == 1 and "cannot create a temporary file" in result.err
    assert path.read_bytes() == b'{"fp16": {"enabled": true}}'
    assert "PRE002" in result.out  # the finding is still reported: nothing was fixed


def test_fix_that_would_not_reparse_to_intent_is_dropped(tmp_path, monkeypatch):
    from linter.adapters.deepspeed import DeepSpeedAdapter

    path = tmp_path / "ds.json"
    original = b'{"fp16": {"enabled": true}, "zero_optimization": {"stage": 2}}'
    path.write_bytes(original)

    def wrong_render(self, document, config, key, value):  # renders an edit that reads back as something else
        node = document.find("zero_optimization", "stage")
        return [Edit(config.path, node.start, node.end, "3")]

    monkeypatch.setattr(DeepSpeedAdapter, "render_value", wrong_render)
    result = trainlint("check", path, "--gpu", "V100", "--fix", "--unsafe-fixes", "--select", "DS001")
    assert "fix dropped" in result.err and "parallel.zero_stage = 1" in result.err
    assert path.read_bytes() == original
    assert result.code == 1


def test_a_dropped_fix_is_reported_once_while_other_fixes_apply(tmp_path, monkeypatch):
    from linter.adapters.deepspeed import DeepSpeedAdapter

    path = tmp_path / "ds.json"
    path.write_bytes(b'{"fp16": {"enabled": true}, "gradient_clipping": 0, "zero_optimization": {"stage": 2}}')
    original_render = DeepSpeedAdapter.render_value

    def render(self, document, config, key, value):
        if key == "parallel.zero_stage":  # an edit that reads back wrong
            node = document.find("zero_optimization", "stage")
            return [Edit(config.path, node.start, node.end, "3")]
        return original_render(self, document, config, key, value)

    monkeypatch.setattr(DeepSpeedAdapter, "render_value", render)
    result = trainlint("check", path, "--gpu", "V100", "--fix", "--unsafe-fixes")
    assert result.err.count("fix dropped") == 1
    assert path.read_bytes() == b'{"fp16": {"enabled": true}, "gradient_clipping": 1.0, "zero_optimization": {"stage": 2}}'


def test_passes_are_bounded_and_converge(tmp_path):
    # Non-overlapping fixes of one pass all apply, as in ruff: PRE003 (keep bf16) and DS001.
    path = tmp_path / "ds.json"
    path.write_bytes(b'{"fp16": {"enabled": true}, "bf16": {"enabled": true}, "zero_optimization": {"stage": 2}}')
    trainlint("check", path, "--gpu", "A100", "--fix", "--unsafe-fixes")
    once = path.read_bytes()
    assert once == b'{"fp16": {"enabled": false}, "bf16": {"enabled": true}, "zero_optimization": {"stage": 1}}'
    trainlint("check", path, "--gpu", "A100", "--fix", "--unsafe-fixes")
    assert path.read_bytes() == once


def test_two_changes_rendering_the_same_edit_give_one_edit(tmp_path):
    from linter.changes import WriteLiteral
    from linter.engine import Options, Session
    from linter.fixes import Applicability, Fix

    path = tmp_path / "sft.yaml"
    path.write_text("model_name_or_path: m\nstage: sft\nlearning_rate: 2e-5\n")
    session = Session(Options(detect=False))
    config = session.load(path, True).config
    change = WriteLiteral(config, ("learning_rate",), 2e-5, "2.0e-5")
    fix = session.linter.render(Fix(Applicability.SAFE, "Write 2.0e-5", [change, change]))
    assert len(fix.edits) == 1 and fix.edits[0].content == "2.0e-5"
