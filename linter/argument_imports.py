"""Where the argument classes a parser call names come from, when the repository does not define
them: `from alignment import ModelArguments, DataArguments, DPOConfig` then
`H4ArgumentParser((ModelArguments, DataArguments, DPOConfig))` reads a config into classes of
the installed `alignment` package (alignment-handbook, installed from git by the README), whose
fields no schema here describes. Classes from transformers or TRL are the frameworks' own (the
trl schema holds their fields); classes from the repository's own modules are read by
project_args. Any other package's classes make the keys of the files such a script reads
unknown here.

Read from the file's text (`from X import a, b as c`, also parenthesised over lines), never by
importing it; called only for files with a parser call.
"""

from __future__ import annotations

import re
from pathlib import Path

# The frameworks whose argument classes the trl schema describes (transformers TrainingArguments,
# TRL's ScriptArguments / ModelConfig / trainer configs).
UPSTREAM_MODULES = frozenset({"transformers", "trl"})
_FROM_IMPORT = re.compile(rb"^[ \t]*from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)", re.MULTILINE)


def imported_names(data: bytes) -> dict[str, str]:
    """{name bound in the file: the module it is imported from} for its `from ... import` lines."""
    names: dict[str, str] = {}
    for match in _FROM_IMPORT.finditer(data):
        module = match.group(1).decode("utf-8", "replace")
        listed = match.group(2).decode("utf-8", "replace").strip("()")
        for item in listed.split("#")[0].replace("\n", ",").split(","):
            parts = item.split()
            if len(parts) == 3 and parts[1] == "as":
                names[parts[2]] = module
            elif len(parts) == 1 and parts[0].isidentifier():
                names[parts[0]] = module
    return names


def third_party(module: str, script: Path, root: Path) -> bool:
    """Is `module` another installed package: neither a framework whose classes the schemas hold,
    nor a module of the repository (a relative import, a top-level package or module of the
    checkout or its src/ folder, or a module beside the script)?"""
    if not module or module.startswith("."):
        return False
    top = module.split(".")[0]
    if top in UPSTREAM_MODULES:
        return False
    for folder in {root, root / "src", script.parent}:
        if (folder / top).is_dir() or (folder / f"{top}.py").is_file():
            return False
    return True
