"""The framework-neutral representation rules see: facts about files, and runs of files.

A `ConfigIR` holds what one file says, as `Field`s under IR keys from the key catalogue
(linter/ir_keys.py, checked by linter/catalogue.py), each with its origin: a span in the file and the key path as the file
spells it, or a framework default naming the upstream file that sets it. It holds facts only:
the parsed document and the adapter that read it stay with the engine. A `Run` is a primary
config plus the configs it links (a trainer YAML and its DeepSpeed JSON).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from .catalogue import KEYS, UnknownKey
from .value import Value


class Span(Value):
    __slots__ = ("path", "start", "end", "line", "column", "end_line", "end_column")

    def __init__(self, path: Path, start: int, end: int, line: int, column: int, end_line: int, end_column: int):
        self.path = path
        self.start = start
        self.end = end
        self.line = line
        self.column = column
        self.end_line = end_line
        self.end_column = end_column


class Origin(Value):
    """Where a value comes from: a span in a file, or a framework default.

    A default has no span of its own; `span` then points at the place a person would look (the
    parent key the default lives under), and `default_source` names the upstream file.
    `written_as` is the key path as the file spells it (`micro_batch_size`,
    `zero_optimization.stage`): messages name a key the way the user wrote it, or would write it.
    """

    __slots__ = ("span", "default_source", "written_as")

    def __init__(self, span: Span | None, default_source: str | None = None, written_as: str | None = None):
        self.span = span
        self.default_source = default_source
        self.written_as = written_as

    @property
    def is_default(self) -> bool:
        return self.default_source is not None


class Field(Value):
    __slots__ = ("value", "origin")

    def __init__(self, value: Any, origin: Origin):
        self.value = value
        self.origin = origin

    @property
    def span(self) -> Span | None:
        return self.origin.span


class Elsewhere(Value):
    """Why a linked path, as written, is resolved where the linter does not see; `since`
    (package, first release) where that holds only from a release on; `shipped` (package, first
    release that ships the file or None where only a checkout between releases had it, first
    release without it) for a file the framework shipped for a while only."""

    __slots__ = ("reason", "since", "shipped")

    def __init__(self, reason: str, since: tuple[str, str] | None = None,
                 shipped: tuple[str, str | None, str] | None = None):
        self.reason, self.since, self.shipped = reason, since, shipped


class Link(Value):
    """A file a config references (its DeepSpeed JSON), as the framework would resolve it.

    `candidates` are the paths the framework would try, in its order. A name for a config the
    framework ships (XTuner's `deepspeed_zero2`) has no file here: `builtin` holds its IR values
    and `builtin_source` the upstream file they come from; a config written inside the
    referencing file (a dumped XTuner run's DeepSpeed strategy) gives `builtin_spans`, where each
    value is written. `elsewhere` says why the path, as
    written, is resolved somewhere the linter does not see: a file the framework ships at that
    path of its own checkout (LLaMA-Factory's examples/deepspeed/ds_z3_config.json), which its
    documented usage runs from; a launch command that passes another file in its place.
    """

    __slots__ = ("kind", "text", "span", "candidates", "builtin", "builtin_source", "elsewhere", "builtin_spans")

    def __init__(self, kind: str, text: str, span: Span, candidates: tuple[Path, ...] = (),
                 builtin: dict[str, Any] | None = None, builtin_source: str | None = None,
                 elsewhere: Elsewhere | None = None, builtin_spans: dict[str, Span] | None = None):
        self.kind = kind  # "deepspeed"
        self.text = text  # as written in the referencing file
        self.span = span
        self.candidates = candidates
        self.builtin = builtin
        self.builtin_source = builtin_source
        self.elsewhere = elsewhere
        self.builtin_spans = builtin_spans  # where the referencing file writes a builtin value, by IR key


class Located:
    """Where a key path sits in the file: the key (None for a list item), the value, and the
    value's text as written and whether it was written unquoted (plain)."""

    __slots__ = ("key_span", "value_span", "text", "plain")

    def __init__(self, key_span: Span | None, value_span: Span, text: str, plain: bool):
        self.key_span, self.value_span, self.text, self.plain = key_span, value_span, text, plain


class KeyTree:
    """Every key of a file as plain values (what the framework's loader reads), for schema rules;
    `locate` maps a key path back to the file. Built by the adapter; rules never see the parser's
    nodes."""

    __slots__ = ("_plain", "_value", "format", "locate", "spell")

    def __init__(self, plain: "Callable[[], Any]", format: str, locate: "Callable[[tuple], Located | None]",
                 spell: "Callable[[tuple, Any], str]"):
        self._plain = plain  # computed on first use: only schema rules need the whole tree
        self._value = None
        self.format = format  # "yaml" or "json": which literal spellings mean what
        self.locate = locate
        self.spell = spell  # the literal that reads as a value at a key path, in the file's format

    @property
    def value(self) -> Any:
        if self._plain is not None:
            self._value, self._plain = self._plain(), None
        return self._value


class ConfigIR:
    """The facts one file states. Rules may cache derived results in `cache` (rules/schema.py)."""

    __slots__ = ("path", "framework", "fields", "file_span", "links", "schema", "key_tree", "editable",
                 "cache", "_versions", "type_errors", "__weakref__")

    def __init__(self, path: Path, framework: str, fields: dict[str, Field] | None = None,
                 file_span: Span | None = None, links: list[Link] | None = None, schema: str = "",
                 key_tree: "KeyTree | None" = None, editable: bool = True):
        self.path = path
        self.framework = framework
        self.fields: dict[str, Field] = {}
        # Values the file holds for a key that are not of the key's type: recorded here (SCH002
        # reports them where no schema does), never handed to rules.
        self.type_errors: list[tuple[str, Any, Origin]] = []
        for key, found in (fields or {}).items():
            self.set(key, found)
        self.file_span = file_span  # the first line: where file-level findings point
        self.links = links if links is not None else []
        # The schema this file is validated against (schemas/<schema>.schema.json): the adapter's
        # name, or a finer kind where one adapter reads several formats (hf: trl, accelerate, peft).
        self.schema = schema
        self.key_tree = key_tree  # every key of the file as plain values (None: no document tree)
        self.editable = editable  # False for a framework's built-in config: no file to edit
        self.cache: dict[str, Any] = {}
        self._versions: dict[str, tuple[str, str] | None] = {}

    def set(self, key: str, found: Field) -> Field | None:
        """Record a fact; a value not of the key's type is recorded as a type error instead."""
        entry = KEYS.get(key)
        if entry is None:
            raise UnknownKey(key)
        if not entry.accepts(found.value):
            self.type_errors.append((key, found.value, found.origin))
            return None
        self.fields[key] = found
        return found

    def get(self, key: str) -> Field | None:
        found = self.fields.get(key)  # a recorded key is a known one (set checks it)
        if found is None and key not in KEYS:
            raise UnknownKey(key)
        return found

    def value(self, key: str, default: Any = None) -> Any:
        found = self.fields.get(key)  # get(), inline: asked ~130,000 times in a corpus check
        if found is None:
            if key not in KEYS:
                raise UnknownKey(key)
            return default
        return found.value

    def written_as(self, key: str) -> str:
        """The key as this file spells it (or would, for a default): for messages."""
        found = self.get(key)
        return found.origin.written_as if found is not None and found.origin.written_as else key

    def span(self, *keys: str) -> Span | None:
        """The span of the first of `keys` that is present, else the file's first line."""
        for key in keys:
            found = self.get(key)
            if found is not None and found.span is not None:
                return found.span
        return self.file_span

    def version(self, package: str) -> tuple[str, str] | None:
        """(version, where it comes from) of `package` for the run of this file: the nearest
        exact pin, else the installed package; None when unknown. Adapters (for version-bound
        defaults) and rules (for version-bound bugs) both ask here."""
        if package not in self._versions:
            from .versions import doubted, pin_in

            found = pin_in(package, self.path.parent)  # pins from its folder up
            if found is not None and doubted(package, self.path.parent, self.framework):
                found = None  # a pin the framework reading this file replaces when it is installed
            self._versions[package] = (found.version, found.where) if found is not None else None
        return self._versions[package]

    def mode(self) -> str | None:
        """The training precision: "bf16", "fp16", "fp32", "both", or None where unresolved."""
        fp16, bf16 = self.value("precision.fp16"), self.value("precision.bf16")
        if "auto" in (fp16, bf16):
            return None
        if fp16 and bf16:
            return "both"
        if bf16:
            return "bf16"
        if fp16:
            return "fp16"
        if fp16 is None and bf16 is None:
            return None
        return "fp32"


class Run:
    """A primary config and the configs it links; a file linted alone is a run of its own."""

    __slots__ = ("primary", "linked", "missing")

    def __init__(self, primary: ConfigIR, linked: list[ConfigIR] | None = None, missing: list[Link] | None = None):
        self.primary = primary
        self.linked = linked if linked is not None else []
        self.missing = missing if missing is not None else []  # links whose file does not exist (LNK001)

    @property
    def configs(self) -> list[ConfigIR]:
        return [self.primary, *self.linked]

    def value(self, key: str) -> Any:
        """The first value any config of the run gives for `key` (None where none does)."""
        for config in self.configs:
            found = config.value(key)
            if found is not None:
                return found
        return None

    def first(self, key: str) -> tuple[ConfigIR, Field] | None:
        """The first config in the run that sets `key`, with its field."""
        for config in self.configs:
            found = config.get(key)
            if found is not None:
                return config, found
        return None


_DTYPES = {
    "float16": "float16", "fp16": "float16", "half": "float16", "torch.float16": "float16",
    "bfloat16": "bfloat16", "bf16": "bfloat16", "torch.bfloat16": "bfloat16",
    "float32": "float32", "fp32": "float32", "float": "float32", "torch.float32": "float32",
    "auto": "auto",
}


def canonical_dtype(value: Any) -> Any:
    """The canonical dtype name for the spellings frameworks accept; other values unchanged."""
    if isinstance(value, str):
        return _DTYPES.get(value.strip().lower(), value)
    return value


def upper_name(value: Any) -> str:
    """An enum name as its framework reads it, case-insensitively (accelerate's
    `StateDictType[value.upper()]`): written back, the upper-case name reads the same."""
    return str(value).upper()
