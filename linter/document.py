"""A parsed config document: a tree of mappings, sequences and scalars, each with its span.

YAML and JSON files both parse into this tree (see `yaml_reader` and `json_reader`), so the
adapters navigate one structure and ask for edits through one interface. Scalars carry the
value the *framework's* loader would see (PyYAML's YAML 1.1 rules for YAML, Python's json
for JSON), not ruamel's YAML 1.2 reading.

The edit helpers here locate and splice; they never re-dump a document.
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable, Union

from .fixes import Edit
from .source import Source
from .lazy_pattern import LazyPattern


class ParseError(Exception):
    def __init__(self, message: str, offset: int):
        super().__init__(message)
        self.message = message
        self.offset = offset


# Plain classes with __slots__: a large file parses into hundreds of thousands of nodes.
class Scalar:
    __slots__ = ("value", "start", "end", "style", "decorated", "shared")

    def __init__(self, value: Any, start: int, end: int, style: str = "", decorated: bool = False,
                 shared: str = ""):
        self.value = value
        self.start = start
        self.end = end
        self.style = style  # "" plain, "'" or '"' quoted, "|" or ">" block, "json" for JSON literals
        self.decorated = decorated  # carries a YAML tag or anchor: edits would have to keep it
        # The anchor's name when this node is, or lies inside, an anchored YAML node that an alias
        # (`*name`, or a merge `<<: *name`) also uses: an edit here changes every alias too.
        self.shared = shared

    def plain(self, memo: dict | None = None) -> Any:
        return self.value


class Pair:
    __slots__ = ("key", "value")

    def __init__(self, key: Scalar, value: "Node"):
        self.key = key
        self.value = value


class Mapping:
    __slots__ = ("pairs", "start", "end", "flow", "_index", "shared", "written")

    def __init__(self, pairs: list[Pair], start: int, end: int, flow: bool = False, _index: dict | None = None):
        # The pairs as the framework's loader sees them: with YAML merge keys (`<<: *base`)
        # resolved as PyYAML's flatten_mapping does (merged pairs first, own pairs override).
        self.pairs = pairs
        self.start = start
        self.end = end
        self.flow = flow
        self._index = _index if _index is not None else {}
        self.shared = ""  # as Scalar.shared
        # The pairs as written in this mapping (`<<` pairs included): where edits to it go.
        # The same list as `pairs` unless the mapping merges others.
        self.written = pairs

    def get(self, key: str) -> Pair | None:
        """The pair for `key`; with duplicate keys the last one, as PyYAML and json read it."""
        if not self._index:
            for pair in self.pairs:
                try:
                    self._index[pair.key.value] = pair
                except TypeError:  # an unhashable complex key: never a config key we look up
                    continue
        return self._index.get(key)

    def value(self, key: str) -> "Node | None":
        pair = self.get(key)
        return pair.value if pair else None

    def plain(self, memo: dict | None = None) -> dict:
        """Plain Python values. An aliased node becomes one shared object, so a "billion laughs"
        document costs its size in the file, not its expanded size."""
        return _plain(self, {} if memo is None else memo)


class Sequence:
    __slots__ = ("items", "start", "end", "flow", "shared")

    def __init__(self, items: list["Node"], start: int, end: int, flow: bool = False):
        self.items = items
        self.start = start
        self.end = end
        self.flow = flow
        self.shared = ""  # as Scalar.shared

    def plain(self, memo: dict | None = None) -> list:
        return _plain(self, {} if memo is None else memo)


def _plain(node: "Mapping | Sequence", memo: dict) -> Any:
    """Mapping.plain and Sequence.plain, with an explicit stack: a valid JSON file may nest 1,000
    levels (json.load reads it), more than Python's recursion allows at two frames a level."""
    if id(node) in memo:
        return memo[id(node)]
    result = memo[id(node)] = {} if isinstance(node, Mapping) else []
    pending = [(node, result)]
    while pending:
        current, out = pending.pop()
        children = ((pair.key.value, pair.value) for pair in current.pairs) if isinstance(current, Mapping) \
            else ((None, item) for item in current.items)
        for key, child in children:
            if isinstance(child, Scalar):
                value = child.value
            elif id(child) in memo:
                value = memo[id(child)]
            else:
                value = memo[id(child)] = {} if isinstance(child, Mapping) else []
                pending.append((child, value))
            if isinstance(out, list):
                out.append(value)
                continue
            try:
                out[key] = value
            except TypeError:  # an unhashable complex key: never a config key we look up
                continue
    return result


Node = Union[Scalar, Mapping, Sequence]


class Document:
    __slots__ = ("source", "root", "format", "resolve")

    def __init__(self, source: Source, root: Node | None, format: str,
                 resolve: "Callable[[str], Any] | None" = None):
        self.source = source
        self.root = root
        self.format = format  # "yaml" or "json"
        # What the format's loader makes of an unquoted scalar (the YAML reader's resolver): a
        # string that would read as something else must be quoted when written.
        self.resolve = resolve

    def find(self, *keys: str) -> Node | None:
        """The node at a key path from the root, or None where any step is missing or not a mapping."""
        node = self.root
        for key in keys:
            if not isinstance(node, Mapping):
                return None
            pair = node.get(key)
            if pair is None:
                return None
            node = pair.value
        return node

    def find_pair(self, *keys: str) -> Pair | None:
        parent = self.find(*keys[:-1]) if len(keys) > 1 else self.root
        return parent.get(keys[-1]) if isinstance(parent, Mapping) else None

    # ---- edits -------------------------------------------------------------------------------

    def replace_scalar(self, node: Scalar, value: Any) -> Edit:
        """Replace a scalar's text with `value`, keeping its quoting style where the value is a string."""
        if node.shared:
            raise RenderError(_shared_message(node.shared))
        if node.decorated or node.style in ("|", ">"):
            raise RenderError("the value carries a YAML tag, anchor or block style; edit it by hand")
        text = self.render_scalar(value, node.style)
        if node.start == node.end and not self.source.text[node.start - 1 : node.start].isspace():
            # A key written with no value (`fp16:`): its empty scalar sits right after the colon,
            # and `fp16:true` would no longer be a key.
            text = " " + text
        return Edit(self.source.path, node.start, node.end, text)

    def render_scalar(self, value: Any, style: str = "") -> str:
        if self.format == "json":
            return json.dumps(value)
        if isinstance(value, str):
            if style in ("'", '"'):
                return style + value + style if style == "'" else json.dumps(value)
            if _NEEDS_QUOTES.search(value) or (self.resolve is not None and _reads_otherwise(self.resolve, value)):
                return json.dumps(value)
            return value
        if value is True:
            return "true"
        if value is False:
            return "false"
        if value is None:
            return "null"
        if isinstance(value, float) and self.resolve is not None:
            return _yaml11_float(repr(value))
        return str(value)

    def spell(self, node: Node, value: Any) -> str:
        """The literal to write in place of scalar `node` so that the loader reads `value`; a
        number keeps the digits written where they already denote it."""
        if isinstance(value, float) and self.resolve is not None:
            written = self.source.text[node.start:node.end].strip()
            try:
                same = float(written) == value
            except ValueError:
                same = False
            return _yaml11_float(written if same else repr(value))
        return self.render_scalar(value)

    def insert_pair(self, mapping: Mapping, key: str, value: Any, after: str | None = None) -> Edit:
        """Insert `key: value` into `mapping` the way a person would.

        Block YAML: a new line at the indentation of the siblings, after the last item (or after
        `after`), with the file's line ending. Flow YAML and JSON objects: after the last member,
        one per line where the members are one per line, otherwise inline.
        """
        if not mapping.written:
            raise RenderError("cannot insert into an empty mapping")
        if mapping.shared:
            raise RenderError(_shared_message(mapping.shared))
        anchor = mapping.get(after) if after else None
        if anchor is not None and not any(pair is anchor for pair in mapping.written):
            anchor = None  # a pair merged in from elsewhere (`<<: *base`): not written here
        anchor = anchor or mapping.written[-1]
        if self.format == "yaml" and not mapping.flow:
            return self._insert_block_yaml(mapping, anchor, key, value)
        return self._insert_flow(mapping, anchor, key, value)

    def _insert_block_yaml(self, mapping: Mapping, anchor: Pair, key: str, value: Any) -> Edit:
        source = self.source
        first_key = mapping.written[0].key
        indent = source.indentation_of(first_key.start)
        if source.text[source.line_start(first_key.start) + len(indent) : first_key.start].strip():
            # The mapping starts mid-line (`- key: v` in a sequence): align under its first key.
            indent = " " * (source.position(first_key.start).column - 1)
        end = _last_offset(anchor.value)
        newline = source.newline
        line = self._block_lines(key, value, indent, _indent_step(source, indent), newline)
        insert_at = source.after_line(end)
        if insert_at == len(source.text) and not source.text.endswith("\n"):
            last = _last_node(anchor.value)
            if isinstance(last, Scalar) and last.style in ("|", ">"):
                return self._after_final_block_scalar(last, newline + line)
            return Edit(source.path, insert_at, insert_at, newline + line)
        return Edit(source.path, insert_at, insert_at, line + newline)

    def _after_final_block_scalar(self, scalar: Scalar, addition: str) -> Edit:
        """Append after a block scalar that ends the file without a line break.

        Its value has no final newline there; with a line break after it, clip (`|`) and keep
        (`|+`) chomping would add one (a real `chat_template_jinja` gained a "\n" this way).
        Strip chomping (`|-`) reads the same text either way, so the header becomes `|-`."""
        text = self.source.text
        header = _BLOCK_HEADER.search(text, scalar.start)
        if header is None or header.start() > scalar.end:
            raise RenderError("cannot find the block scalar's header to keep its value")
        indicator, first, second = header.group(1), header.group(2) or "", header.group(3) or ""
        digits = "".join(part for part in (first, second) if part.isdigit())
        new_header = f"{indicator}{digits}-"
        return Edit(self.source.path, header.start(), len(text),
                    new_header + text[header.end():] + addition)

    def _block_lines(self, key: str, value: Any, indent: str, step: str, newline: str) -> str:
        """`key: value` as block YAML; a dict value becomes a nested block, one level deeper."""
        if not isinstance(value, dict):
            return f"{indent}{self.render_scalar(key)}: {self.render_scalar(value)}"
        inner = newline.join(self._block_lines(k, v, indent + step, step, newline) for k, v in value.items())
        return f"{indent}{self.render_scalar(key)}:{newline}{inner}"

    def _insert_flow(self, mapping: Mapping, anchor: Pair, key: str, value: Any) -> Edit:
        source = self.source
        end = _last_offset(anchor.value)
        key_text = json.dumps(key) if self.format == "json" else self.render_scalar(key)
        multiline = source.position(anchor.key.start).line != source.position(mapping.start).line
        if multiline:
            indent = source.indentation_of(anchor.key.start)
            newline = source.newline
            # A nested block takes the shape of its nearest sibling block (one line or several);
            # with no sibling block, the pretty-printed default: several lines.
            blocks = [pair.value for pair in mapping.written if isinstance(pair.value, Mapping)]
            sibling = anchor.value if isinstance(anchor.value, Mapping) else (blocks[-1] if blocks else None)
            one_line = sibling is not None and source.position(sibling.start).line == source.position(sibling.end).line
            value_text = self._render_value(value, None if one_line else indent, newline)
            text = f",{newline}{indent}{key_text}: {value_text}"
        else:
            text = f", {key_text}: {self._render_value(value, None, None)}"
        # After a member that is not the last, its own comma now follows the inserted one.
        return Edit(source.path, end, end, text)

    def _render_value(self, value: Any, indent: str | None, newline: str | None) -> str:
        if not isinstance(value, dict):
            return self.render_scalar(value)
        items = [(json.dumps(k) if self.format == "json" else self.render_scalar(k), self.render_scalar(v))
                 for k, v in value.items()]
        if indent is None:
            return "{" + ", ".join(f"{k}: {v}" for k, v in items) + "}"
        step = _indent_step(self.source, indent)
        inner = ("," + newline).join(f"{indent}{step}{k}: {v}" for k, v in items)
        return "{" + newline + inner + newline + indent + "}"


class RenderError(Exception):
    """An IR change that an adapter cannot express as an edit in this file."""


_BLOCK_HEADER = LazyPattern(r"([|>])([1-9+-])?([1-9+-])?")


def _shared_message(anchor: str) -> str:
    return (f"the value lies inside the anchored node &{anchor}, which an alias (*{anchor}) also uses: "
            "editing it would change every alias too; edit it by hand")


def _last_node(node: Node) -> Node:
    """The node whose text ends a node: for block collections, their last scalar."""
    while True:
        if isinstance(node, Mapping) and not node.flow and node.written:
            node = node.written[-1].value
        elif isinstance(node, Sequence) and not node.flow and node.items:
            node = node.items[-1]
        else:
            return node


def _last_offset(node: Node) -> int:
    """End of the last token of a node: for block collections, of their last scalar.

    ruamel ends a block mapping at the start of whatever follows it (blank lines and comments
    included), which is not where a person would continue it.
    """
    return _last_node(node).end


def _indent_step(source: Source, indent: str) -> str:
    if "\t" in indent:
        return "\t"
    # The smallest non-zero indentation in the file is its unit.
    widths = {len(match) for match in _INDENTS.findall(source.text)}
    return " " * (min(widths) if widths else 2)


_INDENTS = LazyPattern(r"^( +)[^\s]", re.M)  # the leading spaces of each line that has more
_NEEDS_QUOTES = LazyPattern(r"""^[\s\-?:,\[\]{}#&*!|>'"%@`]|[:#]\s|\s$|^$""")


# YAML 1.1 (PyYAML) reads an exponent float only with a dot in the mantissa and a signed
# exponent: `2e-5` and `1.0e5` stay strings.
_EXPONENT = LazyPattern(r"^(?P<sign>[-+]?)(?P<mantissa>\d+(?:\.\d*)?|\.\d+)[eE](?P<esign>[-+]?)(?P<exponent>\d+)$")


def _reads_otherwise(resolve: "Callable[[str], Any]", text: str) -> bool:
    """Would the loader read the plain scalar `text` as something other than that string?"""
    try:
        return resolve(text) != text
    except ValueError:  # yaml_reader.Unloadable: safe_load could not even load it plain (`0b_`)
        return True


def _yaml11_float(text: str) -> str:
    """`text`, a float in Python's or YAML 1.2's spelling, as YAML 1.1 reads it as a float."""
    number = _EXPONENT.match(text)
    if not number:
        return text
    mantissa = number["mantissa"] if "." in number["mantissa"] else number["mantissa"] + ".0"
    mantissa = "0" + mantissa if mantissa.startswith(".") else mantissa
    return f"{number['sign']}{mantissa}e{number['esign'] or '+'}{number['exponent']}"
