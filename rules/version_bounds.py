"""Settings that one range of a framework's releases reads wrongly or refuses (issue 16 recall)."""

from __future__ import annotations

from linter.changes import SetValue
from linter.fixes import Applicability
from linter.registry import ERROR, WARNING, Rule, register
from linter.versions import older_than

from .facts import positive_int, read_by_repository_script

# accelerate utils/launch.py prepare_multi_gpu_env: the launcher refuses the pair from 0.24.0
# (e6d96e5f, #2037, which made RAM-efficient loading optional); still there in 1.x. From 0.30.0
# FullyShardedDataParallelPlugin.__post_init__ also forces sync_module_states (2c767338, #2725).
_RAM_EFFICIENT_OPTION = "0.24.0"
_PLUGIN_FORCES_SYNC = "0.30.0"


@register
class FsdpRamEfficientLoadingWithoutSync(Rule):
    """VER003 fsdp-ram-efficient-loading-without-sync

    ## What it does
    Flags an accelerate FSDP config with `fsdp_cpu_ram_efficient_loading: true` and
    `fsdp_sync_module_states: false`, where the accelerate in use (a pin near the file or the
    installed package) has the option (0.24.0 or later). With the version unknown it fires too:
    the option arrived with the launcher's refusal of the pair (0.24.0), which every later
    release keeps; older releases do not read the key.

    ## Why is this bad?
    With RAM-efficient loading only rank 0 reads the checkpoint; every other rank builds the
    model with empty weights and relies on FSDP's `sync_module_states` to broadcast rank 0's
    weights when the model is wrapped. Without the broadcast those ranks train from
    uninitialised weights. `accelerate launch` therefore refuses the pair at launch ("When using
    `--fsdp_cpu_ram_efficient_loading` set `--fsdp_sync_module_states` to `True`"); runs that
    build the FSDP plugin without the launcher's check got random weights on the other ranks
    until accelerate 0.30.0 forced the broadcast (huggingface/accelerate#2037, #2725).

    ## Example
    `accelerate.yaml`:
        distributed_type: FSDP
        num_processes: 8
        fsdp_config:
          fsdp_cpu_ram_efficient_loading: true
          fsdp_sync_module_states: false
    `requirements.txt`:
        accelerate==0.29.3
    Use instead:
        distributed_type: FSDP
        num_processes: 8
        fsdp_config:
          fsdp_cpu_ram_efficient_loading: true
          fsdp_sync_module_states: true

    ## Fix safety
    Safe: it is the value accelerate's config wizard writes with RAM-efficient loading
    (commands/config/cluster.py) and the one FullyShardedDataParallelPlugin forces from 0.30.0.

    ## References
    - accelerate src/accelerate/utils/launch.py prepare_multi_gpu_env: ValueError for the pair,
      from commit e6d96e5f "Make fsdp ram efficient loading optional" (#2037, first in v0.24.0)
    - accelerate src/accelerate/utils/dataclasses.py FullyShardedDataParallelPlugin.__post_init__:
      "sync_module_states cannot be False since efficient cpu ram loading enabled. Setting
      sync_module_states to True.", from commit 2c767338 (#2725, first in v0.30.0)
    - huggingface/accelerate#2037 (docs: "else all the processes except the main process would
      have random empty weights"); huggingface/accelerate#2100
    """

    code = "VER003"
    name = "fsdp-ram-efficient-loading-without-sync"
    severity = ERROR
    triggers = ("parallel.fsdp",)
    fix_applicability = Applicability.SAFE

    def check(self, run, context):
        for config in run.configs:
            if config.value("parallel.fsdp") is not True or config.value("parallel.fsdp_ram_efficient_loading") is not True \
                    or config.value("parallel.fsdp_sync_module_states") is not False:
                continue
            found = config.version("accelerate")
            if found is not None and older_than(found[0], _RAM_EFFICIENT_OPTION):
                continue  # the option does not exist there
            unsynced = (f"; before {_PLUGIN_FORCES_SYNC} a run that skips the launcher's check trains every rank but "
                        "the first from uninitialised weights") if not found or older_than(found[0], _PLUGIN_FORCES_SYNC) else ""
            on = (f"accelerate {found[0]} ({found[1]})" if found else
                  f"every accelerate that reads it (from {_RAM_EFFICIENT_OPTION}, which added it with the check)")
            yield self.finding(
                config, config.span("parallel.fsdp_sync_module_states"),
                f"fsdp_cpu_ram_efficient_loading with fsdp_sync_module_states false on {on}: only rank 0 loads the checkpoint and nothing broadcasts it; accelerate launch "
                f"refuses the pair{unsynced}; set fsdp_sync_module_states true",
                fix=self.fix("Set fsdp_sync_module_states to true",
                             SetValue(config, "parallel.fsdp_sync_module_states", True)))


# transformers trainer.py: from 4.46.0 (#34191) the Trainer counts the label tokens of the whole
# accumulated batch (get_batch_samples -> num_items_in_batch) and models that take loss kwargs
# divide by it; 4.45.2 and earlier average each micro-batch's mean loss. TRL's SFTTrainer uses
# Trainer.compute_loss there (TRL 0.11.x has no override; TRL 0.12.0 requires transformers>=4.46).
_GRAD_ACCUM_FIXED = "4.46.0"


@register
class GradAccumLossNormalization(Rule):
    """VER004 grad-accum-loss-normalization

    ## What it does
    Flags a TRL SFT config (one that writes a key only SFTConfig has, or that the
    repository's launch commands run with `trl sft`) or an Axolotl config without `rl`
    (AxolotlTrainer) with `gradient_accumulation_steps` above 1 and packing
    (`packing`, `sample_packing`) off, where the transformers in use (a pin near the file or the
    installed package; silent when unknown) is older than 4.46.0. A TRL file that leaves
    `packing` out counts as unpacked only where TRL's own classes read it: where a script of the
    repository reads it into its own argument classes (or an installed package's, such as
    alignment-handbook's), that script builds the trainer and may pack in code
    (alignment-handbook's run_sft.py passes `SFTTrainer(..., packing=True)`): silent.

    ## Why is this bad?
    Before 4.46.0 the Trainer took each micro-batch's loss as the mean over its own label tokens
    and averaged those means over the accumulation steps. Unpacked samples differ in length, so a
    micro-batch of short answers weighs as much as one of long answers: the update is not the
    one of the same batch without accumulation, and the logged loss is biased (the gap grows
    with the number of steps). transformers 4.46.0 divides by the label tokens of the whole
    accumulated batch for models that accept loss kwargs (huggingface/transformers#34191).

    ## Example
    `sft.yaml`:
        model_name_or_path: meta-llama/Llama-3.2-1B
        dataset_name: trl-lib/Capybara
        dataset_text_field: text
        per_device_train_batch_size: 1
        gradient_accumulation_steps: 16
    `requirements.txt`:
        transformers==4.45.2
    Use instead, in `requirements.txt`:
        transformers==4.46.0

    ## Fix safety
    Display-only: upgrading a dependency is outside the config; packing (every micro-batch full)
    or no accumulation also avoid the bias.

    ## References
    - transformers src/transformers/trainer.py: get_batch_samples / num_items_in_batch and
      compute_loss passing it to the model (4.46.0; absent in 4.45.2)
    - huggingface/transformers#34191 "Fix Gradient Accumulation issue"; the blog post
      "Fixing Gradient Accumulation" (huggingface/blog#2414); axolotl-ai-cloud/axolotl#1100
    - TRL v0.11.4 trl/trainer/sft_trainer.py (no compute_loss of its own); TRL v0.12.0 setup.py
      requires transformers>=4.46.0
    - axolotl v0.4.0 src/axolotl/core/trainer_builder.py AxolotlTrainer.compute_loss (returns
      super().compute_loss); axolotl v0.5.0 requires transformers==4.46.1
    - huggingface/alignment-handbook scripts/run_sft.py (e.g. at 3f368a0, 2023-12-04):
      `SFTTrainer(..., packing=True)`; its SFTConfig (src/alignment/configs.py) then extended
      transformers.TrainingArguments and had no `packing` field
    """

    code = "VER004"
    name = "grad-accum-loss-normalization"
    severity = WARNING
    triggers = ("batch.grad_accum",)
    fix_applicability = Applicability.DISPLAY_ONLY

    def check(self, run, context):
        for config in run.configs:
            if config.value("training.trainer") != "sft":
                continue  # TRL SFTConfig files, Axolotl without `rl`: the HF Trainer's compute_loss
            steps = config.value("batch.grad_accum")
            if not positive_int(steps) or steps < 2 or config.value("sequence.packing") is True:
                continue
            if config.value("sequence.packing") is None and read_by_repository_script(config, "packing"):
                context.notes.append(f"{config.path}: {self.code} skipped: packing is not written, and the "
                                     "repository's own script that reads the file decides it")
                continue
            found = context.version_before("transformers", _GRAD_ACCUM_FIXED, config, self.code)
            if found is None:
                continue
            yield self.finding(
                config, config.span("batch.grad_accum"),
                f"gradient_accumulation_steps {steps} with unpacked samples on transformers {found[0]} ({found[1]}): "
                f"before {_GRAD_ACCUM_FIXED} the Trainer averages each micro-batch's per-token mean, so short and long "
                "micro-batches weigh alike and the update differs from the same batch without accumulation "
                f"(huggingface/transformers#34191); upgrade to transformers>={_GRAD_ACCUM_FIXED} or pack samples",
                fix=self.fix(f"Upgrade to transformers>={_GRAD_ACCUM_FIXED}"))


# peft src/peft/tuners/tuners_utils.py _maybe_include_all_linear_layers and
# utils/constants.py INCLUDE_LINEAR_LAYERS_SHORTHAND = "all-linear": commit cbd783b4 (#1295),
# first released in 0.8.0. Before it a string target_modules is a regular expression
# (re.fullmatch in _check_target_module_exists) that matches no module.
_ALL_LINEAR_FROM = "0.8.0"


@register
class PeftAllLinearBeforeShorthand(Rule):
    """VER005 peft-all-linear-unsupported

    ## What it does
    Flags `target_modules: "all-linear"` handed to PEFT as written — a PEFT `adapter_config.json`
    read by `LoraConfig.from_pretrained`, a TRL config's `lora_target_modules` (get_peft_config),
    an XTuner `LoraConfig(target_modules=...)` — where the PEFT in use (a pin near the file or
    the installed package; silent when unknown) is older than 0.8.0.

    ## Why is this bad?
    The "all-linear" shorthand arrived in PEFT 0.8.0. Older releases read a string
    `target_modules` as a regular expression over module names; nothing is called
    "all-linear", so `get_peft_model` raises "Target modules all-linear not found in the base
    model" after the model has loaded. Axolotl's `lora_target_linear` and LLaMA-Factory's
    `lora_target: all` are those frameworks' own expansions and are not affected.

    ## Example
    `adapter_config.json`:
        {"peft_type": "LORA", "task_type": "CAUSAL_LM", "r": 16, "target_modules": "all-linear"}
    `requirements.txt`:
        peft==0.7.1
    Use instead, in `requirements.txt`:
        peft==0.8.0

    ## Fix safety
    No fix: upgrade PEFT, or list the module names (`q_proj`, `v_proj`, ...) yourself.

    ## References
    - peft src/peft/tuners/tuners_utils.py _maybe_include_all_linear_layers, commit cbd783b4
      "Add an option 'ALL' to include all linear layers as target modules" (#1295, first in 0.8.0)
    - peft v0.7.1 tuners_utils.py: `re.fullmatch(config.target_modules, key)` and "Target modules
      {target_modules} not found in the base model"
    - trl/trainer/utils.py get_peft_config (LoraConfig(target_modules=model_args.lora_target_modules));
      xtuner/model/sft.py _prepare_for_lora (get_peft_model with the configured LoraConfig)
    - philschmid/deep-learning-pytorch-huggingface#43
    """

    code = "VER005"
    name = "peft-all-linear-unsupported"
    severity = ERROR
    triggers = ("adapter.target_shorthand",)

    def check(self, run, context):
        for config in run.configs:
            shorthand = config.value("adapter.target_shorthand")
            if not isinstance(shorthand, str) or shorthand.lower() != "all-linear":
                continue
            found = context.version_before("peft", _ALL_LINEAR_FROM, config, self.code)
            if found is None:
                continue
            yield self.finding(
                config, config.span("adapter.target_shorthand"),
                f"target_modules \"all-linear\" on PEFT {found[0]} ({found[1]}): the shorthand arrived in PEFT "
                f"{_ALL_LINEAR_FROM}; older releases look for a module named all-linear and raise \"Target modules "
                "all-linear not found in the base model\" after the model loads; upgrade PEFT or list the modules")
