"""A DeepSpeed scheduler block that replaces the schedule the trainer config names."""

from __future__ import annotations

from linter.registry import WARNING, Rule, register

from .facts import training_config

# deepspeed/runtime/lr_schedules.py: WarmupLR warms up, then holds the peak learning rate;
# WarmupDecayLR then decays linearly to 0 at total_num_steps; WarmupCosineLR then follows a
# cosine to cos_min_ratio. OneCycle and LRRangeTest match no TrainingArguments schedule.
# Trainer names from transformers/trainer_utils.py SchedulerType.
_SAME_SHAPE = {
    "warmuplr": {"constant", "constant_with_warmup"},
    "warmupdecaylr": {"linear"},
    "warmupcosinelr": {"cosine", "cosine_with_min_lr", "cosine_warmup_with_min_lr"},
    "onecycle": set(),
    "lrrangetest": set(),
}


@register
class DeepSpeedSchedulerOverridesTrainer(Rule):
    """DS023 deepspeed-scheduler-overrides-trainer

    ## What it does
    Flags a trainer config (TrainingArguments / TRL, LLaMA-Factory) that writes an
    `lr_scheduler_type` while the DeepSpeed config it links has a `scheduler` block of another
    shape: WarmupLR (warm-up, then constant) for anything but `constant` /
    `constant_with_warmup`, WarmupDecayLR (linear decay) for anything but `linear`,
    WarmupCosineLR for anything but the cosine schedules, and OneCycle / LRRangeTest for any.

    ## Why is this bad?
    When the DeepSpeed config has a `scheduler` section, transformers hands DeepSpeed a
    placeholder and DeepSpeed builds the schedule from that section: the trainer's
    `lr_scheduler_type` is silently ignored (integrations/deepspeed.py deepspeed_optim_sched:
    `if "scheduler" in config: lr_scheduler = DummyScheduler(optimizer)`; the same in every
    release checked, 4.28.1-5.23.0). The run trains with a schedule the config does not show,
    e.g. a linear decay where the YAML says cosine.

    ## Example
    `sft.yaml`:
        model_name_or_path: Qwen/Qwen2.5-0.5B
        dataset_name: trl-lib/Capybara
        lr_scheduler_type: cosine
        deepspeed: ds.json
    `ds.json`:
        {"zero_optimization": {"stage": 2}, "scheduler": {"type": "WarmupDecayLR", "params": {"total_num_steps": "auto", "warmup_num_steps": "auto"}}}
    Use instead, in `ds.json`:
        {"zero_optimization": {"stage": 2}}

    ## Fix safety
    No fix: dropping the scheduler block (the trainer then builds its own schedule) or
    changing `lr_scheduler_type` are both plausible.

    ## References
    - transformers src/transformers/integrations/deepspeed.py deepspeed_optim_sched (4.28.1:
      transformers/deepspeed.py, `if "scheduler" not in config:` builds the trainer's own)
    - deepspeed/runtime/lr_schedules.py (WarmupLR, WarmupDecayLR, WarmupCosineLR)
    - transformers docs, "DeepSpeed", Scheduler section (without a scheduler entry the Trainer
      uses --lr_scheduler_type; WarmupLR corresponds to constant_with_warmup, WarmupDecayLR to
      linear); axolotl-ai-cloud/axolotl#909 (scheduler blocks removed from its DeepSpeed
      configs "to avoid conflict")
    """

    code = "DS023"
    name = "deepspeed-scheduler-overrides-trainer"
    severity = WARNING

    def check(self, run, context):
        trainer = training_config(run)
        if trainer is None:
            return
        written = trainer.get("scheduler.type")
        if written is None or written.origin.is_default or not isinstance(written.value, str):
            return
        for config in run.linked:
            scheduler = config.get("scheduler.type")
            if config.value("file.kind") != "deepspeed" or scheduler is None or not isinstance(scheduler.value, str):
                continue
            shape = _SAME_SHAPE.get(scheduler.value.lower())
            if shape is None or written.value.lower() in shape:
                continue
            yield self.finding(
                trainer, written.span,
                f"lr_scheduler_type {written.value} is not used: the DeepSpeed config ({config.path.name}) has a "
                f"scheduler block ({scheduler.value}), which replaces the trainer's schedule; drop the scheduler "
                "block to get the trainer's, or make the two agree")
