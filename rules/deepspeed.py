"""DeepSpeed: ZeRO stages, offload, batch arithmetic."""

from __future__ import annotations

from linter.changes import SetValue
from linter.fixes import Applicability
from linter.registry import ERROR, WARNING, Rule, register


def _fills_auto(config) -> bool:
    """Does the trainer that reads `config` fill a linked DeepSpeed config's "auto" values?"""
    return config.value("trainer.fills_deepspeed_auto") is True


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
    - INCIDENTS.md incident 2 (XTuner Llama3-8B, fp16 + ZeRO-2)
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
    `ds_config.json`, on 2 GPUs (4 x 4 x 2 = 32):
        {"train_batch_size": 64, "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 4}
    Use instead:
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
            if run.primary is not config and _fills_auto(run.primary):
                fix = self.fix('Let the HF Trainer fill train_batch_size ("auto")',
                               SetValue(config, "batch.global", "auto"))
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


# The DeepSpeed value (IR key) and the trainer value it must equal, for every value the HF
# Trainer compares (transformers/integrations/deepspeed.py, HfTrainerDeepSpeedConfig.trainer_config_process).
_HF_COMPARED = (
    ("batch.micro", "batch.micro"), ("batch.grad_accum", "batch.grad_accum"),
    ("optimizer.grad_clip", "optimizer.grad_clip"), ("optimizer.lr", "optimizer.lr"),
    ("optimizer.betas", "optimizer.betas"), ("optimizer.eps", "optimizer.eps"),
    ("optimizer.weight_decay", "optimizer.weight_decay"), ("precision.fp16", "precision.fp16"),
    ("precision.bf16", "precision.bf16"), ("scheduler.warmup_max_lr", "optimizer.lr"),
)


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
    `sft.yaml`:
        model_name_or_path: Qwen/Qwen2.5-0.5B
        dataset_name: trl-lib/Capybara
        per_device_train_batch_size: 2
        deepspeed: ds_config.json
    `ds_config.json`:
        {"train_micro_batch_size_per_gpu": 4}
    Use instead, in `ds_config.json`:
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
        if not _fills_auto(primary):
            return
        for config in run.linked:
            if config.value("file.kind") != "deepspeed":
                continue
            for key, trainer_key in _HF_COMPARED:
                ds_field, hf_field = config.get(key), primary.get(trainer_key)
                if ds_field is None or hf_field is None or ds_field.origin.is_default:
                    continue
                if "auto" in (ds_field.value, hf_field.value) or _same(ds_field.value, hf_field.value):
                    continue
                ds_key = config.written_as(key)
                # A value the trainer config does not write is its framework's default.
                says = "defaults" if hf_field.origin.is_default else "sets"
                where = f"{primary.framework} config {primary.path.name} {says} {primary.written_as(trainer_key)}"
                yield self.finding(
                    config, ds_field.span,
                    f"DeepSpeed {ds_key} = {ds_field.value!r} but the {where} = {hf_field.value!r}: "
                    "the HF Trainer refuses mismatched values; use \"auto\"",
                    fix=self.fix(f'Set {ds_key} to "auto"', SetValue(config, key, "auto")))
