"""Argument classes a repository defines for the scripts that read its YAML/JSON configs.

Scripts built on transformers' `HfArgumentParser` (and TRL's `TrlParser`, open-instruct's
`ArgumentParserPlus`, ...) read a config into dataclasses, and many projects add their own: a
`ScriptArguments` subclass with `dataset_mixture`, an `SFTConfig` subclass with
`chat_template`, a flat `FlatArguments`. A key one of those defines is valid for that project
even though no framework schema knows it.

This module finds such classes with `ast` (never importing project code) in the repository of a
linted file: classes named in a parser call (`HfArgumentParser((ModelArguments, TrainingArguments))`,
also through a variable holding the tuple), dataclasses their own module fills from a file it loads
(`TrainConfig(**yaml.safe_load(f))`), classes that subclass an upstream argument class
(TrainingArguments, Seq2SeqTrainingArguments, TRL's trainer configs, ScriptArguments, ModelConfig),
and the project classes those inherit from, with their fields. The repository is the nearest folder
above the file that holds `.git`; without one, the file's own folder. The cost is bounded: hidden
folders, virtual environments, node_modules and build outputs are skipped, and so are files over
`MAX_FILE_BYTES`, files past `MAX_FILES`, and files past `MAX_PARSED_BYTES` of parsed source; only
files that mention `dataclass` or a parser are parsed at all (python_snippets: only the statements that
matter). Results are cached per repository.

upstream: transformers/hf_argparser.py (HfArgumentParser takes a dataclass type or an iterable of
them; parse_yaml_file / parse_json_file / parse_dict map keys to their fields); trl/scripts/utils.py
(TrlParser, a HfArgumentParser subclass).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from .python_snippets import snippet_statements, statements
from .source import checkout_root

MAX_FILE_BYTES = 512 * 1024
MAX_FILES = 3000
MAX_PARSED_BYTES = 4 * 1024 * 1024  # source handed to ast.parse per repository, at most
SKIPPED_DIRS = frozenset({"node_modules", "__pycache__", "site-packages", "build", "dist", "venv", "env",
                          "wandb", "outputs", "checkpoints"})

# Upstream classes whose subclasses are read by HfArgumentParser-style scripts.
# transformers/training_args.py, training_args_seq2seq.py; trl/__init__.py (trainer configs),
# trl/scripts/utils.py (ScriptArguments), trl/trainer/model_config.py (ModelConfig).
UPSTREAM_ARGUMENT_CLASSES = frozenset({
    "TrainingArguments", "Seq2SeqTrainingArguments", "ScriptArguments", "ModelConfig",
    "SFTConfig", "DPOConfig", "GRPOConfig", "ORPOConfig", "KTOConfig", "CPOConfig", "RewardConfig",
    "PPOConfig", "RLOOConfig", "OnlineDPOConfig", "XPOConfig", "NashMDConfig", "BCOConfig", "PRMConfig",
    "GKDConfig", "AlignPropConfig", "DDPOConfig", "IterativeSFTConfig", "GRPOScriptArguments",
})
# Callables that parse a config file into dataclasses given as their first argument.
PARSERS = frozenset({"HfArgumentParser", "TrlParser", "ArgumentParserPlus", "H4ArgumentParser"})


@dataclass(frozen=True)
class ArgumentClass:
    """One project class whose fields are config keys."""

    name: str
    path: Path
    line: int
    fields: frozenset[str]  # its own fields and those of the project classes it inherits from
    upstream_bases: frozenset[str]  # upstream argument classes it extends, e.g. {"SFTConfig"}
    parsed: bool  # named in a parser call (not only found by its base class)


@dataclass(frozen=True)
class ImportedClass:
    """A class a parser call of the repository names, imported from another installed package
    (argument_imports.third_party): its fields are not known here."""

    name: str
    module: str
    script: Path


@dataclass(frozen=True)
class ProjectArguments:
    root: Path
    classes: tuple[ArgumentClass, ...]
    imported: tuple[ImportedClass, ...] = ()  # parser classes from other installed packages
    lenient: frozenset[str] = frozenset()  # classes of parser calls in a file passing allow_extra_keys=True
    calls: tuple[frozenset[str], ...] = ()  # the class names each parser call of the repository names
    call_sites: tuple[tuple[Path, frozenset[str]], ...] = ()  # (script, class names) of each parser call

    @property
    def fields(self) -> frozenset[str]:
        """Every key some project argument class defines."""
        return frozenset().union(*(cls.fields for cls in self.classes))

    @property
    def upstream_bases(self) -> frozenset[str]:
        """Upstream argument classes the project's classes extend (their keys are valid too)."""
        return frozenset().union(*(cls.upstream_bases for cls in self.classes))

    def call_reading(self, keys: frozenset[str], upstream_fields: frozenset[str]) -> frozenset[str] | None:
        """The classes of one parser call of the repository that define every one of `keys`, or
        None: the fields of the call's project classes, and `upstream_fields` (the upstream
        argument classes' fields) where the call names an upstream class or a project class that
        extends one. HfArgumentParser hands each key to the dataclass that has the field and
        refuses a key none has (parse_dict / parse_yaml_file, allow_extra_keys=False)."""
        for call in self.calls:
            fields, upstream = set(), bool(call & UPSTREAM_ARGUMENT_CLASSES)
            for cls in self.classes:
                if cls.name in call:
                    fields |= cls.fields
                    upstream = upstream or bool(cls.upstream_bases)
            if keys <= (fields | upstream_fields if upstream else fields):
                return call
        return None

    def defines(self, key: str) -> ArgumentClass | None:
        """The first project class that defines `key`, or None."""
        for cls in self.classes:
            if key in cls.fields:
                return cls
        return None


def repository_root(near: Path) -> Path:
    """The nearest folder at or above `near` that holds `.git`; else `near`'s own folder."""
    return _root_of_folder(near if near.is_dir() else near.parent)


@lru_cache(maxsize=4096)
def _root_of_folder(folder: Path) -> Path:
    # Asked for every trainer-like file of a folder (claiming): resolve() walks each component.
    start = folder.resolve()
    return checkout_root(start) or start


def project_arguments(near: Path) -> ProjectArguments:
    """The argument classes of the repository that holds `near` (cached per repository)."""
    return _scan(repository_root(near))


def project_fields(near: Path) -> frozenset[str]:
    """Shorthand: every key a project argument class defines in `near`'s repository."""
    return project_arguments(near).fields


class _Class:
    __slots__ = ("name", "path", "line", "own_fields", "bases", "is_dataclass")

    def __init__(self, name, path, line, own_fields, bases, is_dataclass):
        self.name, self.path, self.line = name, path, line
        self.own_fields, self.bases, self.is_dataclass = own_fields, bases, is_dataclass


def _python_files(root: Path):
    count = 0
    for directory, subdirs, files in os.walk(root):
        current = Path(directory)
        subdirs[:] = sorted(
            name for name in subdirs
            if not name.startswith(".") and name not in SKIPPED_DIRS
            and not (current / name / "pyvenv.cfg").is_file()
        )
        for name in sorted(files):
            if not name.endswith(".py"):
                continue
            path = current / name
            try:
                if path.stat().st_size > MAX_FILE_BYTES:
                    continue
            except OSError:
                continue
            count += 1
            if count > MAX_FILES:
                return
            yield path


def _last_name(node) -> str | None:
    import ast

    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Subscript):  # Generic[...] and the like
        return _last_name(node.value)
    return None


def _class_names_in(node, assigned: dict[str, list[str]]) -> list[str]:
    """Class names in a parser's first argument: a name, a tuple/list of names, or a variable
    assigned such a tuple earlier in the same file."""
    import ast

    if isinstance(node, (ast.Tuple, ast.List)):
        names = []
        for element in node.elts:
            names.extend(_class_names_in(element, assigned))
        return names
    if isinstance(node, ast.Name) and node.id in assigned:
        return assigned[node.id]
    name = _last_name(node)
    return [name] if name else []


def _read_file(path: Path, classes: list[_Class], parsed: set[str], budget: list[int],
               origins: dict[str, set[tuple[str, Path]]], lenient: set[str],
               parsers: tuple[frozenset[str], "re.Pattern[bytes]"] | None = None,
               calls_named: list[tuple[Path, frozenset[str]]] | None = None) -> None:
    import ast

    try:
        data = path.read_bytes()
    except OSError:
        return
    # cheap filter before parsing: a file matters if it defines a dataclass (HfArgumentParser
    # accepts only dataclasses, and a subclass adds fields only as one) or calls a parser
    parser_names, parser_name = parsers or (PARSERS, _PARSER_NAME)
    if b"dataclass" not in data and not any(name.encode() in data for name in parser_names):
        return
    budget[0] -= len(data)
    if budget[0] < 0:
        return
    body = snippet_statements(data, parser_name) if FAST else None
    if body is None:  # the snippets did not parse on their own: read the whole file
        try:
            body = ast.parse(data, filename=str(path)).body
        except (SyntaxError, ValueError):
            return
    # Only statements are visited (ast.walk over every expression node costs 5x the parse); a
    # statement is searched for parser calls only when one of its lines names a parser.
    parser_lines = {data.count(b"\n", 0, match.start()) + 1 for match in parser_name.finditer(data)}
    assigned: dict[str, list[str]] = {}
    calls = []
    for node in statements(body):
        if isinstance(node, ast.ClassDef):
            fields = []
            for statement in node.body:
                if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
                    name = statement.target.id
                    annotation = ast.unparse(statement.annotation)
                    if name.startswith("_") or "ClassVar" in annotation or "InitVar" in annotation:
                        continue
                    fields.append(name)
            decorated = any(_last_name(d.func if isinstance(d, ast.Call) else d) == "dataclass"
                            for d in node.decorator_list)
            bases = [name for name in (_last_name(base) for base in node.bases) if name]
            classes.append(_Class(node.name, path, node.lineno, fields, bases, decorated))
            continue
        if isinstance(node, ast.Assign) and isinstance(node.value, (ast.Tuple, ast.List)):
            names = [name for name in (_last_name(e) for e in node.value.elts) if name]
            for target in node.targets:
                if isinstance(target, ast.Name) and names:
                    assigned[target.id] = names
        if not hasattr(node, "body") and parser_lines and any(
                line in parser_lines for line in range(node.lineno, (node.end_lineno or node.lineno) + 1)):
            calls.extend(sub for sub in ast.walk(node)
                         if isinstance(sub, ast.Call) and _last_name(sub.func) in parser_names)
    # A dataclass its module fills from a file it loads (`TrainConfig(**yaml.safe_load(f))`) reads it as a parser
    parsed.update(cls.name for cls in classes if cls.path == path and cls.is_dataclass and _LOADER.search(data)
                  and re.search(rb"\b" + re.escape(cls.name.encode()) + rb"\s*\(\s*\*\*", data))
    imports = None
    for call in calls:
        first = call.args[0] if call.args else next(
            (k.value for k in call.keywords if k.arg == "dataclass_types"), None)
        if first is not None:
            names = _class_names_in(first, assigned)
            parsed.update(names)
            if calls_named is not None and names:
                calls_named.append((path, frozenset(names)))
            if _EXTRA_KEYS.search(data):  # parse_dict(..., allow_extra_keys=True): other keys are for others
                lenient.update(names)
            if imports is None:
                from .argument_imports import imported_names

                imports = imported_names(data)
            for name in names:
                if name in imports:
                    origins.setdefault(name, set()).add((imports[name], path))


_EXTRA_KEYS = re.compile(rb"\ballow_extra_keys\s*=\s*True\b")
_LOADER = re.compile(rb"\b(?:yaml\.(?:safe_)?load|json\.load|OmegaConf\.load|tomllib\.load|toml\.load)\s*\(")
_PARSER_NAME = re.compile(rb"\b(?:" + b"|".join(name.encode() for name in sorted(PARSERS)) + rb")\b")
FAST = True  # parse only the dataclass blocks and parser-call statements (tests compare both ways)


_PARSER_SUBCLASS = re.compile(rb"^[ \t]*class[ \t]+(\w+)[ \t]*\(([^)]*)\)", re.MULTILINE)


def _repository_parsers(files: list[Path]) -> tuple[frozenset[str], "re.Pattern[bytes]"]:
    """PARSERS and the repository's own subclasses of them, by base class (`class
    StarChatArgumentParser(HfArgumentParser)`, and a subclass of that): such a class inherits
    parse_yaml_file / parse_json_file / parse_dict, so its calls read config files into the
    dataclasses they name just as HfArgumentParser's do."""
    bases: dict[str, set[str]] = {}
    for path in files:
        try:
            data = path.read_bytes()
        except OSError:
            continue
        if b"Parser" not in data:
            continue
        for match in _PARSER_SUBCLASS.finditer(data):
            named = {part.strip().rsplit(".", 1)[-1] for part in match.group(2).decode("utf-8", "replace").split(",")}
            bases.setdefault(match.group(1).decode("utf-8", "replace"), set()).update(named)
    names = set(PARSERS)
    while True:
        more = {name for name, parents in bases.items() if name not in names and parents & names}
        if not more:
            break
        names |= more
    if len(names) == len(PARSERS):
        return PARSERS, _PARSER_NAME
    return frozenset(names), re.compile(rb"\b(?:" + b"|".join(name.encode() for name in sorted(names)) + rb")\b")


def _snippet_statements(data: bytes):
    """python_snippets.snippet_statements with this module's parser names."""
    return snippet_statements(data, _PARSER_NAME)


@lru_cache(maxsize=64)
def _scan(root: Path) -> ProjectArguments:
    found: list[_Class] = []
    parsed: set[str] = set()
    budget = [MAX_PARSED_BYTES]
    origins: dict[str, set[tuple[str, Path]]] = {}
    lenient: set[str] = set()
    calls: list[tuple[Path, frozenset[str]]] = []
    files = list(_python_files(root))
    parsers = _repository_parsers(files)
    for path in files:
        _read_file(path, found, parsed, budget, origins, lenient, parsers, calls)
    by_name: dict[str, list[_Class]] = {}
    for cls in found:
        by_name.setdefault(cls.name, []).append(cls)

    def lineage(cls: _Class, seen: frozenset[str]) -> tuple[set[str], set[str]]:
        """(fields, upstream bases) of `cls` and the project classes it inherits from."""
        fields, upstream = set(cls.own_fields), set()
        for base in cls.bases:
            if base in UPSTREAM_ARGUMENT_CLASSES:
                upstream.add(base)
            if base in seen:
                continue
            for parent in by_name.get(base, ()):  # a project class (a same-named one counts too)
                if parent is cls:
                    continue
                parent_fields, parent_upstream = lineage(parent, seen | {base})
                fields |= parent_fields
                upstream |= parent_upstream
        return fields, upstream

    chosen = []
    for cls in found:
        fields, upstream = lineage(cls, frozenset({cls.name}))
        is_parsed = cls.name in parsed
        if not is_parsed and not upstream:
            continue
        if not (cls.is_dataclass or upstream):
            continue  # a parser only accepts dataclasses
        chosen.append(ArgumentClass(cls.name, cls.path, cls.line, frozenset(fields), frozenset(upstream),
                                    is_parsed))
    chosen.sort(key=lambda cls: (str(cls.path), cls.line))
    from .argument_imports import third_party

    imported = sorted({ImportedClass(name, module, script) for name, places in origins.items()
                       if name not in by_name for module, script in places if third_party(module, script, root)},
                      key=lambda cls: (str(cls.script), cls.name))
    return ProjectArguments(root, tuple(chosen), tuple(imported), frozenset(lenient),
                            tuple(dict.fromkeys(names for _, names in calls)), tuple(dict.fromkeys(calls)))
