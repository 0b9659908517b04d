"""Padding facts any training script shows, read with `ast` (Unsloth scripts and plain
transformers / TRL scripts alike): `tokenizer.pad_token = tokenizer.eos_token` and a collator that
labels every pad id -100."""

from __future__ import annotations

import ast

from ..ir import ConfigIR, Field, Origin
from ..python_reader import PythonDocument, call_name, keyword
from . import span_of

_PAD_FROM_EOS = {("pad_token", "eos_token"), ("pad_token_id", "eos_token_id")}
# Collators that label every pad id -100, by the module that defines them: "mlm" where only
# mlm=False does (a causal-LM collator), "always" otherwise.
_MASKING_COLLATORS = {("transformers", "DataCollatorForLanguageModeling"): "mlm",
                      ("trl", "DataCollatorForCompletionOnlyLM"): "always"}


def _masking_collators(document: PythonDocument) -> dict[str, str]:
    """The names under which this script imports a padding-masking collator."""
    found = {}
    document.imports()  # the one walk that indexes the script
    for node in document.from_imports:
        if node.module and not node.level:
            package = node.module.split(".")[0]
            for alias in node.names:
                kind = _MASKING_COLLATORS.get((package, alias.name))
                if kind is not None:
                    found[alias.asname or alias.name] = kind
    for (package, name), kind in _MASKING_COLLATORS.items():
        if package in document.imports():
            found.setdefault(f"{package}.{name}", kind)
    return found


def _collator_name(call: ast.Call) -> str:
    function = call.func
    if isinstance(function, ast.Name):
        return function.id
    if isinstance(function, ast.Attribute) and isinstance(function.value, ast.Name):
        return f"{function.value.id}.{function.attr}"
    return ""


def record_padding(document: PythonDocument, config: ConfigIR) -> None:
    """`tokenizer.pad_token = tokenizer.eos_token` (tokenizer.pad_is_eos), and a collator that
    turns every pad id into a -100 label (data.collator_masks_padding): transformers'
    DataCollatorForLanguageModeling with mlm=False (data/data_collator.py, torch_call:
    `labels[labels == self.tokenizer.pad_token_id] = -100`) and TRL's
    DataCollatorForCompletionOnlyLM, its subclass (trl/trainer/utils.py, TRL < 0.20)."""
    collators = _masking_collators(document)
    for node in document.attribute_assignments:
        if any(isinstance(target, ast.Attribute) and (target.attr, node.value.attr) in _PAD_FROM_EOS
               for target in node.targets):
            config.set("tokenizer.pad_is_eos", Field(True, Origin(span_of(document, *document.span(node)))))
            break
    for node in document.calls(*{name.rsplit(".", 1)[-1] for name in collators}):
        if _collator_name(node) in collators:
            if collators[_collator_name(node)] == "mlm":
                mlm = keyword(node, "mlm")
                if mlm is None or document.literal(mlm.value) is not False:
                    continue  # mlm=True (the default) masks random tokens instead: another collator
            if config.get("data.collator_masks_padding") is None:
                config.set("data.collator_masks_padding", Field(
                    call_name(node), Origin(span_of(document, *document.span(node.func)))))
