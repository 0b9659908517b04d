"""DeepSpeed: ZeRO stages, offload, batch arithmetic."""

from __future__ import annotations

from linter.changes import SetValue
from linter.fixes import Applicability
from linter.registry import ERROR, WARNING, Rule, register


@register
class Zero2Fp16(Rule):
    """DS001 zero2-fp16

    ## What it does
    Flags ZeRO stage 2 combined with fp16 mixed precision.

    ## Why is this bad?
    ZeRO-2 partitions gradients across ranks; with fp16 its overflow checks and loss scaling
    run on the partitions, and several fp16 + ZeRO-2 setups have shown NaN losses that stage
    1 or 3 did not (XTuner, Llama3-8B: loss 1.8 at step 10, NaN from step 20).

    ## Example
    `ds_config.json`:
        {"fp16": {"enabled": true}, "zero_optimization": {"stage": 2}}
    Use instead:
        {"fp16": {"enabled": true}, "zero_optimization": {"stage": 1}}

    ## Fix safety
    Unsafe: stage 1 keeps full gradients on every GPU, which needs more memory. Prefer bf16
    where the GPUs support it (PRE002); then this rule no longer applies.

    ## References
    - InternLM/xtuner#841 (Llama3-8B with deepspeed_zero2: loss NaN, then generation fails)
    - deepspeed/runtime/zero/stage_1_and_2.py (gradient partitioning, overflow check)
    """

    code = "DS001"
    name = "zero2-fp16"
    severity = WARNING
    fix_applicability = Applicability.UNSAFE

    def check(self, run, context):
        if not any(config.value("precision.fp16") is True for config in run.configs):
            return
        for config in run.configs:
            stage = config.get("parallel.zero_stage")
            if stage is not None and stage.value == 2:
                yield self.finding(
                    config, stage.span,
                    "ZeRO stage 2 with fp16 has produced NaN losses; use bf16, or ZeRO stage 1 or 3",
                    fix=self.fix("Use ZeRO stage 1 (unsafe: more gradient memory per GPU)",
                                 SetValue(config, "parallel.zero_stage", 1)),
                )


@register
class OffloadNeedsZero3(Rule):
    """DS004 offload-needs-zero3

    ## What it does
    Flags parameter offload (`offload_param`, or the legacy `cpu_offload_param`) and partial
    optimizer offload (`offload_optimizer.ratio` below 1.0) in a ZeRO stage below 3.

    ## Why is this bad?
    Only ZeRO stage 3 partitions parameters, so only stage 3 can offload them. At stages 0-2
    DeepSpeed silently ignores `offload_param` (only the stage-3 engine receives it), and the
    run needs the GPU memory the author thought was offloaded — an out-of-memory error at the
    first step. A partial optimizer offload ratio below 1.0 fails DeepSpeed's config
    validation ("Partial offloading only supported for ZeRO Stage 3").

    ## Example
    `ds_config.json`:
        {"zero_optimization": {"stage": 2, "offload_param": {"device": "cpu"}}}
    Use instead:
        {"zero_optimization": {"stage": 3, "offload_param": {"device": "cpu"}}}

    ## Fix safety
    No fix: moving to stage 3 changes communication and checkpoint format.

    ## References
    - deepspeed/runtime/zero/config.py: offload_param "Valid only with stage 3";
      DeepSpeedZeroConfig.offload_ratio_check (DeepSpeed 0.16.5)
    - deepspeed/runtime/engine.py: _configure_zero_optimizer passes offload_param only to stage 3
    """

    code = "DS004"
    name = "offload-needs-zero3"
    severity = ERROR

    def check(self, run, context):
        for config in run.configs:
            stage = config.value("parallel.zero_stage")
            if not isinstance(stage, int) or stage >= 3:
                continue
            if config.value("parallel.offload_param") is True:
                yield self.finding(
                    config, config.span("parallel.offload_param"),
                    f"offload_param needs ZeRO stage 3 (this config uses stage {stage}): DeepSpeed ignores it "
                    "and parameters stay on the GPU",
                )
            ratio = config.value("parallel.offload_ratio")
            if isinstance(ratio, (int, float)) and not isinstance(ratio, bool) and ratio < 1.0:
                yield self.finding(
                    config, config.span("parallel.offload_ratio"),
                    f"partial optimizer offload (offload_optimizer.ratio {ratio}) needs ZeRO stage 3 "
                    f"(stage {stage} here): DeepSpeed rejects the config",
                )


# DeepSpeed 0.19.0 carries the last of the ZeRO-1/2 overlap_comm correctness fixes (PR #7965,
# commit dac1525b3, "Fix overlap-comm buffer lifetimes": record_stream on the reduction buffers,
# loss NaN with ZeRO-2 only). Earlier ones: #5606 (0.14.3, the reduction stream did not wait for
# the stream filling the IPG bucket), #7805 (0.18.5, the ping-pong buffer index reset that #6993
# introduced in 0.17.2). Reports of NaN grad_norm with ZeRO-2 + overlap_comm run from 0.12.3 to
# 0.16.4 (DeepSpeed#5347) and were answered with overlap_comm false.
_OVERLAP_COMM_FIXED = "0.19.0"


@register
class Zero2OverlapComm(Rule):
    """DS005 zero2-overlap-comm

    ## What it does
    Flags `zero_optimization.overlap_comm: true` at ZeRO stage 2 where the DeepSpeed in use
    (an exact pin in requirements*.txt / pyproject.toml near the config, else the installed
    package) is older than 0.19.0. Silent when the version is unknown.

    ## Why is this bad?
    With overlap_comm, ZeRO-2 reduces gradient buckets on a side CUDA stream while backward
    keeps filling them. Until 0.19.0 that overlap had races: the reduction stream waited only
    for the default stream (fixed in 0.14.3, PR #5606), a bucket index reset reused a buffer
    still in flight (introduced in 0.17.2, fixed in 0.18.5, PR #7805), and the reduction
    buffers could be freed and reused by the caching allocator before the queued
    communication finished (fixed in 0.19.0, PR #7965: "only ZeRO2 shows nan as a loss").
    Users see grad_norm turn NaN and loss 0 after thousands of steps, on 0.12 to 0.16
    (DeepSpeed#5347, #5294); the maintainers' workaround is overlap_comm false.

    ## Example
    `ds_config.json`:
        {"zero_optimization": {"stage": 2, "overlap_comm": true}}
    `requirements.txt`:
        deepspeed==0.15.4
    Use instead:
        {"zero_optimization": {"stage": 2, "overlap_comm": false}}
    or DeepSpeed 0.19.0 or later (`deepspeed==0.19.0` in requirements.txt).

    ## Fix safety
    Unsafe: overlap_comm false gives the same gradients but no longer hides communication
    behind backward, so steps are slower; upgrading DeepSpeed keeps the overlap.

    ## References
    - deepspeed/runtime/zero/stage_1_and_2.py: average_tensor, allreduce_and_copy (overlap_comm)
    - deepspeed/runtime/zero/config.py: overlap_comm_valid (unset: on only at stage 3)
    - deepspeedai/DeepSpeed#5347, #5294 (NaN grad_norm, workaround overlap_comm false);
      fixes #5606 (v0.14.3), #7805 (v0.18.5), #7965 (v0.19.0)
    """

    code = "DS005"
    name = "zero2-overlap-comm"
    severity = WARNING
    fix_applicability = Applicability.UNSAFE

    def check(self, run, context):
        for config in run.configs:
            if config.value("parallel.overlap_comm") is not True or config.value("parallel.zero_stage") != 2:
                continue
            old = context.version_before("deepspeed", _OVERLAP_COMM_FIXED, config, self.code)
            if old is None:
                continue
            version, where = old
            yield self.finding(
                config, config.span("parallel.overlap_comm"),
                f"ZeRO-2 with overlap_comm on DeepSpeed {version} ({where}) can corrupt gradients "
                f"(NaN grad_norm, loss 0; fixed in {_OVERLAP_COMM_FIXED}): set overlap_comm false or upgrade",
                fix=self.fix("Set overlap_comm to false (unsafe: slower steps)",
                             SetValue(config, "parallel.overlap_comm", False)),
            )
