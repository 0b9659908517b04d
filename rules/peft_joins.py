"""Hazards of a PEFT adapter type joined with the trainer's settings: each needs both in one config,
which a training script is (linter/adapters/script_peft.py: the PEFT config handed to
get_peft_model or the trainer's peft_config= is the adapter the trainer trains). TRL's YAML / CLI
config names only LoRA (ModelConfig use_peft + lora_*: trl/trainer/utils.py get_peft_config builds a
LoraConfig), and Axolotl / LLaMA-Factory offer no prompt-learning or AdaLoRA adapter, so none of
these can be written in their files.

Read in huggingface/peft (bare mirror at 5d602fdbf), huggingface/trl (f2cd57710) and the
transformers wheels 4.18.0, 4.19.0, 4.36.2, 4.53.3, 4.54.0, 4.55.0, 4.56.0, 4.57.0 (trainer.py).
"""

from __future__ import annotations

from linter.registry import ERROR, Rule, register

from .release_table import Facts, Range, ReleaseTable, Row

_PROMPT_LEARNING = ("prompt_tuning", "p_tuning", "prefix_tuning")
_NAMES = {"prompt_tuning": "prompt tuning (PromptTuningConfig)", "p_tuning": "P-tuning (PromptEncoderConfig)",
          "prefix_tuning": "prefix tuning (PrefixTuningConfig)"}


def _unseen(f, *keys: str) -> bool:
    """A key the script computes (or a call with **kwargs): its value is unknown."""
    unseen = f("arguments.unseen_keys") or ()
    return "*" in unseen or any(key in unseen for key in keys)


@register
class PrefixTuningGradientCheckpointing(Rule):
    """PEF016 prefix-tuning-gradient-checkpointing

    ## What it does
    Flags a training script that trains a PEFT prefix-tuning adapter (`PrefixTuningConfig`
    handed to `get_peft_model` or the trainer's `peft_config=`) with `gradient_checkpointing`
    on in its `TrainingArguments` / TRL config.

    ## Why is this bad?
    Prefix tuning feeds its prefix to every attention layer as past key/values. Under gradient
    checkpointing the layers either drop them (transformers before the Cache refactor passes
    `None` as the checkpointed layer's past) or update the Cache a second time when the layer
    is recomputed in the backward pass (Cache-based prefix tuning), so the keys no longer
    match the attention mask that PEFT lengthened by the prefix: the first step fails with a
    size mismatch (huggingface/peft#869, T5 in #168). PEFT 0.14.0 raises "Prefix tuning does
    not work with gradient checkpointing" in `get_peft_model` only where checkpointing is
    already on; the Trainer turns it on later, in `train()`. No release of either works.

    ## Example
    `train.py`:
        from peft import PrefixTuningConfig, get_peft_model
        from transformers import AutoModelForCausalLM, Trainer, TrainingArguments
        model = AutoModelForCausalLM.from_pretrained("mistralai/Mistral-7B-v0.1")
        model = get_peft_model(model, PrefixTuningConfig(task_type="CAUSAL_LM", num_virtual_tokens=20))
        args = TrainingArguments("out", gradient_checkpointing=True)
        Trainer(model=model, args=args, train_dataset=data).train()
    Use instead:
        from peft import PrefixTuningConfig, get_peft_model
        from transformers import AutoModelForCausalLM, Trainer, TrainingArguments
        model = AutoModelForCausalLM.from_pretrained("mistralai/Mistral-7B-v0.1")
        model = get_peft_model(model, PrefixTuningConfig(task_type="CAUSAL_LM", num_virtual_tokens=20))
        args = TrainingArguments("out", gradient_checkpointing=False)
        Trainer(model=model, args=args, train_dataset=data).train()

    ## Fix safety
    No fix: a script is edited by hand (and turning checkpointing off costs memory; prompt
    tuning or LoRA work with it).

    ## References
    - peft src/peft/peft_model.py PeftModel._setup_prompt_encoder: b5b902368 (#2191, v0.14.0,
      "caching does not work with gradient checkpointing"); tests/test_decoder_models.py
      test_prompt_learning_with_gradient_checkpointing (prefix tuning is expected to refuse)
    - transformers models/gpt2/modeling_gpt2.py (4.19.0: the checkpointed block gets `None`
      for its past), models/llama/modeling_llama.py (4.36.2); trainer.py _inner_training_loop
      calls gradient_checkpointing_enable when args.gradient_checkpointing
    - huggingface/peft#869, #168, #2449
    """

    code = "PEF016"
    name = "prefix-tuning-gradient-checkpointing"
    severity = ERROR
    triggers = ("adapter.kind",)

    def check(self, run, context):
        for config in run.configs:
            if config.value("adapter.kind") != "prefix_tuning" or config.value("memory.gradient_checkpointing") is not True:
                continue
            yield self.finding(
                config, config.span("memory.gradient_checkpointing"),
                "gradient_checkpointing with a prefix-tuning adapter: the checkpointed layers drop or re-append the "
                "prefix key/values, so the attention shapes no longer match and the first training step fails "
                "(every PEFT / transformers release; PEFT >= 0.14 refuses at get_peft_model only where checkpointing "
                "is already on); turn gradient_checkpointing off or use prompt tuning / LoRA")


def _sft_prompt_learning(kinds):
    def applies(f) -> bool:
        return (f("training.trainer") == "sft" and f("adapter.kind") in kinds
                and f("memory.fused_cross_entropy") is not True and f("training.sft_use_liger") is not True
                and not _unseen(f, "use_liger_kernel", "use_liger"))
    return applies


def _generic_peft_best_loss(f) -> bool:
    """A generic PeftModel trained by Trainer / Seq2SeqTrainer / SFTTrainer (none overrides
    prediction_step before TRL 0.29.0, which needs transformers >= 4.56.2) that loads the best
    checkpoint by the evaluation loss with no label_names."""
    metric = f("checkpoint.best_metric_name")
    metric = "loss" if metric is None else str(metric).strip()
    return (f("adapter.generic_model") is True and f("training.trainer_class") in ("Trainer", "Seq2SeqTrainer", "SFTTrainer")
            and f("checkpoint.load_best") is True and f("checkpoint.eval_strategy") in ("steps", "epoch")
            and metric in ("loss", "eval_loss") and f("checkpoint.label_names") is None
            and not _unseen(f, "label_names", "metric_for_best_model", "load_best_model_at_end", "eval_strategy"))


def _prompt_learning_head(f) -> bool:
    return (f("adapter.kind") in _PROMPT_LEARNING and f("file.kind") != "peft"
            and f("adapter.task_type") in ("SEQ_CLS", "TOKEN_CLS", "QUESTION_ANS"))


_HEAD = "the task head (classifier / score / qa_outputs)"
ROWS = (
    # sft_trainer.py compute_loss: mean_token_accuracy on every step from 84d73fd00 (#2597, v0.15.0), comparing
    # logits that carry num_virtual_tokens extra positions with the labels; 485e7d1c7 (#3821, v0.22.0) drops them.
    Row("TRN111", (Range("trl", "0.15.0", "0.22.0"),), _sft_prompt_learning(("prompt_tuning", "p_tuning")),
        "adapter.kind", "SFTTrainer with a {method} adapter",
        "the token-accuracy metric compares logits that include the virtual tokens with the labels, and the first "
        "step fails on a shape mismatch ('The size of tensor a must match the size of tensor b')",
        "huggingface/trl#3812; fixed in TRL 0.22.0 (#3821)"),
    # 485e7d1c7 (#3821, v0.22.0) drops num_virtual_tokens positions for every prompt-learning config, and da167d88b
    # (#3940, v0.22.0) lengthens the entropy mask by them, though prefix tuning adds none to the logits;
    # f15399d3d (#4196, v0.24.0) leaves prefix tuning alone.
    Row("TRN111", (Range("trl", "0.22.0", "0.24.0"),), _sft_prompt_learning(("prefix_tuning",)),
        "adapter.kind", "SFTTrainer with a {method} adapter",
        "the token-accuracy and entropy metrics drop (or mask) num_virtual_tokens logit positions that prefix "
        "tuning never adds, and the first step fails on a shape mismatch",
        "huggingface/trl#4196; fixed in TRL 0.24.0"),
    # trainer.py __init__ default_label_names = find_labels(self.model.__class__) (4.18.0 to 4.54.x): the generic
    # PeftModel's forward(*args, **kwargs) names no labels, so prediction_step computes no loss; 4.55.0 (#39265)
    # inspects the base model.
    Row("TRN112", (Range("transformers", "4.18.0", "4.55.0"),), _generic_peft_best_loss,
        "checkpoint.best_metric_name checkpoint.load_best adapter.generic_model",
        "load_best_model_at_end by the evaluation loss with a PEFT adapter that has no task_type and no label_names",
        "the Trainer finds no labels argument on the generic PeftModel's forward(*args, **kwargs), so evaluation "
        "computes no eval_loss and the first checkpoint after an evaluation raises KeyError 'eval_loss'; set "
        "label_names=['labels'] (or the task_type of a causal LM / classifier)",
        "huggingface/transformers#33420; fixed in transformers 4.55.0 (#39265)"),
    # peft_model.py PeftModelFor{SequenceClassification,TokenClassification,QuestionAnswering}: ed3c82866 (#2220,
    # v0.15.0) reads peft_config.modules_to_save, which the prompt-learning configs lack (AttributeError, #2477);
    # 3c7b6e7f0 (#2497, v0.15.2) reads it with getattr and wraps nothing; 1c75d96ac (#2646, v0.17.0) gives
    # PromptLearningConfig a modules_to_save.
    Row("TRN113", (Range("peft", "0.15.0", "0.15.2"),), _prompt_learning_head, "adapter.task_type adapter.kind",
        "a {method} adapter with task_type {adapter.task_type}",
        "get_peft_model fails with AttributeError: the prompt-learning config has no 'modules_to_save'",
        "huggingface/peft#2477; fixed in PEFT 0.17.0 (#2646), silent on 0.15.2-0.16.x"),
    Row("TRN113", (Range("peft", "0.15.2", "0.17.0"),), _prompt_learning_head, "adapter.task_type adapter.kind",
        "a {method} adapter with task_type {adapter.task_type}",
        f"PEFT never puts {_HEAD} in modules_to_save, so the randomly initialised head stays frozen and is not "
        "saved with the adapter: only the virtual tokens train against a random head, and the reloaded adapter "
        "predicts with a fresh random one, silently",
        "huggingface/peft#2646; fixed in PEFT 0.17.0"),
)


class _Facts(Facts):
    __slots__ = ()

    def method(self) -> str:
        return _NAMES.get(self("adapter.kind"), str(self("adapter.kind")))


class _Rows(ReleaseTable):
    rows = ROWS
    facts = _Facts


@register
class SftPromptLearningTokenAccuracy(_Rows):
    """TRN111 sft-prompt-learning-token-accuracy

    ## What it does
    Flags a training script that trains a PEFT prompt-learning adapter with TRL's
    `SFTTrainer` where the TRL in use (a pin near the file or the installed package; silent
    when unknown) computes the token-accuracy metric wrongly for it: prompt tuning
    (`PromptTuningConfig`) or P-tuning (`PromptEncoderConfig`) on TRL 0.15.0 to 0.21.x, prefix
    tuning (`PrefixTuningConfig`) on TRL 0.22.0 to 0.23.x. Liger's fused loss (no logits)
    skips the metric and is not flagged.

    ## Why is this bad?
    `SFTTrainer.compute_loss` computes `mean_token_accuracy` on every step. Prompt tuning and
    P-tuning prepend `num_virtual_tokens` positions to the logits; before 0.22.0 they were
    compared with the labels as they are, and the first step fails on a shape mismatch
    (huggingface/trl#3812). 0.22.0 drops those positions, and lengthens the entropy mask by
    them, for every prompt-learning method, though prefix tuning adds none: prefix tuning
    then fails the same way until 0.24.0.

    ## Example
    `train.py`:
        from peft import PromptEncoderConfig
        from trl import SFTConfig, SFTTrainer
        peft_config = PromptEncoderConfig(task_type="CAUSAL_LM", num_virtual_tokens=32)
        args = SFTConfig(output_dir="out")
        SFTTrainer(model="Qwen/Qwen3-1.7B", args=args, train_dataset=data, peft_config=peft_config).train()
    `requirements.txt`:
        trl==0.19.1
    Use instead, in `requirements.txt`:
        trl==0.24.0

    ## Fix safety
    No fix: upgrading TRL is the choice.

    ## References
    - trl trl/trainer/sft_trainer.py compute_loss: 84d73fd00 (#2597, v0.15.0), 485e7d1c7 (#3821,
      v0.22.0), da167d88b (#3940, v0.22.0), f15399d3d (#4196, v0.24.0)
    - peft src/peft/peft_model.py PeftModelForCausalLM.forward (prompt learning)
    - huggingface/trl#3812, #4196
    """

    code = "TRN111"
    name = "sft-prompt-learning-token-accuracy"
    severity = ERROR
    triggers = ("adapter.kind",)


@register
class PeftNoTaskTypeWithoutLabelNames(_Rows):
    """TRN112 peft-no-task-type-without-label-names

    ## What it does
    Flags a training script whose `LoraConfig` / `AdaLoraConfig` has no `task_type`, trained by
    `Trainer`, `Seq2SeqTrainer` or `SFTTrainer` with `load_best_model_at_end` by the evaluation
    loss (`metric_for_best_model` unset, `loss` or `eval_loss`) and no `label_names`, where
    the transformers in use (a pin near the file or the installed package; silent when
    unknown) is 4.18.0 to 4.54.x.

    ## Why is this bad?
    With no task_type, `get_peft_model` returns the generic `PeftModel`, whose
    `forward(*args, **kwargs)` names no argument. The Trainer takes its label names from the
    model class's forward (`find_labels`), finds none, and so `prediction_step` computes no
    loss: evaluation returns no `eval_loss`, and the first checkpoint after an evaluation
    raises `KeyError: 'eval_loss'` (huggingface/transformers#33420), hours into the run.
    transformers 4.55.0 reads the base model's forward instead.

    ## Example
    `train.py`:
        from peft import LoraConfig, get_peft_model
        from transformers import AutoModelForImageClassification, Trainer, TrainingArguments
        model = AutoModelForImageClassification.from_pretrained("google/vit-base-patch16-224-in21k")
        model = get_peft_model(model, LoraConfig(r=16, target_modules=["query", "value"]))
        args = TrainingArguments("out", eval_strategy="steps", load_best_model_at_end=True)
        Trainer(model=model, args=args, train_dataset=train, eval_dataset=test).train()
    `requirements.txt`:
        transformers==4.43.3
    Use instead:
        from peft import LoraConfig, get_peft_model
        from transformers import AutoModelForImageClassification, Trainer, TrainingArguments
        model = AutoModelForImageClassification.from_pretrained("google/vit-base-patch16-224-in21k")
        model = get_peft_model(model, LoraConfig(r=16, target_modules=["query", "value"]))
        args = TrainingArguments("out", eval_strategy="steps", load_best_model_at_end=True, label_names=["labels"])
        Trainer(model=model, args=args, train_dataset=train, eval_dataset=test).train()

    ## Fix safety
    No fix: a script is edited by hand.

    ## References
    - transformers src/transformers/trainer.py Trainer.__init__ (`find_labels(self.model.__class__)`,
      4.18.0 to 4.54.0; the PEFT base model from 4.55.0, #39265), prediction_step,
      _save_checkpoint / _determine_best_metric; utils/generic.py find_labels
    - peft src/peft/mapping_func.py get_peft_model (mapping.py before 0.14): task_type None ->
      PeftModel
    - trl trl/trainer/sft_trainer.py (no prediction_step before 0562c3fa2, v0.29.0)
    - huggingface/transformers#33420, #32085, #39265; huggingface/trl#3694
    """

    code = "TRN112"
    name = "peft-no-task-type-without-label-names"
    severity = ERROR
    triggers = ("adapter.generic_model",)


@register
class PromptLearningClassifierHeadFrozen(_Rows):
    """TRN113 prompt-learning-seq-cls-head-frozen

    ## What it does
    Flags a training script that trains a PEFT prompt-learning adapter (`PromptTuningConfig`,
    `PrefixTuningConfig`, `PromptEncoderConfig`) with task_type `SEQ_CLS`, `TOKEN_CLS` or
    `QUESTION_ANS`, where the PEFT in use (a pin near the file or the installed package;
    silent when unknown) is 0.15.0 to 0.16.x.

    ## Why is this bad?
    For these tasks PEFT adds the new, randomly initialised head (`classifier`, `score`,
    `qa_outputs`) to `modules_to_save`, so that it trains and is saved with the adapter.
    0.15.0 reads `peft_config.modules_to_save`, which the prompt-learning configs do not have:
    0.15.0 and 0.15.1 fail in `get_peft_model` (AttributeError), and 0.15.2 to 0.16.x skip
    it: the head stays frozen at its random weights, is not saved, and the reloaded adapter
    predicts with a fresh random head, without an error (huggingface/peft#2646).

    ## Example
    `train.py`:
        from peft import PromptTuningConfig, get_peft_model
        from transformers import AutoModelForSequenceClassification, Trainer, TrainingArguments
        model = AutoModelForSequenceClassification.from_pretrained("FacebookAI/roberta-large", num_labels=2)
        model = get_peft_model(model, PromptTuningConfig(task_type="SEQ_CLS", num_virtual_tokens=20))
        Trainer(model=model, args=TrainingArguments("out"), train_dataset=data).train()
    `requirements.txt`:
        peft==0.16.0
    Use instead, in `requirements.txt`:
        peft==0.17.0

    ## Fix safety
    No fix: upgrading PEFT is the choice.

    ## References
    - peft src/peft/peft_model.py PeftModelForSequenceClassification / ForTokenClassification /
      ForQuestionAnswering __init__: ed3c82866 (#2220, v0.15.0), 3c7b6e7f0 (#2497, v0.15.2),
      36160a5c0 (#2481, v0.16.0); src/peft/config.py PromptLearningConfig.modules_to_save:
      1c75d96ac (#2646, v0.17.0)
    - huggingface/peft#2646, #2477, #2481, #2220
    """

    code = "TRN113"
    name = "prompt-learning-seq-cls-head-frozen"
    severity = ERROR
    triggers = ("adapter.kind",)
