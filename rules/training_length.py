"""How long a Hugging Face Trainer run trains: settings that one another silently overrides."""

from __future__ import annotations

from linter.registry import WARNING, Rule, register

from .facts import is_number, positive_int


def _named(config, key: str, keyword: str) -> str:
    """The key as the file spells it; the TrainingArguments keyword where the adapter records none."""
    written = config.written_as(key)
    return keyword if written == key else written


@register
class MaxStepsOverridesEpochs(Rule):
    """TRN057 max-steps-overrides-epochs

    ## What it does
    Flags a config that writes a positive `max_steps` together with a `num_train_epochs`
    (Axolotl `num_epochs`) other than 1: TrainingArguments, TRL configs, LLaMA-Factory,
    Axolotl, and the TrainingArguments / SFTConfig keywords of an Unsloth script. The finding
    sits on `max_steps`, the setting that wins.

    A written `num_train_epochs: 1` beside `max_steps` is left alone: it is the usual way to cap
    a run's length (every Axolotl example that sets `max_steps` writes `num_epochs: 1`), and it
    is wrong only where the dataset is shorter or longer than `max_steps`, which the config does
    not show. Epochs left at their default are left alone too, and so is a framework that
    only caps the epochs with `max_steps` (Axolotl before 0.10.0 trains
    min(epoch steps, max_steps): the run stops at whichever comes first), or whose version,
    which decides that, is unknown.

    ## Why is this bad?
    A positive `max_steps` decides the length of training on its own: the Trainer stops after
    that many optimizer steps and recomputes the epoch count from it
    (`num_train_epochs = max_steps // num_update_steps_per_epoch + ...` in trainer.py
    `_inner_training_loop`, every release checked); the written epoch count is never read. A
    step count kept from a notebook (`max_steps = 60`) then ends a "20-epoch" run after a few
    dozen batches, or a multi-epoch run silently trains some other number of passes, with no
    message (unslothai/unsloth#594). Whether that is short needs the dataset size; the override
    itself is certain.

    ## Example
    `trl.yaml`:
        model_name_or_path: Qwen/Qwen2.5-0.5B
        dataset_name: trl-lib/Capybara
        num_train_epochs: 20
        max_steps: 10
    Use instead:
        model_name_or_path: Qwen/Qwen2.5-0.5B
        dataset_name: trl-lib/Capybara
        num_train_epochs: 20

    ## Fix safety
    No fix: which of the two the author meant is not in the file.

    ## References
    - transformers src/transformers/training_args.py TrainingArguments.max_steps ("If set to a
      positive number, the total number of training steps to perform. Overrides
      `num_train_epochs`."), default -1; num_train_epochs default 3.0
    - transformers src/transformers/trainer.py `_inner_training_loop` (`if args.max_steps > 0:
      max_steps = args.max_steps; num_train_epochs = args.max_steps // num_update_steps_per_epoch
      + ...`), the same from 4.x through the current release (`set_initial_training_values`)
    - axolotl src/axolotl/core/builders/base.py (`training_args_kwargs["max_steps"] =
      self.cfg.max_steps or total_num_steps or -1`, `["num_train_epochs"] = self.cfg.num_epochs`),
      since fee3c13bb (#2611, 2025-05-01, v0.10.0); from 3c2ad00d0 (#387, v0.3.0) until then
      core/trainer_builder.py passed `total_num_steps if self.cfg.max_steps else -1`, with
      total_num_steps = min(epoch-based steps, cfg.max_steps) (utils/data/sft.py): a cap
    - unslothai/unsloth#594 (max_steps 60 kept from the notebook beside num_train_epochs);
      neulab/awesome-align#18
    """

    code = "TRN057"
    name = "max-steps-overrides-epochs"
    severity = WARNING
    triggers = ("training.max_steps",)

    def check(self, run, context):
        for config in run.configs:
            steps = config.get("training.max_steps")
            if steps is None or steps.origin.is_default or not positive_int(steps.value):
                continue
            epochs = config.get("training.epochs")
            if (epochs is None or epochs.origin.is_default or not is_number(epochs.value) or epochs.value == 1
                    or config.value("arguments.project_parser") is True):
                continue  # a project's own argument parser may read the two its own way
            caps = config.get("training.max_steps_caps")
            if caps is not None and caps.value is not False:
                continue  # the framework stops at whichever bound comes first (or its version is unknown)
            shown = int(epochs.value) if float(epochs.value).is_integer() else epochs.value
            yield self.finding(
                config, steps.span,
                f"{_named(config, 'training.max_steps', 'max_steps')} {steps.value} overrides "
                f"{_named(config, 'training.epochs', 'num_train_epochs')} {shown}: training stops after "
                f"{steps.value} optimizer steps whatever the epoch count, which is never read; drop max_steps to train by epochs, or drop "
                "the epoch count")
