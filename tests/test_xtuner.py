"""XTuner python configs (incident 2): read with ast, never executed; fixes splice exact spans."""

from __future__ import annotations

import ast
import json
import shutil
from pathlib import Path

import pytest

from conftest import FIXTURES, trainlint
from linter.engine import Options, Outcome, Session

XTUNER = FIXTURES / "xtuner" / "llama3_8b_qlora.py"
HF_FRAMEWORK = FIXTURES / "xtuner" / "internlm_7b_qlora_hf.py"


def findings(path, gpu="A100", *args):
    return json.loads(trainlint("check", path, "--gpu", gpu, "--format", "json", *args).out)


def codes(path, gpu="A100", *args):
    return sorted(f["code"] for f in findings(path, gpu, *args))


def run_with(tmp_path: Path, fixture: Path, deepspeed: str | None = "deepspeed_zero2", text: str | None = None) -> Path:
    path = tmp_path / fixture.name
    if text is None:
        shutil.copy(fixture, path)
    else:
        path.write_text(text)
    # A declared run: with `deepspeed`, `xtuner train cfg.py --deepspeed NAME`; without, a launch
    # known to pass none (the AmpOptimWrapper's dtype holds).
    files = f'"{fixture.name}", "{deepspeed}"' if deepspeed else f'"{fixture.name}"'
    (tmp_path / "trainlint.toml").write_text(f'[[runs]]\nfiles = [{files}]\n')
    return path


def config_of(path: Path):
    session = Session(Options(detect=False))
    return session.load(path, True).config


# ---- the incident ------------------------------------------------------------------------------


def test_incident_2_findings_on_a100(tmp_path):
    path = run_with(tmp_path, XTUNER, deepspeed=None)  # launched with no --deepspeed: AMP fp16 runs
    found = findings(path)
    assert sorted(f["code"] for f in found) == ["PRE002", "QNT001"]
    text = XTUNER.read_text().splitlines()
    place = {f["code"]: (f["line"], f["column"]) for f in found}
    assert text[place["PRE002"][0] - 1].strip() == "dtype='float16')"
    assert text[place["QNT001"][0] - 1].strip() == "bnb_4bit_compute_dtype=torch.float16,"
    pre002 = next(f for f in found if f["code"] == "PRE002")
    assert "fp16 mixed precision and model dtype float16" in pre002["message"]
    assert pre002["fix"]["applicability"] == "safe"


def test_a_deepspeed_launch_replaces_the_amp_dtype(tmp_path):
    # tools/train.py drops the AmpOptimWrapper under --deepspeed; xtuner's shipped JSONs say fp16/bf16
    # "auto", which auto_dtype_of_deepspeed_config makes bf16 on an A100: nothing to move to bf16.
    path = run_with(tmp_path, XTUNER)
    assert codes(path) == []
    config = config_of(path)
    assert config.value("precision.fp16") is True  # the file's fact stays; the run builder drops it
    assert "launch.deepspeed_replaces" in config.fields


def checkout_with(folder: Path, launch: str | None) -> Path:
    folder.mkdir()
    (folder / ".git").mkdir()
    path = folder / XTUNER.name
    shutil.copy(XTUNER, path)
    if launch is not None:
        (folder / "train.sh").write_text(launch.format(name=XTUNER.name) + "\n")
    return path


def test_with_no_launch_naming_it_the_precision_is_unknown(tmp_path):
    path = checkout_with(tmp_path / "none", None)
    result = trainlint("check", path, "--gpu", "A100", "--verbose")
    assert "PRE002" not in result.out and "QNT001" not in result.out
    assert "left unknown: no launch command of the checkout names this file" in result.err


def test_launch_commands_decide_the_precision(tmp_path):
    path = checkout_with(tmp_path / "plain", "NPROC_PER_NODE=1 xtuner train {name}")
    assert codes(path) == ["PRE002", "QNT001"]
    path = checkout_with(tmp_path / "deepspeed", "xtuner train {name} --deepspeed deepspeed_zero2")
    assert codes(path) == []
    assert codes(path, "V100") == []  # "auto": bf16 wherever torch says the GPU supports it


def test_fix_changes_exactly_the_three_spellings_and_nothing_else(tmp_path):
    path = run_with(tmp_path, XTUNER, deepspeed=None)
    original = XTUNER.read_bytes()
    result = trainlint("check", path, "--gpu", "A100", "--fix")
    expected = (original.replace(b"torch_dtype=torch.float16", b"torch_dtype=torch.bfloat16")
                .replace(b"bnb_4bit_compute_dtype=torch.float16", b"bnb_4bit_compute_dtype=torch.bfloat16")
                .replace(b"dtype='float16')", b"dtype='bfloat16')"))
    assert path.read_bytes() == expected
    assert sum(a != b for a, b in zip(original.splitlines(), expected.splitlines())) == 3
    assert result.code == 0
    assert codes(path) == []
    trainlint("check", path, "--gpu", "A100", "--fix")
    assert path.read_bytes() == expected


def test_fix_keeps_crlf_and_bom(tmp_path):
    path = run_with(tmp_path, XTUNER, deepspeed=None)
    original = b"\xef\xbb\xbf" + XTUNER.read_bytes().replace(b"\n", b"\r\n")
    path.write_bytes(original)
    trainlint("check", path, "--gpu", "A100", "--fix")
    expected = (original.replace(b"torch_dtype=torch.float16", b"torch_dtype=torch.bfloat16")
                .replace(b"bnb_4bit_compute_dtype=torch.float16", b"bnb_4bit_compute_dtype=torch.bfloat16")
                .replace(b"dtype='float16')", b"dtype='bfloat16')"))
    assert path.read_bytes() == expected


def test_on_v100_fp16_stays(tmp_path):
    path = run_with(tmp_path, XTUNER, deepspeed=None)
    assert codes(path, "V100") == ["NUM003"]


def test_noqa_on_the_line_suppresses(tmp_path):
    text = XTUNER.read_text().replace("dtype='float16')", "dtype='float16')  # noqa: PRE002")
    path = run_with(tmp_path, XTUNER, deepspeed=None, text=text)
    assert codes(path) == ["QNT001"]


# ---- never executed ----------------------------------------------------------------------------


def test_config_with_side_effects_is_never_executed(tmp_path):
    marker = tmp_path / "executed"
    payload = (f"\nimport os\nopen({str(marker)!r}, 'w').write('x')\nos.system('touch {marker}')\n"
               f"__import__('os').system('touch {marker}')\n"
               f"def hook(f):\n    os.system('touch {marker}')\n    return f\n"
               f"@hook\ndef decorated():\n    pass\n"
               f"class Evil:\n    os.system('touch {marker}')\n")
    path = run_with(tmp_path, XTUNER, deepspeed=None, text=XTUNER.read_text() + payload)
    assert "PRE002" in codes(path)
    trainlint("check", path, "--gpu", "A100", "--diff")
    trainlint("check", path, "--gpu", "A100", "--fix", "--unsafe-fixes")
    trainlint("check", tmp_path, "--gpu", "A100", "--fix")
    trainlint("estimate", path, "--gpu", "A100")
    assert "torch.bfloat16" in path.read_text()  # the fixes did run
    assert not marker.exists()


# ---- values ------------------------------------------------------------------------------------


def test_parsed_values(tmp_path):
    config = config_of(XTUNER)
    values = {key: field.value for key, field in config.fields.items() if key != "file.kind"}
    assert values == {
        "model.name": "meta-llama/Meta-Llama-3-8B-Instruct", "model.load_dtype": "float16",
        "quantization.bits": 4, "quantization.compute_dtype": "float16", "quantization.quant_type": "nf4",
        "quantization.double_quant": True, "adapter.kind": "lora", "adapter.r": 64, "adapter.alpha": 16,
        "memory.gradient_checkpointing": True, "precision.fp16": True, "precision.bf16": False,
        "optimizer.lr": 2e-4, "optimizer.weight_decay": 0, "optimizer.betas": [0.9, 0.999],
        "optimizer.grad_clip": 1, "batch.grad_accum": 16, "batch.micro": 1, "sequence.max_length": 2048,
        "sequence.packing": True, "attention.varlen": False, "launch.deepspeed_replaces": [
            "precision.fp16", "precision.bf16", "model.load_dtype", "quantization.compute_dtype"],
        "launch.auto_precision_by_device": True,
        # mmengine's DeepSpeedStrategy passes the optimizer it builds to deepspeed.initialize.
        "trainer.client_optimizer": True, "optimizer.class": "torch.optim.AdamW",
    }
    assert config.get("memory.gradient_checkpointing").origin.default_source.startswith("xtuner/model/sft.py")
    # Values read through module-level names point at the constant's literal.
    lr = config.get("optimizer.lr").span
    assert XTUNER.read_text().splitlines()[lr.line - 1] == "lr = 2e-4"


def test_non_literal_values_are_unknown(tmp_path):
    text = (XTUNER.read_text().replace("dtype='float16')", "dtype=os.environ['DTYPE'])")
            .replace("torch_dtype=torch.float16", "torch_dtype=pick_dtype()")
            .replace("bnb_4bit_compute_dtype=torch.float16", "bnb_4bit_compute_dtype=compute")
            .replace("accumulative_counts = 16", "accumulative_counts = 16\naccumulative_counts *= 2"))
    path = run_with(tmp_path, XTUNER, deepspeed=None, text=text)
    assert codes(path) == []
    config = config_of(path)
    for key in ("precision.fp16", "model.load_dtype", "quantization.compute_dtype", "batch.grad_accum"):
        assert config.get(key) is None, key


def test_amp_optim_wrapper_without_dtype_is_float16_and_the_fix_adds_the_keyword(tmp_path):
    text = XTUNER.read_text().replace("    loss_scale='dynamic',\n    dtype='float16')", "    loss_scale='dynamic')")
    path = run_with(tmp_path, XTUNER, deepspeed=None, text=text)
    precision = config_of(path).get("precision.fp16")
    assert precision.value is True and precision.origin.default_source.startswith("mmengine/runner/amp.py")
    trainlint("check", path, "--gpu", "A100", "--fix")
    assert path.read_text() == (text.replace("torch.float16", "torch.bfloat16")
                                .replace("    loss_scale='dynamic')", "    loss_scale='dynamic', dtype='bfloat16')"))


def test_dtype_read_through_a_constant_is_fixed_at_the_constant(tmp_path):
    text = XTUNER.read_text().replace("dtype='float16')", "dtype=amp_dtype)").replace(
        "lr = 2e-4\n", "lr = 2e-4\namp_dtype = \"float16\"  # « AMP »\n")
    path = run_with(tmp_path, XTUNER, deepspeed=None, text=text)
    trainlint("check", path, "--gpu", "A100", "--fix")
    assert path.read_text() == (text.replace("torch.float16", "torch.bfloat16")
                                .replace('amp_dtype = "float16"', 'amp_dtype = "bfloat16"'))


def test_plain_optim_wrapper_is_fp32(tmp_path):
    text = XTUNER.read_text().replace("type=AmpOptimWrapper", "type=OptimWrapper").replace("    dtype='float16')", ")")
    path = run_with(tmp_path, XTUNER, deepspeed=None, text=text)
    config = config_of(path)
    assert config.mode() == "fp32"
    pre002 = next(f for f in findings(path) if f["code"] == "PRE002")
    assert "fp16 mixed precision" not in pre002["message"] and "model dtype float16" in pre002["message"]


def test_without_lora_supervised_finetune_trains_the_whole_quantized_model(tmp_path):
    start = XTUNER.read_text().index("    lora=dict(")
    text = XTUNER.read_text()[:start].rstrip(",\n") + ")\n" + XTUNER.read_text()[XTUNER.read_text().index(
        "\ntrain_dataloader"):]
    path = run_with(tmp_path, XTUNER, deepspeed=None, text=text)
    config = config_of(path)
    assert config.get("adapter.kind").value is None
    assert "QNT005" in codes(path)


def test_inherited_configs_assume_no_defaults(tmp_path):
    text = ("_base_ = ['./base.py']\nimport torch\nfrom xtuner.model import SupervisedFinetune\n"
            "model = dict(type=SupervisedFinetune, llm=dict(torch_dtype=torch.bfloat16))\n"
            "optim_wrapper = dict(type=AmpOptimWrapper, optimizer=dict(lr=1e-4))\n")
    path = tmp_path / "child.py"
    path.write_text(text)
    config = config_of(path)
    assert {key: field.value for key, field in config.fields.items() if key != "file.kind"} == {
        "model.load_dtype": "bfloat16", "optimizer.lr": 1e-4, "launch.deepspeed_replaces": [
            "precision.fp16", "precision.bf16", "model.load_dtype", "quantization.compute_dtype"],
        "launch.auto_precision_by_device": True, "trainer.client_optimizer": True}


def test_huggingface_framework_config(tmp_path):
    path = run_with(tmp_path, HF_FRAMEWORK)
    config = config_of(path)
    values = {key: field.value for key, field in config.fields.items() if key != "file.kind"}
    assert values["precision.fp16"] is True and values["precision.bf16"] is False
    assert values["adapter.kind"] == "lora" and values["batch.micro"] == 1 and values["batch.grad_accum"] == 16
    assert codes(path) == ["DS001", "PRE002", "QNT001"]
    original = HF_FRAMEWORK.read_text()
    trainlint("check", path, "--gpu", "A100", "--fix")
    assert path.read_text() == (original.replace("    fp16=True,\n", "    fp16=False,\n    bf16=True,\n")
                                .replace("torch.float16", "torch.bfloat16"))
    assert codes(path) == []


# ---- DeepSpeed names ---------------------------------------------------------------------------


@pytest.mark.parametrize("name, values", [
    ("deepspeed_zero1", {"parallel.zero_stage": 1}),
    ("deepspeed_zero2", {"parallel.zero_stage": 2}),
    ("deepspeed_zero2_offload", {"parallel.zero_stage": 2, "parallel.offload_optimizer": True,
                                 "parallel.force_ds_cpu_optimizer": False}),
    ("deepspeed_zero3", {"parallel.zero_stage": 3}),
    ("deepspeed_zero3_offload", {"parallel.zero_stage": 3, "parallel.offload_optimizer": True,
                                 "parallel.offload_param": True, "parallel.force_ds_cpu_optimizer": False}),
])
def test_shipped_deepspeed_names(tmp_path, name, values):
    path = run_with(tmp_path, XTUNER, deepspeed=name)
    session = Session(Options(detect=False))
    [run] = session.build_runs([session.load(path, True).config], Outcome())
    [linked] = run.linked
    assert not linked.editable
    assert {key: field.value for key, field in linked.fields.items() if key != "file.kind"} == {
        **values, "precision.fp16": "auto", "precision.bf16": "auto", "loss_scale.initial_scale_power": 16,
        "optimizer.grad_clip": 1, "parallel.zero_allow_untested_optimizer": True}
    assert linked.get("parallel.zero_stage").origin.default_source == f"xtuner/configs/deepspeed/{name}.json"


def test_shipped_names_agree_with_the_corpus_copies(corpus):
    from linter.adapters.xtuner_deepspeed import SHIPPED as _SHIPPED

    folder = corpus / "InternLM__xtuner" / "xtuner" / "configs" / "deepspeed"
    for name, (stage, offload_optimizer, offload_param) in _SHIPPED.items():
        data = json.loads((folder / f"{name}.json").read_text())
        zero = data["zero_optimization"]
        assert (zero["stage"], "offload_optimizer" in zero, "offload_param" in zero) == (
            stage, offload_optimizer, offload_param)
        assert data["fp16"] == {"enabled": "auto", "initial_scale_power": 16} and data["bf16"] == {"enabled": "auto"}
        assert data["zero_allow_untested_optimizer"] is True
        assert not offload_optimizer or data["zero_force_ds_cpu_optimizer"] is False


def test_a_file_of_that_name_wins_over_the_shipped_config(tmp_path):
    path = run_with(tmp_path, XTUNER)
    (tmp_path / "deepspeed_zero2").write_text('{"zero_optimization": {"stage": 1}, "bf16": {"enabled": true}}')
    assert "DS001" not in codes(path)


def test_unknown_deepspeed_name_is_lnk001(tmp_path):
    path = run_with(tmp_path, XTUNER, deepspeed="deepspeed_zero9")
    assert "LNK001" in codes(path)


# ---- which files are XTuner configs ------------------------------------------------------------


def test_python_files_that_are_not_configs_are_skipped(tmp_path):
    (tmp_path / "setup.py").write_text("from setuptools import setup\nsetup(name='x')\n")
    (tmp_path / "broken.py").write_text("def f(:\n")
    (tmp_path / "mmdet_style.py").write_text(
        "from mmengine.config import read_base\nmodel = dict(type='FasterRCNN')\n"
        "optim_wrapper = dict(type='AmpOptimWrapper', dtype='float16')\n")
    assert trainlint("check", tmp_path, "--gpu", "A100").code == 0
    assert trainlint("check", tmp_path / "broken.py", "--gpu", "A100").code == 0
    verbose = trainlint("check", tmp_path / "mmdet_style.py", "--gpu", "A100", "--verbose")
    assert verbose.code == 0 and "no adapter recognises this file" in verbose.err


def test_broken_xtuner_config_is_syn001_with_its_position(tmp_path):
    text = XTUNER.read_text().replace("    accumulative_counts=accumulative_counts,",
                                      "    accumulative_counts=accumulative_counts,,")
    path = run_with(tmp_path, XTUNER, deepspeed=None, text=text)
    [finding] = findings(path)
    with pytest.raises(SyntaxError) as python:
        ast.parse(text)
    assert (finding["code"], finding["line"], finding["column"]) == ("SYN001", python.value.lineno, python.value.offset)
    assert text.splitlines()[finding["line"] - 1] == "    accumulative_counts=accumulative_counts,,"
    # Found by walking the folder too: it still says it is an XTuner config.
    assert [f["code"] for f in findings(tmp_path)] == ["SYN001"]


@pytest.mark.parametrize("gpu", ["V100", "A100"])
def test_corpus_xtuner_files_lint_without_crash(corpus, gpu):
    result = trainlint("check", corpus / "InternLM__xtuner", "--gpu", gpu, "--format", "json")
    assert result.code in (0, 1) and "internal error" not in result.err
    assert [f for f in json.loads(result.out) if f["severity"] == "error"] == []


def test_amp_dtype_none_written_out_is_float16_and_is_replaced_by_a_string(tmp_path):
    text = XTUNER.read_text().replace("dtype='float16')", "dtype=None)")
    path = run_with(tmp_path, XTUNER, deepspeed=None, text=text)
    trainlint("check", path, "--gpu", "A100", "--fix")
    assert path.read_text() == text.replace("torch.float16", "torch.bfloat16").replace("dtype=None)", "dtype='bfloat16')")


# ---- TRN045: sequence parallelism needs the data-parallel sampler ----------------------------

_SP = '''from mmengine.dataset import DefaultSampler
from xtuner.model import SupervisedFinetune
{imports}
sequence_parallel_size = {size}
{extra}
model = dict(type=SupervisedFinetune)
train_dataloader = dict(batch_size=1, num_workers=0, sampler=dict(type={sampler}, shuffle=True))
'''


@pytest.mark.parametrize("sampler, size, extra, pin, fires", [
    ("DefaultSampler", "4", "", None, True),
    ("LengthGroupedSampler", "2", "", None, True),
    ("'DefaultSampler'", "2", "", None, True),  # a registry name
    ("chosen", "2", "chosen = DefaultSampler", None, True),  # a name bound to the class
    ("DefaultSampler", "4", "", "xtuner==0.1.16", True),
    ("DefaultSampler", "4", "", "xtuner==0.1.15", False),  # no sequence parallelism before 0.1.16
    ("SequenceParallelSampler", "4", "", None, False),
    ("InternRepoSampler", "4", "", None, False),  # deals by data-parallel group too
    ("DefaultSampler", "1", "", None, False),
    ("DefaultSampler", "int(os.environ['SP'])", "", None, False),  # computed: unknown
    ("sampler", "4", "sampler = SequenceParallelSampler if sequence_parallel_size > 1 else DefaultSampler", None,
     False),  # the shipped configs' choice: unknown, never guessed
    ("MySampler", "4", "", None, False),  # the author's own class
])
def test_sequence_parallel_sampler(tmp_path, nothing_installed, sampler, size, extra, pin, fires):
    imports = ("from xtuner.dataset.samplers import InternRepoSampler, LengthGroupedSampler\n"
               "from xtuner.parallel.sequence import SequenceParallelSampler\nimport os")
    path = tmp_path / "sp.py"
    path.write_text(_SP.format(imports=imports, size=size, extra=extra, sampler=sampler))
    if pin:
        (tmp_path / "requirements.txt").write_text(pin + "\n")
    found = codes(path, "A100", "--select", "TRN045", "--no-detect")
    assert (found == ["TRN045"]) is fires, found
