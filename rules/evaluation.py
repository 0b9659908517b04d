"""Evaluation during a Hugging Face Trainer run: settings the Trainer never reads.

transformers reads `eval_steps` in one place: trainer_callback.py DefaultFlowCallback.on_step_end
sets `control.should_evaluate` when `args.eval_strategy == IntervalStrategy.STEPS and
state.global_step % state.eval_steps == 0` (evaluation_strategy before 4.41; read in the 4.0.0,
4.9.0, 4.41.0, 5.0.0 and 5.24.0 wheels; 5.x adds a last evaluation at the end, under "steps" too).
`TrainingArguments.__post_init__` checks and rounds eval_steps only under "steps", falls back to
logging_steps only under "steps", and never sets the strategy from eval_steps or do_eval (3.5.1,
4.0.0, 4.2.0, 4.9.0, 4.20.0, 4.30.0, 4.40.2, 4.41.0, 4.46.0, 4.50.3, 4.51.0, 4.57.1, 5.0.0, 5.10.4,
5.24.0; 3.x turned "steps" on from `evaluate_during_training` only). The strategy's default, "no"
in every one of them, is the adapters' (adapters/trainer_arguments.py EVAL_STRATEGY_DEFAULT).
"""

from __future__ import annotations

from linter.changes import SetValue
from linter.fixes import Applicability
from linter.registry import WARNING, Rule, register
from linter.versions import older_than

from .facts import is_number, read_by_repository_script

# Files whose training keys reach transformers' TrainingArguments: TrainingArguments / TRL argument
# files, LLaMA-Factory's YAML (Seq2SeqTrainingArguments), an Unsloth script's argument call.
# Axolotl is not one: its builder (core/builders/base.py, since da10af03e, 2023-08) turns
# eval_steps into eval_strategy "steps" itself.
_FILES = ("trl", "trainer", "llamafactory", "unsloth")
_RENAMED = "4.41.0"  # evaluation_strategy -> eval_strategy (training_args.py; the old name refused from 4.51.0)


@register
class EvalStepsWithoutStrategy(Rule):
    """TRN102 eval-steps-without-steps-strategy

    ## What it does
    Flags `eval_steps` (a positive number) in a TrainingArguments or TRL argument file, a
    LLaMA-Factory config, or the `TrainingArguments(...)` / `SFTConfig(...)` (or another TRL
    config) call of an Unsloth script, where `eval_strategy` (the older `evaluation_strategy`)
    is not written: TrainingArguments' default, "no", then holds in every transformers
    release. Silent where the strategy is written (as "no" too: evaluation was turned off on
    purpose), computed, or may be set elsewhere (a `**kwargs`, an assignment after the call,
    a launch command's `--eval_strategy`), where the file trains nothing, where
    `load_best_model_at_end` is on (TRN011 reports the strategy mismatch), where a
    repository's own argument classes read the file, for a LLaMA-Factory file with Megatron
    keys (its Megatron-Bridge trainer, unreleased at ff6d4d12e, evaluates every `eval_steps`
    by itself), and for an Unsloth script that mentions MLX (Unsloth's Apple-Silicon trainer,
    from 2026.7.1, does too).

    ## Why is this bad?
    `eval_steps` is only the interval of the "steps" strategy: the Trainer evaluates during
    training only when `eval_strategy` is "steps" or "epoch", and nothing turns the strategy
    on from `eval_steps`, an `eval_dataset` or `do_eval`. With the default "no" the run
    trains to the end without a single evaluation and without a warning, although the
    config asks for one every `eval_steps` steps: the evaluation loss the author watches for
    overfitting never appears, and TRL's `trl sft` / `trl dpo` scripts (0.12 on) do not even
    load the test split (unslothai/unsloth#3177). Axolotl is not affected: it sets the strategy from
    `eval_steps` itself.

    ## Example
    `train.yaml`:
        model_name_or_path: Qwen/Qwen2.5-0.5B-Instruct
        stage: sft
        do_train: true
        finetuning_type: lora
        dataset: alpaca_en_demo
        template: qwen
        output_dir: saves/qwen-lora
        val_size: 0.1
        eval_steps: 500
    Use instead:
        model_name_or_path: Qwen/Qwen2.5-0.5B-Instruct
        stage: sft
        do_train: true
        finetuning_type: lora
        dataset: alpaca_en_demo
        template: qwen
        output_dir: saves/qwen-lora
        val_size: 0.1
        eval_strategy: steps
        eval_steps: 500
    In an Unsloth script, `SFTConfig(eval_strategy="steps", eval_steps=50, ...)`.

    ## Fix safety
    Unsafe: the fix writes `eval_strategy: steps`, after which the run evaluates every
    `eval_steps` steps (time and memory it did not spend before). Offered only for a
    LLaMA-Factory config that gives an evaluation set (`val_size` above 0 or `eval_dataset`)
    where the transformers in use is pinned at 4.41 or later (before, the key is
    `evaluation_strategy`; 4.51 and later refuse that name): elsewhere whether the script has
    an evaluation set to run on (the Trainer refuses "steps" without one), or which name the
    release takes, is not known, and the message says what to write.

    ## References
    - transformers src/transformers/trainer_callback.py DefaultFlowCallback.on_step_end (the one
      reader of eval_steps, under IntervalStrategy.STEPS) and training_args.py
      TrainingArguments (eval_strategy default "no"; __post_init__), release wheels 3.5.1 to 5.24.0
    - transformers 4.41.0 renamed evaluation_strategy to eval_strategy (a deprecated alias to
      4.50.x, gone in 4.51.0)
    - trl/scripts/sft.py (`eval_dataset=... if training_args.eval_strategy != "no" else None`)
    - hiyouga/LLaMA-Factory src/llamafactory/hparams/parser.py (every tag v0.1.0 to v0.9.5 leaves
      eval_strategy to transformers); train/megatron_bridge/config_builder.py at ff6d4d12e
    - axolotl src/axolotl/core/builders/base.py (`elif self.cfg.eval_steps:
      training_args_kwargs["eval_strategy"] = "steps"`)
    - unslothai/unsloth#3177
    """

    code = "TRN102"
    name = "eval-steps-without-steps-strategy"
    severity = WARNING
    fix_applicability = Applicability.UNSAFE
    triggers = ("checkpoint.eval_steps",)

    def check(self, run, context):
        for config in run.configs:
            steps, evaluate = config.get("checkpoint.eval_steps"), config.get("checkpoint.eval_strategy")
            if (config.value("file.kind") not in _FILES or steps is None or not is_number(steps.value)
                    or steps.value <= 0 or evaluate is None or not evaluate.origin.is_default):
                continue
            if (config.value("training.enabled") is False or config.value("checkpoint.load_best") is True
                    or config.value("arguments.project_parser") is True or read_by_repository_script(config)
                    or config.value("training.megatron_keys") is True):
                continue
            named = config.written_as("checkpoint.eval_steps")
            yield self.finding(
                config, steps.span,
                f"{'eval_steps' if named == 'checkpoint.eval_steps' else named} {_number(steps.value)} without "
                "eval_strategy, which stays \"no\" (TrainingArguments' default): the Trainer evaluates only under "
                "the \"steps\" (or \"epoch\") strategy, so eval_steps schedules nothing and no evaluation runs "
                f"during training{_held_out(config)}; {_advice(config)} to evaluate",
                fix=self._fix(config),
            )

    def _fix(self, config):
        transformers = config.version("transformers")
        evaluated = is_number(config.value("data.val_size")) and config.value("data.val_size") > 0 \
            or bool(config.value("data.eval_sets"))
        if (config.value("file.kind") != "llamafactory" or not evaluated or transformers is None
                or older_than(transformers[0], _RENAMED) is not False):
            return None
        return self.fix("Write eval_strategy: steps", SetValue(config, "checkpoint.eval_strategy", "steps"))


def _advice(config) -> str:
    """The key to write for the transformers in use: evaluation_strategy before 4.41, eval_strategy from."""
    transformers = config.version("transformers")
    old = transformers is not None and older_than(transformers[0], _RENAMED) is True
    new = transformers is not None and older_than(transformers[0], _RENAMED) is False
    name = "evaluation_strategy" if old else "eval_strategy"
    setting = f'{name}="steps"' if config.value("file.kind") == "unsloth" else f"{name}: steps"
    if old or new:
        return f"set {setting} (transformers {transformers[0]})"
    return f"set {setting} (evaluation_strategy before transformers 4.41)"


def _number(value):
    return int(value) if float(value).is_integer() else value


def _held_out(config) -> str:
    """LLaMA-Factory splits val_size off the training data whatever the strategy (data_utils.py
    split_dataset, from v0.1.x dsets/utils.py to HEAD): that share trains nothing and is never
    evaluated during training."""
    share = config.get("data.val_size")
    if config.value("file.kind") != "llamafactory" or share is None or share.origin.is_default \
            or not is_number(share.value) or share.value <= 0:
        return ""
    return f", though val_size {_number(share.value)} still takes that share out of the training data"
