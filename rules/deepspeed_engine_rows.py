"""DS025 rows from DeepSpeed's engine and ZeRO optimizers (runtime/engine.py
_do_optimizer_sanity_check / _configure_zero_optimizer, runtime/zero/stage_1_and_2.py and stage3.py
__init__, runtime/base_optimizer.py _configure_master_weights): the refusals that the file decides
once deepspeed.initialize has an optimizer to wrap (rules/deepspeed_facts.py has_optimizer); and
from the pydantic fp16 config (runtime/precision_config.py DeepSpeedFP16Config, read with the
config whether or not fp16 is enabled). Appended to rules/deepspeed_releases.py BUGS by the DS025
rule (deepspeed_release_rules.py).

Read in deepspeedai/DeepSpeed (mirror, v0.19.5 the newest tag); each row cites the commits that
bound it, found with `git log -S` and `git tag --contains`.
"""

from __future__ import annotations

from .deepspeed_releases import _bug

_RESCALE = ("deepspeed.initialize refuses it after the model has loaded (AssertionError \"pre-scale gradients is not "
            "yet supported with ZeRO-N with reduce scatter enabled\" / \"gradient_predivide_factor != 1.0 is not yet "
            "supported ...\"): ZeRO's reduce-scatter averages the gradients itself")
_MASTER = ("deepspeed.initialize refuses it after the model has loaded (AssertionError \"fp16_master_and_gradients "
           "requires ... ZeRO-Offload with DeepSpeedCPUAdam\", from 0.18.3 \"Master weights feature requires ZeRO-N "
           "Offload with DeepSpeedCPUAdam\"): the 16-bit master weights need the CPU Adam of optimizer offload; add "
           "zero_optimization.offload_optimizer (device cpu) with an Adam or AdamW optimizer block, or drop the key")
_MIX = "deepspeed.initialize refuses it (NotImplementedError \"unsupported mix of model dtype and gradient accumulation type\""
_READER = "DeepSpeed's config reader refuses it (pydantic ValidationError"
# DeepSpeedFP16Config's int fields the IR holds as numbers (initial_scale_power is an int key already).
_FP16_INTS = (("loss_scale.window", "loss_scale_window"), ("loss_scale.min_loss_scale", "min_loss_scale"))


def _below(d, key: str, bound: float, inclusive: bool = False) -> bool:
    """fp16's `key` setting is a number below `bound` (or equal to it, `inclusive`)."""
    value = d.loss_scale_setting(key)
    return value is not None and (value <= bound if inclusive else value < bound)


def _fractional(d, key: str) -> bool:
    value = d.loss_scale_setting(key)
    return isinstance(value, float) and value != int(value)

ENGINE_ROWS = (
    # stage2.py (ZeRO-2, bc36b91dd #235, v0.2.0) and stage3.py (599258f97 #834, v0.3.12, with ZeRO-3), in
    # every release since: `if self.reduce_scatter:` asserts postscale_gradients (engine.py: not
    # prescale_gradients) and gradient_predivide_factor == 1.0. Non-legacy ZeRO-1 ran through the same
    # class from cfa63f5da (v0.4.0) until 69a459887 (#4964, v0.13.0) asserted for ZeRO-2 only.
    _bug("DS025", lambda d: d.rescaled_reduction() and d.stage() >= 2 and d.reduce_scatter() and d.zero_optimizer(),
         "parallel.prescale_gradients parallel.gradient_predivide_factor",
         "{rescaled_reduction} with ZeRO stage {stage} and reduce_scatter (the default)",
         f"{_RESCALE}; drop the key or set zero_optimization.reduce_scatter false", None, None),
    _bug("DS025", lambda d: d.rescaled_reduction() and d.stage() == 1 and d.reduce_scatter() and d.zero_optimizer()
         and d("parallel.zero_legacy_stage1") is not True, "parallel.prescale_gradients parallel.gradient_predivide_factor",
         "{rescaled_reduction} with ZeRO stage 1 and reduce_scatter (the default)",
         f"{_RESCALE} (ZeRO-1 accepted from 0.13.0, #4964); drop the key, set zero_optimization.reduce_scatter false "
         "or upgrade DeepSpeed", "0.4.0", "0.13.0"),
    # communication_data_type (d14baad94 #1487, v0.5.8): engine.py _configure_zero_optimizer asserted fp16
    # or bf16 for every ZeRO stage until 81b4d5db0 (#2807, v0.8.2), which let ZeRO-3 reduce in fp32;
    # stage_1_and_2.py's reduce-scatter assert took fp32 with 261d63708 (#2970, v0.9.0).
    _bug("DS025", lambda d: d.comm_dtype() == "fp32" and (d.zero_optimizer() or d.stage() == 3),
         "parallel.communication_data_type", "communication_data_type fp32 under ZeRO stage {stage}",
         "deepspeed.initialize refuses it after the model has loaded (AssertionError \"ZeRO supports only "
         "'communication_data_type': ['fp16', 'bfp16']\"; fp32 accepted from 0.8.2 under ZeRO-3, #2807, and from 0.9.0 "
         "under ZeRO-1/2, #2970); drop communication_data_type or upgrade DeepSpeed", "0.5.8", "0.8.2", unpinned=False),
    _bug("DS025", lambda d: d.comm_dtype() == "fp32" and d.stage() in (1, 2) and d.reduce_scatter() and d.zero_optimizer(),
         "parallel.communication_data_type", "communication_data_type fp32 under ZeRO stage {stage} with reduce_scatter",
         "deepspeed.initialize refuses it after the model has loaded (AssertionError \"ZeRO-2 supports only float16 or "
         "bfloat16 communication_data_type with reduce scatter enabled\"; accepted from 0.9.0, #2970); drop "
         "communication_data_type or upgrade DeepSpeed", "0.8.2", "0.9.0", unpinned=False),
    # 16-bit master weights: stage2.py asserts optimizer offload with DeepSpeedCPUAdam for
    # fp16_master_weights_and_grads (f28432441 #1310, v0.5.0, with the key); 39a682d79 (#7700, v0.18.3)
    # moves it to base_optimizer.py _configure_master_weights for ZeRO-1/2/3 and adds
    # bf16_master_weights_and_grads without bf16_optimizer_states. (Stages the config reader refuses are
    # earlier rows.)
    _bug("DS025", lambda d: d.master_weights() == "fp16_master_weights_and_grads" and d.zero_optimizer()
         and d.no_cpu_adam(), "precision.fp16_master_weights",
         "fp16_master_weights_and_grads under ZeRO stage {stage} without CPU Adam optimizer offload", _MASTER,
         "0.5.0", None, unpinned=False),
    _bug("DS025", lambda d: d.master_weights() == "bf16_master_weights_and_grads" and d.zero_optimizer()
         and d.no_cpu_adam(), "precision.bf16_master_weights",
         "bf16_master_weights_and_grads without bf16_optimizer_states under ZeRO stage {stage} and without CPU Adam "
         "optimizer offload", _MASTER, "0.18.3", None, unpinned=False),
    # engine.py _do_optimizer_sanity_check without ZeRO (data_types from 21c280296 #2512, v0.7.6): a bf16
    # model took fp32 accumulation (the BF16 optimizer) until 09885efef (#7790, v0.18.5) dropped that
    # branch; bf16 accumulation raised outside a PipelineEngine until 889f0ead2 (#7515, v0.17.6, the
    # DDP_BFLOAT16 path); every other mismatch raises in every release with the key (fp16 models: an
    # earlier row).
    _bug("DS025", lambda d: d.stage() == 0 and d.model_dtype() == "bf16" and d.accum_dtype() == "fp32"
         and d.has_optimizer(), "precision.grad_accum_dtype", "bf16 with data_types.grad_accum_dtype fp32 without ZeRO",
         f"{_MIX}, 0.18.5 on: #7790 dropped the BF16 optimizer without ZeRO); drop grad_accum_dtype or use ZeRO "
         "stage 1, which accumulates bf16 gradients in fp32", "0.18.5", None, unpinned=False),
    _bug("DS025", lambda d: d.stage() == 0 and d.model_dtype() == "bf16" and d.accum_dtype() == "bf16"
         and d.has_optimizer() and d.hf_filled(), "precision.grad_accum_dtype",
         "bf16 with data_types.grad_accum_dtype bf16 without ZeRO",
         "deepspeed.initialize refuses it (NotImplementedError \"Bfloat16 wrapper must use a gradient accumulation type "
         "of fp32, enable ZeRO to use Bfloat16 gradient accumulation\"; accepted from 0.17.6, #7515); drop "
         "grad_accum_dtype, use ZeRO or upgrade DeepSpeed", "0.7.6", "0.17.6", unpinned=False),
    _bug("DS025", lambda d: d.stage() == 0 and d.model_dtype() in ("bf16", "fp32") and d.accum_dtype() not in (
         "", d.model_dtype(), "fp32") and d.has_optimizer(), "precision.grad_accum_dtype",
         "{model_dtype} model with data_types.grad_accum_dtype {precision.grad_accum_dtype} without ZeRO",
         f"{_MIX}); drop grad_accum_dtype or use ZeRO", "0.7.6", None, unpinned=False),
    # engine.py _configure_optimizer / _do_optimizer_sanity_check: Apex AMP with DeepSpeed's own fp16
    # (f54531241 #286, v0.3.0) or bf16 mode ("Cannot enable both amp with (legacy) fp16 or bfloat16 mode").
    _bug("DS025", lambda d: d("precision.amp") is True and d.stage() == 0 and d.model_dtype() in ("fp16", "bf16")
         and d.has_optimizer(), "precision.amp", "amp.enabled with {model_dtype} enabled",
         "deepspeed.initialize refuses it (\"Cannot enable both amp with (legacy) fp16 or bfloat16 mode\"): Apex AMP "
         "and DeepSpeed's own mixed precision are two ways of doing the same thing; keep one", "0.3.0", None,
         unpinned=False),
    # runtime/precision_config.py DeepSpeedFP16Config: pydantic from e440506be (#6976, v0.17.1; before it
    # runtime/config.py took the values as written), its int fields refuse a fractional number. Validators:
    # fp16.loss_scale finite and >= 0 from 63eeb114b (#7889, v0.18.8); with fp16 enabled and dynamic
    # scaling, loss_scale_window and min_loss_scale > 0 from ded23491c (#8050, v0.19.3). Before #8050
    # fp16/loss_scaler.py DynamicLossScaler.update_scale computed `... % self.scale_window` at the first step
    # without overflow (every release from v0.1.0), so a window of 0 fails in every release.
    _bug("DS025", lambda d: _below(d, "loss_scale.loss_scale", 0), "loss_scale.loss_scale",
         "fp16.loss_scale {loss_scale.loss_scale}", f"{_READER} \"fp16.loss_scale must be >= 0 (0 enables dynamic "
         "loss scaling)\", from 0.18.8, #7889); write 0 (dynamic) or a positive static scale", "0.18.8", None,
         unpinned=False),
    _bug("DS025", lambda d: d.dynamic_fp16_scale() and d.loss_scale_setting("loss_scale.window") == 0,
         "loss_scale.window", "fp16.loss_scale_window 0 with dynamic loss scaling",
         f"{_READER} \"fp16.loss_scale_window must be > 0 when dynamic loss scaling is enabled\" from 0.19.3, #8050; "
         "older releases divide by it at the first step without overflow: ZeroDivisionError in "
         "DynamicLossScaler.update_scale); drop the key (1000 by default) or write a positive window", None, None),
    _bug("DS025", lambda d: d.dynamic_fp16_scale() and _below(d, "loss_scale.window", 0),
         "loss_scale.window", "fp16.loss_scale_window {loss_scale.window} with dynamic loss scaling",
         f"{_READER} \"fp16.loss_scale_window must be > 0 when dynamic loss scaling is enabled\", from 0.19.3, #8050); "
         "drop the key (1000 by default) or write a positive window", "0.19.3", None, unpinned=False),
    _bug("DS025", lambda d: d.dynamic_fp16_scale() and _below(d, "loss_scale.min_loss_scale", 0, True),
         "loss_scale.min_loss_scale", "fp16.min_loss_scale {loss_scale.min_loss_scale} with dynamic loss scaling",
         f"{_READER} \"fp16.min_loss_scale must be > 0 when dynamic loss scaling is enabled\", from 0.19.3, #8050); "
         "drop the key (1 by default) or write a positive floor", "0.19.3", None, unpinned=False),
    *(_bug("DS025", lambda d, key=key: _fractional(d, key), key, f"fp16.{name} {{{key}}}",
           f"{_READER} \"Input should be a valid integer, got a number with a fractional part\": DeepSpeedFP16Config "
           "takes integers there from 0.17.1, #6976); write a whole number", "0.17.1", None, unpinned=False)
      for key, name in _FP16_INTS),
)
