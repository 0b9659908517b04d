"""Adapters: one per framework. Each claims a file by content, reads it into IR facts through
its bindings, and renders typed changes as text edits in its own terms.

A `Binding` states one IR key once: where the file keeps it (one key path, or alternatives where
the framework accepts two spellings), its default with the upstream file that sets it, and the
conversion the framework applies. The same binding drives parsing, fix rendering and the spelling
messages show (`Origin.written_as`). Adapters add hooks only for derived facts (the precision
mode, dtype coupling). They record facts; rules decide what is a problem.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Callable, Iterable

from ..changes import Change, RenameKey, SetPrecision, SetValue, WriteLiteral
from ..document import Document, Mapping, Node, RenderError, Scalar, Sequence
from ..fixes import Edit
from ..ir import ConfigIR, Field, KeyTree, Link, Located, Origin, Span, canonical_dtype, upper_name
from ..source import folders_to_checkout
from ..lazy_pattern import LazyPattern

_MISSING = object()


class Binding:
    """IR `key` lives at `paths` (dotted key paths; the first one present is read, and written;
    the first is written where none is). Absent, it reads `default`, set by upstream `source`
    and shown at the `anchor` key path; a fix that adds it puts it `after` that sibling (fp16
    beside bf16, as people write them)."""

    __slots__ = ("key", "paths", "default", "source", "convert", "anchor", "after")

    def __init__(self, key: str, *paths: str, default: Any = _MISSING, source: str | None = None,
                 convert: Callable[[Any], Any] | None = None, anchor: str = "", after: str | None = None):
        self.key = key
        self.paths = tuple(tuple(path.split(".")) for path in paths)
        self.default = default
        self.source = source
        self.convert = convert
        self.anchor = tuple(anchor.split(".")) if anchor else ()
        self.after = after

    def path_in(self, document: Document) -> tuple[str, ...]:
        """The key path this binding reads in `document` (and a fix writes)."""
        return next((path for path in self.paths if document.find(*path) is not None), self.paths[0])


class Adapter:
    name: str = ""
    bindings: tuple[Binding, ...] = ()

    def evidence(self, document: Document) -> int:
        """How many keys only this adapter's formats have does `document` hold (0: not ours)?
        The loader gives a file to the adapter with the most evidence; a tie is no claim."""
        raise NotImplementedError

    def claims(self, document: Document) -> bool:
        return self.evidence(document) > 0

    def sniffs(self, text: str) -> bool:
        """Does the text look like this format's config? Asked of a file that does not parse,
        and of every Python file before it is parsed (most are not configs)."""
        return False

    def parse(self, document: Document) -> ConfigIR:
        raise NotImplementedError

    def bindings_for(self, config: ConfigIR) -> tuple[Binding, ...]:
        """The bindings of this file's kind (one adapter may read several kinds of file)."""
        return self.bindings

    def binding(self, config: ConfigIR, key: str) -> Binding | None:
        return next((binding for binding in self.bindings_for(config) if binding.key == key), None)

    def key_tree(self, document: Document) -> "KeyTree | None":
        """The file's keys as plain values, and where each sits (schema rules read this)."""
        if not isinstance(document, Document) or document.root is None:
            return None
        return KeyTree(document.root.plain, document.format, lambda path: _locate(document, path),
                       lambda path, value: document.spell(_node_at(document, path), value))

    def named_link(self, document: Document, config: ConfigIR, name: str) -> "Link | None":
        """A link for a config the framework ships under a name (XTuner's `deepspeed_zero2`)."""
        return None

    # ---- rendering typed changes ---------------------------------------------------------------

    def render(self, document: Document, config: ConfigIR, change: Change) -> list[Edit]:
        """Edits that make the file say what `change` asks; RenderError if impossible."""
        if isinstance(change, SetValue):
            return self.render_value(document, config, change.key, change.value)
        if isinstance(change, SetPrecision):
            return self.render_precision(document, config, change.mode)
        if isinstance(change, RenameKey):
            return [rename_key(document, change.path, change.new_name)]
        if isinstance(change, WriteLiteral):
            return [write_literal(document, change.path, change.literal)]
        raise RenderError(f"{self.name} cannot render {type(change).__name__}")

    def render_value(self, document: Document, config: ConfigIR, key: str, value: Any) -> list[Edit]:
        """By default through the key's binding; adapters override for derived facts."""
        binding = self.binding(config, key)
        if binding is None:
            raise RenderError(f"{self.name} configs have no key for {key}")
        if binding.convert is not None and binding.convert not in _WRITTEN_AS_READ:
            raise RenderError(f"{'.'.join(binding.paths[0])} is not {key} as written; edit it by hand")
        return [self.write(document, config, key, value)]

    def write(self, document: Document, config: ConfigIR, key: str, value: Any) -> Edit:
        """The edit that makes IR `key` read `value` where its binding keeps it."""
        binding = self.binding(config, key)
        return set_path(document, binding.path_in(document), value, after=binding.after)

    def render_precision(self, document: Document, config: ConfigIR, mode: str) -> list[Edit]:
        raise RenderError(f"{self.name} configs have no precision switch")


def rename_key(document: Document, path: tuple, new_name: str) -> Edit:
    """The key at `path` renamed where it stands (any format)."""
    parent = _node_at(document, path[:-1])
    pair = parent.get(path[-1]) if isinstance(parent, Mapping) else None
    if pair is None:
        raise RenderError(f"no key {'.'.join(map(str, path))}")
    return document.replace_scalar(pair.key, new_name)


def write_literal(document: Document, path: tuple, literal: str) -> Edit:
    """`literal` written in place of the scalar at `path` (any format)."""
    node = _node_at(document, path)
    if not isinstance(node, Scalar) or node.decorated:
        raise RenderError("the value carries a YAML tag or anchor; edit it by hand")
    return Edit(document.source.path, node.start, node.end, literal)


def _node_at(document: Document, path: tuple) -> Node | None:
    node = document.root
    for step in path:
        if isinstance(node, Mapping) and isinstance(step, str):
            node = node.value(step)
        elif isinstance(node, Sequence) and isinstance(step, int) and 0 <= step < len(node.items):
            node = node.items[step]
        else:
            return None
        if node is None:
            return None
    return node


def _locate(document: Document, path: tuple) -> Located | None:
    node = _node_at(document, path)
    if node is None:
        return None
    key_span = None
    if path and isinstance(path[-1], str):
        parent = _node_at(document, path[:-1])
        pair = parent.get(path[-1]) if isinstance(parent, Mapping) else None
        key_span = span_of(document, pair.key.start, pair.key.end) if pair else None
    text = document.source.text[node.start:node.end]
    plain = isinstance(node, Scalar) and node.style == "" and document.format == "yaml"
    return Located(key_span, span_of(document, node.start, node.end), text, plain)


def span_of(document: Document, start: int, end: int) -> Span:
    source = document.source
    return Span(source.path, start, end, *source.span_lines(start, end))


def new_config(adapter: Adapter, document: Document, kind: str | None = None) -> ConfigIR:
    """An empty ConfigIR for `document`, its kind recorded (the adapter's name by default)."""
    first_line_end = document.source.line_end(0)
    config = ConfigIR(
        path=document.source.path,
        framework=adapter.name,
        file_span=span_of(document, 0, first_line_end),
        schema=adapter.name,
        key_tree=adapter.key_tree(document),
    )
    config.set("file.kind", Field(kind or adapter.name, Origin(config.file_span)))
    launcher = _commented_launch(document.source.text) if document.format == "yaml" else None
    if launcher is not None:
        config.set("launch.commented_config", Field(launcher, Origin(config.file_span)))
    return config


_LAUNCH_COMMENT = LazyPattern(r"#.*\b(?:accelerate launch|torchrun|deepspeed)\b.*?--(?:config_file|deepspeed)[ =](\S+)")
_SHARDING_NAME = LazyPattern(r"fsdp|zero|ds_z|deepspeed", re.I)


def _commented_launch(text: str) -> str | None:
    """The sharding launcher config a comment of the file runs it with (LLaMA-Factory's
    examples/ascend/*_fsdp2.yaml start "# accelerate launch --config_file
    examples/accelerate/fsdp2_config.yaml src/train.py ..."), when that config's name says FSDP or
    ZeRO: a comment is the author's word on how the file runs."""
    if "#" not in text or "--" not in text:  # both searches need a comment and an option
        return None
    for line in text.splitlines():
        found = _LAUNCH_COMMENT.search(line) if "--" in line else None
        if found and _SHARDING_NAME.search(found.group(1)):
            return found.group(1)
    # A multi-line command: the --config_file on a continuation line of a commented launch.
    commented = "\n".join(line for line in text.splitlines() if line.lstrip().startswith("#"))
    if "accelerate launch" in commented:
        found = re.search(r"--config_file[ =](\S+)", commented)
        if found and _SHARDING_NAME.search(found.group(1)):
            return found.group(1)
    return None


class Reader:
    """Fills a ConfigIR from a document: `take` a value at a key path, or record a default."""

    def __init__(self, config: ConfigIR, document: Document, templates_unknown: bool = False):
        self.config = config
        self.document = document
        # A `${VAR}` placeholder a launcher fills in: unknown here, so recorded as absent.
        self.templates_unknown = templates_unknown

    def bind(self, bindings: Iterable[Binding]) -> None:
        """Read every binding: the value at its key path, or its default."""
        find, record = self.document.find, self._record
        for binding in bindings:  # binding.path_in, keeping the node it finds (~40,000 in a corpus check)
            for path in binding.paths:
                node = find(*path)
                if node is not None:
                    break
            else:
                if binding.default is _MISSING:
                    continue  # absent, no default: _record would record nothing (most bindings of a file)
                path, node = binding.paths[0], None
            record(binding.key, path, node, binding.convert, binding.default, binding.source, binding.anchor)

    def node(self, *path: str) -> Node | None:
        return self.document.find(*path)

    def key_span(self, *path: str) -> Span | None:
        pair = self.document.find_pair(*path) if path else None
        return span_of(self.document, pair.key.start, pair.key.end) if pair else None

    def take(self, key: str, *path: str, convert: Callable[[Any], Any] | None = None, default: Any = _MISSING,
             default_source: str | None = None, anchor: Iterable[str] = ()) -> Field | None:
        """Record the scalar at `path` under IR `key`; where absent, `default` (if given) with its
        upstream source, located at the `anchor` key path (the parent a person would look at)."""
        return self._record(key, path, self.node(*path), convert, default, default_source, anchor)

    def _record(self, key: str, path: tuple[str, ...], node: Node | None, convert: Callable[[Any], Any] | None,
                default: Any, default_source: str | None, anchor: Iterable[str]) -> Field | None:
        if self.templates_unknown and templated(node):
            return None
        spelling = ".".join(path)
        if node is not None and (isinstance(node, Scalar) or convert is not None):
            origin = Origin(span_of(self.document, node.start, node.end), written_as=spelling)
            raw = node.value if isinstance(node, Scalar) else node.plain()
            try:
                value = convert(raw) if convert is not None and raw is not None else raw
            except (TypeError, ValueError, AttributeError, OverflowError):
                self.config.type_errors.append((key, raw, origin))  # e.g. a list where a name belongs
                return None
            found = Field(value, origin)
        elif node is None and default is not _MISSING:
            anchor_span = self.key_span(*anchor) if anchor else None
            found = Field(default, Origin(anchor_span or self.config.file_span, default_source, spelling))
        else:
            return None
        return self.config.set(key, found)

    def set(self, key: str, value: Any, *path: str) -> Field:
        """Record a value derived from the node at `path` (e.g. a block's presence)."""
        pair = self.document.find_pair(*path)
        span = span_of(self.document, pair.key.start, pair.value.end) if pair else self.config.file_span
        return self.config.set(key, Field(value, Origin(span, written_as=".".join(path) or None)))


def record_literal(config: ConfigIR, document, key: str, node,
                   convert: Callable[[Any], Any] | None = None) -> Field | None:
    """Record the literal a Python expression denotes (see python_reader) under IR `key`;
    nothing for a value that is computed at run time."""
    from ..python_reader import UNKNOWN

    value = document.literal(node)
    if node is None or value is UNKNOWN:
        return None
    start, end = document.span(document.resolve(node))
    return config.set(key, Field(convert(value) if convert else value, Origin(span_of(document, start, end))))


def set_path(document: Document, path: tuple[str, ...], value: Any, after: str | None = None) -> Edit:
    """One edit that makes `path` hold `value`: replace the scalar there, or insert the missing
    key under the deepest existing mapping (missing levels become a nested value)."""
    parent = document.root
    for depth, key in enumerate(path):
        if not isinstance(parent, Mapping):
            raise RenderError(f"{'.'.join(path[:depth]) or 'the document'} is not a mapping")
        pair = parent.get(key)
        if pair is None:
            nested: Any = value
            for missing in reversed(path[depth + 1 :]):
                nested = {missing: nested}
            return document.insert_pair(parent, key, nested, after=after)
        if depth == len(path) - 1:
            if not isinstance(pair.value, Scalar):
                raise RenderError(f"{'.'.join(path)} is not a plain value")
            return document.replace_scalar(pair.value, value)
        parent = pair.value
    raise RenderError("empty key path")


def as_float(value: Any) -> Any:
    """A number written as a string (PyYAML reads `2e-5` as one) becomes the float the framework uses."""
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return value
    return value


def working_directory_candidates(config_path: Path, path: str) -> tuple[Path, ...]:
    """Where a path that the framework opens relative to its working directory may be: the
    config's folder and each folder above it up to the repository root (the directory the run
    is launched from is one of them when, as usual, configs live in a subfolder of the project)."""
    written_path = Path(path).expanduser()
    if written_path.is_absolute():
        return (written_path,)
    # The run is launched from inside its checkout: not from above the repository root.
    return tuple(directory / written_path for directory in folders_to_checkout(config_path.resolve().parent))


def templated(node: Node | None) -> bool:
    """A `${VAR}` placeholder that a launcher substitutes before the framework reads the file."""
    return isinstance(node, Scalar) and isinstance(node.value, str) and "${" in node.value


def written(document: Document, *path: str) -> Any:
    """The value of the scalar at `path`; None where it is absent, empty or a placeholder."""
    node = document.find(*path)
    return None if not isinstance(node, Scalar) or templated(node) else node.value


def comma_list(value: Any) -> Any:
    """A list written as one comma-separated string (`q_proj,v_proj`) becomes a list."""
    return [item.strip() for item in value.split(",")] if isinstance(value, str) else value


def deepspeed_link(config: ConfigIR, document: Document, node: Node | None, elsewhere: Any = None) -> None:
    """Link the DeepSpeed file a `deepspeed:` value names. An inline JSON string, a `${VAR}`
    placeholder or a mapping (the DeepSpeed config itself) links nothing. The frameworks open the
    path relative to the launch directory, which the linter cannot know: see
    working_directory_candidates. `elsewhere.names(config path, path)`: see adapters/shipped.py."""
    if not isinstance(node, Scalar) or not isinstance(node.value, str) or templated(node):
        return
    path = node.value.strip()
    if not path or path.startswith("{"):
        return
    config.links.append(Link("deepspeed", node.value, span_of(document, node.start, node.end),
                             working_directory_candidates(config.path, path),
                             elsewhere=elsewhere and elsewhere.names(config.path, path)))


def strategy(value: Any) -> Any:
    """A TrainingArguments strategy (IntervalStrategy / SaveStrategy) as its lower-case name; YAML
    1.1 reads an unquoted `no` as False."""
    return "no" if value is False else str(value).lower() if isinstance(value, str) else value


def as_bool_or_auto(value: Any) -> Any:
    if isinstance(value, str) and value.lower() == "auto":
        return "auto"
    return value


# Conversions after which the value reads back as written: a fix may write the IR value itself.
_WRITTEN_AS_READ = {as_float, as_bool_or_auto, canonical_dtype, upper_name, strategy}

# Adapters by file format, in claiming order: where formats overlap, the HF family's keys
# appear in the others' files, so it comes last. Modules are imported on first use of a format:
# a run over YAML never pays for Python's `ast`.
_ADAPTERS = {
    "yaml": (("ludwig", "LudwigAdapter"), ("axolotl", "AxolotlAdapter"), ("llamafactory", "LlamaFactoryAdapter"),
             ("hf", "HFAdapter")),
    "json": (("deepspeed", "DeepSpeedAdapter"), ("hf", "HFAdapter")),
    "python": (("xtuner", "XTunerAdapter"), ("unsloth", "UnslothAdapter"), ("scripts", "ScriptAdapter"),
               ("hf_script", "HFScriptAdapter")),
}


def adapters_for(file_format: str) -> list[Adapter]:
    import importlib

    return [getattr(importlib.import_module(f"{__name__}.{module}"), name)()
            for module, name in _ADAPTERS.get(file_format, ())]
