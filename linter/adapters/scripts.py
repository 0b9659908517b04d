"""Custom training loops: a Python script that hands a DeepSpeed config file straight to
DeepSpeed or accelerate, with no HF Trainer between them. Read with `ast` only, never run.

A script is claimed only where the file it passes is written out (a string literal, or a module
constant holding one) and nothing in the script can fill or change the config's values first:

- `deepspeed.initialize(..., config="ds.json")`, or `config_params=`, the older name that
  deepspeed/__init__.py initialize keeps for backward compatibility. DeepSpeed reads the file as
  written (deepspeed/runtime/config.py DeepSpeedConfig).
- `DeepSpeedPlugin(hf_ds_config="ds.json")` (accelerate/utils/dataclasses.py, accelerate >=
  0.10.0, PR #405) passed to `Accelerator`: accelerate fills some "auto" values in
  Accelerator._prepare_deepspeed and refuses the others.

Not claimed: a script that builds an HF Trainer (any `*Trainer(` call: the Trainer fills "auto"
from TrainingArguments through HfTrainerDeepSpeedConfig), or that calls the fill helpers itself
(`trainer_config_process`, `deepspeed_config_process`, `fill_match`, `HfTrainerDeepSpeedConfig`,
`propagate_args_to_deepspeed`), or that edits the loaded config (`deepspeed_config[...]`), or that
names the config file anywhere else (it may write it before the run), or whose file is not in the
checkout (a script is not worth a missing-file finding: it may write the file first).
"""

from __future__ import annotations

import ast
import re

from ..ir import ConfigIR, Field, Link, Origin
from ..python_reader import PythonDocument, is_open, keyword
from . import Adapter, new_config, span_of, working_directory_candidates

# Names whose presence means something may fill or change the config's values at run time.
_FILLERS = ("trainer_config_process", "trainer_config_finalize", "deepspeed_config_process", "fill_match",
            "fill_only", "HfTrainerDeepSpeedConfig", "propagate_args_to_deepspeed", "deepspeed_config[",
            "deepspeed_config.update", "hf_ds_config.config")


# For a file that does not parse: the call, and a config file written out as its argument.
_CALLED = re.compile(r"(?:deepspeed\.initialize|DeepSpeedPlugin)\(")
_LITERAL_FILE = re.compile(r"""\b(?:config|config_params|hf_ds_config)\s*=\s*["'][^"'\n]+\.json["']""")


def _trainer_built(document: PythonDocument) -> bool:
    """Does the script build a Trainer (transformers, TRL and their subclasses all end in `Trainer`)?"""
    return any(name.endswith("Trainer") for name in document.call_names())


def _config_path(document: PythonDocument, call: ast.Call | None, *names: str):
    """The literal file path a keyword of `call` names, and its node; None where it is computed."""
    if call is None:
        return None
    for name in names:
        found = keyword(call, name)
        if found is not None:
            value = document.literal(found.value)
            if isinstance(value, str) and value.strip() and not value.strip().startswith("{"):
                return value, document.resolve(found.value)
            return None
    return None


def _reader(document: PythonDocument):
    """("deepspeed" | "accelerate", the call, the path, its node) for a script whose DeepSpeed
    config reaches its reader unchanged; None otherwise."""
    imports = document.imports()
    if "deepspeed" not in imports and "accelerate" not in imports or "unsloth" in imports:
        return None  # (an Unsloth script is Unsloth's adapter's)
    if _trainer_built(document) or any(name in document.source.text for name in _FILLERS):
        return None
    found = []
    for call in document.calls("initialize"):
        owner = call.func.value if isinstance(call.func, ast.Attribute) else None
        if isinstance(owner, ast.Name) and owner.id == "deepspeed":
            path = _config_path(document, call, "config", "config_params")
            found.append(("deepspeed", call, *path) if path else None)
    # The plugin takes effect in an Accelerator (accelerator.py _prepare_deepspeed).
    for call in document.calls("DeepSpeedPlugin") if "Accelerator" in document.call_names() else ():
        path = _config_path(document, call, "hf_ds_config")
        found.append(("accelerate", call, *path) if path else None)
    if len(found) != 1 or found[0] is None:
        return None  # several readers, or a computed path: which file is read how is unknown
    reader, call, path, node = found[0]
    if _mentions(document, path) != 1:
        return None  # the name appears elsewhere: the script may write or change that file
    if not any(candidate.is_file() for candidate in working_directory_candidates(document.source.path, path)):
        return None  # not in the checkout: generated at run time, or launched from elsewhere
    return reader, call, path, node


def _mentions(document: PythonDocument, path: str) -> int:
    """How many string constants of the code (docstrings aside) hold `path`."""
    nodes = list(ast.walk(document.tree))
    docstrings = {id(node.value) for node in nodes if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)}
    return sum(isinstance(node, ast.Constant) and isinstance(node.value, str) and path in node.value
               and id(node) not in docstrings for node in nodes)


class ScriptAdapter(Adapter):
    name = "script"

    def evidence(self, document) -> int:
        return int(isinstance(document, PythonDocument) and _reader(document) is not None)

    def sniffs(self, text: str) -> bool:
        return bool(_CALLED.search(text) and _LITERAL_FILE.search(text))

    def parse(self, document: PythonDocument) -> ConfigIR:
        config = new_config(self, document)
        found = _reader(document)
        if found is None:
            return config
        reader, call, path, node = found
        origin = Origin(span_of(document, *document.span(call.func)))
        config.set("trainer.fills_deepspeed_auto", Field(False, origin))
        config.set("trainer.deepspeed_reader", Field(reader, origin))
        if reader == "deepspeed" and not is_open(call):
            # deepspeed/runtime/engine.py: a client optimizer / lr_scheduler passed to initialize
            # is used instead of the config's `optimizer` / `scheduler` block.
            for key, name, position in (("trainer.client_optimizer", "optimizer", 2),
                                        ("trainer.client_scheduler", "lr_scheduler", 5)):
                given = keyword(call, name)
                value = given.value if given is not None else (call.args[position] if len(call.args) > position
                                                               else None)
                # None (the default written out) passes nothing; a name or a call passes an object.
                config.set(key, Field(value is not None and document.literal(value) is not None, origin))
        config.links.append(Link("deepspeed", path, span_of(document, *document.span(node)),
                                 working_directory_candidates(config.path, path)))
        return config

