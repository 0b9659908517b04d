"""DeepSpeed releases that a config setting drives into a known bug, as one table (issue 16 recall).

Each row: the DeepSpeed settings that trigger the bug, the first release that has it and the
first that does not (both read in DeepSpeed's history: `git tag --contains` of the commit that
brought it and of the fix), what happens, and the threads. A row fires only where the pinned
DeepSpeed (an exact pin near the config, or the installed package) is in [since, fixed);
unknown -> silent. DS005 (ZeRO-2 overlap_comm) is a rule of its own.
"""

from __future__ import annotations

from linter.registry import Rule
from linter.versions import older_than

from .facts import pinned_version, training_config, world_size

_FP32 = {"fp32", "float32", "float", "torch.float32"}  # runtime/config_utils / inference/config.py DtypeEnum


class DeepSpeedFacts:
    def __init__(self, config, run, context):
        self.config = config
        self.trainer = training_config(run)
        self.world = world_size(run, context)

    def __call__(self, key):
        return self.config.value(key)

    def bf16(self) -> bool:
        """bf16 on: written true, or "auto" filled from a trainer's bf16."""
        value = self("precision.bf16")
        if value == "auto" and self.trainer is not None:
            value = self.trainer.value("precision.bf16")
        return value is True

    def stage(self) -> int:
        stage = self("parallel.zero_stage")
        return stage if isinstance(stage, int) and not isinstance(stage, bool) else 0

    def fp32_accumulation(self) -> bool:
        return str(self("precision.grad_accum_dtype") or "").lower() in _FP32

    def accumulates(self) -> bool:
        """gradient_accumulation_steps above 1: written, or "auto" filled from the trainer."""
        steps = self("batch.grad_accum")
        if steps == "auto" and self.trainer is not None:
            steps = self.trainer.value("batch.grad_accum")
        return isinstance(steps, int) and not isinstance(steps, bool) and steps > 1

    def hpz(self) -> bool:
        size = self("parallel.hpz_partition_size")
        return self.stage() == 3 and isinstance(size, int) and not isinstance(size, bool) and size > 1


class Bug:
    __slots__ = ("code", "applies", "point", "what", "why", "since", "fixed")

    def __init__(self, code, applies, point, what, why, since, fixed):
        self.code, self.applies, self.point, self.what, self.why = code, applies, point, what, why
        self.since, self.fixed = since, fixed


BUGS = (
    # ZeRO++ hpZ, introduced with ZeRO++ (d18aa2c79, #3784, v0.10.0). Until #4906 (75ed63c94, v0.13.2)
    # the secondary copy was refreshed by forward/backward flags and went out of sync: runs did not
    # converge (DeepSpeed#4851, on 0.12.5). #4906 stopped passing has_been_updated to
    # _partition_param_sec (partition_parameters.py _partition), so weights written into already
    # partitioned parameters (from_pretrained under zero.Init, a resumed ZeRO checkpoint) left the
    # secondary copy stale until the first optimizer step: loss spikes at the start (DeepSpeed#7606,
    # on 0.16.9); fixed by #7707 (c069ceb30, v0.18.3).
    Bug("DS020", lambda d: d.hpz(), "parallel.hpz_partition_size",
        "zero_hpz_partition_size {hpz} under ZeRO-3",
        "hpZ's secondary weight copy goes out of sync with the weights and the run does not converge "
        "(DeepSpeed#4851; fixed in 0.13.2, #4906); set zero_hpz_partition_size to 1 or upgrade DeepSpeed", "0.10.0", "0.13.2"),
    Bug("DS020", lambda d: d.hpz(), "parallel.hpz_partition_size",
        "zero_hpz_partition_size {hpz} under ZeRO-3",
        "the secondary weight copy is not refreshed when pretrained weights or a resumed checkpoint are loaded "
        "into the partitioned model, so the first steps gather stale weights (loss spikes, DeepSpeed#7606; fixed "
        "in 0.18.3, #7707); set zero_hpz_partition_size to 1 or upgrade DeepSpeed", "0.13.2", "0.18.3"),
    # data_types.grad_accum_dtype arrived in v0.7.6 (runtime/config.py), defaulting to fp32 for a
    # bf16 model; engine.py _do_optimizer_sanity_check raised "Model data type and gradient
    # accumulation data type must be equal to use ZeRO" for any ZeRO stage. #2566 (06938835e,
    # v0.7.7) made the default the model dtype under ZeRO.
    Bug("DS021", lambda d: d.bf16() and d.stage() >= 1 and d("precision.grad_accum_dtype") is None,
        "parallel.zero_stage", "bf16 with ZeRO stage {stage} and no data_types.grad_accum_dtype",
        "DeepSpeed 0.7.6 accumulates bf16 gradients in fp32 by default and then refuses ZeRO at "
        "deepspeed.initialize (\"Model data type and gradient accumulation data type must be equal to use "
        "ZeRO\"; fixed in 0.7.7, #2566); write data_types.grad_accum_dtype bf16 or upgrade DeepSpeed", "0.7.6", "0.7.7"),
    # An explicit fp32 grad_accum_dtype with a bf16 model: refused under every ZeRO stage until the
    # BF16 optimizer took ZeRO-1 (#2706, 8d87c89e4, v0.8.1), and under stages 2 and 3 until #2847
    # (8afcda2ac, v0.10.1) removed the check.
    Bug("DS021", lambda d: d.bf16() and d.stage() >= 1 and d.fp32_accumulation(), "precision.grad_accum_dtype",
        "bf16 with data_types.grad_accum_dtype fp32 under ZeRO stage {stage}",
        "deepspeed.initialize refuses it (\"Model data type and gradient accumulation data type must be equal "
        "to use ZeRO\"; ZeRO-1 accepted from 0.8.1, #2706); drop grad_accum_dtype or upgrade DeepSpeed", "0.7.6", "0.8.1"),
    Bug("DS021", lambda d: d.bf16() and d.stage() >= 2 and d.fp32_accumulation(), "precision.grad_accum_dtype",
        "bf16 with data_types.grad_accum_dtype fp32 under ZeRO stage {stage}",
        "deepspeed.initialize refuses it (\"Model data type and gradient accumulation data type must be equal "
        "to use ZeRO\"; stages 2 and 3 accepted from 0.10.1, #2847); drop grad_accum_dtype or upgrade DeepSpeed", "0.8.1", "0.10.1"),
    # engine.py communication_data_type from #1487 (d14baad94, v0.5.8): unwritten, it returned float16
    # whenever `self.fp16_enabled() or self.zero_optimization_stage()`, so a bf16 ZeRO run reduced its
    # gradients in fp16 (stage_1_and_2.py / stage3.py cast to it before reducing). #2970 (261d63708,
    # v0.9.0) "Make fp32 default communication data type" (DeepSpeed#2911).
    Bug("DS022", lambda d: d.bf16() and d.stage() >= 1 and d("parallel.communication_data_type") is None
        and d.world != 1, "parallel.zero_stage",
        "bf16 under ZeRO stage {stage} with no communication_data_type",
        "DeepSpeed reduces the gradients across GPUs in fp16, whose range is far smaller than bf16's: large "
        "gradients overflow to inf/NaN and small ones lose precision (DeepSpeed#2071, #2911; fixed in 0.9.0, "
        "#2970); write \"communication_data_type\": \"bfp16\" (DeepSpeed's spelling) or upgrade DeepSpeed",
        "0.5.8", "0.9.0"),
    # engine.py _do_optimizer_sanity_check picks BF16_Optimizer for a bf16 model with fp32
    # grad_accum_dtype at ZeRO stage 1 without CPU offload. #7665 (53e91a098, v0.18.3) moved its
    # update_hp_grads into backward_epilogue, which _backward_epilogue ran after allreduce_gradients:
    # the last micro-batch of each accumulation window stayed out of the cross-rank average unless
    # bf16.immediate_grad_update (default false). Fixed by #7985 (5999fb069, v0.19.0).
    Bug("DS022", lambda d: d.bf16() and d.stage() == 1 and d.fp32_accumulation() and d.accumulates()
        and d("parallel.offload_optimizer") is not True and d("precision.bf16_immediate_grad_update") is not True
        and d.world != 1, "precision.grad_accum_dtype",
        "bf16 with data_types.grad_accum_dtype fp32 under ZeRO-1 and gradient accumulation",
        "DeepSpeed's BF16 optimizer adds the last micro-batch of each accumulation window to its fp32 "
        "gradients after they are averaged across GPUs, so that micro-batch counts only on the GPU that "
        "computed it and the GPUs step on different gradients (DeepSpeed#7985; fixed in 0.19.0); set "
        "bf16.immediate_grad_update true or upgrade", "0.18.3", "0.19.0"),
    # stage_1_and_2.py async_accumulate_grad_in_cpu_via_gpu (CPU optimizer offload with gradient
    # accumulation): c85c8703b (#6550, v0.15.2) copied the reduced gradient into the CPU buffer only
    # when micro_step_id == 0 and added later micro-batches into a buffer that set_norm_for_param_grad
    # then no longer saw, so the norm (clipping, overflow check, logged grad_norm) is that of the first
    # micro-batch only. Fixed by 9d632f103 (#7967, v0.19.0, "copy on every micro-step").
    Bug("DS030", lambda d: d.stage() in (1, 2) and d("parallel.offload_optimizer") is True
        and d("parallel.offload_optimizer_device") in (None, "cpu") and d.accumulates(), "parallel.offload_optimizer",
        "offload_optimizer cpu under ZeRO stage {stage} with gradient accumulation",
        "DeepSpeed computes the gradient norm from the first micro-batch of each accumulation window only, so "
        "gradient clipping and the logged grad_norm act on a far smaller norm than the real one and the run trains "
        "differently from the same config without offload, with no error (DeepSpeed#6550 comments, #7967; broken "
        "by #6550 in 0.15.2, fixed in 0.19.0); upgrade DeepSpeed or drop the optimizer offload", "0.15.2", "0.19.0"),
    # ZeRO++ qwZ (d18aa2c79, #3784, v0.10.0) and quantized frozen weights (7711bdbbd, #3954, v0.10.2):
    # partition_parameters.py Init uses CUDAQuantizer for both; its quantize kernel reads the tensor
    # through a __half* (csrc/quantization/pt_binding.cpp) and dequantize<__half> returns fp16, which
    # the gather paths write back into param.data. A bf16 model is read bit-wise as fp16 and comes
    # back fp16 (DeepSpeed#7775). 6098f799e (#8215, 2026-08-19) keeps the dtype; no release has it
    # yet (v0.19.5 is the newest tag), so `fixed` is None.
    Bug("DS028", lambda d: d.bf16() and d.stage() == 3 and d("parallel.zero_quantized_weights") is True,
        "parallel.zero_quantized_weights", "zero_quantized_weights with bf16 under ZeRO-3",
        "DeepSpeed's weight quantizer reads the bf16 weights as fp16 bits and gathers them back as fp16, so the "
        "forward pass gets wrong fp16 weights beside bf16 activations and fails (DeepSpeed#7775; fixed by #8215, "
        "in no release yet); drop zero_quantized_weights or train in fp16", "0.10.0", None),
    Bug("DS028", lambda d: d.bf16() and d.stage() == 3 and d("parallel.zero_quantized_nontrainable_weights") is True,
        "parallel.zero_quantized_nontrainable_weights", "zero_quantized_nontrainable_weights with bf16 under ZeRO-3",
        "DeepSpeed's weight quantizer reads the frozen bf16 weights as fp16 bits and gathers them back as fp16, "
        "so the forward pass gets wrong fp16 weights beside bf16 activations (DeepSpeed#7775; fixed by #8215, in "
        "no release yet); drop zero_quantized_nontrainable_weights or train in fp16", "0.10.2", None),
)


class DeepSpeedReleaseBug(Rule):
    """Base of the DS020-DS022, DS028 and DS030 rules: the rows of BUGS with the rule's code."""

    def check(self, run, context):
        rows = [row for row in BUGS if row.code == self.code]
        for config in run.configs:
            if config.value("file.kind") != "deepspeed":
                continue
            facts = DeepSpeedFacts(config, run, context)
            matching = [row for row in rows if row.applies(facts)]
            if not matching:
                continue
            found = pinned_version(config, "deepspeed", self.code, context)
            if found is None:
                # A bug no release has fixed fires unpinned: every release that knows the key has
                # it (the older ones refuse or ignore the key; DS028's docstring says which).
                row = next((row for row in matching if row.fixed is None), None)
                if row is not None:
                    what = row.what.replace("{stage}", str(facts.stage()))
                    yield self.finding(config, config.span(row.point),
                                       f"{what} (every DeepSpeed release from {row.since}): {row.why}")
                continue
            for row in matching:
                if older_than(found[0], row.since) is not False or (
                        row.fixed is not None and older_than(found[0], row.fixed) is not True):
                    continue
                what = row.what.replace("{hpz}", str(facts("parallel.hpz_partition_size"))).replace(
                    "{stage}", str(facts.stage()))
                yield self.finding(config, config.span(row.point),
                                   f"{what} on DeepSpeed {found[0]} ({found[1]}): {row.why}")
                break
