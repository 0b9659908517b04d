"""Optimizers against the sharding that hands them their parameters (issue 16 recall)."""

from __future__ import annotations

from linter.registry import ERROR, WARNING, Rule, register

from .deepspeed_offload import BNB_OPTIM_NAMES
from .facts import pinned_version, training_config


# Optimizers that project or reshape each weight's gradient themselves and need the parameters as
# the model holds them; DeepSpeed hands the optimizer flattened partitions instead.
_NEEDS_UNFLATTENED_PARAMETERS = {"GaLore", "APOLLO"}


@register
class GaloreWithDeepspeed(Rule):
    """TRN006 galore-with-deepspeed

    ## What it does
    Flags the GaLore or APOLLO optimizer (`use_galore`, `use_apollo`) in a config that also
    names a DeepSpeed config (`deepspeed:`), whatever its ZeRO stage.

    ## Why is this bad?
    GaLore and APOLLO project each weight matrix's gradient to a low rank, so they need the
    2-D parameters as the model holds them; DeepSpeed gives the optimizer flattened fp32
    partitions. The trainer refuses the pair before training ("GaLore and APOLLO are
    incompatible with DeepSpeed yet", since v0.6.0 for GaLore; before that the run crashed in
    the optimizer, LLaMA-Factory#2777).

    ## Example
    `llamafactory.yaml`:
        model_name_or_path: meta-llama/Meta-Llama-3-8B-Instruct
        stage: sft
        do_train: true
        finetuning_type: full
        use_galore: true
        dataset: alpaca_en_demo
        template: llama3
        output_dir: out
        deepspeed: ds_z2.json
    `ds_z2.json`:
        {"train_micro_batch_size_per_gpu": "auto", "zero_optimization": {"stage": 2}}
    Use instead (no DeepSpeed; GaLore already cuts the optimizer memory):
        model_name_or_path: meta-llama/Meta-Llama-3-8B-Instruct
        stage: sft
        do_train: true
        finetuning_type: full
        use_galore: true
        dataset: alpaca_en_demo
        template: llama3
        output_dir: out

    ## Fix safety
    No fix: dropping DeepSpeed or GaLore changes the memory the run needs; the author chooses.

    ## References
    - llamafactory/hparams/parser.py (_parse_train_args: `training_args.deepspeed is not None and
      (use_galore or use_apollo)` raises; GaLore since v0.6.0, commit ebd6bc260; APOLLO since
      its introduction, commit c2120432d)
    - hiyouga/LLaMA-Factory#2777; jiaweizzhao/GaLore#2
    """

    code = "TRN006"
    name = "galore-with-deepspeed"
    severity = ERROR
    triggers = ("optimizer.memory_efficient",)

    def check(self, run, context):
        for config in run.configs:
            optimizer = config.get("optimizer.memory_efficient")
            if optimizer is None or optimizer.value not in _NEEDS_UNFLATTENED_PARAMETERS:
                continue
            # The parser checks before it looks at do_train: predict-only configs are refused too.
            link = next((link for link in config.links if link.kind == "deepspeed"), None)
            if link is None:
                continue
            yield self.finding(
                config, optimizer.span,
                f"{optimizer.value} with DeepSpeed ({link.text}): the optimizer needs unflattened weights and "
                "the trainer refuses the pair at launch; drop the deepspeed config or the "
                f"{optimizer.value} optimizer",
            )


# transformers before 4.30.0 handed the Trainer's own optimizer to deepspeed.initialize
# (deepspeed.py deepspeed_optim_sched: trainer.create_optimizer() when the DeepSpeed file has no
# optimizer block; checked in the 4.29.2 wheel); 4.30.0 goes through accelerate's
# Accelerator.prepare instead (it requires accelerate >= 0.20.1). Before 4.9.0 transformers itself
# raised "ZeRO Offload can only work with DeepSpeed optimizers" (4.8.2 wheel).
_TRANSFORMERS_THROUGH_ACCELERATE = "4.30.0"
_TRANSFORMERS_OWN_REFUSAL_ENDS = "4.9.0"
# DeepSpeed 0.8.3 (PR #2971, commit 457850dc5): engine.py _configure_optimizer raises
# ZeRORuntimeException for a client optimizer other than DeepSpeedCPUAdam/CPULion under
# optimizer offload, unless zero_force_ds_cpu_optimizer is false.
_DEEPSPEED_REFUSES_CLIENT = "0.8.3"
# accelerate/utils/deepspeed.py map_pytorch_optim_to_deepspeed (1.2.0, PR #3255): torch Adagrad
# becomes DeepSpeedCPUAdagrad and 32-bit bitsandbytes Lion DeepSpeedCPULion; before 1.2.0
# (accelerator.py _prepare_deepspeed, from 0.20.0) every optimizer became DeepSpeedCPUAdam.
_ACCELERATE_MAPS_ADAGRAD = "1.2.0"
# transformers OptimizerNames whose optimizer is neither Adam nor mapped to a DeepSpeed CPU
# optimizer of its own kind by any accelerate release: replaced by DeepSpeedCPUAdam. bitsandbytes'
# AdEMAMix (adamw-free: optim/ademamix.py AdEMAMix(Optimizer2State)) is one of them.
_NOT_ADAM = {"adafactor", "sgd", "rmsprop", "rmsprop_bnb", "rmsprop_bnb_8bit", "rmsprop_bnb_32bit",
             "lion_8bit", "paged_lion_8bit", "ademamix", "ademamix_8bit", "paged_ademamix_32bit",
             "paged_ademamix_8bit"}
# Mapped to their own CPU optimizer from accelerate 1.2.0, to DeepSpeedCPUAdam before: torch Adagrad
# (DeepSpeedCPUAdagrad), and bitsandbytes' Lion with optim_bits 32, paged or not (`isinstance(optimizer,
# (Lion, Lion32bit))` and optim_bits == 32: DeepSpeedCPULion, with DeepSpeed >= 0.11.0).
_MAPPED_FROM_1_2 = {"adagrad", "lion_32bit", "paged_lion_32bit"}


def _offloaded_without_optimizer_block(run):
    """(trainer config, DeepSpeed config) where a training config (not a launcher config) links a
    DeepSpeed config that offloads the optimizer and names no optimizer of its own, and
    zero_force_ds_cpu_optimizer is not false."""
    trainer = training_config(run)
    if trainer is None:
        return None
    for config in run.configs:
        if (config is not trainer and config.value("parallel.offload_optimizer") is True
                and config.get("optimizer.name") is None and config.value("parallel.force_ds_cpu_optimizer") is True):
            return trainer, config
    return None


@register
class ZeroOffloadClientOptimizer(Rule):
    """DS009 zero-offload-client-optimizer

    ## What it does
    Flags ZeRO optimizer offload (`offload_optimizer` to cpu or nvme) in a DeepSpeed config that
    has no `optimizer` block, linked from a training config whose transformers is older than
    4.30.0, with DeepSpeed 0.8.3 or later (or transformers older than 4.9.0). Silent when a
    version is unknown, or where `zero_force_ds_cpu_optimizer` is false.

    ## Why is this bad?
    Without an optimizer block the Trainer builds its own optimizer (torch AdamW by default) and,
    before transformers 4.30, hands it to `deepspeed.initialize`. Since 0.8.3 DeepSpeed refuses
    any client optimizer other than its CPU Adam/Lion under optimizer offload: "You are using
    ZeRO-Offload with a client provided optimizer ... set an optimizer in your ds-config". Before
    4.9 transformers refused the pair itself. The run stops at launch.

    ## Example
    `trl.yaml`:
        model_name_or_path: meta-llama/Llama-2-7b-hf
        dataset_name: trl-lib/Capybara
        output_dir: out
        deepspeed: ds.json
    `ds.json`:
        {"train_micro_batch_size_per_gpu": "auto", "zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}}}
    `requirements.txt`:
        deepspeed==0.9.2
        transformers==4.29.2
    Use instead, in `ds.json` (DeepSpeed builds its CPU Adam; the trainer fills the "auto"s):
        {"train_micro_batch_size_per_gpu": "auto", "optimizer": {"type": "AdamW", "params": {"lr": "auto", "betas": "auto", "eps": "auto", "weight_decay": "auto"}}, "zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}}}
    or transformers 4.30.0 or later (see DS010 for what happens there).

    ## Fix safety
    No fix: the optimizer block is the author's choice of optimizer.

    ## References
    - deepspeed/runtime/engine.py _configure_optimizer (ZeRORuntimeException, since 0.8.3, PR #2971);
      deepspeed/runtime/constants.py (zero_force_ds_cpu_optimizer, default true)
    - transformers/deepspeed.py deepspeed_optim_sched (4.29.2: trainer.create_optimizer() passed to
      deepspeed.initialize; 4.8.2: "ZeRO Offload can only work with DeepSpeed optimizers")
    - deepspeedai/DeepSpeed#7524; huggingface/transformers#11044
    """

    code = "DS009"
    name = "zero-offload-client-optimizer"
    severity = ERROR
    triggers = ("parallel.offload_optimizer",)

    def check(self, run, context):
        from linter.versions import older_than

        found = _offloaded_without_optimizer_block(run)
        if found is None:
            return
        trainer, deepspeed_config = found
        transformers = context.version_before("transformers", _TRANSFORMERS_THROUGH_ACCELERATE, trainer, self.code)
        if transformers is None:
            return
        if older_than(transformers[0], _TRANSFORMERS_OWN_REFUSAL_ENDS):
            who = (f"transformers {transformers[0]} ({transformers[1]}) refuses it at launch (\"ZeRO Offload can only "
                   "work with DeepSpeed optimizers\")")
        else:
            deepspeed = deepspeed_config.version("deepspeed") or trainer.version("deepspeed")
            if deepspeed is None or older_than(deepspeed[0], _DEEPSPEED_REFUSES_CLIENT) is not False:
                context.notes.append(f"{deepspeed_config.path}: {self.code} skipped: DeepSpeed "
                                     f"{_DEEPSPEED_REFUSES_CLIENT} or later is not known to be in use")
                return
            who = (f"transformers {transformers[0]} passes the trainer's own optimizer and DeepSpeed "
                   f"{deepspeed[0]} ({deepspeed[1]}) refuses it at launch (\"ZeRO-Offload with a client provided "
                   "optimizer\")")
        yield self.finding(
            deepspeed_config, deepspeed_config.span("parallel.offload_optimizer"),
            f"optimizer offload with no optimizer block in this DeepSpeed config: {who}; add an optimizer block, or set "
            "zero_force_ds_cpu_optimizer to false",
        )


@register
class OffloadReplacesOptimizer(Rule):
    """DS010 offload-replaces-optimizer

    ## What it does
    Flags a training config whose optimizer is not Adam (`adafactor`, `sgd`, `rmsprop*`,
    `ademamix*`, 8-bit Lion; `adagrad` and 32-bit Lion where accelerate is older than 1.2.0) when its linked
    DeepSpeed config offloads the optimizer (`offload_optimizer.device` cpu or nvme) and has no
    `optimizer` block, unless `zero_force_ds_cpu_optimizer` is false. Silent where transformers
    is older than 4.30.0 (DS009 covers those), and where its version is unknown (noted for
    --verbose): every release since 4.30.0 (June 2023) swaps, the ones before do not.

    ## Why is this bad?
    From transformers 4.30 the Trainer prepares DeepSpeed through accelerate, which replaces a
    client optimizer under optimizer offload with DeepSpeed's CPU Adam, keeping only `lr` and
    `weight_decay` (accelerator.py `_prepare_deepspeed`; from accelerate 1.2.0 only Adagrad and
    32-bit Lion map to their own CPU versions). Nothing is logged: the run trains with Adam and
    default betas and eps instead of the optimizer the config names.

    ## Example
    `trl.yaml`:
        model_name_or_path: meta-llama/Llama-2-7b-hf
        dataset_name: trl-lib/Capybara
        output_dir: out
        optim: adafactor
        learning_rate: 1.0e-3
        deepspeed: ds.json
    `ds.json`:
        {"train_micro_batch_size_per_gpu": "auto", "zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}}}
    `requirements.txt`:
        transformers==4.44.2
    Use instead, in `ds.json` (optimizer offload off; or keep it and accept Adam):
        {"train_micro_batch_size_per_gpu": "auto", "zero_optimization": {"stage": 2}}

    ## Fix safety
    No fix: dropping offload costs GPU memory, and `zero_force_ds_cpu_optimizer: false` keeps the
    optimizer but runs its step on offloaded states at CPU speed; the author chooses.

    ## References
    - accelerate/accelerator.py _prepare_deepspeed (DeepSpeedCPUAdam with lr and weight_decay, since
      0.20.0); accelerate/utils/deepspeed.py map_pytorch_optim_to_deepspeed (1.2.0, PR #3255)
    - transformers/trainer.py (4.30.0: DeepSpeed through accelerator.prepare; requires accelerate >= 0.20.1)
    - huggingface/accelerate#2169, #1208, #3255
    """

    code = "DS010"
    name = "offload-replaces-optimizer"
    severity = WARNING
    triggers = ("parallel.offload_optimizer",)

    def check(self, run, context):
        from linter.versions import older_than

        found = _offloaded_without_optimizer_block(run)
        if found is None:
            return
        trainer, deepspeed_config = found
        if "cpu_offload" in (deepspeed_config.written_as("parallel.offload_optimizer") or ""):
            return  # the legacy spelling: accelerate reads only offload_optimizer.device
        optimizer = trainer.get("optimizer.name")
        name = str(optimizer.value).lower() if optimizer is not None else None
        if name not in _NOT_ADAM:
            accelerate = trainer.version("accelerate")
            if name not in _MAPPED_FROM_1_2 or accelerate is None or not older_than(accelerate[0],
                                                                                   _ACCELERATE_MAPS_ADAGRAD):
                return
        transformers = pinned_version(trainer, "transformers", self.code, context)
        if transformers is None:
            return
        if older_than(transformers[0], _TRANSFORMERS_THROUGH_ACCELERATE) is not False:
            return  # older: the trainer passes the optimizer to DeepSpeed itself (DS009)
        yield self.finding(
            trainer, optimizer.span,
            f"{optimizer.value} with optimizer offload in {deepspeed_config.path.name} and no optimizer block there: "
            "the launcher silently replaces it with DeepSpeed's CPU Adam (only lr and weight_decay kept); add an "
            "optimizer block, drop optimizer offload, or set zero_force_ds_cpu_optimizer to false"
            + (" (bitsandbytes >= 0.50.0 only: older ones cannot step the offloaded CPU tensors, DS033)"
               if name in BNB_OPTIM_NAMES else ""),
        )
