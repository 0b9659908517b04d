"""4-bit and 8-bit quantization: compute dtypes and what can be trained on top."""

from __future__ import annotations

from linter.fixes import Applicability, Change
from linter.registry import ERROR, WARNING, Rule, register


@register
class FourBitComputeFp16(Rule):
    """QNT001 4bit-compute-fp16

    ## What it does
    Flags a 4-bit quantized run whose compute dtype is float16 — written in the file or
    inherited from the framework's default (Ludwig) — when every target GPU supports bfloat16.

    ## Why is this bad?
    4-bit layers dequantize to the compute dtype for every matmul. float16 has 5 exponent
    bits; activations of Mistral-, Llama-3- and Gemma-class models overflow it in the backward
    pass and the loss turns NaN (Ludwig, Mistral-7B, batch size > 1). bfloat16 has float32's
    range at the same cost on Ampere and newer GPUs.

    ## Example
        quantization:
          bits: 4
    Use instead:
        quantization:
          bits: 4
          bnb_4bit_compute_dtype: bfloat16

    ## Fix safety
    Safe: same memory and speed on bf16-capable GPUs, strictly wider range. Offered only when
    every target supports bf16. Where the value is a default, the fix inserts the key under
    its parent at the siblings' indentation.

    ## References
    - Ludwig default: ludwig/schema/llms/quantization.py (bnb_4bit_compute_dtype="float16")
    - INCIDENTS.md incident 1 (Ludwig Mistral-7B QLoRA NaN)
    """

    code = "QNT001"
    name = "4bit-compute-fp16"
    severity = WARNING
    fix_applicability = Applicability.SAFE
    needs_targets = True

    def check(self, run, context):
        hardware = context.hardware
        if not hardware.all_support("bf16"):
            return
        for config in run.configs:
            compute_dtype = config.get("quantization.compute_dtype")
            if config.value("quantization.bits") != 4 or compute_dtype is None or compute_dtype.value != "float16":
                continue
            how = f"by default ({compute_dtype.origin.default_source})" if compute_dtype.origin.is_default else ""
            yield self.finding(
                config, compute_dtype.span,
                f"4-bit compute dtype is float16{' ' + how if how else ''} while every target supports "
                "bf16: float16 overflows in the backward pass of many LLMs; use bfloat16",
                targets=hardware.targets,
                fix=self.fix("Set the 4-bit compute dtype to bfloat16",
                             Change(config, "quantization.compute_dtype", "bfloat16")),
            )


@register
class QuantizedFullFinetune(Rule):
    """QNT005 quantized-full-finetune

    ## What it does
    Flags a config that quantizes the base model (4- or 8-bit) but trains no adapter.

    ## Why is this bad?
    Quantized weights are frozen integer storage: they cannot be trained directly. Without a
    LoRA-style adapter the framework either refuses to start (PEFT/transformers: "You cannot
    perform fine-tuning on purely quantized models") or trains nothing.

    ## Example
        quantization:
          bits: 4
    Use instead:
        adapter:
          type: lora
        quantization:
          bits: 4

    ## Fix safety
    No fix: choosing an adapter and its rank is a modelling decision.

    ## References
    - transformers/trainer.py: "You cannot perform fine-tuning on purely quantized models"
    - Ludwig: ludwig/config_validation/checks.py (quantization requires an adapter)
    """

    code = "QNT005"
    name = "quantized-full-finetune"
    severity = ERROR

    def check(self, run, context):
        for config in run.configs:
            kind = config.get("adapter.kind")
            bits = config.value("quantization.bits")
            if bits in (4, 8) and kind is not None and kind.value is None:
                yield self.finding(
                    config, config.span("quantization.bits"),
                    f"the base model is quantized to {bits}-bit but no adapter is trained: "
                    "quantized weights cannot be fine-tuned directly; add an adapter (e.g. LoRA)",
                )
