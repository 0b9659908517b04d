"""The calls of a plain transformers / TRL / PEFT training script (hf_script.py reads them), with `ast` only: the script
builds `TrainingArguments(...)` / `Seq2SeqTrainingArguments(...)` or a TRL trainer config
(`SFTConfig(...)`, `DPOConfig(...)`, `GRPOConfig(...)`, ...) with keywords and hands it to a
trainer (`Trainer(args=...)`, `SFTTrainer(...)`, ...), perhaps with `LoraConfig(...)`,
`BitsAndBytesConfig(...)` and `AutoModelForCausalLM.from_pretrained("name", ...)`.

The keywords of each call are those of the framework's dataclass, so they are read through the
HF adapter's own bindings (hf.py, trainer_arguments.py, trl_bindings.py, peft_facts.py,
model_init.py): each call is presented as the mapping a YAML file of those classes would hold
(`call_mapping`), and read by the same code. Only literals (or module constants holding one) are
values; a keyword whose value is computed (a variable, an expression, argparse, os.environ) is
unknown, as is one the script sets later (`args.bf16 = ...`) or that the trainer call also
receives (old TRL trainers took `max_seq_length=` / `packing=` themselves). A call with **kwargs
(or more positional arguments than the first) is open: its defaults are not recorded.

Claimed only where the script imports none of unsloth (unsloth.py's) and builds exactly one
argument object, of a class imported from transformers or trl, that reaches a trainer call (as
`args=`, or the second positional argument of Trainer / Seq2SeqTrainer / SFTTrainer), and the
object is not changed through methods (`args.set_training(...)`) or `setattr`. A script that
calls no trainer (a custom loop, scripts.py's) is not claimed.

The trainer is the class the script calls: training.trainer is the TRL trainer whose config
class the script builds (trl_trainers.trainer_of_class), where every trainer call that receives
the object is that config's own trainer class imported from trl (SFTConfig -> SFTTrainer);
anything else (a local subclass, TrainingArguments given to SFTTrainer) records none.
"""

from __future__ import annotations

import ast
import re

from ..document import Document, Mapping, Node, Pair, Scalar, Sequence
from ..ir import ConfigIR
from ..python_index import imported_name
from ..python_reader import UNKNOWN, PythonDocument, call_name, is_open
from . import _MISSING, Reader
from .trl_trainers import _table, trainer_of_class

# A value the script computes at run time: read as a `${...}` placeholder is (adapters.templated),
# i.e. unknown, with no default in its place.
RUNTIME = "${computed at run time}"
_TRANSFORMERS_ARGUMENTS = ("TrainingArguments", "Seq2SeqTrainingArguments")
_PACKAGES = ("transformers", "trl", "peft")
# The trainers taking `args` as their second positional parameter (transformers trainer.py,
# trainer_seq2seq.py; trl sft_trainer.py).
_ARGS_SECOND = {"Trainer", "Seq2SeqTrainer", "SFTTrainer"}
_MODEL_CLASS = re.compile(r"AutoModel\w*|\w+For(?:CausalLM|ConditionalGeneration|Seq2SeqLM|SequenceClassification)")


def _trl_config_classes() -> dict[str, str]:
    """Stable TRL trainer config class -> its trainer class (SFTConfig -> SFTTrainer)."""
    return {name: name[: -len("Config")] + "Trainer" for entry in _table()["trainers"].values() if entry["stable"]
            for name in entry["classes"]}


def class_of(document: PythonDocument, node: ast.expr) -> tuple[str, str] | None:
    """(package, class) a call constructs (or a name or attribute names) where an import of
    transformers / trl / peft gives it (python_index.imported_name: `TrainingArguments` after
    `from transformers import TrainingArguments`, `transformers.TrainingArguments` after `import
    transformers`), and the script binds that name no other way."""
    name = imported_name(document, node.func if isinstance(node, ast.Call) else node)
    package = name.split(".")[0] if name else None
    return (package, name.rsplit(".", 1)[1]) if package in _PACKAGES and "." in name else None


def _model_class(owner: tuple[str, str] | None) -> bool:
    return owner is not None and owner[0] == "transformers" and _MODEL_CLASS.fullmatch(owner[1]) is not None


def _framework_calls(document: PythonDocument, accept) -> list[tuple[ast.Call, str]]:
    found = []
    for call in document.calls(*document.call_names()):
        owner = class_of(document, call)
        if owner is not None and accept(*owner):
            found.append((call, owner[1]))
    return found


def _target(document: PythonDocument, call: ast.Call) -> str | None:
    assignment = document.call_assignments.get(id(call))
    if assignment is not None and len(assignment.targets) == 1 and isinstance(assignment.targets[0], ast.Name):
        return assignment.targets[0].id
    return None


def _reaches(document: PythonDocument, call: ast.Call, name: str | None, other: ast.Call, *keywords: str,
             position: int | None = None) -> bool:
    """Is `call` (or the name it is assigned to) passed to `other` under one of `keywords`?"""
    given = next((item.value for item in other.keywords if item.arg in keywords), None)
    if given is None and position is not None and len(other.args) > position \
            and not any(isinstance(item, ast.Starred) for item in other.args[: position + 1]):
        given = other.args[position]
    return given is call or (name is not None and isinstance(given, ast.Name) and given.id == name)


def _node(document: PythonDocument, expression: ast.expr) -> Node:
    """The Document node a keyword's value reads as: literals as scalars, lists, dict literals
    (and `dict(...)` calls) as mappings; anything computed as a RUNTIME scalar."""
    target = document.resolve(expression)
    start, end = document.span(target)
    if isinstance(target, ast.Dict) and None not in target.keys:
        keys = [document.literal(key) for key in target.keys]
        if all(isinstance(key, str) for key in keys):
            return Mapping([Pair(Scalar(key, *document.span(node)), _node(document, value))
                            for key, node, value in zip(keys, target.keys, target.values)], start, end, flow=True)
    if isinstance(target, ast.Call) and call_name(target) == "dict" and not target.args and not is_open(target):
        return call_mapping(document, target)
    # A call (is_bf16_supported() included, which python_reader reads as "auto") or a negation is computed.
    computed = isinstance(target, ast.Call) or isinstance(target, ast.UnaryOp) and isinstance(target.op, ast.Not)
    value = UNKNOWN if computed else document.literal(expression)
    if value is UNKNOWN:
        return Scalar(RUNTIME, start, end)
    if isinstance(value, list) and isinstance(target, (ast.List, ast.Tuple)):
        return Sequence([Scalar(item, *document.span(node)) for item, node in zip(value, target.elts)],
                        start, end, flow=True)
    return Scalar(value, start, end, style="'" if isinstance(value, str) else "")


def call_mapping(document: PythonDocument, call: ast.Call, first: str | None = None,
                 extra: dict[str, ast.expr] | None = None) -> Mapping:
    """A call's keywords as the mapping of a config file (the first positional argument under the
    name `first`); `extra` adds nodes under other names (a nested call's mapping)."""
    pairs = []
    if first is not None and call.args and not isinstance(call.args[0], ast.Starred):
        pairs.append(Pair(Scalar(first, *document.span(call.args[0])), _node(document, call.args[0])))
    for item in call.keywords:
        if item.arg is not None:
            start = document.offset(item.lineno, item.col_offset)
            pairs.append(Pair(Scalar(item.arg, start, start + len(item.arg)), _node(document, item.value)))
    for name, node in (extra or {}).items():
        pairs = [pair for pair in pairs if pair.key.value != name] + [Pair(Scalar(name, node.start, node.start), node)]
    return Mapping(pairs, *document.span(call), flow=True)


def runtime(name: str, span: tuple[int, int]) -> Pair:
    return Pair(Scalar(name, *span), Scalar(RUNTIME, *span))


class CallReader(Reader):
    """A Reader of a call's mapping; an open call (**kwargs) records no default."""

    def __init__(self, config: ConfigIR, document: Document, open_call: bool):
        super().__init__(config, document, templates_unknown=True)
        self.open = open_call

    def _record(self, key, path, node, convert, default, default_source, anchor):
        return super()._record(key, path, node, convert, _MISSING if self.open else default, default_source, anchor)


def _changed_later(document: PythonDocument, name: str | None) -> tuple[set[str], bool]:
    """Attributes the script sets on `name` after building it, and whether it is changed in ways
    not read here (a method call such as set_training, setattr, a second binding)."""
    if name is None:
        return set(), False
    attributes, bindings, opaque = set(), 0, False
    for node in ast.walk(document.tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == name:
            if not isinstance(node.ctx, ast.Load):
                attributes.add(node.attr)
            elif node.attr.startswith("set_"):
                opaque = True
        elif isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load):
            bindings += 1
        elif isinstance(node, ast.Call) and call_name(node) in ("setattr", "replace") and node.args \
                and isinstance(node.args[0], ast.Name) and node.args[0].id == name:
            opaque = True
    return attributes, opaque or bindings != 1


class Script:
    """The calls of a training script that hold its settings (see the module docstring)."""

    def __init__(self, document: PythonDocument):
        self.document = document
        self.arguments = self.kind = self.trainer = None
        if "unsloth" in document.source.text.lower():
            return  # unsloth.py's; or Unsloth loaded through a helper module, which patches TRL's configs
        trl_classes = _trl_config_classes()
        found = _framework_calls(document, lambda package, cls: (
            package == "transformers" and cls in _TRANSFORMERS_ARGUMENTS or package == "trl" and cls in trl_classes))
        if len(found) != 1:
            return
        call, cls = found[0]
        name = _target(document, call)
        self.later, changed = _changed_later(document, name)
        trainers = [other for other in document.calls(*document.call_names()) if call_name(other).endswith("Trainer")
                    and _reaches(document, call, name, other, "args",
                                 position=1 if call_name(other) in _ARGS_SECOND else None)]
        if changed or not trainers:
            return
        self.arguments, self.class_name, self.trainers = call, cls, trainers
        self.kind = "trl" if cls in trl_classes else "trainer"
        owners = {class_of(document, trainer) for trainer in trainers}
        if cls in trl_classes and owners == {("trl", trl_classes[cls])}:
            self.trainer = trainer_of_class(cls)

    def closed(self) -> bool:
        return not is_open(self.arguments) and len(self.arguments.args) <= 1

    def model_load(self) -> ast.Call | None:
        """The one from_pretrained of a transformers model class (none where several load models)."""
        found = [call for call in self.document.calls("from_pretrained") if isinstance(call.func, ast.Attribute)
                 and _model_class(class_of(self.document, call.func.value))]
        return found[0] if len(found) == 1 else None

    def reaching(self, package: str, cls: str, consumers: tuple[ast.Call, ...], keyword_name: str) -> ast.Call | None:
        """The one `cls` call of `package` in the script, where it is passed to one of `consumers`
        under `keyword_name` (or, to get_peft_model, as its second argument)."""
        found = _framework_calls(self.document, lambda p, c: p == package and c == cls)
        if len(found) != 1:
            return None
        call = found[0][0]
        name = _target(self.document, call)
        if any(_reaches(self.document, call, name, other, keyword_name,
                        position=1 if call_name(other) == "get_peft_model" else None) for other in consumers):
            return call
        return None
