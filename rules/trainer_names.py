"""Names the HF Trainer's arguments take from an enum, with the releases that know each name.

TrainingArguments.__post_init__ turns `optim`, `lr_scheduler_type`, `eval_strategy` /
`evaluation_strategy`, `logging_strategy` and `save_strategy` into their enums
(OptimizerNames, SchedulerType, IntervalStrategy, SaveStrategy: `OptimizerNames(self.optim)`,
... in every release checked), so a name the release does not have is a ValueError ("'x' is not
a valid OptimizerNames, please select one of [...]"); Trainer.__init__ passes `report_to` to
integrations get_reporting_integration_callbacks, which raises for a name outside
INTEGRATION_TO_CALLBACK ("x is not supported, only [...] are supported."). Each table maps a
name to (the first release with it, the first release without it); None: older than 4.20.1,
the oldest wheel checked, or not removed by 5.24.0, the newest. No name was removed between
4.11.3 (the first with SchedulerType / IntervalStrategy / INTEGRATION_TO_CALLBACK as here) and
4.20.1. Read from the release wheels (`pip download --no-deps transformers==X`, the classes
read with `ast`): the last patch of every minor from 4.20 to 4.57 and 5.0 to 5.24, and the .0
of each minor where a name came or went (4.27.0, 4.29.0, 4.30.0, 4.34.0, 4.35.0, 4.36.0,
4.38.0, 4.39.0, 4.40.0, 4.41.0, 4.42.0, 4.45.0, 4.47.0, 4.49.0, 4.50.0, 4.54.0, 5.4.0, 5.8.0).
"""

from __future__ import annotations

from linter.registry import ERROR, Rule, kinds, register

from .facts import pinned_version

_OLD = (None, None)

# training_args.py OptimizerNames
OPTIMIZERS = {
    **dict.fromkeys(("adafactor", "adagrad", "adamw_bnb_8bit", "adamw_torch", "adamw_torch_xla", "sgd"), _OLD),
    "adamw_hf": (None, "4.50.0"),
    "adamw_apex_fused": (None, "5.8.0"),
    "adamw_anyprecision": ("4.25.1", None),  # 4.24.0 lacks it; 4.25.0 was never published
    "adamw_torch_fused": ("4.27.0", None),
    **dict.fromkeys(("adamw_8bit", "lion_32bit", "lion_8bit", "paged_adamw_32bit", "paged_adamw_8bit",
                     "paged_lion_32bit", "paged_lion_8bit"), ("4.30.0", None)),
    "rmsprop": ("4.34.0", None),
    "adamw_torch_npu_fused": ("4.35.0", None),
    **dict.fromkeys(("rmsprop_bnb", "rmsprop_bnb_8bit", "rmsprop_bnb_32bit"), ("4.38.0", None)),
    **dict.fromkeys(("galore_adamw", "galore_adamw_8bit", "galore_adafactor", "galore_adamw_layerwise",
                     "galore_adamw_8bit_layerwise", "galore_adafactor_layerwise"), ("4.39.0", None)),
    **dict.fromkeys(("lomo", "adalomo"), ("4.42.0", None)),
    **dict.fromkeys(("adamw_torch_4bit", "ademamix", "ademamix_8bit", "grokadamw", "paged_ademamix_32bit",
                     "paged_ademamix_8bit", "schedule_free_adamw", "schedule_free_sgd"), ("4.45.0", None)),
    **dict.fromkeys(("adamw_torch_8bit", "apollo_adamw", "apollo_adamw_layerwise", "schedule_free_radam"),
                    ("4.49.0", None)),
    "stable_adamw": ("4.54.0", None),
}

# trainer_utils.py SchedulerType
SCHEDULERS = {
    **dict.fromkeys(("linear", "cosine", "cosine_with_restarts", "polynomial", "constant", "constant_with_warmup"),
                    _OLD),
    "inverse_sqrt": ("4.27.0", None),
    "reduce_lr_on_plateau": ("4.29.0", None),
    "cosine_with_min_lr": ("4.40.0", None),
    "warmup_stable_decay": ("4.41.0", None),
    "cosine_warmup_with_min_lr": ("4.54.0", None),
    "greedy": ("5.4.0", None),
}

# trainer_utils.py IntervalStrategy (eval and logging), SaveStrategy (save: IntervalStrategy
# before 4.47.0, which added SaveStrategy with "best").
INTERVALS = dict.fromkeys(("no", "steps", "epoch"), _OLD)
SAVES = {**INTERVALS, "best": ("4.47.0", None)}

# integrations INTEGRATION_TO_CALLBACK (integrations.py, integrations/integration_utils.py from
# 4.33); "all" and "none" are read by TrainingArguments before.
TRACKERS = {
    **dict.fromkeys(("azure_ml", "codecarbon", "comet_ml", "mlflow", "neptune", "tensorboard", "wandb"), _OLD),
    "clearml": ("4.25.1", None),
    "dagshub": ("4.27.0", None),
    "flyte": ("4.30.0", None),
    "dvclive": ("4.36.0", None),
    "swanlab": ("4.50.0", None),
    "trackio": ("4.54.0", None),
    "kubeflow": ("5.4.0", None),
}

_ARGS = "training_args.py TrainingArguments.__post_init__"
# IR key -> (the argument, its names, the enum or table, where it is refused)
NAMED = {
    "optimizer.name": ("optim", OPTIMIZERS, "OptimizerNames", _ARGS),
    "scheduler.type": ("lr_scheduler_type", SCHEDULERS, "SchedulerType", _ARGS),
    "checkpoint.eval_strategy": ("eval_strategy", INTERVALS, "IntervalStrategy", _ARGS),
    "logging.strategy": ("logging_strategy", INTERVALS, "IntervalStrategy", _ARGS),
    "checkpoint.save_strategy": ("save_strategy", SAVES, "SaveStrategy", _ARGS),
    "logging.report_to": ("report_to", TRACKERS, "INTEGRATION_TO_CALLBACK",
                          "integrations get_reporting_integration_callbacks, from Trainer.__init__"),
}

_FILES = ("trl", "trainer", "llamafactory")  # read by transformers' TrainingArguments
_NEWEST = "5.24.0"


def _names(value) -> list[str]:
    """The names a written value gives: a string, or a list's strings (report_to). "all" and
    "none" are TrainingArguments' own words; a comma-joined string is left unjudged."""
    names = value if isinstance(value, (list, tuple)) else [value]
    return [name for name in names if isinstance(name, str) and name not in ("all", "none") and "," not in name]


def _refusal(name: str, table: dict, version: str | None) -> str | None:
    """Why the release refuses `name`: never a name (every release), or not yet / no longer one
    in `version`; None where it is known, or where that needs the version and it is unknown."""
    from linter.versions import older_than

    if name not in table:
        return f"no transformers release has it (4.20.1 to {_NEWEST} checked)"
    first, gone = table[name]
    if version is None:
        return None
    if first is not None and older_than(version, first) is True:
        return f"it came in transformers {first}"
    if gone is not None and older_than(version, gone) is False:
        return f"transformers {gone} removed it"
    return None


def _close(name: str, table: dict) -> str:
    from difflib import get_close_matches

    current = [known for known, (_, gone) in table.items() if gone is None]  # names the newest release has
    found = get_close_matches(name.lower(), current, n=1, cutoff=0.75)
    return f" (did you mean {found[0]}?)" if found and found[0] != name else ""


def _schema_reports(config, argument: str) -> bool:
    """Does SCH002 report the value already (the file's schema has an error at `argument`, and no
    pinned package is older than the release the schema was written from)?"""
    from .facts import schema_errors
    from .schema_releases import release_older_than_schema

    schema, _, errors = schema_errors(config)
    if schema is None or not any(error.path and error.path[0] in _SPELLINGS.get(argument, (argument,))
                                 for error in errors):
        return False
    return release_older_than_schema(config, schema) is None


_SPELLINGS = {"eval_strategy": ("eval_strategy", "evaluation_strategy")}


@register
class TrainerArgumentNameRefused(Rule):
    """TRN053 trainer-argument-name-refused

    ## What it does
    Flags a TrainingArguments value that names something the transformers release reading the
    file does not have: an `optim` that is not one of its OptimizerNames, an `lr_scheduler_type`
    outside its SchedulerType, an `eval_strategy` / `logging_strategy` / `save_strategy`
    outside IntervalStrategy / SaveStrategy (`save_strategy: best` before 4.47.0), or a
    `report_to` tracker outside its integrations (`trackio` before 4.54.0, `swanlab` before
    4.50.0, `kubeflow` before 5.4.0), in a TrainingArguments / TRL argument file or a
    LLaMA-Factory YAML. A name that no release has (a typo such as `adamw`, `cosine_decay`,
    `step`) fires whatever the version; a name only some releases have fires only where the
    pinned transformers lacks it (`adamw_torch_8bit` before 4.49.0, `cosine_with_min_lr` before
    4.40.0, `adamw_hf` from 4.50.0, `adamw_apex_fused` from 5.8.0; unknown version: silent).
    Where the file's own schema already reports a name no release has (SCH002: TRL and
    LLaMA-Factory files on releases the schema describes), this rule leaves it to SCH002.

    ## Why is this bad?
    TrainingArguments converts each name to its enum when the script parses the file
    ("'adamw' is not a valid OptimizerNames, please select one of [...]"), and the Trainer
    checks `report_to` when it is built ("trackio is not supported, only [...] are supported."):
    the job is queued, starts and stops with a ValueError before anything trains.

    ## Example
    `sft.yaml`:
        model_name_or_path: Qwen/Qwen2.5-0.5B
        dataset_name: trl-lib/Capybara
        output_dir: out
        optim: adamw_torch_8bit
        report_to: trackio
    `requirements.txt`:
        transformers==4.46.3
    Use instead:
        model_name_or_path: Qwen/Qwen2.5-0.5B
        dataset_name: trl-lib/Capybara
        output_dir: out
        optim: adamw_bnb_8bit
        report_to: wandb

    ## Fix safety
    No fix: the name meant is the author's choice (the message suggests the closest one).

    ## References
    - transformers src/transformers/training_args.py OptimizerNames and
      TrainingArguments.__post_init__ (`OptimizerNames(self.optim)`, `SchedulerType(...)`,
      `IntervalStrategy(...)`, `SaveStrategy(...)`), trainer_utils.py SchedulerType,
      IntervalStrategy, SaveStrategy (4.47.0), integrations/integration_utils.py
      INTEGRATION_TO_CALLBACK and get_reporting_integration_callbacks; each name's first and
      last release read from the release wheels (the table: trainlint rules/trainer_names.py)
    - huggingface/transformers#23010 (reduce_lr_on_plateau, 4.29.0)
    """

    code = "TRN053"
    name = "trainer-argument-name-refused"
    severity = ERROR
    triggers = kinds(*_FILES)

    def check(self, run, context):
        for config in run.configs:
            if config.value("file.kind") not in _FILES or config.value("arguments.project_parser") is True:
                continue
            pin: list = []  # the transformers pin, asked once and only for a name some releases lack
            for key, (argument, table, enum, where) in NAMED.items():
                field = config.get(key)
                if field is None or field.origin.is_default:
                    continue
                for name in _names(field.value):
                    if table.get(name) == _OLD:
                        continue
                    if name in table and not pin:
                        pin.append(pinned_version(config, "transformers", self.code, context))
                    found = pin[0] if pin and name in table else None
                    why = _refusal(name, table, found[0] if found else None)
                    if why is None or (name not in table and _schema_reports(config, argument)):
                        continue  # SCH002 reports a name no release has where the file's schema covers it
                    on = f" on transformers {found[0]} ({found[1]})" if found else ""
                    yield self.finding(config, field.span,
                                       f"{argument} {name!r} is not in transformers' {enum}{on}: {why}, so {where} "
                                       f"refuses it at launch{_close(name, table)}")
