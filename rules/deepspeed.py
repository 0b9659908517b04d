"""DeepSpeed: ZeRO stages, offload, batch arithmetic."""

from __future__ import annotations

from linter.fixes import Applicability, Change
from linter.registry import ERROR, WARNING, Rule, register
from linter.versions import older_than

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
                                 Change(config, "parallel.zero_stage", 1)),
                )


@register
class BatchArithmetic(Rule):
    """DS002 batch-arithmetic

    ## What it does
    Checks DeepSpeed's batch identity: `train_batch_size` = `train_micro_batch_size_per_gpu`
    x `gradient_accumulation_steps` x world size. With the world size known (`--world-size`,
    or `world-size` in settings) it checks the equation; without it, that some whole number
    of GPUs can satisfy it. Where `train_batch_size` is written with one of the other two
    left out, DeepSpeed derives the missing one by floor division (missing accumulation:
    `train_batch_size // micro // GPUs`; missing micro batch: `train_batch_size // GPUs //
    accumulation`; both missing: accumulation 1) and asserts the identity on the result, so
    a remainder fails the same way.

    ## Why is this bad?
    DeepSpeed asserts the identity at start-up, after the job has queued and the model has
    loaded, and stops.

    ## Example
        {"train_batch_size": 64, "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 4}
    on 2 GPUs (4 x 4 x 2 = 32). Use instead:
        {"train_batch_size": 32, "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 4}
    And `{"train_batch_size": 64, "train_micro_batch_size_per_gpu": 3}` fails on any number of
    GPUs: 64 is not a multiple of 3.

    ## Fix safety
    Unsafe, and offered only where an HF-family launcher fills the value: `train_batch_size`
    becomes "auto". A standalone DeepSpeed config has no fix: which of the three numbers is
    wrong is the author's call; nor has a derived number (which one to write is the author's call).

    ## References
    - deepspeed/runtime/config.py: DeepSpeedConfig._configure_train_batch_size,
      _set_batch_related_parameters (derivation), _batch_assertion
    - accelerate/utils/dataclasses.py: DeepSpeedPlugin.__post_init__ (a missing
      gradient_accumulation_steps becomes 1)
    - issue 16 class 13 (DeepSpeed batch arithmetic with one number left out)
    - transformers/integrations/deepspeed.py: HfTrainerDeepSpeedConfig.trainer_config_process ("auto")
    """

    code = "DS002"
    name = "batch-arithmetic"
    severity = ERROR
    fix_applicability = Applicability.UNSAFE

    def check(self, run, context):
        for config in run.configs:
            values = [config.value(key) for key in ("batch.global", "batch.micro", "batch.grad_accum")]
            if all(_count(value) for value in values):
                finding = self._all_written(run, config, context, *values)
            elif config.framework == "deepspeed" and not any(value == "auto" for value in values):
                finding = self._one_derived(run, config, context, *values)
            else:
                finding = None
            if finding is not None:
                yield finding

    def _all_written(self, run, config, context, total, micro, accumulation):
        per_rank = micro * accumulation
        world = context.world_size
        if world is not None:
            if total == per_rank * world:
                return None
            message = (f"train_batch_size {total} != micro batch {micro} x gradient accumulation "
                       f"{accumulation} x world size {world} = {per_rank * world}")
        elif total % per_rank:
            message = (f"train_batch_size {total} is not a multiple of micro batch {micro} x "
                       f"gradient accumulation {accumulation} = {per_rank}: no number of GPUs satisfies it")
        else:
            return None
        fix = None
        if run.primary is not config and run.primary.framework in HF_FAMILY:
            fix = self.fix('Let the HF Trainer fill train_batch_size ("auto")',
                           Change(config, "batch.global", "auto"))
        return self.finding(config, config.span("batch.global"), message, fix=fix)

    def _one_derived(self, run, config, context, total, micro, accumulation):
        """DeepSpeed derives a number left out (DeepSpeedConfig._set_batch_related_parameters)
        with floor division, then asserts the identity: a remainder is fatal. Only where
        DeepSpeed itself derives it: a DeepSpeed JSON linted alone or linked from an HF-family
        or accelerate config (accelerate adds a missing gradient_accumulation_steps as 1,
        utils/dataclasses.py DeepSpeedPlugin.__post_init__, which needs the same divisibility).
        Other launchers (XTuner's mmengine strategy) may fill the missing number themselves."""
        if run.primary is not config and run.primary.framework not in HF_FAMILY:
            return None
        if not _count(total):
            return None
        world = context.world_size
        on = f"{world} GPUs" if world is not None else "any number of GPUs"
        if _count(micro) and accumulation is None:
            divisor, given = micro * (world or 1), f"train_micro_batch_size_per_gpu {micro}"
            missing = "gradient_accumulation_steps"
        elif _count(accumulation) and micro is None:
            divisor, given = accumulation * (world or 1), f"gradient_accumulation_steps {accumulation}"
            missing = "train_micro_batch_size_per_gpu"
        elif micro is None and accumulation is None and world is not None:
            divisor, given, missing = world, "no micro batch or gradient accumulation", "train_micro_batch_size_per_gpu"
        else:
            return None
        if total % divisor == 0:
            return None
        message = (f"train_batch_size {total} with {given} and no {missing}: DeepSpeed derives {missing} by "
                   f"floor division and then asserts train_batch_size = micro x accumulation x GPUs, which fails on {on}")
        return self.finding(config, config.span("batch.global"), message)


def _count(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


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
        {"zero_optimization": {"stage": 2, "overlap_comm": true}}   # deepspeed==0.15.4
    Use instead:
        {"zero_optimization": {"stage": 2, "overlap_comm": false}}
    or DeepSpeed 0.19.0 or later.

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
            old = context.version_before("deepspeed", _OVERLAP_COMM_FIXED, config.path, self.code)
            if old is None:
                continue
            version, where = old
            yield self.finding(
                config, config.span("parallel.overlap_comm"),
                f"ZeRO-2 with overlap_comm on DeepSpeed {version} ({where}) can corrupt gradients "
                f"(NaN grad_norm, loss 0; fixed in {_OVERLAP_COMM_FIXED}): set overlap_comm false or upgrade",
                fix=self.fix("Set overlap_comm to false (unsafe: slower steps)",
                             Change(config, "parallel.overlap_comm", False)),
            )


# accelerate/utils/dataclasses.py, DeepSpeedPlugin._deepspeed_config_checks: the accelerate
# config keys (under deepspeed_config, plus top-level mixed_precision) that a
# deepspeed_config_file must hold instead (accelerate >= 0.16.0, PR #941).
_ACCELERATE_DS_KEYS = (
    "gradient_accumulation_steps", "gradient_clipping", "zero_stage", "offload_optimizer_device",
    "offload_param_device", "offload_param_nvme_path", "offload_optimizer_nvme_path", "zero3_save_16bit_model",
)


@register
class AccelerateDeepSpeedFileConflict(Rule):
    """DS006 accelerate-deepspeed-file-conflict

    ## What it does
    Flags an accelerate config (`distributed_type: DEEPSPEED`) that names a
    `deepspeed_config_file` and also sets, in its `deepspeed_config`, one of the DeepSpeed
    settings the file must hold (`gradient_accumulation_steps`, `gradient_clipping`,
    `zero_stage`, `offload_optimizer_device`, `offload_param_device`, the two
    `*_nvme_path`s, `zero3_save_16bit_model`), or sets `mixed_precision`.

    ## Why is this bad?
    With a DeepSpeed config file, accelerate takes those settings from the file only.
    `accelerate launch` passes the names of the YAML's DeepSpeed keys to the training process
    (ACCELERATE_CONFIG_DS_FIELDS), and DeepSpeedPlugin refuses the run: "When using
    `deepspeed_config_file`, the following accelerate config variables will be ignored ...".
    `mixed_precision` from the YAML counts too (not when `accelerate launch --mixed_precision`
    is given on the command line; `accelerate config` leaves it out for this reason).

    ## Example
        distributed_type: DEEPSPEED
        deepspeed_config:
          deepspeed_config_file: ds_z2.json
          zero_stage: 2
    Use instead:
        distributed_type: DEEPSPEED
        deepspeed_config:
          deepspeed_config_file: ds_z2.json
    with `"zero_optimization": {"stage": 2}` in ds_z2.json.

    ## Fix safety
    No fix: the value may need to move into the DeepSpeed file, which is the author's call.

    ## References
    - accelerate/utils/dataclasses.py: DeepSpeedPlugin._deepspeed_config_checks
    - accelerate/commands/launch.py: launch_command (deepspeed_fields_from_accelerate_config,
      mp_from_config_flag); commands/config/cluster.py (no mixed_precision with a config file)
    - huggingface/accelerate#941 (v0.16.0); hiyouga/LLaMA-Factory#201
    """

    code = "DS006"
    name = "accelerate-deepspeed-file-conflict"
    severity = ERROR

    def check(self, run, context):
        for config in run.configs:
            if config.schema != "accelerate":
                continue
            tree = config.key_tree()
            root = tree.value if tree is not None else None
            if not isinstance(root, dict) or str(root.get("distributed_type", "")).upper() != "DEEPSPEED":
                continue
            section = root.get("deepspeed_config")
            if not isinstance(section, dict) or section.get("deepspeed_config_file") in (None, "", "none"):
                continue
            found = context.version("accelerate", config.path)
            if found is not None and older_than(found[0], "0.16.0"):
                continue  # older accelerate ignored these keys without a word
            paths = [("deepspeed_config", key) for key in _ACCELERATE_DS_KEYS if key in section]
            if root.get("mixed_precision") is not None:
                paths.append(("mixed_precision",))
            for path in paths:
                located = tree.locate(path)
                span = located.key_span if located is not None else None
                name = path[-1]
                note = (" (unless `accelerate launch --mixed_precision` overrides it)"
                        if name == "mixed_precision" else "")
                yield self.finding(
                    config, span,
                    f"{name} is set beside deepspeed_config_file: accelerate refuses the run at launch{note}; "
                    "set it in the DeepSpeed config file and remove it here",
                )
