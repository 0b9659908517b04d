"""Unsloth scripts: the chat template the samples are rendered with and the markers
train_on_responses_only masks by, read with `ast`.

From unslothai/unsloth (bare mirror at 015bdef0d9) and unslothai/unsloth-zoo (ce232d6c):
- unsloth/chat_templates.py get_chat_template(tokenizer, chat_template="chatml", mapping=...,
  map_eos_token=True, ...): a string names a template of CHAT_TEMPLATES, which becomes
  tokenizer.chat_template (a (template, stop_word) tuple is the user's own). The special tokens
  each named template writes: linter/data/chat_templates.json "unsloth_templates".
- train_on_responses_only(trainer, instruction_part=None, response_part=None, ...) (unsloth
  #770, ca6c3dcc99, 2024-07-14; unsloth_zoo/dataset_utils.py from 9d6e19d9, 2024-10-13):
  tokenizes both parts with add_special_tokens=False and searches the tokenized samples for
  them; labels stay -100 except from the end of a response_part to the next instruction_part.
Recorded only where the script shows it all: both functions imported from Unsloth under their
own names, one get_chat_template call with a literal name the
table holds, then an apply_chat_template call (the samples rendered with it) before
train_on_responses_only, no `.chat_template =` assignment that could replace the template, and
literal markers.
"""

from __future__ import annotations

import ast
import re

from ..ir import ConfigIR, Field, Origin
from ..python_reader import PythonDocument, is_open, keyword
from . import record_literal, span_of

_TEMPLATE = "get_chat_template's {name} template, unsloth/chat_templates.py CHAT_TEMPLATES"
_ASSIGNED_TEMPLATE = re.compile(r"\.chat_template\s*=[^=]")


def _argument(call: ast.Call, name: str, position: int) -> ast.expr | None:
    found = keyword(call, name)
    if found is not None:
        return found.value
    if any(isinstance(item, ast.Starred) for item in call.args[: position + 1]) or len(call.args) <= position:
        return None
    return call.args[position]


def _from_unsloth(document: PythonDocument, *names: str) -> bool:
    """Are these functions imported, under their own names, from Unsloth (unsloth.chat_templates,
    which re-exports unsloth_zoo's train_on_responses_only) rather than defined by the project?"""
    document.imports()  # the one walk that indexes the script
    imported = {alias.name for node in document.from_imports if node.module and not node.level
                and node.module.split(".")[0] in ("unsloth", "unsloth_zoo")
                for alias in node.names if alias.asname is None}
    defined = {node.name for node in document.tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
    return all(name in imported and name not in defined for name in names)


def record_chat_template(document: PythonDocument, config: ConfigIR, trainer: ast.Call | None) -> None:
    """data.chat_template (the name as written), data.template_special_tokens and
    data.template_placeholders, where the training samples are rendered with the template
    get_chat_template installs: one call of Unsloth's get_chat_template with a literal name the
    table holds, an apply_chat_template call after it and before the trainer is built, and no
    `.chat_template =` assignment that could replace it."""
    if trainer is None or not _from_unsloth(document, "get_chat_template") or _ASSIGNED_TEMPLATE.search(
            document.source.text):
        return
    templates = list(document.calls("get_chat_template"))
    if len(templates) != 1 or is_open(templates[0]):
        return
    if not any(templates[0].lineno <= call.lineno < trainer.lineno for call in document.calls("apply_chat_template")):
        return
    from ..chat_templates import unsloth_template

    node = _argument(templates[0], "chat_template", 1)
    name = document.literal(node) if node is not None else None
    found = unsloth_template(name) if isinstance(name, str) else None
    if found is None:
        return
    tokens, placeholders, source = found
    origin = Origin(span_of(document, *document.span(node)), f"{_TEMPLATE.format(name=repr(name))} ({source})")
    config.set("data.chat_template", Field(name, origin))
    config.set("data.template_special_tokens", Field(list(tokens), origin))
    config.set("data.template_placeholders", Field(placeholders, origin))


def record_response_markers(document: PythonDocument, config: ConfigIR) -> None:
    """data.response_marker / data.instruction_marker and the named template's tokens."""
    if not _from_unsloth(document, "get_chat_template", "train_on_responses_only"):
        return
    masks = list(document.calls("train_on_responses_only"))
    if len(masks) != 1 or is_open(masks[0]):
        return
    templates = list(document.calls("get_chat_template"))
    rendering = next(document.calls("apply_chat_template"), None)
    # The samples are rendered with the installed template before the mask is set up (a call
    # after it, e.g. for generation once trained, says nothing about the training text).
    if len(templates) != 1 or is_open(templates[0]) or rendering is None or \
            not templates[0].lineno <= rendering.lineno < masks[0].lineno:
        return
    if _ASSIGNED_TEMPLATE.search(document.source.text):
        return  # the template may be replaced after get_chat_template
    from ..chat_templates import unsloth_template

    node = _argument(templates[0], "chat_template", 1)
    name = document.literal(node) if node is not None else None
    found = unsloth_template(name) if isinstance(name, str) else None
    if found is None:
        return
    response = record_literal(config, document, "data.response_marker", _argument(masks[0], "response_part", 2))
    instruction = record_literal(config, document, "data.instruction_marker",
                                 _argument(masks[0], "instruction_part", 1))
    for field, key in ((response, "data.response_marker"), (instruction, "data.instruction_marker")):
        if field is not None and not isinstance(field.value, str):
            del config.fields[key]
    tokens, placeholders, source = found
    origin = Origin(span_of(document, *document.span(node)), f"{_TEMPLATE.format(name=repr(name))} ({source})")
    config.set("data.template_special_tokens", Field(list(tokens), origin))
    config.set("data.template_placeholders", Field(placeholders, origin))
