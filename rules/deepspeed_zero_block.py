"""A DeepSpeed config without a zero_optimization block, read through accelerate's DeepSpeedPlugin."""

from __future__ import annotations

from linter.registry import ERROR, Rule, register
from linter.versions import older_than

# accelerate utils/dataclasses.py DeepSpeedPlugin.__post_init__: `if "zero_optimization" not in
# self.hf_ds_config.config: raise ValueError(...)`, from 1703b79a (#405, v0.10.0, which also brought the
# accelerate config's deepspeed_config_file) to v1.14.0.
_ACCELERATE_FIRST = "0.10.0"
# transformers training_args.py builds DeepSpeedPlugin(hf_ds_config=...) for `deepspeed=` from 4.30.0 (the
# Trainer's move onto accelerate; rules/deepspeed_offload.py _TRANSFORMERS_THROUGH_ACCELERATE).
_TRANSFORMERS_FIRST = "4.30.0"
_MESSAGE = "Please specify the ZeRO optimization config in the DeepSpeed config."


def _accelerate_reader(run, missing):
    """The accelerate config of the run that launches DeepSpeed with one of the `missing` files as its
    deepspeed_config_file."""
    paths = {config.path.resolve() for config in missing}
    return next((config for config in run.configs if config.value("file.kind") == "accelerate"
                 and config.value("parallel.accelerate_distributed_type") == "DEEPSPEED"
                 and any(candidate.resolve() in paths for link in config.links if link.kind == "deepspeed"
                         for candidate in link.candidates)), None)


@register
class DeepSpeedConfigWithoutZeroBlock(Rule):
    """DS034 deepspeed-config-without-zero-block

    ## What it does
    Flags a DeepSpeed JSON with no `zero_optimization` key that accelerate's DeepSpeedPlugin reads:
    the `deepspeed_config_file` of an accelerate config with `distributed_type: DEEPSPEED`
    (accelerate 0.10.0 on; with its version unknown too, since every release that reads the key
    refuses it), or the `deepspeed` file of HF Trainer arguments (TrainingArguments, TRL,
    LLaMA-Factory, Axolotl) where the pinned transformers is 4.30.0 or newer. Silent for a file
    DeepSpeed reads itself (`deepspeed.initialize`, XTuner), where stage 0 is the default.

    ## Why is this bad?
    DeepSpeedPlugin.__post_init__ raises "Please specify the ZeRO optimization config in the
    DeepSpeed config." when the Accelerator (or, from transformers 4.30, TrainingArguments) is
    built: the job stops before training, although DeepSpeed itself would run the file as ZeRO
    stage 0 (zjunlp/KnowLM#87).

    ## Example
    `accelerate.yaml`:
        distributed_type: DEEPSPEED
        num_processes: 2
        deepspeed_config:
          deepspeed_config_file: ds.json
    `ds.json`:
        {"train_micro_batch_size_per_gpu": "auto", "bf16": {"enabled": "auto"}}
    Use instead, in `ds.json`:
        {"train_micro_batch_size_per_gpu": "auto", "bf16": {"enabled": "auto"},
         "zero_optimization": {"stage": 0}}

    ## Fix safety
    No fix: which ZeRO stage the run should use is the author's choice.

    ## References
    - accelerate src/accelerate/utils/dataclasses.py DeepSpeedPlugin.__post_init__ (1703b79a "DeepSpeed
      Revamp", #405, v0.10.0; unchanged to v1.14.0); utils/launch.py prepare_deepspeed_cmd_env
      (ACCELERATE_DEEPSPEED_CONFIG_FILE)
    - transformers src/transformers/training_args.py TrainingArguments.__post_init__
      (`DeepSpeedPlugin(hf_ds_config=self.hf_deepspeed_config)`, from 4.30.0)
    - zjunlp/KnowLM#87
    """

    code = "DS034"
    name = "deepspeed-config-without-zero-block"
    severity = ERROR
    triggers = ("parallel.zero_block_missing",)

    def check(self, run, context):
        missing = [config for config in run.linked if config.value("parallel.zero_block_missing") is True]
        if not missing:
            return
        accelerate = _accelerate_reader(run, missing)
        if accelerate is not None:
            found = accelerate.version("accelerate")
            if found is not None and older_than(found[0], _ACCELERATE_FIRST) is not False:
                return
            said = (f"accelerate {found[0]} ({found[1]})" if found else
                    f"every accelerate release that reads deepspeed_config_file ({_ACCELERATE_FIRST} on)")
            reader = f"{accelerate.path.name} launches DeepSpeed with it: {said} refuses it"
        else:
            primary = run.primary
            if primary.value("trainer.fills_deepspeed_auto") is not True or primary.value("file.kind") == "accelerate":
                return  # DeepSpeed reads it itself (stage 0 by default)
            found = primary.version("transformers")
            if found is None:
                context.notes.append(f"{primary.path}: {self.code} skipped: the transformers version is unknown "
                                     f"(from {_TRANSFORMERS_FIRST} TrainingArguments hands the file to accelerate)")
                return
            if older_than(found[0], _TRANSFORMERS_FIRST) is not False:
                return
            reader = (f"{primary.path.name} hands it to the HF Trainer: transformers {found[0]} ({found[1]}) builds "
                      f"accelerate's DeepSpeedPlugin from it, which refuses it")
        for config in missing:
            yield self.finding(config, config.file_span,
                               f"no zero_optimization block; {reader} when the run starts: \"{_MESSAGE}\" (write "
                               f"\"zero_optimization\": {{\"stage\": 0}} for no ZeRO)")
