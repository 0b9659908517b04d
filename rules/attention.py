"""Attention kernels against the hardware and the batch layout."""

from __future__ import annotations

from linter.changes import SetValue
from linter.fixes import Applicability
from linter.registry import ERROR, Rule, register

from .precision import target_names

_FLASH = {"flash_attention_2": "flash_attention_2", "flash_attention_3": "flash_attention_3"}


@register
class FlashAttentionUnsupported(Rule):
    """PRE007 flash-attention-unsupported

    ## What it does
    Flags FlashAttention-2 on GPUs below compute capability 8.0, FlashAttention-3 below 9.0
    (Hopper), and FlashAttention with a float32 model and no mixed precision.

    ## Why is this bad?
    The flash-attn kernels are compiled for Ampere+ (FA2) and Hopper (FA3) only, and accept
    only fp16/bf16 inputs: transformers raises at model load ("FlashAttention only supports
    Ampere GPUs or newer" / "only support torch.float16 and torch.bfloat16").

    ## Example
    `sft.yaml`, on a T4:
        model_name_or_path: Qwen/Qwen2.5-0.5B
        dataset_name: trl-lib/Capybara
        fp16: true
        attn_implementation: flash_attention_2
    Use instead:
        model_name_or_path: Qwen/Qwen2.5-0.5B
        dataset_name: trl-lib/Capybara
        fp16: true
        attn_implementation: sdpa

    ## Fix safety
    Safe: PyTorch's SDPA computes the same attention on every GPU, with its own memory-efficient
    kernels; results agree to numerical precision.

    ## References
    - transformers/modeling_utils.py: _check_and_enable_flash_attn_2 / _flash_attn_3 checks
    - Dao-AILab/flash-attention README (Ampere, Ada, Hopper; fp16 and bf16 only)
    """

    code = "PRE007"
    name = "flash-attention-unsupported"
    severity = ERROR
    fix_applicability = Applicability.SAFE

    def check(self, run, context):
        hardware = context.hardware
        for config in run.configs:
            implementation = config.get("attention.implementation")
            if implementation is None or implementation.value not in _FLASH:
                continue
            lacking = hardware.lacking(_FLASH[implementation.value])
            if lacking:
                need = "8.0 (Ampere)" if implementation.value == "flash_attention_2" else "9.0 (Hopper)"
                why = f"{implementation.value} on {target_names(lacking)}: needs compute capability >= {need}"
            elif {c.mode() for c in run.configs} - {None} == {"fp32"} and config.value("model.load_dtype") in (None, "float32"):
                why = f"{implementation.value} with a float32 model and no mixed precision: FlashAttention takes only fp16/bf16"
            else:
                continue
            yield self.finding(config, implementation.span, why + "; use sdpa", targets=lacking,
                               fix=self.fix("Use SDPA attention", SetValue(config, "attention.implementation", "sdpa")))
