"""The PEFT config a training script trains (hf_script.py reads the rest of the script): the one
PEFT config call of the classes below that reaches `get_peft_model(model, config)` or a trainer's
`peft_config=`, read through PEFT's adapter_config bindings (peft_facts.py) with adapter.kind the
class's peft_type, as adapter_config.json spells it (lower-cased).

- peft/tuners/lora/config.py LoraConfig (peft_type LORA), tuners/adalora/config.py AdaLoraConfig
  (ADALORA), tuners/prefix_tuning/config.py PrefixTuningConfig (PREFIX_TUNING),
  tuners/prompt_tuning/config.py PromptTuningConfig (PROMPT_TUNING), tuners/p_tuning/config.py
  PromptEncoderConfig (P_TUNING): each __post_init__ sets `self.peft_type` (huggingface/peft at
  5d602fdbf).
- peft/mapping_func.py get_peft_model (mapping.py before 0.14): a config whose task_type is None
  and that is not prompt learning gets the generic `PeftModel`, whose forward is
  `(*args, **kwargs)`; peft/config.py PeftConfig.task_type defaults to None.
- peft/tuners/adalora/model.py AdaLoraModel.update_and_allocate: the training loop must call it
  after each optimizer step; nothing in PEFT, transformers' Trainer or TRL's trainers calls it
  (`git grep update_and_allocate` in huggingface/peft src/ at 5d602fdbf and huggingface/trl at
  f2cd57710 finds only its definition). A script whose own text never names it, whose trainers are
  transformers' / TRL's own classes and that adds no callback of another module, never calls it.
"""

from __future__ import annotations

import ast

from ..document import Document, Scalar
from ..ir import Field, Origin
from ..python_reader import PythonDocument, is_open
from . import span_of
from .hf_script_calls import CallReader, Script, class_of, call_mapping, runtime

PEFT_CONFIG_CLASSES = {
    "LoraConfig": "lora",
    "AdaLoraConfig": "adalora",
    "PrefixTuningConfig": "prefix_tuning",
    "PromptTuningConfig": "prompt_tuning",
    "PromptEncoderConfig": "p_tuning",
}
_TARGETED = ("lora", "adalora")  # the classes whose target_modules name the wrapped layers
_PROMPT_LEARNING = ("prefix_tuning", "prompt_tuning", "p_tuning")  # PromptLearningConfig subclasses
_ALLOCATE = ("peft/tuners/adalora/model.py AdaLoraModel.update_and_allocate (no caller in peft, transformers' "
             "Trainer or TRL)")
_GENERIC = "peft/mapping_func.py get_peft_model (task_type None: the generic PeftModel)"


def _trained_config(script: Script, consumers) -> tuple[ast.Call, str] | None:
    """The one PEFT config call (of PEFT_CONFIG_CLASSES) that reaches a consumer."""
    found = [(call, kind) for cls, kind in PEFT_CONFIG_CLASSES.items()
             if (call := script.reaching("peft", cls, consumers, "peft_config")) is not None]
    return found[0] if len(found) == 1 else None


def _own_callbacks(script: Script) -> bool:
    """Every trainer is transformers' or TRL's own class, and no callback comes from another module
    (a callbacks= list of names the script defines itself or imports from transformers; no
    add_callback call): the script's own text is all that can call update_and_allocate."""
    document = script.document
    own = {node.name for node in document.tree.body if isinstance(node, ast.ClassDef)}
    for trainer in script.trainers:
        function = trainer.func
        owner = class_of(document, trainer) if isinstance(function, ast.Name) else None
        if owner is None or owner[0] not in ("transformers", "trl") or is_open(trainer):
            return False
        given = next((item.value for item in trainer.keywords if item.arg == "callbacks"), None)
        if given is None:
            continue
        if not isinstance(given, (ast.List, ast.Tuple)):
            return False
        for item in given.elts:
            name = item.func if isinstance(item, ast.Call) else item
            if not isinstance(name, ast.Name) or not (name.id in own or (class_of(document, name) or ("",))[0] == "transformers"):
                return False
    return not any(True for _ in document.calls("add_callback"))


def record_script_peft(document: PythonDocument, script: Script, config, bindings, facts) -> None:
    """adapter.* from the script's trained PEFT config (`bindings`: PEFT_BINDINGS less model.name and
    adapter.kind; `facts`: peft_facts.record_peft_facts)."""
    from .hf_kinds import record_target_shorthand

    consumers = (*document.calls("get_peft_model"), *script.trainers)
    trained = _trained_config(script, consumers)
    if trained is None:
        return
    call, kind = trained
    mapping = call_mapping(document, call)
    span = span_of(document, *document.span(call.func))
    if is_open(call) and kind in _TARGETED:  # **kwargs may name the targets
        written = {pair.key.value for pair in mapping.pairs}
        mapping.pairs += [runtime(name, document.span(call.func)) for name in ("target_modules", "target_parameters")
                          if name not in written]
        mapping._index = {}
    config.set("adapter.kind", Field(kind, Origin(span)))
    read = CallReader(config, document_of(document, mapping), is_open(call))
    read.bind(bindings)
    if kind in _TARGETED:
        record_target_shorthand(read, "target_modules")
    facts(read)
    task = mapping.value("task_type")
    if kind not in _PROMPT_LEARNING and not is_open(call) and (task is None or isinstance(task, Scalar) and task.value is None):
        origin = Origin(read.key_span("task_type") if task is not None else span, _GENERIC, "task_type")
        config.set("adapter.generic_model", Field(True, origin))
    if kind == "adalora" and "update_and_allocate" not in document.source.text and _own_callbacks(script):
        config.set("adapter.allocates_ranks", Field(False, Origin(span, _ALLOCATE)))


def document_of(document: PythonDocument, mapping) -> Document:
    return Document(document.source, mapping, "python")

