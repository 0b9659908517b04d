"""Argument combinations the HF Trainer refuses at launch, as one table (issue 16 recall).

Each row is one refusal of transformers' own validation: TrainingArguments.__post_init__
(training_args.py) or the Trainer (trainer.py __init__, create_accelerator_and_postprocess,
create_optimizer), read from the arguments file (TrainingArguments / TRL YAML or JSON, and
LLaMA-Factory's YAML, whose training keys reach Seq2SeqTrainingArguments unchanged) and the
DeepSpeed config it links. A row states:

- `since`: the transformers release that added the check, or None where the check is as old as
  the option it guards or as every release checked (4.28.1 on): then the file is refused by
  every transformers that can read it and the row fires whatever the version, even unknown;
- `until`: the first release without the check (None: still in 5.23.0, the newest checked).
  A row with a `since` fires only from that release (what happened before is not established
  here) and a row with an `until` only before it: both need the pinned transformers, and are
  silent when it is unknown.

Bounds from the release wheels (`pip download --no-deps transformers==X`; training_args.py and
trainer.py of 4.28.1, 4.30.2, 4.32.1 ... 4.57.6, 5.0.0, 5.5.0, 5.9.0, 5.10.0, 5.23.0).
"""

from __future__ import annotations

from linter.registry import ERROR, Rule
from linter.versions import older_than

from .facts import is_number, pinned_version

# Files the HF Trainer's argument classes read as written.
_ARGUMENT_FILES = ("trl", "trainer", "llamafactory")
# transformers OptimizerNames that go through the low-rank optimizer setup (trainer.py
# _get_optimizer_cls_and_kwargs: GaLore from 4.39.0, APOLLO from 4.49.0; trainer_optimizer.py in 5.x).
_LOW_RANK = ("galore_", "apollo_")


class Facts:
    """What the rows ask of one arguments file and the run it belongs to."""

    def __init__(self, config, run):
        self.config = config
        self.deepspeed = next((link.text for link in config.links if link.kind == "deepspeed"), None)
        self.zero_stage = next((linked.value("parallel.zero_stage") for linked in run.linked
                                if linked.value("parallel.zero_stage") is not None), None) if self.deepspeed else None

    def __call__(self, key):
        return self.config.value(key)

    @property
    def fsdp(self) -> bool:
        return self("parallel.fsdp") is True

    def fsdp_words(self) -> set[str]:
        options = self("parallel.fsdp_options")
        words = options if isinstance(options, (list, tuple)) else str(options or "").split()
        return {str(word).strip().lower() for word in words}

    def optimizer(self) -> str:
        return str(self("optimizer.name") or "").lower()


def _not_multiple(facts) -> bool:
    """load_best_model_at_end with step schedules whose save_steps is not a multiple of eval_steps
    (both written as whole steps; TrainingArguments.__post_init__)."""
    save, evaluate = facts("checkpoint.save_steps"), facts("checkpoint.eval_steps")
    return (facts("checkpoint.load_best") is True and facts("checkpoint.save_strategy") == "steps"
            and facts("checkpoint.eval_strategy") == "steps" and is_number(save) and is_number(evaluate)
            and save >= 1 and evaluate >= 1 and save == int(save) and evaluate == int(evaluate)
            and save % evaluate != 0)


def _step_checkpoints(facts) -> tuple | None:
    """(save_steps, eval_steps) where load_best_model_at_end compares step schedules: eval_strategy
    steps, save_strategy steps (written, or TrainingArguments' default in every release), both
    numbers above 0 (an unwritten eval_steps falls back to logging_steps: not judged)."""
    save, evaluate = facts("checkpoint.save_steps"), facts("checkpoint.eval_steps")
    if (facts("checkpoint.load_best") is True and facts("checkpoint.eval_strategy") == "steps"
            and facts("checkpoint.save_strategy") in ("steps", None) and is_number(save) and is_number(evaluate)
            and save > 0 and evaluate > 0 and save % evaluate != 0):
        return save, evaluate
    return None


# transformers 4.29.0 (ratio steps: save/eval/logging_steps below 1 are shares of the run) checks
# load_best_model_at_end's schedules in TrainingArguments.__post_init__ (_validate_args in 5.x) when
# `save_steps % eval_steps != 0`: ratio mixed with absolute steps is refused; two ratios are compared
# as (save * 1_000_000) % (eval * 1_000_000) ("Work around floating point precision issues") and
# refused when that is not 0. Up to 4.52.x an unconditional raise follows, so ratios whose float
# remainder is not 0 are refused even when the scaled test passes (0.1 and 0.02:
# huggingface/transformers#38217); 4.53.0 puts that raise under `else:` (both >= 1). Before 4.29.0
# the one test is `save_steps % eval_steps != 0`, which refuses all three cases too.
def _ratio_mixed(facts) -> bool:
    steps = _step_checkpoints(facts)
    return steps is not None and (steps[0] < 1) != (steps[1] < 1)


def _ratio_scaled_remainder(save, evaluate) -> float:
    return (save * 1_000_000) % (evaluate * 1_000_000)


def _ratio_not_multiple(facts) -> bool:
    steps = _step_checkpoints(facts)
    return steps is not None and steps[0] < 1 and steps[1] < 1 and _ratio_scaled_remainder(*steps) != 0


def _ratio_float_remainder(facts) -> bool:
    steps = _step_checkpoints(facts)
    return steps is not None and steps[0] < 1 and steps[1] < 1 and _ratio_scaled_remainder(*steps) == 0


def _fractional(facts, steps: str, strategy: str, default: str | None) -> bool:
    """A steps value above 1 that is not whole under its steps strategy (refused from 4.29.0)."""
    value = facts(steps)
    return (facts(strategy) in ("steps", default) and is_number(value) and value > 1 and value != int(value))


def _warmup(facts, whole_above_one: bool) -> bool:
    """warmup_steps as TrainingArguments.__post_init__ refuses it: 4.42.0-4.43.x
    `not isinstance(int) or < 0 or 0 < w <= 1`; 4.44.0-4.57.x `not isinstance(int) or < 0`
    (5.0.0 reads a float below 1 as a share of the run)."""
    steps = facts("scheduler.warmup_steps_number")
    if not is_number(steps):
        return False
    return not isinstance(steps, int) or steps < 0 or (whole_above_one and 0 < steps <= 1)


def _accelerate_before(facts, bound: str) -> bool:
    """The accelerate pinned near the file (or installed) is older than `bound`; unknown: False."""
    found = facts.config.version("accelerate")
    return found is not None and older_than(found[0], bound) is True


class Refusal:
    __slots__ = ("code", "applies", "point", "what", "quote", "advice", "source", "since", "until", "checked",
                 "later")

    def __init__(self, code, applies, point, what, quote, advice, source, since=None, until=None, checked=None,
                 later=None):
        self.code = code
        self.applies = applies    # Facts -> bool
        self.point = point        # the IR key the finding points at
        self.what = what          # the combination, with {ir.key} / {deepspeed} / {sharding} filled in
        self.quote = quote        # transformers' own message
        self.advice = advice
        self.source = source      # where transformers raises it
        self.since = since
        self.until = until
        self.checked = checked  # the release that added the check, where the hazard is older (`later`)
        self.later = later      # what happens before `checked`


_POST_INIT = "training_args.py TrainingArguments.__post_init__"
_ACCELERATOR = "trainer.py Trainer.create_accelerator_and_postprocess"
_LOW_RANK_SETUP = "trainer.py _get_optimizer_cls_and_kwargs (trainer_optimizer.py in 5.x), when the optimizer is made"

REFUSALS = (
    # --- TRN040: values and pairs TrainingArguments.__post_init__ refuses
    Refusal("TRN040", lambda a: is_number(a("data.prefetch_factor")) and a("data.num_workers") == 0, "data.prefetch_factor",
            "dataloader_prefetch_factor with dataloader_num_workers 0",
            "--dataloader_prefetch_factor can only be set when data is loaded in a different process",
            "set dataloader_num_workers above 0 or drop the prefetch factor",
            f"{_POST_INIT} (with the option, 4.38.0)"),
    Refusal("TRN040", lambda a: is_number(a("memory.empty_cache_steps")) and not (
                isinstance(a("memory.empty_cache_steps"), int) and a("memory.empty_cache_steps") > 0),
            "memory.empty_cache_steps", "torch_empty_cache_steps {memory.empty_cache_steps}",
            "`torch_empty_cache_steps` must be an integer bigger than 0", "use a positive whole number or drop it",
            f"{_POST_INIT} (with the option, 4.43.0)"),
    Refusal("TRN040", lambda a: a("precision.fp16_full_eval") is True and a("precision.bf16_full_eval") is True,
            "precision.bf16_full_eval", "fp16_full_eval and bf16_full_eval both true",
            "At most one of fp16 and bf16 can be True for full eval, but not both", "keep one", _POST_INIT),
    Refusal("TRN040", lambda a: is_number(a("scheduler.warmup_ratio")) and not 0 <= a("scheduler.warmup_ratio") <= 1,
            "scheduler.warmup_ratio", "warmup_ratio {scheduler.warmup_ratio}", "warmup_ratio must lie in range [0,1]",
            "write a share of the training steps, or warmup_steps for a count",
            f"{_POST_INIT} (4.x; 5.0.0 reads warmup_ratio as warmup_steps)", until="5.0.0"),
    Refusal("TRN040", lambda a: a("precision.bf16") is True and a("precision.amp_backend") == "apex",
            "precision.amp_backend", "bf16 with half_precision_backend apex",
            "`--half_precision_backend apex`: GPU bf16 is not supported by apex.",
            "use half_precision_backend auto", f"{_POST_INIT} (4.x; 5.0.0 has no apex backend)", until="5.0.0"),
    Refusal("TRN040", lambda a: _warmup(a, True), "scheduler.warmup_steps_number",
            "warmup_steps {scheduler.warmup_steps_number}", "warmup_steps must be either 0 or > 1",
            "write a whole number of steps above 1 (0 for none), or warmup_ratio for a share of the run",
            f"{_POST_INIT} (4.42.0 to 4.43.x)", since="4.42.0", until="4.44.0"),
    Refusal("TRN040", lambda a: _warmup(a, False), "scheduler.warmup_steps_number",
            "warmup_steps {scheduler.warmup_steps_number}",
            "warmup_steps must be of type int and must be 0 or a positive integer.",
            "write a whole number of steps, or warmup_ratio for a share of the run",
            f"{_POST_INIT} (4.44.0 to 4.57.x; 5.0.0 reads a float as a share of the run)", since="4.44.0",
            until="5.0.0"),
    # Options whose check asks for a newer accelerate (is_accelerate_available), both until 5.0.0.
    Refusal("TRN040", lambda a: a("data.data_seed") is not None and _accelerate_before(a, "1.1.0"), "data.data_seed",
            "data_seed with accelerate {accelerate}", "data_seed requires Accelerate version `accelerate` >= 1.1.0. "
            "This is not supported and we recommend you to update your version.",
            "upgrade accelerate to 1.1.0 or drop data_seed", f"{_POST_INIT} (4.46.0 to 4.57.x)", since="4.46.0",
            until="5.0.0"),
    Refusal("TRN040", lambda a: a("eval.gather_object") is True and _accelerate_before(a, "0.30.0"),
            "eval.gather_object", "eval_use_gather_object with accelerate {accelerate}",
            "--eval_use_gather_object requires Accelerate to be version of `accelerate` > 0.30.0.",
            "upgrade accelerate to 0.30.0 or drop eval_use_gather_object", f"{_POST_INIT} (4.43.0 to 4.57.x)",
            since="4.43.0", until="5.0.0"),
    # --- TRN041: evaluation and checkpoint schedules
    Refusal("TRN041", lambda a: a("scheduler.type") == "reduce_lr_on_plateau"
            and a("checkpoint.eval_strategy") in ("no", None), "scheduler.type",
            "lr_scheduler_type reduce_lr_on_plateau without evaluation (eval_strategy no)",
            "lr_scheduler_type reduce_lr_on_plateau requires an eval strategy",
            "the schedule steps on the evaluation metric: set eval_strategy", f"{_POST_INIT} (with the schedule, 4.30)"),
    # The greedy schedule and its check both came in 5.4.0 (SchedulerType.GREEDY); older releases
    # refuse the unknown lr_scheduler_type, so every release refuses it without evaluation.
    Refusal("TRN041", lambda a: a("scheduler.type") == "greedy" and a("checkpoint.eval_strategy") in ("no", None),
            "scheduler.type", "lr_scheduler_type greedy without evaluation (eval_strategy no)",
            "lr_scheduler_type greedy requires an eval strategy",
            "the schedule steps on the evaluation metric: set eval_strategy (releases before 5.4.0 do not know "
            "the schedule)", f"{_POST_INIT} (_validate_args, with the schedule, 5.4.0)"),
    Refusal("TRN041", _not_multiple, "checkpoint.eval_steps",
            "load_best_model_at_end with save_steps {checkpoint.save_steps} and eval_steps {checkpoint.eval_steps}",
            "--load_best_model_at_end requires the saving steps to be a round multiple of the evaluation steps",
            "make save_steps a multiple of eval_steps", _POST_INIT),
    Refusal("TRN041", _ratio_mixed, "checkpoint.eval_steps",
            "load_best_model_at_end with save_steps {checkpoint.save_steps} and eval_steps {checkpoint.eval_steps} "
            "(a share of the run beside a step count)",
            "--load_best_model_at_end requires the saving steps to be a multiple of the evaluation steps, which "
            "cannot get guaranteed when mixing ratio and absolute steps for save_steps {checkpoint.save_steps} and "
            "eval_steps {checkpoint.eval_steps}.",
            "write both as step counts or both as shares of the run (before 4.29 the \"round multiple\" check "
            "refuses it)", f"{_POST_INIT} (_validate_args in 5.x)"),
    Refusal("TRN041", _ratio_not_multiple, "checkpoint.save_steps",
            "load_best_model_at_end with save_steps {checkpoint.save_steps} and eval_steps {checkpoint.eval_steps} "
            "(shares of the run)",
            "--load_best_model_at_end requires the saving steps to be a multiple of the evaluation steps, but found "
            "{checkpoint.save_steps}, which is not a multiple of {checkpoint.eval_steps}.",
            "make save_steps a multiple of eval_steps (before 4.29 the \"round multiple\" check refuses it)",
            f"{_POST_INIT} (_validate_args in 5.x)"),
    Refusal("TRN041", _ratio_float_remainder, "checkpoint.save_steps",
            "load_best_model_at_end with save_steps {checkpoint.save_steps} and eval_steps {checkpoint.eval_steps} "
            "(shares of the run whose floating-point remainder is not 0)",
            "--load_best_model_at_end requires the saving steps to be a round multiple of the evaluation steps, but "
            "found {checkpoint.save_steps}, which is not a round multiple of {checkpoint.eval_steps}.",
            "the shares are multiples, but releases before 4.53.0 raise on the float remainder "
            "(huggingface/transformers#38217): upgrade transformers or write step counts",
            f"{_POST_INIT} (the raise runs for ratios too until 4.53.0)", until="4.53.0"),
    Refusal("TRN041", lambda a: _fractional(a, "checkpoint.save_steps", "checkpoint.save_strategy", None),
            "checkpoint.save_steps", "save_steps {checkpoint.save_steps}",
            "--save_steps must be an integer if bigger than 1: {checkpoint.save_steps}",
            "write a whole step count, or a share of the run below 1", f"{_POST_INIT} (4.29.0 on)", since="4.29.0"),
    Refusal("TRN041", lambda a: _fractional(a, "checkpoint.eval_steps", "checkpoint.eval_strategy", "steps"),
            "checkpoint.eval_steps", "eval_steps {checkpoint.eval_steps}",
            "--eval_steps must be an integer if bigger than 1: {checkpoint.eval_steps}",
            "write a whole step count, or a share of the run below 1", f"{_POST_INIT} (4.29.0 on)", since="4.29.0"),
    Refusal("TRN041", lambda a: _fractional(a, "logging.steps", "logging.strategy", None),
            "logging.steps", "logging_steps {logging.steps}",
            "--logging_steps must be an integer if bigger than 1: {logging.steps}",
            "write a whole step count, or a share of the run below 1", f"{_POST_INIT} (4.29.0 on)", since="4.29.0"),
    # eval_steps unset or 0 falls back to logging_steps; both checks in every release checked (4.28.1-5.23.0).
    Refusal("TRN041", lambda a: a("checkpoint.eval_strategy") == "steps" and a("checkpoint.eval_steps") in (None, 0)
            and a("logging.steps") == 0, "logging.steps", "eval_strategy steps with logging_steps 0 and no eval_steps",
            "evaluation strategy steps requires either non-zero --eval_steps or --logging_steps",
            "write eval_steps", _POST_INIT),
    Refusal("TRN041", lambda a: a("logging.strategy") in ("steps", None) and a("logging.steps") == 0
            and not (a("checkpoint.eval_strategy") == "steps" and a("checkpoint.eval_steps") in (None, 0)),
            "logging.steps", "logging_steps 0 with logging_strategy steps",
            "logging strategy steps requires non-zero --logging_steps",
            "write logging_steps above 0, or logging_strategy no", _POST_INIT),
    # --- TRN042: FSDP option strings (4.x; 5.10.0 turns the options into fsdp_config entries)
    Refusal("TRN042", lambda a: a.fsdp_words() == {"offload"}, "parallel.fsdp_options", "fsdp \"offload\" alone",
            "`--fsdp offload` can't work on its own. It needs to be added to `--fsdp full_shard` or `--fsdp shard_grad_op`",
            "write \"full_shard offload\"", f"{_POST_INIT} (to 5.9)", until="5.10.0"),
    Refusal("TRN042", lambda a: {"full_shard", "shard_grad_op"} <= a.fsdp_words(), "parallel.fsdp_options",
            "fsdp with both full_shard and shard_grad_op", "`--fsdp full_shard` is not compatible with `--fsdp shard_grad_op`",
            "keep one sharding strategy", f"{_POST_INIT} (to 5.9)", until="5.10.0"),
    # --- TRN043: the Trainer's checks of DeepSpeed and FSDP
    Refusal("TRN043", lambda a: a.fsdp and a.deepspeed is not None, "parallel.fsdp_options",
            "fsdp with deepspeed {deepspeed}",
            "Using --fsdp xxx together with --deepspeed is not possible, deactivate one of those flags.",
            "keep one of the two", "trainer.py Trainer.__init__"),
    # DeepSpeed: save_only_model (4.36.0) skips model_wrapped.save_checkpoint, so from the option on
    # _load_best_model's deepspeed_load_checkpoint finds no global_step* folder ("Can't find a valid
    # checkpoint") at the end of training (4.36.2 trainer.py, integrations/deepspeed.py); 4.38.0 refuses
    # the pair at launch. FSDP: refused from 4.38.0; what happened before is not established here.
    Refusal("TRN043", lambda a: a("checkpoint.save_only_model") is True and a("checkpoint.load_best") is True
            and a.deepspeed is not None, "checkpoint.save_only_model",
            "save_only_model with load_best_model_at_end under DeepSpeed",
            "DeepSpeed can't be used with `save_only_model` along with `load_best_model_at_end`.",
            "the checkpoints hold no DeepSpeed engine state to load the best one back from: drop one of the two",
            f"{_ACCELERATOR} (4.38.0); trainer.py _load_best_model before",
            since="4.36.0", checked="4.38.0", later="the run trains, then fails loading the best checkpoint at the end "
                                    "(\"Can't find a valid checkpoint\")"),
    Refusal("TRN043", lambda a: a("checkpoint.save_only_model") is True and a("checkpoint.load_best") is True
            and a.fsdp and a.deepspeed is None, "checkpoint.save_only_model",
            "save_only_model with load_best_model_at_end under FSDP",
            "FSDP can't be used with `save_only_model` along with `load_best_model_at_end`.",
            "drop one of the two", _ACCELERATOR, since="4.38.0"),
    # auto_find_batch_size: huggingface/transformers#29058 (in 4.38.0) refused it with any DeepSpeed
    # config or FSDP (NotImplementedError in create_accelerator_and_postprocess); #31731 (in 4.45.0)
    # narrowed the check to ZeRO-3. Release wheels 4.38.0-4.44.2 and 4.45.0-5.23.0.
    Refusal("TRN043", lambda a: a("batch.auto_find") is True and (a.deepspeed is not None or a.fsdp),
            "batch.auto_find", "auto_find_batch_size under {sharding}",
            "`{sharding}` doesn't support `auto_find_batch_size`.",
            "set per_device_train_batch_size yourself", f"{_ACCELERATOR} (4.38.0 to 4.44)",
            since="4.38.0", until="4.45.0"),
    Refusal("TRN043", lambda a: a("batch.auto_find") is True and a.zero_stage == 3, "batch.auto_find",
            "auto_find_batch_size under ZeRO-3 ({deepspeed})",
            "`auto_find_batch_size` isn't supported yet with DeepSpeed Zero-3. Please consider using Zero-2, Zero-1, or FSDP",
            "set per_device_train_batch_size yourself", _ACCELERATOR, since="4.45.0"),
    # --- TRN044: the low-rank optimizers (GaLore, APOLLO)
    Refusal("TRN044", lambda a: a.optimizer().startswith(_LOW_RANK) and a("optimizer.target_modules") is None,
            "optimizer.name", "optim {optimizer.name} without optim_target_modules",
            "You need to define `optim_target_modules` to use ... optimizers",
            "name the modules to project (a list, a regex, or all-linear)",
            f"{_LOW_RANK_SETUP} (with the optimizers, 4.39.0)"),
    Refusal("TRN044", lambda a: a.optimizer().startswith(_LOW_RANK) and a.optimizer().endswith("layerwise")
            and isinstance(a("batch.grad_accum"), int) and a("batch.grad_accum") > 1, "batch.grad_accum",
            "optim {optimizer.name} with gradient_accumulation_steps {batch.grad_accum}",
            "Layerwise ... does not support gradient accumulation!",
            "each layer steps in its own gradient hook: set gradient_accumulation_steps to 1 or use the "
            "non-layerwise optimizer", f"{_LOW_RANK_SETUP} (with the optimizers, 4.39.0)"),
)


def _fill(text: str, facts: Facts) -> str:
    accelerate = facts.config.version("accelerate") if "{accelerate}" in text else None
    words = {"deepspeed": facts.deepspeed or "", "sharding": "DeepSpeed" if facts.deepspeed else "FSDP",
             "accelerate": f"{accelerate[0]} ({accelerate[1]})" if accelerate else ""}
    for part in text.split("{")[1:]:
        name = part.split("}")[0]
        field = facts.config.get(name) if "." in name else None
        if field is not None:
            words[name] = f"{field.value} (the default)" if field.origin.is_default else field.value
    for name, value in words.items():
        text = text.replace("{" + name + "}", str(value))
    return text


class TrainerRefusal(Rule):
    """Base of the TRN040-TRN044 rules: the rows of REFUSALS with the rule's code."""

    severity = ERROR
    table: tuple = REFUSALS  # the rules set REFUSALS + trainer_refusal_rows.MORE_REFUSALS

    def check(self, run, context):
        rows = [row for row in self.table if row.code == self.code]
        for config in run.configs:
            if config.value("file.kind") not in _ARGUMENT_FILES or config.value("arguments.project_parser") is True:
                continue
            facts = Facts(config, run)
            for row in rows:
                if not row.applies(facts):
                    continue
                bounded = ""
                if row.checked is not None:
                    finding = self._older_hazard(config, row, facts)
                    if finding is not None:
                        yield finding
                    continue
                if row.since is not None or row.until is not None:
                    found = pinned_version(config, "transformers", self.code, context)
                    if found is None:
                        continue
                    if row.since is not None and older_than(found[0], row.since):
                        continue
                    if row.until is not None and not older_than(found[0], row.until):
                        continue
                    bounded = f" on transformers {found[0]} ({found[1]})"
                yield self.finding(config, config.span(row.point),
                                   f"{_fill(row.what, facts)}: the trainer refuses it at launch{bounded} "
                                   f"(\"{_fill(row.quote, facts)}\"); {row.advice}")

    def _older_hazard(self, config, row, facts):
        """A row whose hazard is older than transformers' check: refused from `checked`, before it
        (from `since`, the option's release) the run fails later; unknown version: both are said."""
        quote = f"(\"{_fill(row.quote, facts)}\")"
        found = config.version("transformers")
        if found is not None and row.since is not None and older_than(found[0], row.since):
            return None  # no such option: the argument parser refuses the key
        if found is None:
            how = f"transformers {row.checked}+ refuses it at launch {quote}; before, {row.later}"
        elif older_than(found[0], row.checked):
            how = f"on transformers {found[0]} ({found[1]}) {row.later}"
        else:
            how = f"the trainer refuses it at launch on transformers {found[0]} ({found[1]}) {quote}"
        return self.finding(config, config.span(row.point), f"{_fill(row.what, facts)}: {how}; {row.advice}")
