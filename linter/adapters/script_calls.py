"""What a plain transformers / TRL script's trainer call receives, and what the script does with the trainer
(hf_script.py calls this for a claimed script; keys in linter/script_call_keys.py). Only the script's one trainer call
that receives the argument object is read, and only where its class is imported from transformers / trl; a value
the script computes is unknown (not recorded), as is everything of a call with **kwargs.

- transformers/trainer.py Trainer.train(resume_from_checkpoint=None, ...): resumes only from its own argument;
  training_args.py documents TrainingArguments.resume_from_checkpoint as "not directly used by [`Trainer`], it's
  intended to be used by your training/evaluation scripts instead".
- transformers/trainer.py evaluate: `prediction_loss_only=True if self.compute_metrics is None else None`, then
  evaluation_loop keeps every batch's logits (all_preds, preprocess_logits_for_metrics first where given) unless
  args.prediction_loss_only or args.batch_eval_metrics.
- trl/trainer/sft_trainer.py (0.7 to 1.9): a model given by name is loaded with AutoModelForCausalLM.
"""

from __future__ import annotations

import ast

from ..ir import ConfigIR, Field, Origin
from ..python_reader import is_open, keyword
from . import Binding, span_of
from .hf_script_calls import Script, class_of, _target

_ARGS = "transformers/training_args.py (TrainingArguments)"
BINDINGS = (
    Binding("checkpoint.resume_from", "resume_from_checkpoint"),
    Binding("eval.prediction_loss_only", "prediction_loss_only", default=False, source=_ARGS),
    Binding("eval.batch_metrics", "batch_eval_metrics", default=False, source=_ARGS),
    Binding("generation.predict_with_generate", "predict_with_generate"),
)
_PARSERS = {"HfArgumentParser", "TrlParser"}
_LOADERS = {"from_pretrained"}


def _given(call: ast.Call, name: str, document, position: int | None = None) -> bool | None:
    """Does `call` receive `name` (not a literal None)? None where **kwargs may hold it."""
    found = keyword(call, name)
    node = found.value if found is not None else None
    if node is None and position is not None and len(call.args) > position \
            and not any(isinstance(item, ast.Starred) for item in call.args[: position + 1]):
        node = call.args[position]
    if node is None:
        return None if is_open(call) else False
    return not (isinstance(node, ast.Constant) and node.value is None)


def _origin(document, node: ast.AST, why: str | None = None) -> Origin:
    return Origin(span_of(document, *document.span(node)), why) if why else Origin(span_of(document, *document.span(node)))


def _method_calls(document, owner: str | None, trainer: ast.Call, method: str) -> list[ast.Call]:
    """`owner.method(...)` calls, and `Trainer(...).method(...)` on the trainer call itself."""
    return [call for call in document.calls(method) if isinstance(call.func, ast.Attribute)
            and (call.func.value is trainer or owner is not None and isinstance(call.func.value, ast.Name)
                 and call.func.value.id == owner)]


def _resume(document, config: ConfigIR, owner: str | None, trainer: ast.Call) -> None:
    calls = _method_calls(document, owner, trainer, "train")
    given = [_given(call, "resume_from_checkpoint", document, position=0) for call in calls]
    if calls and None not in given:
        config.set("training.train_resume_arg", Field(any(given), _origin(document, calls[0].func)))
    read = any(isinstance(node, ast.Attribute) and node.attr == "resume_from_checkpoint"
               and isinstance(node.ctx, ast.Load) for node in ast.walk(document.tree))
    parsed = bool(_PARSERS & document.call_names())
    config.set("checkpoint.resume_field_read", Field(read or parsed, _origin(document, trainer.func)))


def _model_classes(script: Script, trainer: ast.Call, cls: str) -> list[str] | None:
    document, found = script.document, []
    for call in document.calls(*_LOADERS):
        owner = class_of(document, call.func.value) if isinstance(call.func, ast.Attribute) else None
        if owner is not None and owner[0] == "transformers":
            found.append(owner[1])
    model = keyword(trainer, "model")
    model = model.value if model is not None else trainer.args[0] if trainer.args else None
    if cls == "trl.SFTTrainer" and isinstance(document.literal(model), str):
        found.append("AutoModelForCausalLM")  # sft_trainer.py: a name is loaded with AutoModelForCausalLM
    return [name for name in found if "Model" in name or "For" in name] or None


def _tokenize_max_length(document) -> int | None:
    lengths = set()
    for call in document.calls(*document.call_names()):
        truncation, length = keyword(call, "truncation"), keyword(call, "max_length")
        if truncation is not None and length is not None and document.literal(truncation.value) is True:
            lengths.add(document.literal(length.value))
    value = lengths.pop() if len(lengths) == 1 else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _collator(script: Script, config: ConfigIR, trainer: ast.Call) -> None:
    document = script.document
    given = keyword(trainer, "data_collator")
    node = document.resolve(given.value) if given is not None else None
    if not isinstance(node, ast.Call):
        return
    owner = class_of(document, node)
    if owner is None:
        return
    config.set("data.collator_class", Field(".".join(owner), _origin(document, node.func)))
    if owner[1] == "DataCollatorForCompletionOnlyLM":
        template = _given(node, "instruction_template", document, position=1)
        if template is not None:
            config.set("data.collator_instruction_template", Field(template, _origin(document, node.func)))


def record_trainer_calls(script: Script, config: ConfigIR, read) -> None:
    """The facts of the module docstring, for a script with one trainer call of a framework class."""
    read.bind(BINDINGS)
    document = script.document
    if len(script.trainers) != 1:
        return
    trainer = script.trainers[0]
    owner = class_of(document, trainer)
    if owner is None or owner[0] not in ("transformers", "trl"):
        return
    cls = ".".join(owner)
    config.set("trainer.call_class", Field(cls, _origin(document, trainer.func)))
    name = _target(document, trainer)
    _resume(document, config, name, trainer)
    if not is_open(trainer) and len(trainer.args) <= 2:  # model, args: the rest by keyword
        for key, argument in (("eval.compute_metrics", "compute_metrics"),
                              ("eval.preprocess_logits", "preprocess_logits_for_metrics"),
                              ("eval.dataset_given", "eval_dataset")):
            config.set(key, Field(_given(trainer, argument, document), _origin(document, trainer.func)))
    evaluate = _method_calls(document, name, trainer, "evaluate")
    config.set("eval.evaluate_called", Field(bool(evaluate), _origin(document, trainer.func)))
    classes = _model_classes(script, trainer, cls)
    if classes:
        config.set("model.script_classes", Field(classes, _origin(document, trainer.func)))
    length = _tokenize_max_length(document)
    if length is not None:
        config.set("data.tokenize_max_length", Field(length, _origin(document, trainer.func)))
    _collator(script, config, trainer)
    packing = keyword(trainer, "packing")
    if packing is not None and isinstance(document.literal(packing.value), bool):
        config.set("trainer.packing_keyword", Field(document.literal(packing.value),
                                                    _origin(document, packing.value)))
