"""XTuner configs and Unsloth scripts: read with ast, never executed; edits splice exact spans."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from conftest import FIXTURES, trainlint
from linter.python_reader import AUTO, UNKNOWN, parse_python
from linter.source import Source

XTUNER = FIXTURES / "xtuner" / "llama3_8b_qlora.py"
UNSLOTH = FIXTURES / "unsloth" / "train_tinyllama.py"


def codes(result):
    return sorted(f["code"] for f in json.loads(result.out))


def xtuner_run(tmp_path: Path) -> Path:
    path = tmp_path / "llama3_8b_qlora.py"
    shutil.copy(XTUNER, path)
    (tmp_path / "trainlint.toml").write_text('[[runs]]\nfiles = ["llama3_8b_qlora.py", "deepspeed_zero2"]\n')
    return path


def test_xtuner_incident_2_findings(tmp_path):
    path = xtuner_run(tmp_path)
    findings = json.loads(trainlint("check", path, "--gpu", "A100", "--format", "json").out)
    assert sorted(f["code"] for f in findings) == ["DS001", "PRE002", "QNT001"]
    pre002 = next(f for f in findings if f["code"] == "PRE002")
    assert "fp16 mixed precision and model dtype float16" in pre002["message"]
    ds001 = next(f for f in findings if f["code"] == "DS001")
    assert ds001["fix"]["applicability"] == "display-only"  # XTuner's shipped config is not a file to edit


def test_xtuner_fix_changes_exactly_the_three_spellings(tmp_path):
    path = xtuner_run(tmp_path)
    original = XTUNER.read_text()
    result = trainlint("check", path, "--gpu", "A100", "--fix")
    expected = (original.replace("torch_dtype=torch.float16", "torch_dtype=torch.bfloat16")
                .replace("bnb_4bit_compute_dtype=torch.float16", "bnb_4bit_compute_dtype=torch.bfloat16")
                .replace("dtype='float16')", "dtype='bfloat16')"))
    assert path.read_text() == expected
    assert sum(a != b for a, b in zip(original.splitlines(), expected.splitlines())) == 3
    assert codes(trainlint("check", path, "--gpu", "A100", "--format", "json")) == []
    trainlint("check", path, "--gpu", "A100", "--fix")
    assert path.read_text() == expected
    assert result.code == 0


def test_xtuner_on_v100_keeps_fp16_and_reports_zero2(tmp_path):
    path = xtuner_run(tmp_path)
    assert codes(trainlint("check", path, "--gpu", "V100", "--format", "json")) == ["DS001", "NUM003"]


def test_unknown_deepspeed_name_is_lnk001(tmp_path):
    path = xtuner_run(tmp_path)
    (tmp_path / "trainlint.toml").write_text('[[runs]]\nfiles = ["llama3_8b_qlora.py", "deepspeed_zero9"]\n')
    assert "LNK001" in codes(trainlint("check", path, "--gpu", "A100", "--format", "json"))


def test_config_with_side_effects_is_never_executed(tmp_path):
    marker = tmp_path / "executed"
    path = tmp_path / "evil.py"
    path.write_text(XTUNER.read_text() + f"\nimport os\nopen({str(marker)!r}, 'w').write('x')\n"
                    f"os.system('touch {marker}')\n__import__('os').system('touch {marker}')\n")
    trainlint("check", path, "--gpu", "A100")
    trainlint("check", path, "--gpu", "A100", "--fix", "--unsafe-fixes")
    trainlint("check", tmp_path, "--gpu", "A100")
    assert not marker.exists()


def test_non_literal_values_are_unknown(tmp_path):
    path = tmp_path / "cfg.py"
    path.write_text(XTUNER.read_text().replace("dtype='float16')", "dtype=os.environ['DTYPE'])")
                    .replace("torch_dtype=torch.float16", "torch_dtype=pick_dtype()")
                    .replace("bnb_4bit_compute_dtype=torch.float16", "bnb_4bit_compute_dtype=compute"))
    assert codes(trainlint("check", path, "--gpu", "A100", "--format", "json")) == []


def test_unsloth_pre002_fix_edits_keywords_in_place(tmp_path):
    path = tmp_path / "train.py"
    shutil.copy(UNSLOTH, path)
    findings = json.loads(trainlint("check", path, "--gpu", "A100", "--format", "json").out)
    assert "PRE002" in [f["code"] for f in findings]
    trainlint("check", path, "--gpu", "A100", "--fix")
    expected = (UNSLOTH.read_text().replace("dtype=torch.float16,  # « forcé »", "dtype=torch.bfloat16,  # « forcé »")
                .replace("fp16=True, bf16=False,  # « ici »", "fp16=False, bf16=True,  # « ici »"))
    assert path.read_text() == expected
    trainlint("check", path, "--gpu", "A100", "--fix")
    assert path.read_text() == expected


def test_unsloth_automatic_precision_is_not_flagged(tmp_path):
    path = tmp_path / "train.py"
    path.write_text(UNSLOTH.read_text().replace("dtype=torch.float16", "dtype=None")
                    .replace("fp16=True, bf16=False", "fp16=not is_bfloat16_supported(), bf16=is_bfloat16_supported()"))
    assert codes(trainlint("check", path, "--gpu", "T4", "--format", "json")) == []
    assert codes(trainlint("check", path, "--gpu", "A100", "--format", "json")) == []


def test_plain_python_files_are_skipped_and_syntax_errors_in_them_ignored(tmp_path):
    (tmp_path / "setup.py").write_text("from setuptools import setup\nsetup(name='x')\n")
    (tmp_path / "broken.py").write_text("def f(:\n")
    assert trainlint("check", tmp_path, "--gpu", "A100").code == 0
    assert trainlint("check", tmp_path / "broken.py", "--gpu", "A100").code == 0


def test_unsloth_syntax_error_is_syn001(tmp_path):
    path = tmp_path / "train.py"
    path.write_text(UNSLOTH.read_text() + "\ndef broken(:\n")
    [finding] = json.loads(trainlint("check", path, "--gpu", "A100", "--format", "json").out)
    assert finding["code"] == "SYN001" and finding["line"] == 28


def test_reader_values_and_byte_columns():
    text = "import torch\nx = 'é'; y = dict(a=torch.bfloat16, b=not is_bfloat16_supported(), c=f(), d=-1)\n"
    document = parse_python(Source(Path("t.py"), text))
    call = document.constants["y"]
    values = {item.arg: document.literal(item.value) for item in call.keywords}
    assert values == {"a": "bfloat16", "b": AUTO, "c": UNKNOWN, "d": -1}
    start, end = document.span(call.keywords[0].value)
    assert text[start:end] == "torch.bfloat16"
    assert document.replace(call.keywords[0].value, "float16").content == "torch.float16"
