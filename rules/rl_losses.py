"""The fused losses of TRL's reinforcement-learning trainers against the adapters a config puts on
the layers those losses read directly."""

from __future__ import annotations

from linter.registry import ERROR, Rule, kinds, register
from linter.versions import older_than

# trl/trainer/grpo_trainer.py compute_liger_loss: the fused liger GRPO loss multiplies the hidden
# states by `unwrapped_model.lm_head.weight`, a LoRA-wrapped head's frozen base weight. PEFT models
# take the liger loss from 0.18.0 (aaf39604b, #3355; 0.17.0 refused them); 1.7.0 (3318cf88e, #5977)
# refuses an adapter on lm_head. The switch: use_liger_loss (0.17.0, #3184), use_liger_kernel from
# 0.25.0 (use_liger_loss, where written, overrides it until its removal in 0.28.0).
_LIGER_PEFT = "0.18.0"
_LIGER_KERNEL_SWITCH = "0.25.0"
_LIGER_LOSS_REMOVED = "0.28.0"
_LIGER_HEAD_REFUSED = "1.7.0"


def _liger_loss_on(config, version: str) -> bool:
    loss, kernel = config.value("training.liger_loss"), config.value("memory.fused_cross_entropy")
    if older_than(version, _LIGER_KERNEL_SWITCH):
        return loss is True
    if older_than(version, _LIGER_LOSS_REMOVED):
        return loss is True if loss is not None else kernel is True
    return kernel is True


def _targets_head(targets) -> bool:
    return isinstance(targets, list) and any(name == "lm_head" or name.endswith(".lm_head") for name in targets)


@register
class LigerLossWithHeadAdapter(Rule):
    """TRN051 liger-loss-with-lm-head-adapter

    ## What it does
    Flags a `trl grpo` config that turns on the fused liger GRPO loss (`use_liger_loss`,
    `use_liger_kernel` from TRL 0.25) and puts a LoRA adapter on `lm_head`
    (`lora_target_modules`), on TRL 0.18 or later (a pin near the file or the installed
    package). With the version unknown only `use_liger_loss` fires: every TRL that reads it
    (0.17.0 to 0.27.x) fails, 0.17 refusing PEFT models with the liger loss.

    ## Why is this bad?
    The fused loss multiplies the hidden states by `lm_head.weight` itself, never calling
    the head module. On a LoRA-wrapped head that is the frozen base weight: the adapter's
    matrices sit in separate submodules the loss never sees, get no gradient, and the run
    trains as if `lm_head` were frozen while the config says it is adapted; the saved
    adapter holds the untouched initial head matrices (huggingface/trl#4612). TRL 0.18 to
    1.6 train on silently; TRL 1.7 refuses the config at launch: "`use_liger_kernel=True` is
    incompatible with applying a PEFT adapter to `lm_head`" (#5977).

    ## Example
    `grpo.yaml`:
        model_name_or_path: Qwen/Qwen2.5-1.5B-Instruct
        dataset_name: trl-lib/tldr
        num_generations: 8
        use_liger_loss: true
        use_peft: true
        lora_target_modules: [q_proj, v_proj, lm_head]
    `requirements.txt`:
        trl==0.19.0
    Use instead, in `grpo.yaml`:
        model_name_or_path: Qwen/Qwen2.5-1.5B-Instruct
        dataset_name: trl-lib/tldr
        num_generations: 8
        use_liger_loss: true
        use_peft: true
        lora_target_modules: [q_proj, v_proj]

    ## Fix safety
    No fix: dropping the head adapter or the fused loss (its memory saving) is the author's
    choice.

    ## References
    - trl/trainer/grpo_trainer.py GRPOTrainer.compute_liger_loss (lin_weight =
      unwrapped_model.lm_head.weight); __init__ (0.17.0 refused PEFT models with the liger
      loss; 0.18.0, commit aaf39604b, #3355, allows them; 1.7.0, commit 3318cf88e, #5977,
      refuses a tuner layer on the output embeddings)
    - trl/trainer/grpo_trainer.py v0.17.0 GRPOTrainer.__init__: "Liger loss is not supported with a
      PEFT model." (793735a69, #3184)
    - trl/trainer/grpo_config.py use_liger_loss (0.17.0, #3184; deprecated for
      use_liger_kernel in 0.25.0, removed in 0.28.0)
    - huggingface/trl#4612, #5977
    """

    code = "TRN051"
    name = "liger-loss-with-lm-head-adapter"
    severity = ERROR
    triggers = kinds("trl")

    def check(self, run, context):
        for config in run.configs:
            if config.value("file.kind") != "trl" or config.value("training.trainer") != "grpo":
                continue
            if config.value("adapter.kind") != "lora" or not _targets_head(config.value("adapter.target_modules")):
                continue
            trl = config.version("trl")
            if trl is None and config.value("training.liger_loss") is True:
                yield self.finding(
                    config, config.span("adapter.target_modules"),
                    "lm_head in the LoRA targets with use_liger_loss, which every TRL that reads it (0.17.0 to "
                    "0.27.x) fails on: 0.17.x refuses a PEFT model with the liger loss (\"Liger loss is not "
                    "supported with a PEFT model.\"), 0.18.0 to 0.27.x train on while the fused loss reads the "
                    "head's frozen base weight, so the lm_head adapter never gets a gradient (TRL 0.28.0 drops the "
                    "key; 1.7.0 refuses use_liger_kernel with a head adapter); drop lm_head from the targets or "
                    "turn the liger loss off")
                continue
            if trl is None or older_than(trl[0], _LIGER_PEFT) is not False or not _liger_loss_on(config, trl[0]):
                continue
            if older_than(trl[0], _LIGER_HEAD_REFUSED):
                what = ("the fused loss reads the head's frozen base weight, so the lm_head adapter never gets a "
                        "gradient and the head trains as if frozen")
            else:
                what = "GRPOTrainer refuses the config at launch (the fused loss would bypass the head adapter)"
            yield self.finding(
                config, config.span("adapter.target_modules"),
                f"lm_head in the LoRA targets with the fused liger GRPO loss on TRL {trl[0]} ({trl[1]}): {what}; "
                "drop lm_head from the targets or turn the liger loss off",
            )


# GKD's loss compares the student's and the teacher's next-token distributions position by position
# over the vocabulary: trl/trainer/gkd_trainer.py GKDTrainer.generalized_jsd_loss (85696aa64,
# #1814, v0.11.0: `beta * student_log_probs + (1 - beta) * teacher_log_probs`; later a torch.stack
# of the two; moved to trl/experimental/gkd in b7918c0f3, #4474, v0.26.0), so two vocab sizes fail
# at the first step; from 1.8.0 (012dc7714, #6252) GKDTrainer.__init__ raises ValueError when
# `model.config.get_text_config().vocab_size` differs between the two, after both models load.
# The fused liger JSD path (39cc9a826, #3946) is not read here: before 1.8.0 it stays silent.
_GKD_VOCAB_CHECKED = "1.8.0"


@register
class GkdTeacherVocabMismatch(Rule):
    """TRN083 gkd-teacher-vocab-size-mismatch

    ## What it does
    Flags a TRL GKD config (`teacher_model_name_or_path`, `lmbda` or `seq_kd`: GKDConfig's alone
    among TRL's stable configs; a key of GOLDConfig, cross-tokenizer, or of the distillation
    configs leaves the trainer unknown) whose student (`model_name_or_path`) and teacher have
    different `vocab_size`, as read from each model's local `config.json`, the Hugging Face cache,
    or trainlint's checkpoint table (verified rows only; unknown -> silent).

    ## Why is this bad?
    GKD's generalized JSD loss mixes the student's and the teacher's log-probabilities
    element-wise over the vocabulary dimension, so the two logit tensors must have the same last
    dimension. Models that share a tokenizer can still pad their embedding matrices differently
    (Qwen2.5-3B has 151936 rows, Qwen2.5-72B 152064, huggingface/trl#2215). TRL 0.11 to 1.7 load
    both models and fail at the first training step with a size mismatch; from 1.8.0 GKDTrainer
    raises ValueError at start-up, after both models are loaded. Every release that reads
    `teacher_model_name_or_path` fails, so the rule fires with the TRL version unknown (except
    with `use_liger_kernel`, whose fused loss before 1.8.0 is not verified here).

    ## Example
    `gkd.yaml`:
        model_name_or_path: Qwen/Qwen2.5-3B-Instruct
        teacher_model_name_or_path: Qwen/Qwen2.5-72B-Instruct
        lmbda: 0.5
        dataset_name: trl-lib/chatbot_arena_completions
    `requirements.txt`:
        trl==0.20.0
    Use instead, in `gkd.yaml`:
        model_name_or_path: Qwen/Qwen2.5-7B-Instruct
        teacher_model_name_or_path: Qwen/Qwen2.5-72B-Instruct
        lmbda: 0.5
        dataset_name: trl-lib/chatbot_arena_completions

    ## Fix safety
    No fix: the teacher is the author's choice (a teacher of the same vocabulary size, or
    TRL's GOLD trainer for cross-tokenizer distillation).

    ## References
    - trl/trainer/gkd_trainer.py GKDTrainer.generalized_jsd_loss: 85696aa64 "Gkd trainer" (#1814,
      v0.11.0); trl/experimental/gkd/gkd_trainer.py from b7918c0f3 (#4474, v0.26.0)
    - trl/experimental/gkd/gkd_trainer.py GKDTrainer.__init__: 012dc7714 "Raise a clear error when
      GKD student and teacher vocab sizes differ" (#6252, v1.8.0); 0fadf1a67 (#6340, v1.9.0,
      get_text_config for multimodal configs)
    - huggingface/trl#2215, #3028
    """

    code = "TRN083"
    name = "gkd-teacher-vocab-size-mismatch"
    severity = ERROR
    triggers = kinds("trl")

    def check(self, run, context):
        for config in run.configs:
            teacher, student = config.value("model.teacher"), config.value("model.name")
            if (config.value("file.kind") != "trl" or config.value("training.trainer") != "gkd"
                    or not isinstance(teacher, str) or not isinstance(student, str)):
                continue
            found = config.version("trl")
            if config.value("memory.fused_cross_entropy") is True and (
                    found is None or older_than(found[0], _GKD_VOCAB_CHECKED) is not False):
                context.notes.append(f"{config.path}: {self.code} skipped: the fused liger GKD loss before TRL "
                                     f"{_GKD_VOCAB_CHECKED} is not verified")
                continue
            from linter.models import dimensions_of

            sizes = [dimensions_of(name, config.path.parent) for name in (student, teacher)]
            if any(dims is None or dims.source.startswith("unverified") or (
                    # a table row is trusted for a Hub id only: a local folder may hold a resized vocabulary
                    not dims.source.endswith("config.json") and not _hub_id(name))
                    for name, dims in zip((student, teacher), sizes)):
                context.notes.append(f"{config.path}: {self.code} skipped: the vocab_size of {student} or {teacher} "
                                     "is unknown")
                continue
            if sizes[0].vocab == sizes[1].vocab:
                continue
            when = ("GKDTrainer raises ValueError at start-up, after loading both models"
                    if found is not None and older_than(found[0], _GKD_VOCAB_CHECKED) is False else
                    "the generalized JSD loss fails with a size mismatch at the first step (TRL 1.8.0 and later "
                    "raise ValueError at start-up, after loading both models)")
            yield self.finding(
                config, config.span("model.teacher"),
                f"the GKD student {student} has vocab_size {sizes[0].vocab} but the teacher {teacher} has "
                f"{sizes[1].vocab}{_on(found)}: GKD compares the two next-token distributions over one vocabulary, "
                f"so {when}")


def _hub_id(name: str) -> bool:
    return name.count("/") == 1 and not name.startswith((".", "/", "~"))


def _on(found) -> str:
    return f" on TRL {found[0]} ({found[1]})" if found else ""


@register
class GkdConfigRefused(Rule):
    """TRN084 gkd-config-refused

    ## What it does
    Flags a TRL GKD config (`teacher_model_name_or_path`, `lmbda` or `seq_kd`, and no key of the
    GOLD or server-distillation configs) whose `lmbda` or `beta` lies outside [0, 1].

    ## Why is this bad?
    `GKDConfig.__post_init__` raises ValueError ("lmbda must be in the range [0.0, 1.0]." /
    "beta must be in the range [0.0, 1.0].") when the config is parsed: `lmbda` is the share
    of batches trained on the student's own generations, `beta` the interpolation of the
    generalized JSD between forward and reverse KL. Every release with GKD (TRL 0.11.0 on)
    has the check, so the rule fires with the TRL version unknown.

    ## Example
    `gkd.yaml`:
        model_name_or_path: Qwen/Qwen2.5-0.5B-Instruct
        teacher_model_name_or_path: Qwen/Qwen2.5-1.5B-Instruct
        dataset_name: trl-lib/chatbot_arena_completions
        lmbda: 5
    Use instead:
        model_name_or_path: Qwen/Qwen2.5-0.5B-Instruct
        teacher_model_name_or_path: Qwen/Qwen2.5-1.5B-Instruct
        dataset_name: trl-lib/chatbot_arena_completions
        lmbda: 0.5

    ## Fix safety
    No fix: the intended share is the author's.

    ## References
    - trl/trainer/gkd_config.py GKDConfig.__post_init__: 85696aa64 "Gkd trainer" (#1814, v0.11.0);
      trl/experimental/gkd/gkd_config.py from b7918c0f3 (#4474, v0.26.0), unchanged to v1.9.0
    """

    code = "TRN084"
    name = "gkd-config-refused"
    severity = ERROR
    triggers = kinds("trl")

    def check(self, run, context):
        for config in run.configs:
            if config.value("file.kind") != "trl" or config.value("training.trainer") != "gkd":
                continue
            for key, name in (("training.gkd_lmbda", "lmbda"), ("training.rl_beta", "beta")):
                value = config.value(key)
                if isinstance(value, (int, float)) and not isinstance(value, bool) and not 0 <= value <= 1:
                    yield self.finding(
                        config, config.span(key),
                        f"{name} {value}: GKDConfig raises \"{name} must be in the range [0.0, 1.0].\" when the "
                        "config is parsed (TRL 0.11.0 and later)")


# DPOTrainer's beta-scaled losses, the same formulas from v0.5.0 (84393f3b9) to v1.9.0 (dpo_trainer.py
# dpo_loss; v0.8.0 lines 879-886, f2cd57710 lines 1434-1451): sigmoid -F.logsigmoid(beta * logits),
# hinge relu(1 - beta * logits), ipo (logits - 1 / (2 * beta)) ** 2. Other loss types are not judged.
_BETA_LOSSES = {"sigmoid", "hinge", "ipo"}


@register
class DpoBetaNotPositive(Rule):
    """TRN103 dpo-beta-not-positive

    ## What it does
    Checks the `beta` of a config DPOTrainer reads (a DPO-only key, a `trl dpo` launch, or a script
    handing a DPOConfig to DPOTrainer) for zero or a negative value, with the sigmoid (default),
    hinge or IPO loss.

    ## Why is this bad?
    beta scales every DPO loss. At 0 the sigmoid loss is log 2 for every pair and the hinge loss 1:
    both have no gradient, so the run finishes and the policy never moves (the logged rewards are 0.0
    from the first step). IPO divides by beta: 0 raises ZeroDivisionError at the first step. A
    negative beta reverses the preference: training moves the policy towards the rejected answers.
    No TRL release refuses either value (DPOConfig has no check on beta).

    ## Example
    `train.py`:
        from trl import DPOConfig, DPOTrainer

        args = DPOConfig(output_dir="out", beta=0.0)
        trainer = DPOTrainer(model="Qwen/Qwen2.5-0.5B", args=args, train_dataset=None)

    Use instead, in `train.py` (DPOConfig's default beta is 0.1):
        from trl import DPOConfig, DPOTrainer

        args = DPOConfig(output_dir="out", beta=0.1)
        trainer = DPOTrainer(model="Qwen/Qwen2.5-0.5B", args=args, train_dataset=None)

    ## Fix safety
    No fix: the strength of the preference is the author's to choose.

    ## References
    - trl/trainer/dpo_trainer.py dpo_loss (v0.5.0, 84393f3b9, to v1.9.0): the sigmoid, hinge and IPO
      formulas; trl/trainer/dpo_config.py beta default 0.1
    - huggingface/trl#1627 (loss stuck at 0.6931, rewards 0.0 with beta 0), huggingface/trl#1311
    """

    code = "TRN103"
    name = "dpo-beta-not-positive"
    severity = ERROR
    triggers = kinds("trl")

    def check(self, run, context):
        for config in run.configs:
            if config.value("file.kind") != "trl" or config.value("training.trainer") != "dpo" \
                    or config.value("training.trainer_candidates") not in (None, ["dpo"]):
                continue
            beta = config.value("training.rl_beta")
            if not isinstance(beta, (int, float)) or isinstance(beta, bool) or beta > 0:
                continue
            if config.value("training.rpo_alpha") is not None:
                continue  # RPO's NLL term still trains: the run is SFT-like, not idle
            written = config.value("training.loss_type")
            types = written if isinstance(written, list) else ["sigmoid" if written is None else written]
            if not types or not set(types) <= _BETA_LOSSES:
                continue
            if beta == 0:
                effect = ("IPO divides by it: ZeroDivisionError at the first step" if "ipo" in types else
                          "the loss is constant (log 2 for sigmoid, 1 for hinge) with no gradient: the run "
                          "finishes and the policy never moves, rewards 0.0 from the first step")
            else:
                effect = "the preference is reversed: training moves the policy towards the rejected answers"
            yield self.finding(config, config.span("training.rl_beta"),
                               f"DPO beta {beta}: {effect}; beta must be positive (DPOConfig's default is 0.1)")
