"""Rule logic on hand-built IR: each rule fires where it must and stays silent where it must not.

End-to-end tests through real files live with each adapter's tests; these pin the policy.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from linter import registry
from linter.changes import SetPrecision
from linter.fixes import Applicability
from linter.hardware import Hardware, parse_targets
from linter.ir import ConfigIR, Field, Origin, Run, Span

SPAN = Span(Path("c.yaml"), 0, 1, 1, 1, 1, 2)


# The frameworks whose trainer fills a linked DeepSpeed config's "auto" values (the adapters say so).
FILLS_AUTO = {"hf", "axolotl", "llamafactory"}


def config(framework: str = "hf", defaults: tuple[str, ...] = (), **values) -> ConfigIR:
    fields = {"file.kind": Field(framework, Origin(SPAN))}
    if framework in FILLS_AUTO:
        fields["trainer.fills_deepspeed_auto"] = Field(True, Origin(SPAN))
    for name, value in values.items():
        key = name.replace("__", ".")
        origin = Origin(SPAN, "upstream/file.py" if key in defaults else None)
        fields[key] = Field(value, origin)
    return ConfigIR(Path(f"{framework}.cfg"), framework, fields, SPAN)


def run_rule(code: str, *configs: ConfigIR, gpu: str | None = "A100", world_size=None):
    hardware = Hardware(parse_targets(gpu) if gpu else [], "--gpu" if gpu else "none")
    rule = registry.get(code)
    return list(rule.check(Run(configs[0], list(configs[1:])), registry.Context(hardware, world_size)))


def changes(finding):
    return [("precision.mode", change.mode) if isinstance(change, SetPrecision) else (change.key, change.value)
            for change in finding.fix.changes]


def test_pre004_tf32():
    assert len(run_rule("PRE004", config(precision__tf32=True), gpu="V100")) == 1
    [finding] = run_rule("PRE004", config(precision__tf32=True), gpu="A100,T4")
    assert finding.targets == ("T4",) and changes(finding) == [("precision.tf32", False)]
    assert run_rule("PRE004", config(precision__tf32=True), gpu="A100") == []
    assert run_rule("PRE004", config(precision__tf32=False), gpu="V100") == []


def test_pre005_fp8():
    [finding] = run_rule("PRE005", config(precision__fp8=True), gpu="A100")
    assert changes(finding) == [("precision.mode", "bf16")] and finding.fix.applicability is Applicability.UNSAFE
    [finding] = run_rule("PRE005", config(precision__fp8=True), gpu="T4")
    assert changes(finding) == [("precision.mode", "fp16")]
    assert run_rule("PRE005", config(precision__fp8=True), gpu="H100,L4") == []


def test_pre006_fp16_weights_full_finetune():
    full = config(adapter__kind=None, model__load_dtype="float16", precision__fp16=True)
    [finding] = run_rule("PRE006", full, gpu="A100")
    assert changes(finding) == [("model.load_dtype", "bfloat16")]
    [finding] = run_rule("PRE006", full, gpu="V100")
    assert changes(finding) == [("model.load_dtype", "float32")]
    assert run_rule("PRE006", config(adapter__kind="lora", model__load_dtype="float16", precision__fp16=True)) == []
    assert run_rule("PRE006", config(adapter__kind=None, model__load_dtype="float32", precision__fp16=True)) == []
    assert run_rule("PRE006", config(adapter__kind=None, model__load_dtype="float16", precision__fp16=False)) == []
    # adapter unknown (absent): silent
    assert run_rule("PRE006", config(model__load_dtype="float16", precision__fp16=True)) == []


def test_pre007_flash_attention():
    fa2 = config(attention__implementation="flash_attention_2", precision__bf16=True, precision__fp16=False)
    [finding] = run_rule("PRE007", fa2, gpu="T4")
    assert changes(finding) == [("attention.implementation", "sdpa")]
    assert run_rule("PRE007", fa2, gpu="A100") == []
    fa3 = config(attention__implementation="flash_attention_3", precision__bf16=True, precision__fp16=False)
    assert len(run_rule("PRE007", fa3, gpu="A100")) == 1
    assert run_rule("PRE007", fa3, gpu="H100") == []
    fp32 = config(attention__implementation="flash_attention_2", precision__bf16=False, precision__fp16=False)
    [finding] = run_rule("PRE007", fp32, gpu="H100")
    assert "float32" in finding.message
    assert len(run_rule("PRE007", fp32, gpu=None)) == 1
    assert run_rule("PRE007", config(attention__implementation="sdpa"), gpu="T4") == []


def test_qnt002_off_by_default_and_fires_on_default_fp32():
    assert not registry.get("QNT002").default_enabled
    default = config(defaults=("quantization.compute_dtype",), quantization__bits=4, quantization__compute_dtype="float32")
    [finding] = run_rule("QNT002", default, gpu="A100")
    assert changes(finding) == [("quantization.compute_dtype", "bfloat16")]
    [finding] = run_rule("QNT002", default, gpu="T4")
    assert changes(finding) == [("quantization.compute_dtype", "float16")]
    explicit = config(quantization__bits=4, quantization__compute_dtype="float32")
    assert run_rule("QNT002", explicit) == []


def test_qnt003_mismatch():
    bf16_compute_fp16_run = config(quantization__bits=4, quantization__compute_dtype="bfloat16",
                                   precision__fp16=True, precision__bf16=False)
    [finding] = run_rule("QNT003", bf16_compute_fp16_run, gpu="A100")
    assert changes(finding) == [("quantization.compute_dtype", "float16")]
    fp16_compute_bf16_run = config(quantization__bits=4, quantization__compute_dtype="float16",
                                   precision__fp16=False, precision__bf16=True)
    assert run_rule("QNT003", fp16_compute_bf16_run, gpu="A100") == []  # QNT001 reports it
    assert len(run_rule("QNT003", fp16_compute_bf16_run, gpu=None)) == 1
    aligned = config(quantization__bits=4, quantization__compute_dtype="bfloat16", precision__bf16=True,
                     precision__fp16=False)
    assert run_rule("QNT003", aligned) == []


def test_qnt004_quant_storage_with_zero3_across_files():
    trainer = config(quantization__bits=4, model__load_dtype="bfloat16")
    ds = config("deepspeed", parallel__zero_stage=3)
    [finding] = run_rule("QNT004", trainer, ds)
    assert changes(finding) == [("quantization.quant_storage", "bfloat16")]
    set_right = config(quantization__bits=4, model__load_dtype="bfloat16", quantization__quant_storage="bfloat16")
    assert run_rule("QNT004", set_right, ds) == []
    framework_sets_it = config(defaults=("quantization.quant_storage",), quantization__bits=4,
                               model__load_dtype="bfloat16", quantization__quant_storage="bfloat16")
    assert run_rule("QNT004", framework_sets_it, ds) == []
    assert run_rule("QNT004", trainer, config("deepspeed", parallel__zero_stage=2)) == []
    assert len(run_rule("QNT004", config(quantization__bits=4, model__load_dtype="bfloat16", parallel__fsdp=True))) == 1


def test_ds003_compares_what_hf_compares():
    trainer = config("hf", precision__bf16=True, precision__fp16=False, batch__micro=2, optimizer__lr=2e-5)
    ds = config("deepspeed", defaults=("precision.bf16",), precision__fp16=True, precision__bf16=False,
                batch__micro=4, optimizer__lr="auto")
    findings = run_rule("DS003", trainer, ds)
    assert sorted(changes(f)[0] for f in findings) == [("batch.micro", "auto"), ("precision.fp16", "auto")]
    assert all(f.fix.applicability is Applicability.SAFE for f in findings)
    # a DeepSpeed default (bf16 off) is not a written value: HF fills it, no mismatch reported
    agreeing = config("deepspeed", precision__fp16=False, batch__micro=2, optimizer__lr=2e-5)
    assert run_rule("DS003", trainer, agreeing) == []
    # not an HF-family launcher: nothing to compare
    assert run_rule("DS003", config("ludwig", batch__micro=2), ds) == []


def test_ds003_betas_and_warmup_max_lr():
    trainer = config("axolotl", optimizer__betas=[0.9, 0.95], optimizer__lr=1e-4)
    ds = config("deepspeed", optimizer__betas=[0.9, 0.999], scheduler__warmup_max_lr=3e-4)
    assert sorted(changes(f)[0][0] for f in run_rule("DS003", trainer, ds)) == ["optimizer.betas", "scheduler.warmup_max_lr"]
    assert run_rule("DS003", trainer, config("deepspeed", optimizer__betas=(0.9, 0.95))) == []


def test_ds002_fix_only_under_hf_family_launcher():
    ds = config("deepspeed", batch__global=64, batch__micro=4, batch__grad_accum=4)
    [alone] = run_rule("DS002", ds, world_size=2)
    assert alone.fix is None
    [linked] = run_rule("DS002", config("hf"), ds, world_size=2)
    assert changes(linked) == [("batch.global", "auto")] and linked.fix.applicability is Applicability.UNSAFE


def test_pre003_across_files():
    trainer = config("hf", precision__bf16=True, precision__fp16=False)
    ds = config("deepspeed", precision__fp16=True, precision__bf16=False)
    [finding] = run_rule("PRE003", trainer, ds)
    assert "this run" in finding.message
    assert [(c.config.framework, c.key, c.value) for c in finding.fix.changes] == [("deepspeed", "precision.fp16", False)]


def test_lnk001_reports_missing_links():
    from linter.ir import Link

    trainer = config("hf")
    run = Run(trainer, [], [Link("deepspeed", "ds.json", SPAN, (Path("/x/ds.json"),))])
    findings = list(registry.get("LNK001").check(run, registry.Context(Hardware([], "none"))))
    assert len(findings) == 1 and "'ds.json' does not exist" in findings[0].message
    assert list(registry.get("LNK001").check(Run(trainer), registry.Context(Hardware([], "none")))) == []


@pytest.mark.parametrize("code", ["PRE001", "PRE002", "QNT001", "PRE004", "PRE005"])
def test_hardware_rules_are_marked(code):
    assert registry.get(code).needs_targets
