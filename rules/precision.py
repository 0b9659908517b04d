"""Mixed precision against the hardware: bf16 where it is missing, fp16 where bf16 would do."""

from __future__ import annotations

from linter.fixes import Applicability, Change
from linter.registry import ERROR, WARNING, Rule, register

BF16_CAPABLE = "bf16 needs compute capability >= 8.0 (Ampere or newer)"


def _names(targets) -> str:
    return ", ".join(target.name if target.source == "compute capability" else f"{target.name} (cc {target.cc})"
                     for target in targets)


@register
class Bf16Unsupported(Rule):
    """PRE001 bf16-unsupported

    ## What it does
    Flags bf16 mixed precision, a bf16 model dtype, or a bfloat16 4-bit compute dtype when a
    target GPU has compute capability below 8.0 (V100, T4, P100, RTX 20xx).

    ## Why is this bad?
    Pre-Ampere GPUs have no bf16 arithmetic. DeepSpeed and HF's own checks ask
    `torch.cuda.is_bf16_supported()`, which current PyTorch answers True on them through
    emulation, so the run launches and then fails in a kernel or crawls.

    ## Example
        {"bf16": {"enabled": true}}
    Use instead (on a V100):
        {"bf16": {"enabled": false}, "fp16": {"enabled": true}}

    ## Fix safety
    Unsafe: moving the run to fp16 narrows the exponent range (5 bits instead of 8); models
    that overflow fp16 (see NUM003) may go NaN. Check the loss scale after switching.

    ## References
    - NVIDIA CUDA GPUs (compute capabilities): https://developer.nvidia.com/cuda-gpus
    - torch.cuda.is_bf16_supported(including_emulation=True): torch/cuda/__init__.py
    - INCIDENTS.md (incident 1: V100 32GB)
    """

    code = "PRE001"
    name = "bf16-unsupported"
    severity = ERROR
    fix_applicability = Applicability.UNSAFE
    needs_targets = True

    def check(self, run, context):
        lacking = context.hardware.lacking("bf16")
        if not lacking:
            return
        for config in run.configs:
            changes, places = [], []
            if config.value("precision.bf16") is True:
                places.append(("bf16 mixed precision", config.get("precision.bf16")))
                changes.append(Change(config, "precision.mode", "fp16"))
            for key, what in (("model.load_dtype", "the model dtype"),
                              ("quantization.compute_dtype", "the 4-bit compute dtype")):
                if config.value(key) == "bfloat16" and (key == "model.load_dtype" or config.value("quantization.bits") == 4):
                    places.append((f"{what} bfloat16", config.get(key)))
                    changes.append(Change(config, key, "float16"))
            if not places:
                continue
            what, first = places[0]
            yield self.finding(
                config, first.span,
                f"{' and '.join(p[0] for p in places)} on {_names(lacking)}: {BF16_CAPABLE}",
                targets=lacking,
                fix=self.fix("Train in fp16 instead (unsafe: narrower range)", *changes),
            )


@register
class Fp16WhereBf16(Rule):
    """PRE002 fp16-where-bf16

    ## What it does
    Flags fp16 mixed precision, or a model loaded in float16, when every target GPU supports
    bf16 (compute capability >= 8.0).

    ## Why is this bad?
    float16 has 5 exponent bits; activations and gradients of current LLMs overflow it, and
    dynamic loss scaling then shrinks until "Current loss scale already at minimum" or the
    loss turns NaN. bfloat16 has float32's 8 exponent bits at the same memory and speed on
    Ampere and newer, and needs no loss scaling.

    ## Example
        {"fp16": {"enabled": true}, "zero_optimization": {"stage": 2}}
    Use instead:
        {"fp16": {"enabled": false}, "bf16": {"enabled": true}, "zero_optimization": {"stage": 2}}

    ## Fix safety
    Safe: same memory and throughput on bf16-capable GPUs and a strictly wider range. Offered
    only when every target supports bf16. Only values written in the file are changed; a
    framework default of float16 for a 4-bit compute dtype is QNT001's.

    ## References
    - INCIDENTS.md incidents 2 (XTuner Llama3-8B fp16 NaN) and 3 (Yi-6B loss scale at minimum)
    - DeepSpeed `bf16` config: deepspeed/runtime/constants.py (BFLOAT16 = "bf16")
    """

    code = "PRE002"
    name = "fp16-where-bf16"
    severity = WARNING
    fix_applicability = Applicability.SAFE
    needs_targets = True

    def check(self, run, context):
        hardware = context.hardware
        if not hardware.all_support("bf16"):
            return
        for config in run.configs:
            changes, places = [], []
            if config.value("precision.fp16") is True and config.value("precision.bf16") is not True:
                places.append(("fp16 mixed precision", config.get("precision.fp16")))
                changes.append(Change(config, "precision.mode", "bf16"))
            load_dtype = config.get("model.load_dtype")
            if load_dtype is not None and load_dtype.value == "float16" and not load_dtype.origin.is_default:
                places.append(("model dtype float16", load_dtype))
                changes.append(Change(config, "model.load_dtype", "bfloat16"))
            if not places:
                continue
            yield self.finding(
                config, places[0][1].span,
                f"{' and '.join(p[0] for p in places)} while every target supports bf16 "
                f"({_names(hardware.targets)}): use bf16",
                targets=hardware.targets,
                fix=self.fix("Use bf16", *changes),
            )


@register
class Fp16AndBf16(Rule):
    """PRE003 fp16-and-bf16

    ## What it does
    Flags a run where fp16 and bf16 are both switched on — in one file, or across the files
    of a run (a trainer YAML and the DeepSpeed JSON it links).

    ## Why is this bad?
    DeepSpeed refuses the config outright ("bfloat16 and fp16 modes cannot be simultaneously
    enabled"), HF's TrainingArguments raises at start-up, and where a framework silently
    picks one, the file says something else than what runs.

    ## Example
        {"fp16": {"enabled": true}, "bf16": {"enabled": true}}
    Use instead (Ampere or newer):
        {"fp16": {"enabled": false}, "bf16": {"enabled": true}}

    ## Fix safety
    Unsafe: it decides the run's precision. The fix keeps bf16 when every target supports it,
    else fp16; with no target known it offers no fix.

    ## References
    - deepspeed/runtime/config.py: DeepSpeedConfig._initialize_params asserts "bfloat16 and fp16
      modes cannot be simultaneously enabled" (DeepSpeed 0.16.5)
    - transformers/training_args.py: "At most one of fp16 and bf16 can be True"
    """

    code = "PRE003"
    name = "fp16-and-bf16"
    severity = ERROR
    fix_applicability = Applicability.UNSAFE

    def check(self, run, context):
        fp16_on = [config for config in run.configs if config.value("precision.fp16") is True]
        bf16_on = [config for config in run.configs if config.value("precision.bf16") is True]
        if not fp16_on or not bf16_on:
            return
        hardware = context.hardware
        if hardware.all_support("bf16"):
            fix = self.fix("Keep bf16: switch fp16 off",
                           *(Change(config, "precision.fp16", False) for config in fp16_on))
        elif hardware.targets:
            fix = self.fix("Keep fp16 (a target lacks bf16): switch bf16 off",
                           *(Change(config, "precision.bf16", False) for config in bf16_on))
        else:
            fix = None
        where = "this file" if fp16_on == bf16_on and len(fp16_on) == 1 else "this run"
        first = fp16_on[0]
        yield self.finding(
            first, first.span("precision.fp16"),
            f"fp16 and bf16 are both enabled in {where}"
            + ("" if where == "this file" else f" ({', '.join(str(c.path) for c in run.configs)})"),
            fix=fix,
        )
