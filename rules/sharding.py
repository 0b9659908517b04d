"""Settings the sharded runs (FSDP, DeepSpeed ZeRO-3, several GPUs) refuse or pay for, read
from the config before the job is queued (issue 16: mined incidents)."""

from __future__ import annotations

from linter.registry import ERROR, WARNING, Rule, register
from linter.versions import older_than

from .facts import HF_TRAINER_FILES, world_size

# transformers/trainer.py create_accelerator_and_postprocess: FSDP's activation_checkpointing and
# gradient_checkpointing together raise ValueError; added in 4.33.0 (PR #25771; absent from the
# 4.32.1 wheel, present in 4.33.0).
_DOUBLE_CHECKPOINTING_REFUSED = "4.33.0"
# From 5.23.0 (gradient_checkpointing renamed activation_checkpointing, the old name an alias) the
# Trainer checks args.activation_checkpointing and words the ValueError anew (5.22.0 / 5.23.0 wheels).
_DOUBLE_CHECKPOINTING_REWORDED = "5.23.0"
_DOUBLE_CHECKPOINTING_MESSAGES = ("can't be set to True simultaneously", "can't both be set to True")
# llamafactory/hparams/parser.py _parse_train_args raises for predict_with_generate under ZeRO-3
# from v0.9.0 (commit d677fe053, "fix #5292"); before it the first generation failed.
_GENERATE_ZERO3_REFUSED = "0.9.0"


def _zero3(run):
    """The linked DeepSpeed config of the run with ZeRO stage 3, or None."""
    return next((config for config in run.linked if config.value("parallel.zero_stage") == 3), None)


@register
class FsdpDoubleCheckpointing(Rule):
    """TRN016 fsdp-double-checkpointing

    ## What it does
    Flags a TrainingArguments / TRL config that turns FSDP on (`fsdp:`) with
    `fsdp_config.activation_checkpointing: true` while gradient checkpointing is on too
    (`gradient_checkpointing: true`, or `activation_checkpointing: true`, its name from
    transformers 5.23, or TRL's default of true from TRL 0.22, where TRL is pinned). Silent where transformers is pinned before 4.33.0, and where gradient_checkpointing
    is unset and the TRL version unknown (its default is then not known; noted for --verbose).

    ## Why is this bad?
    Both switches recompute activations in the backward pass, FSDP's by wrapping each layer
    and the Trainer's through the model; the Trainer refuses the pair when it creates the
    accelerator: "The activation_checkpointing in FSDP config and the gradient_checkpointing in
    training arg can't be set to True simultaneously" (from 5.23.0: "... and the
    `activation_checkpointing` training argument can't both be set to True"). FSDP's own checkpointing is the one to
    keep under FULL_SHARD: the model's re-gathers each layer's weights a second time in the
    backward pass (transformers#30404).

    ## Example
    `trl.yaml`:
        model_name_or_path: meta-llama/Llama-2-7b-hf
        dataset_name: trl-lib/Capybara
        output_dir: out
        gradient_checkpointing: true
        fsdp: full_shard auto_wrap
        fsdp_config:
          activation_checkpointing: true
    Use instead:
        model_name_or_path: meta-llama/Llama-2-7b-hf
        dataset_name: trl-lib/Capybara
        output_dir: out
        gradient_checkpointing: false
        fsdp: full_shard auto_wrap
        fsdp_config:
          activation_checkpointing: true

    ## Fix safety
    No fix: which of the two to keep (and its reentrant setting) is the author's choice.

    ## References
    - transformers/trainer.py Trainer.create_accelerator_and_postprocess (the ValueError, from
      4.33.0, PR #25771; reworded in 5.23.0; training_args.py strips a leading "fsdp_" from
      fsdp_config keys, and from 5.23.0 reads gradient_checkpointing as a deprecated alias of
      activation_checkpointing; PyPI wheels 5.22.0 and 5.23.0)
    - trl/trainer/base_config.py (gradient_checkpointing default True, TRL >= 0.22)
    - huggingface/transformers#25771, #30404, #31578
    """

    code = "TRN016"
    name = "fsdp-double-checkpointing"
    severity = ERROR
    triggers = ("parallel.fsdp",)

    def check(self, run, context):
        for config in run.configs:
            if config.value("file.kind") not in HF_TRAINER_FILES or config.value("parallel.fsdp") is not True:
                continue
            fsdp_checkpointing = config.get("memory.fsdp_activation_checkpointing")
            checkpointing = config.get("memory.gradient_checkpointing")
            if fsdp_checkpointing is None or fsdp_checkpointing.value is not True:
                continue
            if checkpointing is None:
                context.notes.append(f"{config.path}: {self.code} skipped: gradient_checkpointing is unset and "
                                     "the trl version is unknown (its default is true from TRL 0.22, false before)")
                continue
            if checkpointing.value is not True:
                continue
            transformers = config.version("transformers")
            if transformers is not None and older_than(transformers[0], _DOUBLE_CHECKPOINTING_REFUSED):
                continue
            name = checkpointing.origin.written_as or "gradient_checkpointing"
            how = "true" if not checkpointing.origin.is_default else "unset (TRL's default: true)"
            quote = "" if transformers is None else " (\"{}\")".format(
                _DOUBLE_CHECKPOINTING_MESSAGES[not older_than(transformers[0], _DOUBLE_CHECKPOINTING_REWORDED)])
            yield self.finding(
                config, fsdp_checkpointing.span,
                f"fsdp_config.activation_checkpointing and {name} {how}: the Trainer refuses the pair at launch"
                f"{quote}; set {name} to false and keep FSDP's activation checkpointing",
            )


@register
class GaloreLayerwiseDistributed(Rule):
    """TRN017 galore-layerwise-distributed

    ## What it does
    Flags layer-wise GaLore or APOLLO (`galore_layerwise` / `apollo_layerwise` with
    `use_galore` / `use_apollo`) in a run on more than one GPU (`--world-size`, or a launcher
    config's `num_processes`). Silent when the number of GPUs is unknown.

    ## Why is this bad?
    Layer-wise updates step each layer's optimizer inside its own gradient hook during the
    backward pass, so no gradient is left for DDP to average across GPUs afterwards. The
    trainer refuses the pair at launch: "Distributed training does not support layer-wise
    GaLore" (or APOLLO).

    ## Example
    `llamafactory.yaml`, on 2 GPUs:
        model_name_or_path: Qwen/Qwen1.5-7B
        stage: sft
        do_train: true
        finetuning_type: full
        use_galore: true
        galore_layerwise: true
        dataset: alpaca_en_demo
        template: qwen
        output_dir: out
    Use instead:
        model_name_or_path: Qwen/Qwen1.5-7B
        stage: sft
        do_train: true
        finetuning_type: full
        use_galore: true
        galore_layerwise: false
        dataset: alpaca_en_demo
        template: qwen
        output_dir: out

    ## Fix safety
    No fix: layer-wise GaLore is how a single GPU fits the model; the author picks between
    one GPU and the non-layer-wise optimizer.

    ## References
    - llamafactory/hparams/parser.py _parse_train_args (`parallel_mode == DISTRIBUTED` with
      `galore_layerwise` raises since v0.6.0, commit c9ed3fc3a; `apollo_layerwise` since APOLLO)
    - llamafactory/train/trainer_utils.py _create_galore_optimizer (per-parameter hooks)
    - hiyouga/LLaMA-Factory#2926
    """

    code = "TRN017"
    name = "galore-layerwise-distributed"
    severity = ERROR
    triggers = ("optimizer.layerwise",)

    def check(self, run, context):
        world = world_size(run, context)
        if world is None or world < 2:
            return
        for config in run.configs:
            layerwise = config.get("optimizer.layerwise")
            if layerwise is None or layerwise.value is not True:
                continue
            optimizer = config.value("optimizer.memory_efficient")
            yield self.finding(
                config, layerwise.span,
                f"layer-wise {optimizer} on {world} GPUs: the optimizer steps inside each layer's gradient hook, "
                f"leaving nothing for DDP to average, and the launch refuses it (\"Distributed training does not "
                f"support layer-wise {optimizer}\"); train on one GPU or turn the layer-wise mode off",
            )


@register
class GenerateUnderZero3(Rule):
    """TRN018 generate-under-zero3

    ## What it does
    Flags `predict_with_generate: true` in a LLaMA-Factory config whose linked DeepSpeed
    config uses ZeRO stage 3: for any fine-tuning type where LLaMA-Factory is pinned at 0.9.0 or
    later, and otherwise (an older or unknown release) only for a full fine-tune that evaluates
    during training (`eval_strategy` steps or epoch), which fails on every release.

    ## Why is this bad?
    LLaMA-Factory 0.9.0 and later refuse the pair at launch ("`predict_with_generate` is
    incompatible with DeepSpeed ZeRO-3"). Earlier releases accepted it, and a full fine-tune
    failed at the first evaluation, after the training steps before it had run; LoRA and QLoRA
    runs generated fine (LLaMA-Factory#5292).

    ## Example
    `llamafactory.yaml`:
        model_name_or_path: meta-llama/Meta-Llama-3-8B-Instruct
        stage: sft
        do_train: true
        finetuning_type: full
        dataset: alpaca_en_demo
        template: llama3
        val_size: 0.05
        eval_strategy: steps
        predict_with_generate: true
        output_dir: out
        deepspeed: ds_z3.json
    `ds_z3.json`:
        {"train_micro_batch_size_per_gpu": "auto", "zero_optimization": {"stage": 3}}
    Use instead (generate in a separate predict run without ZeRO-3):
        model_name_or_path: meta-llama/Meta-Llama-3-8B-Instruct
        stage: sft
        do_train: true
        finetuning_type: full
        dataset: alpaca_en_demo
        template: llama3
        val_size: 0.05
        eval_strategy: steps
        output_dir: out
        deepspeed: ds_z3.json

    ## Fix safety
    No fix: dropping generation changes the metrics, dropping ZeRO-3 the memory.

    ## References
    - llamafactory/hparams/parser.py _parse_train_args (`predict_with_generate` and
      is_deepspeed_zero3_enabled raise; since v0.9.0, commit d677fe053 "fix #5292")
    - hiyouga/LLaMA-Factory#5292, #5629
    """

    code = "TRN018"
    name = "generate-under-zero3"
    severity = ERROR
    triggers = ("generation.predict_with_generate",)

    def check(self, run, context):
        zero3 = _zero3(run)
        if zero3 is None:
            return
        for config in run.configs:
            generate = config.get("generation.predict_with_generate")
            if generate is None or generate.value is not True:
                continue
            release = config.version("llamafactory")
            refused = release is not None and older_than(release[0], _GENERATE_ZERO3_REFUSED) is False
            # Before 0.9.0 only a full fine-tune that evaluates during training failed (#5292: LoRA
            # and QLoRA runs generated under ZeRO-3 fine); with the release unknown, fire only
            # where both the old and the new releases fail.
            full = (config.get("adapter.kind") is not None and config.value("adapter.kind") is None
                    and config.get("adapter.trainable_layers") is None)
            if not refused and not (full and config.value("checkpoint.eval_strategy") in ("steps", "epoch")):
                continue
            if refused:
                when = f"LLaMA-Factory {release[0]} ({release[1]}) refuses it at launch"
            elif release is not None:
                when = f"LLaMA-Factory {release[0]} ({release[1]}) fails at the first evaluation of a full fine-tune"
            else:
                when = ("the launch refuses it (LLaMA-Factory >= 0.9.0), and older releases fail at the first "
                        "evaluation of a full fine-tune")
            yield self.finding(
                config, generate.span,
                f"predict_with_generate with DeepSpeed ZeRO-3 ({zero3.path.name}): {when}; drop "
                "predict_with_generate from the training run, or use ZeRO stage 2",
            )


@register
class GrpoShardedGeneration(Rule):
    """TRN019 grpo-sharded-generation

    ## What it does
    Flags `ds3_gather_for_generation: false` in a TRL config (GRPO, RLOO) whose linked
    DeepSpeed config uses ZeRO stage 3 and that generates with the trained model
    (`use_vllm` not true).

    ## Why is this bad?
    With the option off, TRL generates with the weights left partitioned: every layer's
    weights are all-gathered again for every generated token, so generating long completions
    takes far longer than training on them, and the first step can look hung. TRL offers it
    only for models too large for one GPU's memory; for any model that fits, the default
    (true: gather the weights once per generation round) is much faster.

    ## Example
    `trl.yaml`:
        model_name_or_path: Qwen/Qwen2.5-7B-Instruct
        dataset_name: trl-lib/Capybara
        output_dir: out
        num_generations: 8
        ds3_gather_for_generation: false
        deepspeed: ds_z3.json
    `ds_z3.json`:
        {"train_micro_batch_size_per_gpu": "auto", "zero_optimization": {"stage": 3}}
    Use instead:
        model_name_or_path: Qwen/Qwen2.5-7B-Instruct
        dataset_name: trl-lib/Capybara
        output_dir: out
        num_generations: 8
        deepspeed: ds_z3.json

    ## Fix safety
    No fix: false is right where the model does not fit one GPU, which the config cannot say.

    ## References
    - trl/trainer/grpo_config.py (ds3_gather_for_generation, default True, since TRL 0.15.0, PR
      #2667: "disabling this option allows training models that exceed the VRAM capacity of a
      single GPU, albeit at the cost of slower generation"); rloo_config.py the same
    - trl/models/utils.py unwrap_model_for_generation (gather_deepspeed3_params)
    - huggingface/trl#3858
    """

    code = "TRN019"
    name = "grpo-sharded-generation"
    severity = WARNING
    triggers = ("generation.ds3_gather",)

    def check(self, run, context):
        zero3 = _zero3(run)
        if zero3 is None:
            return
        for config in run.configs:
            gather = config.get("generation.ds3_gather")
            if gather is None or gather.value is not False or config.value("generation.use_vllm") is True:
                continue
            yield self.finding(
                config, gather.span,
                f"ds3_gather_for_generation false under ZeRO-3 ({zero3.path.name}): generation re-gathers every "
                "layer's weights for each new token, many times slower than training; keep it false only if the "
                "whole model does not fit one GPU, otherwise remove it (default true)",
            )


@register
class NvmeOffloadWithoutPath(Rule):
    """DS014 nvme-offload-without-path

    ## What it does
    Flags a ZeRO stage 3 DeepSpeed config that offloads parameters or optimizer states to
    NVMe (`offload_param` / `offload_optimizer` `"device": "nvme"`) with no `nvme_path`.

    ## Why is this bad?
    `nvme_path` defaults to None. With parameters on NVMe, `zero.Init` asserts while the
    model loads ('"nvme_path" in DeepSpeed Config cannot be None if remote device is
    nvme'); otherwise the swapper joins the missing path into its swap folder and stops with
    a TypeError when the engine starts. Stages 1 and 2 treat an NVMe optimizer offload as
    CPU offload and never read the path.

    ## Example
    `deepspeed.json`:
        {"zero_optimization": {"stage": 3, "offload_param": {"device": "nvme"}}}
    Use instead:
        {"zero_optimization": {"stage": 3, "offload_param": {"device": "nvme", "nvme_path": "/local_nvme"}}}

    ## Fix safety
    No fix: the path names a fast local disk only the author knows.

    ## References
    - deepspeed/runtime/zero/offload_config.py (nvme_path: Optional[Path] = None, both blocks)
    - deepspeed/runtime/zero/partition_parameters.py Init._validate_remote_device (the assert)
    - deepspeed/runtime/zero/stage3.py _configure_tensor_swapping and
      swap_tensor/partitioned_param_swapper.py (os.path.join(nvme_path, ...))
    - deepspeedai/DeepSpeed#2624; huggingface/accelerate#1463
    """

    code = "DS014"
    name = "nvme-offload-without-path"
    severity = ERROR
    triggers = ("parallel.zero_stage",)

    def check(self, run, context):
        for config in run.configs:
            if config.value("parallel.zero_stage") != 3:
                continue
            for block, device_key, path_key in (
                    ("param", "parallel.offload_param_device", "parallel.offload_param_nvme_path"),
                    ("optimizer", "parallel.offload_optimizer_device", "parallel.offload_optimizer_nvme_path")):
                device = config.get(device_key)
                if device is None or str(device.value).lower() != "nvme":
                    continue
                if config.value(path_key) not in (None, ""):
                    continue
                yield self.finding(
                    config, device.span,
                    f"offload_{block} to nvme without an nvme_path: DeepSpeed's default is None and ZeRO-3 stops "
                    "while the model loads or the engine starts; add \"nvme_path\" naming a local NVMe folder",
                )
