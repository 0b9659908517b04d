"""HF Trainer runs that start and then fail: the DeepSpeed out-of-memory retry, the single-process
FSDP checkpoint save. Both are bounded by the pinned releases (silent when one is unknown)."""

from __future__ import annotations

from linter.registry import ERROR, Rule, register
from linter.versions import older_than

from .facts import fsdp_version, pinned_version, world_size

# Files the HF Trainer's argument classes read as written (as rules/trainer_arguments.py).
_ARGUMENT_FILES = ("trl", "trainer", "llamafactory")

# transformers 4.30.0 moved the Trainer's DeepSpeed onto accelerate (accelerator.backward,
# accelerator.free_memory in _inner_training_loop; 4.29.2 still calls deepspeed.backward itself);
# huggingface/transformers#28088, first released in 4.37.0, re-prepares the engine on the retry.
_RETRY_BROKEN = ("4.30.0", "4.37.0")
# transformers 4.30.x saves FSDP through accelerate's FullyShardedDataParallelPlugin.save_model (gone
# in accelerate 0.21.0), 4.31-4.35 through accelerate.utils save_fsdp_model; 4.29.2 gathered the
# state dict itself with FSDP's default config (no offload).
_PLUGIN_SAVE = ("4.30.0", "4.31.0", "0.21.0")
# huggingface/transformers#27652 (4.36.0): fsdp_config use_orig_params defaults to true.
_ORIG_PARAMS_DEFAULT_TRUE = "4.36.0"
# huggingface/accelerate#1745 (0.22.0): save_fsdp_model turns offload_to_cpu off in one process.
_SAVE_FSDP_SINGLE_PROCESS_FIX = "0.22.0"
# huggingface/accelerate#2177 (0.25.0): get_state_dict gathers FSDP with offload_to_cpu=True; the
# Trainer calls it for FULL_STATE_DICT from 4.36.0 (save_model, accelerate > 0.24.1).
_GET_STATE_DICT_OFFLOAD = "0.25.0"
# torch 2.0 raises for offload_to_cpu with NO_SHARD (_unshard_param_utils); 1.13.1 skipped the
# offload silently (fully_sharded_data_parallel.py _summon_full_params).
_TORCH_RAISES = "2.0.0"


def _argument_file(config) -> bool:
    return config.value("file.kind") in _ARGUMENT_FILES and config.value("arguments.project_parser") is not True


def _deepspeed_link(config):
    return next((link.text for link in config.links if link.kind == "deepspeed"), None)


@register
class AutoFindBatchSizeWithDeepSpeed(Rule):
    """TRN046 auto-find-batch-size-with-deepspeed

    ## What it does
    Flags `auto_find_batch_size: true` in a TrainingArguments / TRL / LLaMA-Factory file that
    links a DeepSpeed config (any ZeRO stage), where the pinned transformers is 4.30 to 4.36
    (silent when unknown).

    ## Why is this bad?
    The batch-size finder catches the first out-of-memory error and runs the training loop again
    at half the batch. On these releases the retry frees accelerate's DeepSpeed engine
    (`accelerator.free_memory()`) but keeps `model_wrapped` from the first attempt, so the model
    is not prepared again and the first backward of the retry crashes: "'NoneType' object has no
    attribute 'backward'". The run dies exactly when the finder was meant to help. 4.37.0 builds
    the engine again for the new batch; 4.38 to 4.44 refuse the pair at launch, 4.45 on refuse it
    with ZeRO-3 only (both TRN043).

    ## Example
    `train.yaml`:
        model_name_or_path: openai-community/gpt2
        output_dir: out
        per_device_train_batch_size: 8
        auto_find_batch_size: true
        deepspeed: ds_z2.json
    `ds_z2.json`:
        {"train_micro_batch_size_per_gpu": "auto", "zero_optimization": {"stage": 2}}
    `requirements.txt`:
        transformers==4.36.2
    Use instead (a batch that fits, found by hand):
        model_name_or_path: openai-community/gpt2
        output_dir: out
        per_device_train_batch_size: 4
        deepspeed: ds_z2.json

    ## Fix safety
    No fix: the batch size that fits is the author's to find (or upgrade transformers to 4.37+
    with ZeRO-1/2).

    ## References
    - transformers src/transformers/trainer.py Trainer._inner_training_loop (4.30.0 to 4.36.2:
      `self.accelerator.free_memory()`, `use_accelerator_prepare = model is self.model`),
      trainer_utils.py find_executable_batch_size (accelerate's, which retries at half the batch);
      accelerate src/accelerate/accelerator.py Accelerator.free_memory (`deepspeed_engine_wrapped =
      None`); checked in the release wheels 4.29.2-4.37.0
    - huggingface/transformers#24558; PR #28088 (first released in 4.37.0: release_memory,
      `model_wrapped = self.model`, propagate_args_to_deepspeed); PR #29058 and #31731 (TRN043)
    """

    code = "TRN046"
    name = "auto-find-batch-size-with-deepspeed"
    severity = ERROR

    def check(self, run, context):
        for config in run.configs:
            auto = config.get("batch.auto_find")
            if auto is None or auto.value is not True or not _argument_file(config):
                continue
            deepspeed = _deepspeed_link(config)
            if deepspeed is None:
                continue
            found = pinned_version(config, "transformers", self.code, context)
            if found is None or older_than(found[0], _RETRY_BROKEN[0]) or not older_than(found[0], _RETRY_BROKEN[1]):
                continue
            yield self.finding(
                config, auto.span,
                f"auto_find_batch_size with DeepSpeed ({deepspeed}) on transformers {found[0]} ({found[1]}): after "
                "the first out-of-memory error the retry at half the batch runs without a DeepSpeed engine and "
                "crashes (\"'NoneType' object has no attribute 'backward'\"); set per_device_train_batch_size "
                "yourself, or use transformers 4.37+ with ZeRO-1/2",
            )


@register
class FsdpSingleProcessFullStateSave(Rule):
    """TRN047 fsdp-single-process

    ## What it does
    Flags FSDP (`fsdp: full_shard ...`) in a TrainingArguments / TRL / LLaMA-Factory file of a run
    on one GPU (`--world-size 1`, or a launcher config's `num_processes: 1`; silent when unknown)
    with FSDP1 and `use_orig_params` false, where the pinned releases save the full state dict
    offloaded to the CPU: transformers 4.30 (accelerate before 0.21) or 4.31 to 4.35 (accelerate
    before 0.22), whose default is false, with torch 2.x; or transformers 4.36+ with `use_orig_params: false` written and
    accelerate 0.25+. Silent when any of those versions is unknown. Also the accelerate config
    form: `distributed_type: FSDP` with `num_processes: 1` and `fsdp_use_orig_params: false`
    (full state dict, FSDP1's default), launching a Trainer whose file leaves FSDP to it, with
    the same releases pinned beside the Trainer's file.

    ## Why is this bad?
    With one process FSDP1 replaces the sharding strategy by NO_SHARD ("since the world size is
    1"), and trains normally. The checkpoint save then gathers a FULL_STATE_DICT with
    `offload_to_cpu=True`, which torch refuses for NO_SHARD parameters that are flattened
    (`use_orig_params` false): "offload_to_cpu=True and NO_SHARD is not supported yet". The run
    dies at its first checkpoint, after `save_steps` of training. (Without a distributed
    launcher the Trainer refuses `fsdp` at launch instead: "Using fsdp only works in distributed
    training".)

    ## Example
    `train.yaml`, on 1 GPU:
        model_name_or_path: openlm-research/open_llama_3b
        output_dir: out
        per_device_train_batch_size: 2
        save_strategy: steps
        save_steps: 1200
        fsdp: full_shard auto_wrap
    `requirements.txt`:
        transformers==4.31.0
        accelerate==0.21.0
        torch==2.0.1
    Use instead (one GPU needs no FSDP):
        model_name_or_path: openlm-research/open_llama_3b
        output_dir: out
        per_device_train_batch_size: 2
        save_strategy: steps
        save_steps: 1200

    ## Fix safety
    No fix: dropping FSDP, adding GPUs or upgrading are the author's choices.

    ## References
    - torch torch/distributed/fsdp/_init_utils.py _init_core_state (NO_SHARD when the world size
      is 1), _unshard_param_utils.py _validate_unshard_params_args ("offload_to_cpu=True and
      NO_SHARD is not supported yet"), _state_dict_utils.py _should_unshard_params (NO_SHARD
      with use_orig_params is not unsharded); torch 1.13.1 skipped the offload for NO_SHARD
    - accelerate src/accelerate/utils/fsdp_utils.py save_fsdp_model (plugin's
      FullStateDictConfig(offload_to_cpu=True) until huggingface/accelerate#1745, 0.22.0) and
      accelerator.py get_state_dict (offload_to_cpu=True from #2177, 0.25.0)
    - transformers src/transformers/trainer.py save_model (4.30: the plugin's save_model, removed
      in accelerate 0.21.0; 4.31 to 4.35: save_fsdp_model; 4.29.2 and older gathered with FSDP's
      default config, no offload;
      accelerator.get_state_dict for FULL_STATE_DICT from 4.36.0), training_args.py
      (use_orig_params default false before 4.36.0, true from PR #27652); checked in the
      release wheels
    - accelerate src/accelerate/commands/launch.py launch_command (`use_fsdp` goes through
      multi_gpu_launcher, torchrun, whatever num_processes), utils/dataclasses.py
      FullyShardedDataParallelPlugin (FULL_STATE_DICT when unset, for FSDP1)
    - huggingface/transformers#24874, lm-sys/FastChat#1963
    """

    code = "TRN047"
    name = "fsdp-single-process"
    severity = ERROR

    def check(self, run, context):
        fsdp = [config for config in run.configs if config.value("parallel.fsdp") is True]
        if not fsdp or world_size(run, context) != 1 or fsdp_version(run) != 1:
            return
        trainers = [config for config in run.configs if _argument_file(config) and _deepspeed_link(config) is None]
        launchers = [config for config in fsdp if config.value("file.kind") == "accelerate"]
        if launchers:
            yield from self._launcher_form(launchers, trainers, context)
            return
        for config in trainers:
            if config.value("parallel.fsdp") is not True or config.value("checkpoint.save_strategy") == "no":
                continue  # no checkpoint; a final save is the script's choice
            reason = self._save_offloads(config, config.value("parallel.fsdp_use_orig_params"), context)
            if reason is not None:
                field = config.get("parallel.fsdp_options") or config.get("parallel.fsdp")
                yield self._finding(config, field.span, reason, "; without a distributed launcher the trainer refuses "
                                    "fsdp at launch instead", "fsdp_config use_orig_params")

    def _launcher_form(self, launchers, trainers, context):
        """accelerate launch runs FSDP through torchrun even with one process (commands/launch.py):
        the accelerate config decides use_orig_params and the state dict type where the Trainer's
        file leaves FSDP to it. Only with use_orig_params false written (the launcher's default
        differs by release) and a full state dict (FSDP1's default)."""
        trainer = next((config for config in trainers if config.value("parallel.fsdp") is not True
                        and config.value("checkpoint.save_strategy") != "no"), None)
        if trainer is None or len(launchers) != 1:
            return
        launcher = launchers[0]
        orig = launcher.get("parallel.fsdp_use_orig_params")
        if orig is None or orig.value is not False:
            return
        if launcher.value("parallel.fsdp_state_dict_type") not in (None, "FULL_STATE_DICT", "1"):
            return
        reason = self._save_offloads(trainer, False, context)
        if reason is not None:
            yield self._finding(launcher, orig.span, reason, "", "fsdp_use_orig_params")

    def _finding(self, config, span, reason, launch, key):
        return self.finding(
            config, span,
            f"FSDP on 1 GPU: FSDP falls back to NO_SHARD, and {reason} gathers the full state dict offloaded "
            "to the CPU: it raises at the first checkpoint (\"offload_to_cpu=True and NO_SHARD is not supported "
            f"yet\"{launch}); drop fsdp on one GPU, or set {key} true",
        )

    def _save_offloads(self, config, orig, context):
        """The pinned releases that save with offload_to_cpu and use_orig_params false, or None."""
        if orig is True:
            return None
        found = [pinned_version(config, package, self.code, context) for package in ("transformers", "accelerate", "torch")]
        if None in found:
            return None
        transformers, accelerate, torch = found
        if older_than(torch[0], _TORCH_RAISES):
            return None
        if older_than(transformers[0], _PLUGIN_SAVE[0]):
            return None
        if older_than(transformers[0], _ORIG_PARAMS_DEFAULT_TRUE):
            plugin = older_than(transformers[0], _PLUGIN_SAVE[1])
            if not older_than(accelerate[0], _PLUGIN_SAVE[2] if plugin else _SAVE_FSDP_SINGLE_PROCESS_FIX):
                return None
            default = "" if orig is False else " (use_orig_params false by default)"
            saver = "the FSDP plugin's save_model" if plugin else "save_fsdp_model"
            return (f"transformers {transformers[0]}{default} with accelerate {accelerate[0]} ({accelerate[1]}) "
                    f"saves through {saver}, which")
        if orig is not False or older_than(accelerate[0], _GET_STATE_DICT_OFFLOAD):
            return None
        return (f"with use_orig_params false, transformers {transformers[0]} with accelerate {accelerate[0]} "
                f"({accelerate[1]}) saves through accelerator.get_state_dict, which")


@register
class TorchCompileFsdpFlatParams(Rule):
    """TRN062 torch-compile-fsdp-without-orig-params

    ## What it does
    Flags `torch_compile: true` in a trainer file whose run shards the model with FSDP1 and
    `use_orig_params` written false: in the trainer's own `fsdp_config` where the trainer file
    turns FSDP on, else in the accelerate config that launches it (`fsdp_use_orig_params:
    false`). FSDP2 (`fsdp_version: 2`) is not affected.

    ## Why is this bad?
    `torch.compile` (which the Trainer/accelerate apply to the FSDP-wrapped model) cannot trace
    FSDP1's flat parameters: Dynamo's VariableBuilder refuses any FSDP-managed module built with
    `use_orig_params=False` ("Dynamo only supports FSDP with use_orig_params=True"). torch 2.0
    asserts it and the first forward fails (huggingface/transformers#24641, #23341); later
    torch releases report it as an unsupported graph break ("FSDP with use_orig_params=False"),
    so the model is not compiled as asked. Every torch with `torch.compile` (2.0 on) refuses
    it, so the rule needs no pin.

    ## Example
    `train.yaml`:
        output_dir: out
        bf16: true
        torch_compile: true
        fsdp: full_shard auto_wrap
        fsdp_config:
          use_orig_params: false
    `requirements.txt` (the release decides the Trainer's FSDP version):
        transformers==4.46.3
    Use instead:
        output_dir: out
        bf16: true
        torch_compile: true
        fsdp: full_shard auto_wrap
        fsdp_config:
          use_orig_params: true

    ## Fix safety
    No fix: `use_orig_params: true` changes FSDP's memory use and optimizer grouping; dropping
    torch_compile is the other choice.

    ## References
    - torch/_dynamo/variables/builder.py VariableBuilder.wrap_module (`_is_fsdp_managed_module`:
      the assert in torch 2.0, later `unimplemented(gb_type="FSDP with use_orig_params=False")`)
    - transformers training_args.py (fsdp_config use_orig_params -> FSDP_USE_ORIG_PARAMS);
      accelerate utils/dataclasses.py FullyShardedDataParallelPlugin.use_orig_params
    - huggingface/transformers#24641, #23341, #23481
    """

    code = "TRN062"
    name = "torch-compile-fsdp-without-orig-params"
    severity = ERROR

    def check(self, run, context):
        compiled = [config for config in run.configs
                    if config.value("training.torch_compile") is True and _argument_file(config)]
        if not compiled or fsdp_version(run) != 1:
            return
        for config in compiled:
            if config.value("parallel.fsdp") is True:
                holder = config  # the Trainer sets FSDP_USE_ORIG_PARAMS from its own fsdp_config
            else:
                holder = next((other for other in run.configs if other.value("file.kind") == "accelerate"
                               and other.value("parallel.fsdp") is True), None)
            orig = holder.get("parallel.fsdp_use_orig_params") if holder is not None else None
            if orig is None or orig.value is not False:
                continue
            yield self.finding(
                holder, orig.span,
                f"torch_compile (in {config.path.name}) with FSDP use_orig_params false: Dynamo cannot trace FSDP's "
                "flat parameters (\"Dynamo only supports FSDP with use_orig_params=True\"): the first forward "
                "fails on torch 2.0 and later torch releases leave the model uncompiled; set use_orig_params true")
