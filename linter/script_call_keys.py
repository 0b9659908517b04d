"""IR keys a plain transformers / TRL training script shows through its trainer calls (the trainer it builds, what that
call receives, and the `trainer.train(...)` / `trainer.evaluate()` calls it makes): linter/adapters/script_calls.py
records them. Rows as in linter/ir_keys.py, which adds them to IR_KEYS."""

from __future__ import annotations

SCRIPT_CALL_KEYS = (
    ("arguments.class", "str", "the argument class a training script builds; its call's keywords are the key tree"),
    ("trainer.call_class", "str", "the framework trainer class the script's one trainer call builds, as "
                                  "package.Class (transformers.Trainer, trl.SFTTrainer); unset for a local subclass"),
    ("training.train_resume_arg", "bool", "the script's trainer.train(...) call passes resume_from_checkpoint (false: "
                                          "every train call found passes none); unset where no call is found"),
    ("checkpoint.resume_field_read", "bool", "the script reads an object's resume_from_checkpoint attribute itself, or "
                                             "parses its arguments with HfArgumentParser / TrlParser"),
    ("eval.compute_metrics", "bool", "the trainer call receives compute_metrics"),
    ("eval.preprocess_logits", "bool", "the trainer call receives preprocess_logits_for_metrics"),
    ("eval.prediction_loss_only", "bool", "evaluation returns the loss only (TrainingArguments prediction_loss_only)"),
    ("eval.batch_metrics", "bool", "metrics are computed batch by batch (TrainingArguments batch_eval_metrics)"),
    ("eval.dataset_given", "bool", "the trainer call receives an eval_dataset"),
    ("eval.evaluate_called", "bool", "the script calls the trainer's evaluate() itself"),
    ("model.script_classes", "list", "the transformers model classes the script loads weights with (from_pretrained), "
                                     "or SFTTrainer's AutoModelForCausalLM for a model given by name"),
    ("data.tokenize_max_length", "int", "the max_length every truncating tokenizer call of the script writes"),
    ("data.collator_class", "str", "the framework collator class the trainer call's data_collator is built from, as "
                                   "package.Class"),
    ("data.collator_instruction_template", "bool", "the completion-only collator is given an instruction_template"),
    ("trainer.packing_keyword", "bool", "the packing= the trainer call itself receives (old TRL SFTTrainer), as "
                                        "written"),
)
