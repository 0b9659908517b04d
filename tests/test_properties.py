"""Property tests: generated configs, valid and broken, for the YAML, JSON and Python adapters.

No crash, exit codes right, a fixed file parses to exactly the intended change, and a second
--fix changes nothing. Bounded (max_examples) so the suite stays fast.
"""

from __future__ import annotations

import copy
import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import trainlint
from linter.source import Source
from linter.yaml_reader import parse_yaml

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

ds_configs = st.fixed_dictionaries(
    {"train_micro_batch_size_per_gpu": st.integers(1, 16)},
    optional={
        "fp16": st.fixed_dictionaries({"enabled": st.booleans()}, optional={"loss_scale": st.integers(0, 4)}),
        "bf16": st.fixed_dictionaries({"enabled": st.booleans()}),
        "zero_optimization": st.fixed_dictionaries({"stage": st.integers(0, 3)},
                                                   optional={"offload_param": st.just({"device": "cpu"})}),
        "gradient_accumulation_steps": st.integers(1, 8),
        "train_batch_size": st.integers(1, 256),
        "gradient_clipping": st.floats(0, 2, allow_nan=False),
    },
)


def write(directory: str, name: str, data: bytes) -> Path:
    path = Path(directory) / name
    path.write_bytes(data)
    return path


def expected_after_safe_fix(config: dict) -> dict:
    """What the safe fixes on an A100 mean: fp16 without bf16 becomes bf16 (PRE002)."""
    expected = copy.deepcopy(config)
    fp16 = config.get("fp16", {}).get("enabled") is True
    bf16 = config.get("bf16", {}).get("enabled") is True
    if fp16 and not bf16:
        expected["fp16"]["enabled"] = False
        expected.setdefault("bf16", {})["enabled"] = True
    return expected


@SETTINGS
@given(config=ds_configs, indent=st.sampled_from([None, 2, 4, "\t"]), crlf=st.booleans(), final_newline=st.booleans())
def test_deepspeed_json_safe_fix_is_exactly_the_intended_change(config, indent, crlf, final_newline):
    text = json.dumps(config, indent=indent) + ("\n" if final_newline else "")
    if crlf:
        text = text.replace("\n", "\r\n")
    with tempfile.TemporaryDirectory() as directory:
        path = write(directory, "ds.json", text.encode())
        first = trainlint("check", path, "--gpu", "A100", "--fix")
        assert first.code in (0, 1) and "internal error" not in first.err, first.err
        assert "fix dropped" not in first.err
        after = path.read_bytes()
        assert json.loads(after) == expected_after_safe_fix(config)
        assert after.endswith(b"\n") == final_newline
        assert (b"\r\n" in after) == crlf or b"\n" not in after
        trainlint("check", path, "--gpu", "A100", "--fix")
        assert path.read_bytes() == after
        checked = trainlint("check", path, "--gpu", "A100")
        assert checked.code == (1 if "problem" in checked.out else 0)


@SETTINGS
@given(config=ds_configs, gpu=st.sampled_from(["V100", "A100", "T4,H100"]))
def test_deepspeed_json_unsafe_fixes_converge(config, gpu):
    with tempfile.TemporaryDirectory() as directory:
        path = write(directory, "ds.json", json.dumps(config, indent=2).encode())
        first = trainlint("check", path, "--gpu", gpu, "--fix", "--unsafe-fixes")
        assert first.code in (0, 1) and "internal error" not in first.err
        after = path.read_bytes()
        json.loads(after)
        trainlint("check", path, "--gpu", gpu, "--fix", "--unsafe-fixes")
        assert path.read_bytes() == after


@st.composite
def ludwig_yaml(draw):
    indent = " " * draw(st.sampled_from([2, 4]))
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    compute = draw(st.sampled_from([None, "float16", "'float16'", '"float16"', "bfloat16", "float32"]))
    comment = draw(st.sampled_from(["", "  # tuned", "  # é"]))
    lines = ["# generated", "model_type: llm", "base_model: mistralai/Mistral-7B-v0.1", "adapter:",
             f"{indent}type: lora", "quantization:", f"{indent}bits: 4{comment}"]
    if compute is not None:
        lines.append(f"{indent}bnb_4bit_compute_dtype: {compute}")
    lines += ["trainer:", f"{indent}batch_size: {draw(st.sampled_from(['auto', '1', '4']))}"]
    final = draw(st.booleans())
    return newline.join(lines) + (newline if final else ""), compute


@SETTINGS
@given(generated=ludwig_yaml())
def test_ludwig_yaml_fix_reads_as_bfloat16_and_nothing_else_changes(generated):
    text, compute = generated
    with tempfile.TemporaryDirectory() as directory:
        path = write(directory, "config.yaml", text.encode())
        before = parse_yaml(Source(path, text)).root.plain()
        result = trainlint("check", path, "--gpu", "A100", "--fix")
        assert result.code in (0, 1) and "internal error" not in result.err
        after_text = path.read_bytes().decode()
        after = parse_yaml(Source(path, after_text)).root.plain()
        expected = copy.deepcopy(before)
        if compute in (None, "float16", "'float16'", '"float16"'):
            expected["quantization"]["bnb_4bit_compute_dtype"] = "bfloat16"
        assert after == expected
        changed = [line for line in after_text.splitlines() if line not in text.splitlines()]
        assert len(changed) <= 1
        trainlint("check", path, "--gpu", "A100", "--fix")
        assert path.read_bytes().decode() == after_text


@SETTINGS
@given(data=st.binary(max_size=400), suffix=st.sampled_from([".yaml", ".json", ".py"]))
def test_arbitrary_bytes_never_crash(data, suffix):
    with tempfile.TemporaryDirectory() as directory:
        path = write(directory, "config" + suffix, data)
        for args in ((), ("--fix", "--unsafe-fixes")):
            result = trainlint("check", path, "--gpu", "A100", *args)
            assert result.code in (0, 1), result.err
            assert "internal error" not in result.err


@SETTINGS
@given(fp16=st.sampled_from(["True", "False", "not is_bfloat16_supported()", "use_fp16"]),
       dtype=st.sampled_from(["torch.float16", "None", "torch.bfloat16", "'float16'"]))
def test_unsloth_scripts_fix_to_consistent_bf16(fp16, dtype):
    script = ("from unsloth import FastLanguageModel\nimport torch\nfrom trl import SFTConfig\n"
              f"model, tok = FastLanguageModel.from_pretrained(model_name='m', dtype={dtype}, load_in_4bit=True)\n"
              f"args = SFTConfig(fp16={fp16}, output_dir='o')\n")
    with tempfile.TemporaryDirectory() as directory:
        path = write(directory, "train.py", script.encode())
        result = trainlint("check", path, "--gpu", "A100", "--fix")
        assert result.code in (0, 1) and "internal error" not in result.err
        after = path.read_text()
        compile(after, "train.py", "exec")  # still Python
        if fp16 == "True":
            assert "fp16=False" in after and "bf16=True" in after
        else:
            assert f"fp16={fp16}" in after
        if dtype in ("torch.float16", "'float16'") and fp16 != "use_fp16":
            assert "dtype=torch.bfloat16" in after or "dtype='bfloat16'" in after
        if fp16 == "use_fp16":  # Unsloth refuses a bf16 model with fp16 on: a computed fp16 keeps dtype
            assert f"dtype={dtype}" in after
        trainlint("check", path, "--gpu", "A100", "--fix")
        assert path.read_text() == after
