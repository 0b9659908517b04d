"""Checks the trainers themselves make at launch, read from the config before the job is queued
(issue 16: mined incidents that crash at launch or at the first step)."""

from __future__ import annotations

from linter.registry import ERROR, Rule, register

from .facts import world_size

# TrainingArguments / TRL argument files (what the HF Trainer itself reads), and LLaMA-Factory's
# YAML, whose training keys are transformers' Seq2SeqTrainingArguments.
_TRAINING_ARGUMENT_FILES = ("trl", "trainer", "llamafactory")


@register
class UnslothWithZero3(Rule):
    """TRN010 unsloth-with-zero3

    ## What it does
    Flags a config that trains through Unsloth (LLaMA-Factory `use_unsloth: true`) while a
    DeepSpeed config of the same run (the `deepspeed:` file it links) uses ZeRO stage 3.

    ## Why is this bad?
    ZeRO-3 partitions every parameter across the GPUs and gathers it on demand through hooks
    on each module's forward. Unsloth replaces the model's forward passes and LoRA layers with
    its own fused kernels, which read the full weights directly: under ZeRO-3 they find empty
    partitions. LLaMA-Factory refuses the combination at launch ("Unsloth is incompatible with
    DeepSpeed ZeRO-3."); before that check the run died with a cryptic AssertionError after
    loading the model (LLaMA-Factory#2741, #6940, #3949).

    ## Example
    `train.yaml`:
        model_name_or_path: Qwen/Qwen2.5-7B-Instruct
        stage: sft
        do_train: true
        finetuning_type: lora
        use_unsloth: true
        deepspeed: ds_z3.json
    `ds_z3.json`:
        {"zero_optimization": {"stage": 3}}
    Use instead, in `ds_z3.json`:
        {"zero_optimization": {"stage": 2}}

    ## Fix safety
    No fix: ZeRO-2 keeps a full copy of the weights on every GPU, which may not fit; dropping
    Unsloth is the other choice, and the author picks.

    ## References
    - LLaMA-Factory src/llamafactory/hparams/parser.py (get_train_args): "Unsloth is
      incompatible with DeepSpeed ZeRO-3."
    - hiyouga/LLaMA-Factory#2741, #6940, #3949
    """

    code = "TRN010"
    name = "unsloth-with-zero3"
    severity = ERROR
    triggers = ("model.unsloth",)

    def check(self, run, context):
        zero3 = next((config for config in run.configs if config.value("parallel.zero_stage") == 3), None)
        if zero3 is None:
            return
        for config in run.configs:
            if config.value("model.unsloth") is not True:
                continue
            yield self.finding(
                config, config.span("model.unsloth"),
                f"Unsloth with DeepSpeed ZeRO-3 ({zero3.path.name}): Unsloth's kernels read whole weights that "
                "ZeRO-3 partitions, and the launch refuses it (\"Unsloth is incompatible with DeepSpeed ZeRO-3\"); "
                "use ZeRO stage 2 or turn Unsloth off",
            )


# transformers/training_args.py TrainingArguments.__post_init__: with load_best_model_at_end the
# save and eval strategies must match (since 4.9.0, PR #12786; "best", a save strategy of
# transformers 4.46, is exempt). The check compares the values after the field defaults, which
# are the same in every release from 4.9.0 to 5.23.0: eval_strategy (evaluation_strategy before
# 4.41) "no", save_strategy "steps" (read in the 4.9.0, 4.25.1, 4.36.0, 4.46.0, 4.57.6, 5.0.0 and
# 5.23.0 wheels; nothing in __post_init__ changes either before the check, and TRL's configs and
# LLaMA-Factory's parser keep TrainingArguments' defaults).
_STRATEGY_CHECK = "4.9.0"
_DEFAULT_STRATEGIES = {"checkpoint.save_strategy": "steps", "checkpoint.eval_strategy": "no"}


@register
class LoadBestStrategyMismatch(Rule):
    """TRN011 load-best-model-strategy-mismatch

    ## What it does
    Flags `load_best_model_at_end: true` in a TrainingArguments, TRL or LLaMA-Factory config
    whose `save_strategy` and `eval_strategy` (or the older `evaluation_strategy`) differ,
    unless `save_strategy` is `best`. A strategy the file does not write is TrainingArguments'
    default: `eval_strategy` "no", `save_strategy` "steps", so a file that turns on
    `load_best_model_at_end` and writes neither is refused too. Silent where the transformers in
    use is older than 4.9.0.

    ## Why is this bad?
    Loading the best model at the end needs a checkpoint at every evaluation, so
    TrainingArguments refuses to be built: "--load_best_model_at_end requires the save and
    eval strategy to match". The job dies at launch, after it waited in the queue
    (LLaMA-Factory#8133, transformers#12685).

    ## Example
    `train.yaml`:
        model_name_or_path: Qwen/Qwen3-4B
        stage: sft
        do_train: true
        finetuning_type: lora
        val_size: 0.1
        eval_strategy: steps
        eval_steps: 50
        save_strategy: epoch
        load_best_model_at_end: true
    Use instead, in `train.yaml`:
        model_name_or_path: Qwen/Qwen3-4B
        stage: sft
        do_train: true
        finetuning_type: lora
        val_size: 0.1
        eval_strategy: steps
        eval_steps: 50
        save_strategy: steps
        save_steps: 50
        load_best_model_at_end: true

    ## Fix safety
    No fix: which schedule to keep (and `save_steps` a multiple of `eval_steps`) is the
    author's choice.

    ## References
    - transformers/training_args.py: TrainingArguments.__post_init__ (load_best_model_at_end
      sanity checks, from 4.9.0, PR #12786), which compares the strategies after the field
      defaults (eval_strategy "no", save_strategy "steps": the same from 4.9.0 to 5.23.0)
    - hiyouga/LLaMA-Factory#8133; huggingface/transformers#12685, #12786
    """

    code = "TRN011"
    name = "load-best-model-strategy-mismatch"
    severity = ERROR
    triggers = ("checkpoint.load_best",)

    def check(self, run, context):
        for config in run.configs:
            if (config.value("file.kind") not in _TRAINING_ARGUMENT_FILES
                    or config.value("checkpoint.load_best") is not True
                    or config.value("arguments.project_parser") is True):
                continue
            save, evaluate = (_DEFAULT_STRATEGIES[key] if config.get(key) is None else config.value(key)
                              for key in ("checkpoint.save_strategy", "checkpoint.eval_strategy"))
            if not isinstance(save, str) or not isinstance(evaluate, str) or save in (evaluate, "best"):
                continue
            if context.version_before("transformers", _STRATEGY_CHECK, config, self.code) is not None:
                continue
            defaulted = [f"{key.split('.')[1]} {value} by default" for key, value in _DEFAULT_STRATEGIES.items()
                         if config.get(key) is None or config.get(key).origin.is_default]
            yield self.finding(
                config, config.span("checkpoint.load_best"),
                f"load_best_model_at_end with save_strategy {save} and eval_strategy {evaluate}"
                f"{' (' + ', '.join(defaulted) + ')' if defaulted else ''}: TrainingArguments "
                "refuses it at launch (the strategies must match so that every evaluation has a checkpoint); "
                f"use the same strategy for both",
            )


# unsloth/models/llama.py and tokenizer_utils.py, to release 2025.2.x: the patched training loop
# raises "Unsloth currently does not support multi GPU setups" when more than one GPU gains
# memory (nvidia-smi before and after loading) or the inner loop cannot be patched; the 2025.3
# releases (tag 2025-03, 2025.3.11) only warn "Unsloth is running with multi GPUs", and stop
# patching the trainer's train(). Which 2025.3.x release changed it is not known here: only
# releases up to 2025.2.4 (tag 2025-02) are flagged.
_UNSLOTH_LAST_SINGLE_GPU = "2025.2.5"


@register
class UnslothMultiGpu(Rule):
    """TRN015 unsloth-multi-gpu

    ## What it does
    Flags a config that trains through Unsloth (LLaMA-Factory `use_unsloth: true`) in a
    run of more than one GPU (`--world-size`, an accelerate config's `num_processes`, or the
    repository's launch command that runs the file), where the Unsloth in use is 2025.2.4 or
    older (a pin near the file or the installed package; silent when unknown).

    ## Why is this bad?
    Unsloth's open-source releases up to February 2025 patched the trainer's training loop
    to stop on more than one GPU: "Unsloth currently does not support multi GPU setups -
    but we are working on it!" at the first step, after the model has loaded on every rank
    (unslothai/unsloth#859, #724; LLaMA-Factory#5635). The 2025.3 releases train on several
    GPUs and only warn that the effective batch is multiplied (checked in 2025.3.11).

    ## Example
    `train.yaml`, on 4 GPUs:
        model_name_or_path: meta-llama/Meta-Llama-3-8B-Instruct
        stage: sft
        do_train: true
        finetuning_type: lora
        use_unsloth: true
    `requirements.txt`:
        unsloth==2024.8
    Use instead Unsloth 2025.3.11 or later (or one GPU), in `requirements.txt`:
        unsloth==2025.3.11

    ## Fix safety
    No fix: upgrading Unsloth, one GPU, or no Unsloth are the choices.

    ## References
    - unsloth/models/llama.py (2024.8-2025.2.4: `_fast_inner_training_loop` memory check and
      RuntimeError; 2025.3.11: `logger.warning_once('Unsloth is running with multi GPUs ...')`)
    - unsloth/tokenizer_utils.py: patch_sft_trainer_tokenizer (nvidia-smi check in train())
    - unslothai/unsloth#859, #724; hiyouga/LLaMA-Factory#5635
    """

    code = "TRN015"
    name = "unsloth-multi-gpu"
    severity = ERROR
    triggers = ("model.unsloth",)

    def check(self, run, context):
        world = world_size(run, context)
        if not isinstance(world, int) or world < 2:
            return
        for config in run.configs:
            if config.value("model.unsloth") is not True:
                continue
            old = context.version_before("unsloth", _UNSLOTH_LAST_SINGLE_GPU, config, self.code)
            if old is None:
                continue
            yield self.finding(
                config, config.span("model.unsloth"),
                f"Unsloth {old[0]} ({old[1]}) on {world} GPUs: Unsloth releases up to 2025.2.4 stop at the first step "
                "(\"Unsloth currently does not support multi GPU setups\"); train on one GPU or upgrade Unsloth",
            )
