"""DeepSpeed: ZeRO stages, offload, batch arithmetic."""

from __future__ import annotations

from linter.fixes import Applicability, Change
from linter.registry import ERROR, WARNING, Rule, register

# Frameworks whose launcher (the HF Trainer) fills DeepSpeed "auto" values.
HF_FAMILY = {"hf", "axolotl", "llamafactory"}


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
                                 Change(config, "parallel.zero_stage", 1)),
                )


@register
class BatchArithmetic(Rule):
    """DS002 batch-arithmetic

    ## What it does
    Checks DeepSpeed's batch identity: `train_batch_size` = `train_micro_batch_size_per_gpu`
    x `gradient_accumulation_steps` x world size. With the world size known (`--world-size`,
    or `world-size` in settings) it checks the equation; without it, that some whole number
    of GPUs can satisfy it.

    ## Why is this bad?
    DeepSpeed asserts the identity at start-up, after the job has queued and the model has
    loaded, and stops.

    ## Example
        {"train_batch_size": 64, "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 4}
    on 2 GPUs (4 x 4 x 2 = 32). Use instead:
        {"train_batch_size": 32, "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 4}

    ## Fix safety
    Unsafe, and offered only where an HF-family launcher fills the value: `train_batch_size`
    becomes "auto". A standalone DeepSpeed config has no fix: which of the three numbers is
    wrong is the author's call.

    ## References
    - deepspeed/runtime/config.py: DeepSpeedConfig._batch_assertion
    - transformers/integrations/deepspeed.py: HfTrainerDeepSpeedConfig.trainer_config_process ("auto")
    """

    code = "DS002"
    name = "batch-arithmetic"
    severity = ERROR
    fix_applicability = Applicability.UNSAFE

    def check(self, run, context):
        for config in run.configs:
            values = [config.value(key) for key in ("batch.global", "batch.micro", "batch.grad_accum")]
            if not all(isinstance(value, int) and not isinstance(value, bool) and value > 0 for value in values):
                continue
            total, micro, accumulation = values
            per_rank = micro * accumulation
            world = context.world_size
            if world is not None:
                if total == per_rank * world:
                    continue
                message = (f"train_batch_size {total} != micro batch {micro} x gradient accumulation "
                           f"{accumulation} x world size {world} = {per_rank * world}")
            elif total % per_rank:
                message = (f"train_batch_size {total} is not a multiple of micro batch {micro} x "
                           f"gradient accumulation {accumulation} = {per_rank}: no number of GPUs satisfies it")
            else:
                continue
            fix = None
            if run.primary is not config and run.primary.framework in HF_FAMILY:
                fix = self.fix('Let the HF Trainer fill train_batch_size ("auto")',
                               Change(config, "batch.global", "auto"))
            yield self.finding(config, config.span("batch.global"), message, fix=fix)


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


# IR key -> (DeepSpeed key, TrainingArguments argument) for the values HF compares
# (transformers/integrations/deepspeed.py, HfTrainerDeepSpeedConfig.trainer_config_process).
_HF_COMPARED = {
    "batch.micro": ("train_micro_batch_size_per_gpu", "per_device_train_batch_size"),
    "batch.grad_accum": ("gradient_accumulation_steps", "gradient_accumulation_steps"),
    "optimizer.grad_clip": ("gradient_clipping", "max_grad_norm"),
    "optimizer.lr": ("optimizer.params.lr", "learning_rate"),
    "optimizer.betas": ("optimizer.params.betas", "[adam_beta1, adam_beta2]"),
    "optimizer.eps": ("optimizer.params.eps", "adam_epsilon"),
    "optimizer.weight_decay": ("optimizer.params.weight_decay", "weight_decay"),
    "precision.fp16": ("fp16.enabled", "fp16"),
    "precision.bf16": ("bf16.enabled", "bf16"),
}


def _same(ds_value, hf_value) -> bool:
    if isinstance(ds_value, (list, tuple)) and isinstance(hf_value, (list, tuple)):
        return list(ds_value) == list(hf_value)
    return ds_value == hf_value


@register
class HfDeepSpeedMismatch(Rule):
    """DS003 hf-deepspeed-mismatch

    ## What it does
    Compares a DeepSpeed JSON with the HF-family config that links it (TRL / TrainingArguments
    YAML, Axolotl, LLaMA-Factory, accelerate) on every value the HF Trainer checks: fp16 and
    bf16 enabled, micro batch size, gradient accumulation, gradient clipping, and the
    optimizer's lr, betas, eps and weight decay (and the scheduler's warmup_max_lr against
    the learning rate).

    ## Why is this bad?
    The Trainer fills "auto" values from its own arguments and refuses any explicit value
    that disagrees: "Please correct the following DeepSpeed config values that mismatch
    TrainingArguments values" — raised after the model is loaded. Where a launcher does not
    check, the two files silently disagree about what runs.

    ## Example
        # sft.yaml
        per_device_train_batch_size: 2
        deepspeed: ds.json
        # ds.json
        {"train_micro_batch_size_per_gpu": 4}
    Use instead:
        {"train_micro_batch_size_per_gpu": "auto"}

    ## Fix safety
    Safe: "auto" makes the Trainer use the value of its own config, which is what runs anyway
    once the mismatch error is resolved; the DeepSpeed file stops duplicating it.

    ## References
    - transformers/integrations/deepspeed.py: HfTrainerDeepSpeedConfig.trainer_config_process / fill_match
    - accelerate/utils/dataclasses.py: DeepSpeedPlugin.deepspeed_config_process
    """

    code = "DS003"
    name = "hf-deepspeed-mismatch"
    severity = ERROR
    fix_applicability = Applicability.SAFE

    def check(self, run, context):
        primary = run.primary
        if primary.framework not in HF_FAMILY:
            return
        for config in run.linked:
            if config.framework != "deepspeed":
                continue
            comparisons = [*_HF_COMPARED.items(),
                           ("scheduler.warmup_max_lr", ("scheduler.params.warmup_max_lr", "learning_rate"))]
            for key, (ds_key, hf_key) in comparisons:
                ds_field = config.get(key)
                hf_field = primary.get("optimizer.lr" if key == "scheduler.warmup_max_lr" else key)
                if ds_field is None or hf_field is None or ds_field.origin.is_default:
                    continue
                if "auto" in (ds_field.value, hf_field.value) or _same(ds_field.value, hf_field.value):
                    continue
                where = f"{primary.framework} config {primary.path.name}"
                yield self.finding(
                    config, ds_field.span,
                    f"DeepSpeed {ds_key} = {ds_field.value!r} but the {where} sets {hf_key} = {hf_field.value!r}: "
                    "the HF Trainer refuses mismatched values; use \"auto\"",
                    fix=self.fix(f'Set {ds_key} to "auto"', Change(config, key, "auto")))
