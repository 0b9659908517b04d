"""Hazards a plain transformers / TRL training script shows in its trainer call and in what it does with the trainer
(linter/adapters/script_calls.py records the facts)."""

from __future__ import annotations

import re

from linter.registry import ERROR, WARNING, Rule, register
from linter.versions import older_than

# Model classes whose head returns logits over the whole vocabulary ([batch, seq, vocab]).
_LM_HEAD = re.compile(r"\w*For(?:CausalLM|MaskedLM|Seq2SeqLM|ConditionalGeneration)")
# Trainers whose evaluation is transformers' Trainer.evaluation_loop with its own prediction_step (SFTTrainer passes
# compute_metrics / preprocess_logits_for_metrics to Trainer.__init__, trl/trainer/sft_trainer.py 0.7 to 1.9).
_LOGIT_TRAINERS = {"transformers.Trainer", "transformers.Seq2SeqTrainer", "trl.SFTTrainer"}
# trl/trainer/sft_trainer.py: the ValueError "You passed a `DataCollatorForCompletionOnlyLM` to the SFTTrainer. This
# is not compatible with the `packing` argument." from the collator's first release (7705daa67, #445, v0.4.5) until
# the SFT rewrite (5b9236d1e, #2405, v0.15.0); SFTTrainer takes a packing= keyword until 0.12.x (gone in 0.13.0);
# the collator itself is removed in v0.20.0 (e102ac8df, #3704).
_COLLATOR_FIRST, _NO_PACKING_KEYWORD, _REFUSAL_GONE, _COLLATOR_GONE = "0.4.5", "0.13.0", "0.15.0", "0.20.0"


@register
class ResumeFromCheckpointArgumentUnused(Rule):
    """TRN090 hf-resume-from-checkpoint-arg-unused

    ## What it does
    Flags a training script that writes `resume_from_checkpoint` in `TrainingArguments` (or a TRL config) while
    its `trainer.train()` call passes no `resume_from_checkpoint`. Silent where the script reads the field
    itself (`trainer.train(resume_from_checkpoint=args.resume_from_checkpoint)`), parses its arguments with
    `HfArgumentParser` / `TrlParser`, or no `train()` call on the trainer is found.

    ## Why is this bad?
    The Trainer never reads `args.resume_from_checkpoint`: transformers documents the field as "not directly
    used by [`Trainer`], it's intended to be used by your training/evaluation scripts instead", and
    `Trainer.train(resume_from_checkpoint=None)` resumes only from its own argument. The run starts again
    from step 0 with fresh weights, optimizer and scheduler, and overwrites the checkpoints of the run it was
    meant to continue, with no warning.

    ## Example
    `train.py`:
        from transformers import AutoModelForCausalLM, Trainer, TrainingArguments
        model = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-0.5B")
        args = TrainingArguments(output_dir="out", resume_from_checkpoint="out/checkpoint-1500")
        trainer = Trainer(model=model, args=args, train_dataset=dataset)
        trainer.train()
    Use instead:
        from transformers import AutoModelForCausalLM, Trainer, TrainingArguments
        model = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-0.5B")
        args = TrainingArguments(output_dir="out", resume_from_checkpoint="out/checkpoint-1500")
        trainer = Trainer(model=model, args=args, train_dataset=dataset)
        trainer.train(resume_from_checkpoint=args.resume_from_checkpoint)

    ## Fix safety
    No fix: a script is edited by hand.

    ## References
    - transformers src/transformers/training_args.py (TrainingArguments.resume_from_checkpoint help text)
    - transformers src/transformers/trainer.py Trainer.train(resume_from_checkpoint=None)
    - huggingface/transformers#23325, huggingface/transformers#7198
    """

    code = "TRN090"
    name = "hf-resume-from-checkpoint-arg-unused"
    severity = ERROR
    triggers = ("training.train_resume_arg",)

    def check(self, run, context):
        for config in run.configs:
            resume = config.value("checkpoint.resume_from")
            if resume in (None, False, "") or not isinstance(resume, (str, bool)):
                continue
            if config.value("training.train_resume_arg") is not False \
                    or config.value("checkpoint.resume_field_read") is not False:
                continue
            yield self.finding(
                config, config.span("checkpoint.resume_from"),
                f"resume_from_checkpoint={resume!r} is set in the training arguments, but the script's "
                "trainer.train() passes no resume_from_checkpoint and the Trainer never reads the field "
                "(transformers: \"not directly used by Trainer\"): the run starts again from step 0 and overwrites "
                "the checkpoints it meant to continue; pass it to trainer.train(resume_from_checkpoint=...)")


@register
class ComputeMetricsAccumulatesLMLogits(Rule):
    """TRN091 hf-compute-metrics-accumulates-lm-logits

    ## What it does
    Flags a script whose Trainer / Seq2SeqTrainer / SFTTrainer call receives `compute_metrics` for a model
    with a language-model head (`*ForCausalLM`, `*ForMaskedLM`, `*ForSeq2SeqLM`, `*ForConditionalGeneration`
    loaded in the script), with an eval set that is evaluated (eval_strategy not "no", or `trainer.evaluate()`),
    and nothing that reduces the logits: no `preprocess_logits_for_metrics`, `prediction_loss_only` and
    `batch_eval_metrics` false, no `predict_with_generate`.

    ## Why is this bad?
    With compute_metrics set, `Trainer.evaluate` runs `evaluation_loop` for predictions: every eval batch's
    logits, shaped [batch, sequence, vocabulary], are kept (on the accelerator until `eval_accumulation_steps`,
    then in host memory) and concatenated over the whole eval set before compute_metrics sees them. At 512
    tokens and a 32k vocabulary that is about 65 MB per example in fp32, so a modest eval set exhausts GPU or
    host memory at the first evaluation, after training time has been spent. `preprocess_logits_for_metrics`
    (transformers 4.17) reduces each batch first, e.g. to its argmax.

    ## Example
    `train.py`:
        from transformers import AutoModelForCausalLM, Trainer, TrainingArguments
        model = AutoModelForCausalLM.from_pretrained("meta-llama/Llama-3.1-8B")
        args = TrainingArguments(output_dir="out", eval_strategy="steps", eval_steps=100)
        trainer = Trainer(model=model, args=args, train_dataset=train, eval_dataset=valid, compute_metrics=metrics)
    Use instead:
        from transformers import AutoModelForCausalLM, Trainer, TrainingArguments
        model = AutoModelForCausalLM.from_pretrained("meta-llama/Llama-3.1-8B")
        args = TrainingArguments(output_dir="out", eval_strategy="steps", eval_steps=100)
        trainer = Trainer(model=model, args=args, train_dataset=train, eval_dataset=valid, compute_metrics=metrics,
                          preprocess_logits_for_metrics=lambda logits, labels: logits.argmax(-1))

    ## Fix safety
    No fix: compute_metrics must then take the reduced predictions.

    ## References
    - transformers src/transformers/trainer.py evaluate (prediction_loss_only only without compute_metrics),
      evaluation_loop (all_preds, preprocess_logits_for_metrics, eval_accumulation_steps, batch_eval_metrics)
    - trl trl/trainer/sft_trainer.py (compute_metrics handed to Trainer, 0.7 to 1.9)
    - huggingface/transformers#8476, #12878, #15466 (preprocess_logits_for_metrics), #17089
    """

    code = "TRN091"
    name = "hf-compute-metrics-accumulates-lm-logits"
    severity = WARNING
    triggers = ("eval.compute_metrics",)

    def check(self, run, context):
        for config in run.configs:
            if config.value("eval.compute_metrics") is not True or config.value("eval.dataset_given") is not True \
                    or config.value("trainer.call_class") not in _LOGIT_TRAINERS:
                continue
            if any(config.value(key) is not False
                   for key in ("eval.preprocess_logits", "eval.prediction_loss_only", "eval.batch_metrics")) \
                    or config.value("generation.predict_with_generate") not in (None, False):
                continue
            classes = config.value("model.script_classes") or []
            if not classes or not all(_LM_HEAD.fullmatch(name) for name in classes):
                continue
            strategy = config.value("checkpoint.eval_strategy")
            if strategy in ("steps", "epoch"):
                when, span = f"eval_strategy {strategy!r}", config.span("checkpoint.eval_strategy")
            elif config.value("eval.evaluate_called") is True:
                when, span = "trainer.evaluate()", config.span("eval.evaluate_called")
            else:
                continue
            yield self.finding(
                config, span,
                f"compute_metrics with model class {classes[0]} and evaluation ({when}): evaluation keeps every eval "
                f"batch's [batch, sequence, vocabulary] logits and concatenates them over the whole eval set before "
                f"compute_metrics runs ({self._size(config)}), which can exhaust GPU or host memory at the first "
                "evaluation; reduce them per batch with preprocess_logits_for_metrics (transformers 4.17 on, e.g. "
                "logits.argmax(-1)), or set batch_eval_metrics (4.41 on) or prediction_loss_only")

    @staticmethod
    def _size(config) -> str:
        from linter.models import dimensions_of

        length = config.value("sequence.max_length") or config.value("data.tokenize_max_length")
        model = config.value("model.name")
        dims = dimensions_of(model, config.path.parent) if isinstance(model, str) and model else None
        if isinstance(length, int) and dims is not None:
            size = length * dims.vocab * 4 / 1e6
            return (f"up to {length} tokens x {dims.vocab} vocabulary x 4 bytes, about {size:,.0f} MB per eval "
                    "example in fp32")
        tokens = f"{length} tokens" if isinstance(length, int) else "sequence length"
        return f"{tokens} x vocabulary size x 4 bytes per eval example in fp32"


@register
class PackingWithCompletionOnlyCollator(Rule):
    """TRN092 trl-packing-with-completion-only-collator

    ## What it does
    Flags a script whose `SFTTrainer` call packs (`packing=True` in SFTConfig, or the SFTTrainer keyword of TRL
    before 0.13) and receives `data_collator=DataCollatorForCompletionOnlyLM(...)`. With the TRL version
    unknown it fires where every release fails: the packing keyword given to SFTTrainer itself, or a
    collator with a response_template alone.

    ## Why is this bad?
    Masking the prompt needs per-example boundaries that packed rows do not keep. TRL 0.4.5 to 0.14.x refuse
    the combination when SFTTrainer is built (ValueError "... not compatible with the `packing` argument").
    0.15 to 0.19 do not refuse it: rows are concatenated and cut to max_length, and a collator with a
    response_template alone masks each row up to the last response template in it, so every example of a
    pack but the last loses its completion loss, silently. TRL 0.20 removed the collator (ImportError), and
    SFTTrainer takes no packing= keyword from 0.13 (TypeError).

    ## Example
    `train.py`:
        from trl import DataCollatorForCompletionOnlyLM, SFTConfig, SFTTrainer
        collator = DataCollatorForCompletionOnlyLM(response_template="[/INST]", tokenizer=tokenizer)
        config = SFTConfig(output_dir="out", packing=True)
        trainer = SFTTrainer(model, args=config, train_dataset=dataset, data_collator=collator)
    Use instead (no packing):
        from trl import DataCollatorForCompletionOnlyLM, SFTConfig, SFTTrainer
        collator = DataCollatorForCompletionOnlyLM(response_template="[/INST]", tokenizer=tokenizer)
        config = SFTConfig(output_dir="out", packing=False)
        trainer = SFTTrainer(model, args=config, train_dataset=dataset, data_collator=collator)
    From TRL 0.20 the collator is gone: SFTConfig(packing=True, completion_only_loss=True) with a
    prompt-completion dataset masks the prompt of each packed example.

    ## Fix safety
    No fix: dropping packing or the collator changes what trains.

    ## References
    - trl trl/trainer/sft_trainer.py (the ValueError, 7705daa67 #445 v0.4.5 to 5b9236d1e #2405 v0.15.0; the
      packing= keyword until v0.12.x)
    - trl trl/trainer/utils.py DataCollatorForCompletionOnlyLM.torch_call (v0.15.0: the last response template
      of a row), removed by e102ac8df (#3704, v0.20.0)
    - huggingface/trl#1163, huggingface/trl#1343
    """

    code = "TRN092"
    name = "trl-packing-with-completion-only-collator"
    severity = ERROR
    triggers = ("data.collator_class",)

    def check(self, run, context):
        for config in run.configs:
            if config.value("data.collator_class") != "trl.DataCollatorForCompletionOnlyLM" \
                    or config.value("trainer.call_class") != "trl.SFTTrainer":
                continue
            keyword = config.value("trainer.packing_keyword") is True
            if not keyword and config.value("sequence.packing") is not True:
                continue
            response_only = config.value("data.collator_instruction_template") is False
            span = config.span("trainer.packing_keyword" if keyword else "sequence.packing")
            trl = config.version("trl")
            if trl is None:
                if keyword or response_only:
                    yield self.finding(config, span, self._unpinned(keyword))
                else:
                    context.unknown_version(config, "trl", self.code)
            elif older_than(trl[0], _COLLATOR_FIRST) is False and older_than(trl[0], _REFUSAL_GONE) \
                    and not (keyword and older_than(trl[0], _NO_PACKING_KEYWORD) is False):
                yield self.finding(
                    config, span,
                    f"packing with DataCollatorForCompletionOnlyLM: TRL {trl[0]} ({trl[1]}) refuses the combination "
                    "when SFTTrainer is built (ValueError \"not compatible with the `packing` argument\"); drop "
                    "packing or the collator")
            elif response_only and not keyword and older_than(trl[0], _REFUSAL_GONE) is False \
                    and older_than(trl[0], _COLLATOR_GONE):
                yield self.finding(
                    config, span,
                    f"packing with DataCollatorForCompletionOnlyLM (response_template only): TRL {trl[0]} ({trl[1]}) "
                    "packs rows without example boundaries and the collator masks each row up to its last response "
                    "template, so every example of a pack but the last silently loses its completion loss; drop "
                    "packing or the collator", severity=WARNING)

    @staticmethod
    def _unpinned(keyword: bool) -> str:
        if keyword:
            return ("SFTTrainer(packing=True) with DataCollatorForCompletionOnlyLM fails on every TRL release: "
                    f"{_COLLATOR_FIRST} to 0.12.x refuse it when SFTTrainer is built (ValueError \"not compatible "
                    f"with the `packing` argument\"), from {_NO_PACKING_KEYWORD} SFTTrainer takes no packing keyword "
                    f"(TypeError), from {_COLLATOR_GONE} the collator is gone (ImportError); drop packing or the "
                    "collator")
        return ("packing with DataCollatorForCompletionOnlyLM (response_template only) fails on every TRL release "
                f"(version unknown here): {_COLLATOR_FIRST} to 0.14.x refuse it when SFTTrainer is built (ValueError "
                f"\"not compatible with the `packing` argument\"), {_REFUSAL_GONE} to 0.19.x pack rows without example "
                "boundaries and the collator masks each up to its last response template, so all but the last "
                f"example of each pack silently lose their completion loss, from {_COLLATOR_GONE} the collator is "
                "gone (ImportError); drop packing or the collator")
