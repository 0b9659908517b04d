"""The rules of the DeepSpeed release-bug table (rules/deepspeed_releases.py BUGS), one per code."""

from __future__ import annotations

from linter.registry import ERROR, WARNING, kinds, register

from .deepspeed_engine_rows import ENGINE_ROWS
from .deepspeed_releases import BUGS, DeepSpeedReleaseBug


@register
class ZeroHpzReleaseBug(DeepSpeedReleaseBug):
    """DS020 zero-hpz-release-bug

    ## What it does
    Flags ZeRO++ hierarchical partitioning (`zero_optimization.zero_hpz_partition_size` above 1
    at ZeRO stage 3) where the DeepSpeed in use (an exact pin near the config, or the installed
    package; silent when unknown) is 0.10.0 to 0.18.2.

    ## Why is this bad?
    hpZ keeps a secondary copy of each ZeRO-3 weight shard inside a node and all-gathers from
    it. Up to 0.13.1 the copy was refreshed by forward/backward flags and went out of sync:
    runs did not converge at all (DeepSpeed#4851, on 0.12.5; fixed by #4906 in 0.13.2). From
    0.13.2 to 0.18.2 the copy is not refreshed when weights are written into the partitioned
    model (from_pretrained under `zero.Init`, or a resumed ZeRO checkpoint), so the first steps
    gather stale weights and the loss spikes (DeepSpeed#7606, on 0.16.9; fixed by #7707 in
    0.18.3).

    ## Example
    `ds_config.json`:
        {"bf16": {"enabled": true}, "zero_optimization": {"stage": 3, "zero_hpz_partition_size": 8}}
    `requirements.txt`:
        deepspeed==0.12.6
    Use instead:
        {"bf16": {"enabled": true}, "zero_optimization": {"stage": 3}}

    ## Fix safety
    No fix: hpZ trades memory for inter-node traffic; dropping it or upgrading DeepSpeed is
    the author's choice.

    ## References
    - deepspeed/runtime/zero/partition_parameters.py (_partition, _partition_param_sec):
      ZeRO++ from d18aa2c79 (#3784, v0.10.0); 75ed63c94 (#4906, v0.13.2) "Enable hpz based on
      secondary tensor presence" (fixes #4851) dropped `has_been_updated` from the
      _partition_param_sec call; c069ceb30 (#7707, v0.18.3) passes it again (fixes #7606)
    - deepspeedai/DeepSpeed#4851, #7606
    """

    code = "DS020"
    name = "zero-hpz-release-bug"
    severity = WARNING
    triggers = kinds("deepspeed")


@register
class Bf16GradAccumDtypeRefused(DeepSpeedReleaseBug):
    """DS021 bf16-grad-accum-dtype-refused

    ## What it does
    Flags a bf16 DeepSpeed config under ZeRO whose gradient-accumulation dtype the DeepSpeed in
    use refuses (silent when the version is unknown): on 0.7.6, bf16 with ZeRO and no
    `data_types.grad_accum_dtype`; from 0.7.6 to 0.8.0, `grad_accum_dtype: fp32` under any
    ZeRO stage; from 0.8.1 to 0.10.0, `grad_accum_dtype: fp32` under ZeRO stage 2 or 3.

    ## Why is this bad?
    `deepspeed.initialize` stops with NotImplementedError "Model data type and gradient
    accumulation data type must be equal to use ZeRO" after the model has loaded. 0.7.6 (which
    added `data_types`) made fp32 the default accumulation dtype of bf16 models and so refused
    every bf16 ZeRO config that did not say otherwise (fixed in 0.7.7, #2566); ZeRO-1 took fp32
    accumulation with the BF16 optimizer in 0.8.1 (#2706), stages 2 and 3 in 0.10.1 (#2847).

    ## Example
    `ds_config.json`:
        {"bf16": {"enabled": true}, "data_types": {"grad_accum_dtype": "fp32"}, "zero_optimization": {"stage": 2}}
    `requirements.txt`:
        deepspeed==0.9.5
    Use instead:
        {"bf16": {"enabled": true}, "zero_optimization": {"stage": 2}}

    ## Fix safety
    No fix: bf16 accumulation or a newer DeepSpeed are the choices.

    ## References
    - deepspeed/runtime/engine.py get_data_types and _do_optimizer_sanity_check; data_types from
      v0.7.6 (runtime/config.py GRAD_ACCUM_DTYPE); 06938835e (#2566, v0.7.7), 8d87c89e4 (#2706,
      v0.8.1), 8afcda2ac (#2847, v0.10.1) "ZeRO Gradient Accumulation Dtype"
    """

    code = "DS021"
    name = "bf16-grad-accum-dtype-refused"
    severity = ERROR
    triggers = kinds("deepspeed")


@register
class Bf16GradientReductionBug(DeepSpeedReleaseBug):
    """DS022 bf16-gradient-reduction-bug

    ## What it does
    Flags a bf16 DeepSpeed config whose gradients the DeepSpeed in use (an exact pin near the
    config, or the installed package; silent when unknown or on one GPU) reduces wrongly
    across GPUs: under ZeRO (stage 1 or more) with no `communication_data_type` on 0.5.8 to
    0.8.x; and with `data_types.grad_accum_dtype: fp32` at ZeRO stage 1 (no optimizer offload),
    gradient accumulation (`gradient_accumulation_steps` above 1, or "auto" filled by a
    trainer that accumulates) and `bf16.immediate_grad_update` not true, on 0.18.3 to 0.18.x.

    ## Why is this bad?
    From 0.5.8 (#1487) to 0.8.x an unwritten `communication_data_type` meant fp16 under any
    ZeRO stage, so bf16 gradients were cast to fp16 for the reduction: large values overflow
    to inf/NaN and small ones lose precision (DeepSpeed#2071, #2911; 0.9.0 made fp32 the
    default, #2970). From 0.18.3 (#7665) the engine averaged the BF16 optimizer's fp32
    gradient buffer across GPUs before the optimizer added the last micro-batch of the
    accumulation window to it, so that micro-batch counts only on the GPU that computed it:
    the gradient is biased by (world - 1) / world / accumulation steps and differs between
    GPUs; loss and grad-norm curves drift with the micro-batch size at a fixed global batch
    (DeepSpeed#7985, fixed in 0.19.0).

    ## Example
    `ds_config.json`:
        {"bf16": {"enabled": true}, "data_types": {"grad_accum_dtype": "fp32"}, "gradient_accumulation_steps": 8, "zero_optimization": {"stage": 1}}
    `requirements.txt`:
        deepspeed==0.18.6
    Use instead:
        {"bf16": {"enabled": true, "immediate_grad_update": true}, "data_types": {"grad_accum_dtype": "fp32"}, "gradient_accumulation_steps": 8, "zero_optimization": {"stage": 1}}

    ## Fix safety
    No fix: `"communication_data_type": "bfp16"` / `bf16.immediate_grad_update: true` (the
    fixes' workarounds) or a newer DeepSpeed are the choices.

    ## References
    - deepspeed/runtime/engine.py communication_data_type: fp16 under ZeRO from d14baad94
      (#1487, v0.5.8) to 261d63708 (#2970 "Make fp32 default communication data type", v0.9.0);
      zero/stage_1_and_2.py and zero/stage3.py cast gradients to it before reducing
    - deepspeed/runtime/engine.py _backward_epilogue (allreduce_gradients before
      optimizer.backward_epilogue), deepspeed/runtime/bf16_optimizer.py backward_epilogue /
      update_hp_grads: from 53e91a098 (#7665, v0.18.3); fixed by 5999fb069 (#7985, v0.19.0)
    - deepspeedai/DeepSpeed#2071, #2911, #7985 (reproducer and end-to-end runs with the HF
      Trainer)
    """

    code = "DS022"
    name = "bf16-gradient-reduction-bug"
    severity = WARNING
    triggers = kinds("deepspeed")


@register
class DeepSpeedConfigRefused(DeepSpeedReleaseBug):
    """DS025 deepspeed-config-refused

    ## What it does
    Flags a DeepSpeed config that the DeepSpeed in use refuses, one row per check of its config
    reader (runtime/config.py) or engine (runtime/engine.py) that the file alone decides, each
    bounded by the releases that have it: `bf16` enabled with ZeRO stage 0 (0.6.0-0.6.1 for any engine, 0.6.2-0.7.4 where a Hugging
    Face trainer or accelerate builds the engine: a training config links the file or it holds
    "auto" values); `fp16.fp16_master_weights_and_grads` without ZeRO stage 2 (stage 0 from
    0.5.0 on, stages 1 and 3 up to 0.18.2); `bf16.bf16_master_weights_and_grads` without ZeRO
    and `bf16.bf16_optimizer_states` without ZeRO or without the master weights (0.18.3 on);
    `tensor_parallel.autotp_size` above 1 with ZeRO
    stage 3 (0.16.4-0.19.3); and, where DeepSpeed is known to build the optimizer from the file
    (an HF trainer or accelerate fills it, or a script passes deepspeed.initialize no optimizer
    of its own, which would replace the block), `optimizer.params.max_grad_norm` (every release), Lamb or OneBitLamb with a
    static fp16 `loss_scale` (every release; OneBitLamb from 0.4.1), OneBitAdam / OneBitLamb
    under ZeRO stage 1-3 (every release without `zero_allow_untested_optimizer`, from 0.4.1
    with it) or ZeroOneAdam (every release), and under ZeRO without
    `zero_allow_untested_optimizer` an optimizer ZeRO never lists as tested (Lamb, MuAdam,
    MuAdamW, MuSGD, torch's SGD, RMSprop, Adamax, NAdam, RAdam, Adadelta, ASGD, Rprop,
    SparseAdam, LBFGS, Adafactor: every release; Adagrad up to 0.9.1), and an optimizer type
    that is a Trainer `optim` name (`adamw_torch`, `paged_adamw_8bit`, `sgd`: no DeepSpeed
    optimizer or torch.optim class has it, every release). Where DeepSpeed builds
    the `scheduler` block (no script is seen passing its own lr_scheduler, and an optimizer is
    configured): a `scheduler.type` that is a torch.optim.lr_scheduler class under ZeRO or
    fp16, a spelling that neither DeepSpeed nor torch has (`cosine`, `warmuplr`: every
    release), and WarmupCosineLR before 0.12.3; `zero_optimization.legacy_stage1` under ZeRO
    (0.5.9 on); fp16 with `data_types.grad_accum_dtype` fp32 or bf16 (under ZeRO 0.7.6-0.10.0,
    without ZeRO 0.7.6 on); `communication_data_type` "bf16" (0.5.8-0.14.0), "bfp16" (0.14.1 on)
    or any other spelling than fp32/fp16/bf16/bfp16 (0.5.8 on); DeepSpeed's Muon under ZeRO-3
    with `reduce_scatter` (the default; every release with Muon) or at all before 0.18.9, under
    ZeRO without `zero_allow_untested_optimizer` (0.17.6-0.18.4), and under ZeRO-1/2 with
    `reduce_scatter` and `offload_optimizer` (0.19.3 on). Where deepspeed.initialize gets an
    optimizer to wrap: `prescale_gradients` true or `gradient_predivide_factor` other than 1.0 with
    `reduce_scatter` (the default) under ZeRO-2/3 (every release) or ZeRO-1 (0.4.0-0.12.x);
    `communication_data_type` fp32 under ZeRO (0.5.8-0.8.1; ZeRO-1/2 with reduce_scatter to 0.8.x);
    `fp16_master_weights_and_grads` (0.5.0 on) or `bf16_master_weights_and_grads` without
    `bf16_optimizer_states` (0.18.3 on) without optimizer offload to CPU Adam; without ZeRO, bf16 with
    `grad_accum_dtype` fp32 (0.18.5 on) or bf16 (0.7.6-0.17.5, where a trainer builds the engine) and
    any other dtype mismatch (0.7.6 on); and `amp.enabled` with fp16 or bf16 (0.3.0 on). From the fp16
    block: a negative `loss_scale` (0.18.8 on); with dynamic loss scaling, `loss_scale_window` 0 (every
    release: refused from 0.19.3, a ZeroDivisionError before), a negative one or `min_loss_scale` <= 0
    (0.19.3 on); a fraction in `loss_scale_window` or `min_loss_scale` (0.17.1 on). Rows bounded by a fix, or by a release before
    which the file ran, need the DeepSpeed version (an exact pin near the config, or the
    installed package); with it unknown only the checks that every release makes fire.

    ## Why is this bad?
    `deepspeed.initialize` raises when it parses the config or builds the engine, after the job
    got its GPUs and (for the engine checks) after the model loaded: "bfloat16 mode is only
    enabled for Zero 1,2,3 currently" / "When not running ZeRO, BF16 training support is only
    supported for Pipeline parallelism" (DeepSpeed#1784), "Currently, the compatibility between
    'autotp' and 'zero_stage = 3' has not been validated" (DeepSpeed#7389), "1bit-Adam is not
    compatible with ZeRO" (DeepSpeed#5046), "You are using an untested ZeRO Optimizer". A torch
    scheduler named in the block is built on `self.optimizer`, which under ZeRO or fp16 is
    DeepSpeed's wrapper (a plain object in every release), and torch refuses it: "TypeError:
    DeepSpeedZeroOptimizer is not an Optimizer" (DeepSpeed#6992, #3492).

    ## Example
    `ds_config.json`:
        {"train_micro_batch_size_per_gpu": "auto", "bf16": {"enabled": true}, "zero_optimization": {"stage": 0}}
    `requirements.txt`:
        deepspeed==0.7.2
    Use instead:
        {"train_micro_batch_size_per_gpu": "auto", "bf16": {"enabled": true}, "zero_optimization": {"stage": 1}}

    ## Fix safety
    No fix: another ZeRO stage or a newer DeepSpeed are the choices.

    ## References
    - deepspeed/runtime/config.py DeepSpeedConfig._initialize_params / _do_error_check (bf16 assert from v0.5.5, `bf16` spelling from v0.6.0, moved to the engine by 56c522386
      #1801, v0.6.2; fp16_master_weights_and_grads ZeRO-2 only from v0.5.0, stages 1-3 from v0.18.3;
      bf16_master_weights_and_grads / bf16_optimizer_states checks from v0.18.3)
    - deepspeed/runtime/engine.py _configure_distributed_model (bf16 without ZeRO, until ee39187d8
      #2470, v0.7.5); _configure_tensor_parallel_states (v0.16.4; _configure_tensor_parallel from
      v0.19.2) asserting ZeRO stage <= 2 until d3265209f (#8167, v0.19.4)
    - deepspeed/runtime/engine.py _configure_basic_optimizer ('max_grad_norm' refused since v0.1.0;
      1-bit Adam / 1-bit Lamb asserts from 1ba3e8e33 #1169, v0.4.1, 0/1 Adam with its introduction
      in v0.6.1) and _do_sanity_check ("requires dynamic loss scaling" for Lamb, "is not a
      supported DeepSpeed Optimizer", v0.1.0 on)
    - deepspeed/runtime/engine.py _configure_optimizer / _do_optimizer_sanity_check (the
      untested-optimizer assert, v0.1.0 on) and runtime/zero/utils.py ZERO_SUPPORTED_OPTIMIZERS
      (Adagrad from d3550dc88 #3401, v0.9.2)
    - deepspeed/runtime/engine.py _do_optimizer_sanity_check (grad_accum_dtype from 21c280296
      #2512, v0.7.6; the ZeRO dtype-equality check removed by 8afcda2ac #2847, v0.10.1)
    - deepspeed/runtime/precision_config.py DeepSpeedFP16Config (pydantic from e440506be #6976, v0.17.1;
      loss_scale check 63eeb114b #7889, v0.18.8; dynamic-scaling checks ded23491c #8050, v0.19.3);
      runtime/fp16/loss_scaler.py DynamicLossScaler.update_scale (`% self.scale_window`, v0.1.0 on)
    - deepspeed/runtime/engine.py _configure_zero_optimizer (legacy_stage1 refused from 1d295ff5f,
      v0.5.9; the key from cfa63f5da, v0.4.0)
    - deepspeed/runtime/engine.py _configure_lr_scheduler / _scheduler_from_config
      (`scheduler(self.optimizer, ...)`, v0.1.0 on); runtime/lr_schedules.py VALID_LR_SCHEDULES
      (WarmupCosineLR from 4388a605f #4563, v0.12.3); torch/optim/lr_scheduler.py LRScheduler
      ("is not an Optimizer")
    - deepspeed/runtime/config.py get_communication_data_type (d14baad94 #1487, v0.5.8; "bfp16"
      renamed "bf16" by ed8aed570 #5297, v0.14.1)
    - Muon: engine.py _configure_basic_optimizer (ZeRO-3 assert until 956ec6fb1 #7919, v0.18.9),
      zero/stage3.py ("Muon and reduce scatter cannot be used together"), zero/utils.py
      (3bc882faa #7802, v0.18.5), zero/stage_1_and_2.py (de1846cf6 #8141, v0.19.3)
    - zero/stage2.py / stage_1_and_2.py and stage3.py __init__ (reduce-scatter asserts from bc36b91dd
      #235, v0.2.0, and 599258f97 #834, v0.3.12; ZeRO-2 only from 69a459887 #4964, v0.13.0; fp32
      communication from 81b4d5db0 #2807, v0.8.2, ZeRO-3, and 261d63708 #2970, v0.9.0); master weights:
      f28432441 (#1310, v0.5.0), base_optimizer.py _configure_master_weights (39a682d79 #7700, v0.18.3)
    - engine.py _do_optimizer_sanity_check without ZeRO: 21c280296 (#2512, v0.7.6), 889f0ead2 (#7515,
      v0.17.6), 09885efef (#7790, v0.18.5); Apex AMP with fp16 from f54531241 (#286, v0.3.0)
    - deepspeedai/DeepSpeed#1784, #7389, #5046, #1197, #6992, #3492, #4964, #2807; the rows: trainlint
      rules/deepspeed_releases.py (BUGS) and rules/deepspeed_engine_rows.py (ENGINE_ROWS)
    """

    code = "DS025"
    name = "deepspeed-config-refused"
    severity = ERROR
    triggers = kinds("deepspeed")
    rows = BUGS + ENGINE_ROWS


@register
class ZeroQuantizedWeightsBf16(DeepSpeedReleaseBug):
    """DS028 zero-quantized-weights-with-bf16

    ## What it does
    Flags ZeRO-3 weight quantization (`zero_optimization.zero_quantized_weights`, ZeRO++ qwZ,
    from 0.10.0; or `zero_quantized_nontrainable_weights`, from 0.10.2) in a bf16 config
    (`bf16.enabled` true, or "auto" filled by a trainer's bf16) where the DeepSpeed in use (an
    exact pin near the config, or the installed package) has no fix: every release so far (the
    fix, #8215, is on master only). It fires without a pin too: every release that has the keys
    has the bug; from 0.7.0 (pydantic ZeRO config, extra keys forbidden) to 0.9.x DeepSpeed
    refuses them, and only releases before 0.7.0 ignore them.

    ## Why is this bad?
    DeepSpeed's `CUDAQuantizer` hands the parameter to a kernel that reads it through an
    fp16 pointer whatever its dtype, and its dequantize always returns fp16, which the
    ZeRO-3 gather writes back into the parameter. bf16 weights are read bit-wise as fp16 (the
    values are already wrong) and come back as fp16, so the forward pass mixes fp16 weights
    with bf16 activations and fails at the first step (DeepSpeed#7775; #4852).

    ## Example
    `ds_config.json`:
        {"bf16": {"enabled": true}, "zero_optimization": {"stage": 3, "zero_quantized_weights": true}}
    `requirements.txt`:
        deepspeed==0.16.4
    Use instead:
        {"bf16": {"enabled": true}, "zero_optimization": {"stage": 3}}

    ## Fix safety
    No fix: dropping the quantized all-gather costs communication; training in fp16 or
    waiting for a release with #8215 are the other choices.

    ## References
    - deepspeed/runtime/zero/partition_parameters.py Init (`CUDAQuantizer()` when
      quantized_weights or quantized_nontrainable_weights), AllGatherHandle / NoGatherHandle
      dequantize; ZeRO++ from d18aa2c79 (#3784, v0.10.0), quantized frozen weights from
      7711bdbbd (#3954, v0.10.2)
    - csrc/quantization/pt_binding.cpp (quantize_kernel reads `__half*`, dequantize<__half>)
    - fix: 6098f799e "Keep parameter dtype through ZeRO-3 weight quantization" (#8215,
      2026-08-19; not in v0.19.5, the newest tag)
    - deepspeedai/DeepSpeed#7775, #4852
    """

    code = "DS028"
    name = "zero-quantized-weights-with-bf16"
    severity = ERROR
    triggers = kinds("deepspeed")


@register
class ZeroOffloadGradAccumNormBug(DeepSpeedReleaseBug):
    """DS030 zero-offload-grad-accum-norm-bug

    ## What it does
    Flags a DeepSpeed config with ZeRO stage 1 or 2, `offload_optimizer` on the CPU and
    gradient accumulation (`gradient_accumulation_steps` above 1, written or the trainer's value
    behind `"auto"`), where the DeepSpeed in use (an exact pin near the config, or the installed
    package; silent when unknown) is 0.15.2 to 0.18.x.

    ## Why is this bad?
    From 0.15.2 (#6550, "Fix gradient accumulation for Z2+offload") the CPU-offload path copies
    each reduced gradient into its CPU buffer only on the first micro-batch of an accumulation
    window; the later micro-batches are added into a buffer that the norm computation does not
    read. The gradient norm is then that of one micro-batch: gradient clipping scales the update
    by the wrong factor and the logged `grad_norm` is on another scale than ZeRO-3's or the
    non-offloaded run's, and the loss curve differs, with no error (the comments on
    DeepSpeed#6550; #7967 shows the underestimated norm and the diverging loss). Fixed in 0.19.0.

    ## Example
    `ds_config.json`:
        {"gradient_accumulation_steps": 8, "zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}}}
    `requirements.txt`:
        deepspeed==0.16.4
    Use instead:
        {"gradient_accumulation_steps": 8, "zero_optimization": {"stage": 2}}

    ## Fix safety
    No fix: dropping the offload needs the GPU memory it saves; upgrading DeepSpeed is the
    other way out.

    ## References
    - deepspeed/runtime/zero/stage_1_and_2.py async_accumulate_grad_in_cpu_via_gpu
      (`if self.micro_step_id > 0: accumulate_gradients() else: copy_gradients_to_cpu()`) and
      set_norm_for_param_grad: from c85c8703b (#6550, first in v0.15.2); fixed by 9d632f103
      "Fix zero 1 and 2 CPU-offloaded gradient norm" (#7967, first in v0.19.0)
    - deepspeedai/DeepSpeed#6550 (comment of 2024-10-17), #7967, #7981
    """

    code = "DS030"
    name = "zero-offload-grad-accum-norm-bug"
    severity = WARNING
    triggers = kinds("deepspeed")
