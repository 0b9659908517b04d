"""YAML -> `Document`, with ruamel.yaml's composer (C parser when available) and PyYAML's meanings.

Compose, never construct: the composer yields nodes with marks (character index, line,
column) and constructs no objects, so tags like `!!python/object` build nothing. Scalar
values are then resolved the way the frameworks read them: they all load YAML with PyYAML,
whose implicit resolver follows YAML 1.1 (`NO` is false, `2e-5` is a string, `0755` octal).
"""

from __future__ import annotations

import re
import sys
from typing import Any

from .document import Document, Mapping, Pair, ParseError, Scalar, Sequence
from .source import Source

# PyYAML's implicit resolvers (yaml/resolver.py, Resolver.add_implicit_resolver calls, PyYAML 6.0).
_BOOL = re.compile(r"^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$")
_TRUE = {"yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"}
# SafeConstructor.bool_values: an explicit !!bool is looked up lower-cased (`!!bool YeS` is True).
_BOOL_VALUES = {"yes": True, "no": False, "true": True, "false": False, "on": True, "off": False}
_FLOAT = re.compile(
    r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?
    |\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?
    |[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*
    |[-+]?\.(?:inf|Inf|INF)
    |\.(?:nan|NaN|NAN))$""",
    re.X,
)
_INT = re.compile(
    r"""^(?:[-+]?0b[0-1_]+
    |[-+]?0[0-7_]+
    |[-+]?(?:0|[1-9][0-9_]*)
    |[-+]?0x[0-9a-fA-F_]+
    |[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$""",
    re.X,
)
_NULL = re.compile(r"^(?:~|null|Null|NULL|)$")
_TIMESTAMP = re.compile(
    r"""^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]
    |[0-9][0-9][0-9][0-9] -[0-9][0-9]? -[0-9][0-9]?
     (?:[Tt]|[ \t]+)[0-9][0-9]?
     :[0-9][0-9] :[0-9][0-9] (?:\.[0-9]*)?
     (?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)$""",
    re.X,
)
# SafeConstructor.timestamp_regexp: what an explicit !!timestamp must match.
_TIMESTAMP_PARTS = re.compile(
    r"""^(?P<year>[0-9][0-9][0-9][0-9])
    -(?P<month>[0-9][0-9]?)
    -(?P<day>[0-9][0-9]?)
    (?:(?:[Tt]|[ \t]+)
    (?P<hour>[0-9][0-9]?)
    :(?P<minute>[0-9][0-9])
    :(?P<second>[0-9][0-9])
    (?:\.(?P<fraction>[0-9]*))?
    (?:[ \t]*(?P<tz>Z|(?P<tz_sign>[-+])(?P<tz_hour>[0-9][0-9]?)
    (?::(?P<tz_minute>[0-9][0-9]))?))?)?$""",
    re.X,
)


class Unloadable(ValueError):
    """A value PyYAML's safe_load refuses to construct (it raises, so the framework cannot load
    the file): the reader turns it into a ParseError at the node."""


def resolve_plain(text: str) -> Any:
    """What PyYAML's safe_load makes of an untagged plain scalar (Unloadable where it raises)."""
    if _NULL.match(text):
        return None
    if _BOOL.match(text):
        return text in _TRUE
    if _INT.match(text):
        return _to_int(text)
    if _FLOAT.match(text):
        return _to_float(text)
    if text[:1].isdigit() and _TIMESTAMP.match(text):
        return _to_timestamp(text)
    if text == "=":
        # resolver.py's `value` resolver: SafeConstructor has no constructor for that tag, so
        # safe_load raises on a plain `=` anywhere but as a mapping key (flatten_mapping retags keys).
        raise Unloadable("a plain `=` is the YAML 1.1 value key, which safe_load cannot construct; quote it")
    return text


def _sign(text: str) -> tuple[int, str]:
    if not text:
        raise Unloadable("an empty number")
    if text[0] in "+-":
        return (-1 if text[0] == "-" else 1), text[1:]
    return 1, text


def _int(digits: str, base: int = 10) -> int:
    """int(), whose refusals (an empty `0b_`, over 4,300 decimal digits) are PyYAML's too."""
    try:
        return int(digits, base)
    except ValueError as error:
        if "Exceeds the limit" in str(error):
            raise Unloadable(f"an integer of {len(digits)} digits, over Python's 4,300-digit limit "
                             "for int(), which safe_load calls") from None
        raise Unloadable(f"not a base-{base} integer: {digits!r}") from None


def _to_int(text: str) -> int:
    """SafeConstructor.construct_yaml_int."""
    sign, digits = _sign(text.replace("_", ""))
    if digits == "0":
        return 0
    if digits.startswith("0b"):
        return sign * _int(digits[2:], 2)
    if digits.startswith("0x"):
        return sign * _int(digits[2:], 16)
    if digits.startswith("0"):
        return sign * _int(digits, 8)
    if ":" in digits:
        value = 0
        for part in digits.split(":"):
            value = value * 60 + _int(part)
        return sign * value
    return sign * _int(digits)


def _to_float(text: str) -> float:
    """SafeConstructor.construct_yaml_float."""
    sign, digits = _sign(text.replace("_", "").lower())
    if digits == ".inf":
        return sign * float("inf")
    if digits == ".nan":
        return float("nan")
    try:
        if ":" in digits:
            value = 0.0
            for part in digits.split(":"):
                value = value * 60 + float(part)
            return sign * value
        return sign * float(digits)
    except ValueError:
        raise Unloadable(f"not a float: {text!r}") from None


def _to_bool(text: str) -> bool:
    try:
        return _BOOL_VALUES[text.lower()]
    except KeyError:
        raise Unloadable(f"not a boolean: {text!r}") from None


def _to_timestamp(text: str):
    """SafeConstructor.construct_yaml_timestamp: a date, or a datetime (aware with a zone)."""
    import datetime  # only for a file that holds a timestamp

    match = _TIMESTAMP_PARTS.match(text)
    if match is None:
        raise Unloadable(f"not a timestamp: {text!r}")
    values = match.groupdict()
    try:
        year, month, day = int(values["year"]), int(values["month"]), int(values["day"])
        if not values["hour"]:
            return datetime.date(year, month, day)
        hour, minute, second = int(values["hour"]), int(values["minute"]), int(values["second"])
        fraction = 0
        zone = None
        if values["fraction"]:
            fraction = int(values["fraction"][:6].ljust(6, "0"))
        if values["tz_sign"]:
            delta = datetime.timedelta(hours=int(values["tz_hour"]), minutes=int(values["tz_minute"] or 0))
            zone = datetime.timezone(-delta if values["tz_sign"] == "-" else delta)
        elif values["tz"]:
            zone = datetime.timezone.utc
        return datetime.datetime(year, month, day, hour, minute, second, fraction, tzinfo=zone)
    except ValueError as error:  # 2001-02-30: datetime refuses it, and so does safe_load
        raise Unloadable(f"not a timestamp: {text!r} ({error})") from None


def _to_binary(text: str) -> bytes:
    import base64
    import binascii

    try:
        return base64.decodebytes(text.encode("ascii"))
    except (UnicodeEncodeError, binascii.Error) as error:
        raise Unloadable(f"not base64: {error}") from None


# The scalar tags SafeConstructor constructs; any other tag (`!custom`, `!!python/object`) makes
# safe_load raise "could not determine a constructor for the tag".
_SCALAR_TAGS = {
    "tag:yaml.org,2002:str": str,
    "tag:yaml.org,2002:int": _to_int,
    "tag:yaml.org,2002:float": _to_float,
    "tag:yaml.org,2002:bool": _to_bool,
    "tag:yaml.org,2002:null": lambda text: None,
    "tag:yaml.org,2002:timestamp": _to_timestamp,
    "tag:yaml.org,2002:binary": _to_binary,
}
_MAPPING_TAGS = {"tag:yaml.org,2002:map", "tag:yaml.org,2002:set"}
_SEQUENCE_TAGS = {"tag:yaml.org,2002:seq", "tag:yaml.org,2002:omap", "tag:yaml.org,2002:pairs"}
_MERGE = "tag:yaml.org,2002:merge"


def _composer():
    from ruamel.yaml import YAML
    from ruamel.yaml.nodes import MappingNode, ScalarNode
    from ruamel.yaml.resolver import VersionedResolver

    class TagOnlyResolver(VersionedResolver):
        """Skip ruamel's (YAML 1.2) implicit typing: values are resolved here, PyYAML's way.
        Explicit tags still reach the nodes; the composer consults a resolver only without one."""

        def resolve(self, kind, value, implicit):
            if kind is ScalarNode:
                return self.DEFAULT_SCALAR_TAG
            return self.DEFAULT_MAPPING_TAG if kind is MappingNode else self.DEFAULT_SEQUENCE_TAG

    try:
        yaml = YAML(typ="safe", pure=False)
    except Exception:  # no C extension: the pure composer gives the same marks, slower
        yaml = YAML(typ="safe", pure=True)
    yaml.Resolver = TagOnlyResolver
    return yaml


_yaml = None


def parse_yaml(source: Source) -> Document:
    """The document as PyYAML's safe_load reads it, or a ParseError where safe_load raises.

    ruamel composes (positions, no construction); then this module applies what safe_load adds:
    one document only (get_single_node), the implicit resolvers above, the SafeConstructor's
    tags (any other tag raises), merge keys (flatten_mapping), and the scanner's refusal of tabs
    outside quoted and block scalars and comments, which ruamel's YAML 1.2 scanner accepts.
    """
    global _yaml
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    if _yaml is None:
        _yaml = _composer()
    text = source.text
    try:
        documents = iter(_yaml.compose_all(text))
        root = next(documents, None)
        if root is not None and next(documents, None) is not None:
            # yaml.safe_load -> get_single_node: "expected a single document in the stream".
            second = _second_document(text, root.end_mark.index)
            raise ParseError("invalid YAML: a second document starts here; yaml.safe_load, which the "
                             "frameworks read their YAML with, accepts a single document per file", second)
    except MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        message = error.problem or error.context or "invalid YAML"
        if error.context and error.problem:
            message = f"{error.problem} ({error.context})"
        raise ParseError(f"invalid YAML: {message}", mark.index if mark else 0) from None
    except YAMLError as error:
        raise ParseError(f"invalid YAML: {error}".splitlines()[0], getattr(error, "position", 0) or 0) from None
    except RecursionError:
        raise ParseError("invalid YAML: nesting too deep", 0) from None
    scalars: list | None = [] if "\t" in text else None
    document = Document(source=source, root=_convert(root, text, scalars), format="yaml")
    if scalars is not None:
        _check_tabs(text, scalars)
    return document


def _second_document(text: str, first_end: int) -> int:
    marker = re.compile(r"^---(?=[ \t\r\n]|$)", re.M).search(text, first_end)
    return marker.start() if marker else first_end


def _convert(root, text: str, scalars: list | None = None):
    """ruamel nodes -> Document nodes. Aliases share the anchored node: no expansion, no blow-up.

    `scalars` (when the text has a tab) collects (start, end, style) of every scalar written in
    the file, for the tab check.
    """
    if root is None:
        return None
    seen: dict[int, Any] = {}
    aliased: dict[int, Any] = {}  # ruamel node id -> converted node, for anchors that aliases use
    limit = sys.getrecursionlimit()

    def convert(node, depth: int):
        if id(node) in seen:
            converted = seen[id(node)]
            aliased[id(node)] = converted
            if isinstance(converted, Scalar):  # an alias: editing it would edit the anchor
                return Scalar(converted.value, converted.start, converted.end, converted.style, True,
                              converted.shared or _anchor_name(text, converted.start) or "")
            return converted
        if depth > limit - 100:
            raise ParseError("invalid YAML: nested too deeply", node.start_mark.index)
        start, end = node.start_mark.index, node.end_mark.index
        decorated = start < len(text) and text[start] in "&!"
        tag = _explicit_tag(node, text, start) if decorated else None
        kind = node.id
        if kind == "scalar":
            if tag is not None and tag not in _SCALAR_TAGS:
                raise _unknown_tag(tag, kind, start)
            if scalars is not None:
                scalars.append((start, end, node.style or ""))
            try:
                value = _scalar_value(node, tag)
            except Unloadable as error:
                raise ParseError(f"invalid YAML for yaml.safe_load: {error}", start) from None
            result = Scalar(value, start, end, node.style or "", decorated)
        elif kind == "mapping":
            if tag is not None and tag not in _MAPPING_TAGS:
                raise _unknown_tag(tag, kind, start)
            result = Mapping([], start, end, bool(node.flow_style))
            seen[id(node)] = result
            merged: list[Pair] = []
            for key, value in node.value:
                key_node = convert_key(key, depth)
                value_node = convert(value, depth + 1)
                pair = Pair(key_node, value_node)
                result.pairs.append(pair)
                if _is_merge(key, text):
                    merged.append(pair)
            if merged:
                _flatten(result, merged)
            return result
        else:
            if tag is not None and tag not in _SEQUENCE_TAGS:
                raise _unknown_tag(tag, kind, start)
            result = Sequence([], start, end, bool(node.flow_style))
            seen[id(node)] = result
            result.items.extend(convert(item, depth + 1) for item in node.value)
            return result
        seen[id(node)] = result
        return result

    def convert_key(key, depth: int) -> Scalar:
        if key.id == "scalar" and not key.style and key.value == "=" and id(key) not in seen:
            # flatten_mapping retags a `=` key as a string: as a key it loads.
            start = key.start_mark.index
            if scalars is not None:
                scalars.append((start, key.end_mark.index, ""))
            converted = Scalar("=", start, key.end_mark.index)
            seen[id(key)] = converted
            return converted
        key_node = convert(key, depth + 1)
        if not isinstance(key_node, Scalar):
            key_node = Scalar(None, key_node.start, key_node.end)
        return key_node

    try:
        converted = convert(root, 0)
    except RecursionError:
        raise ParseError("invalid YAML: nesting too deep", 0) from None
    _mark_shared(aliased, text)
    return converted


_EXPLICIT_TAG = re.compile(r"(?:&\S+\s+)?!")
_ANCHOR = re.compile(r"&([^\s,\[\]{}]+)")


def _explicit_tag(node, text: str, start: int) -> str | None:
    """The node's tag when the file writes one (`!!int 3`, `!custom x`), else None. The
    non-specific `!` resolves as if untagged, which the composer has already done."""
    if not _EXPLICIT_TAG.match(text, start):
        return None
    tag = node.tag if isinstance(node.tag, str) else getattr(node.tag, "value", str(node.tag))
    return None if tag in ("!", None) else tag


def _anchor_name(text: str, start: int) -> str | None:
    match = _ANCHOR.match(text, start)
    return match.group(1) if match else None


def _unknown_tag(tag: str, kind: str, start: int) -> ParseError:
    return ParseError(f"invalid YAML for yaml.safe_load: it has no constructor for the tag {tag!r} "
                      f"on a {kind} (the frameworks load YAML with safe_load, which refuses it)", start)


def _is_merge(key, text: str) -> bool:
    """A `<<` key as PyYAML's resolver reads it: plain and untagged, or explicitly !!merge."""
    if key.id != "scalar" or key.value != "<<":
        return False
    start = key.start_mark.index
    if start < len(text) and text[start] in "&!":
        return _explicit_tag(key, text, start) == _MERGE
    return not key.style


def _flatten(mapping: Mapping, merge_pairs: list[Pair]) -> None:
    """SafeConstructor.flatten_mapping: the `<<` pairs go, the mappings they name come first (of a
    list, the earlier one wins), and the mapping's own keys after them override them.

    `pairs` becomes the mapping as the framework sees it; `written` keeps the pairs as written
    (merge keys included), which is where an edit to this mapping goes."""
    merged: list[Pair] = []
    for pair in merge_pairs:
        value = pair.value
        if isinstance(value, Mapping):
            merged.extend(value.pairs)
        elif isinstance(value, Sequence):
            parts = []
            for item in value.items:
                if not isinstance(item, Mapping):
                    raise ParseError("invalid YAML for yaml.safe_load: expected a mapping for merging", item.start)
                parts.append(item.pairs)
            for part in reversed(parts):
                merged.extend(part)
        else:
            raise ParseError("invalid YAML for yaml.safe_load: expected a mapping or list of mappings for "
                             "merging", value.start)
    mapping.written = mapping.pairs
    merge_ids = {id(pair) for pair in merge_pairs}
    mapping.pairs = merged + [pair for pair in mapping.written if id(pair) not in merge_ids]


def _mark_shared(aliased: dict[int, Any], text: str) -> None:
    """Give every node that an alias reaches (the anchored node and all inside it) the anchor's
    name in `shared`: an edit there changes every alias too."""
    for node in aliased.values():
        name = _anchor_name(text, node.start) or "?"
        pending = [node]
        while pending:
            current = pending.pop()
            if current.shared:
                continue
            current.shared = name
            if isinstance(current, Mapping):
                for pair in current.written:
                    pending.append(pair.key)
                    pending.append(pair.value)
            elif isinstance(current, Sequence):
                pending.extend(current.items)


def _check_tabs(text: str, scalars: list) -> None:
    """PyYAML's scanner skips only spaces between tokens and ends a plain scalar at a tab
    (scanner.py, scan_to_next_token and scan_plain_spaces: "we just forbid them completely"),
    so a tab outside a quoted scalar, a block scalar's body or a comment makes safe_load raise
    "found character '\\t' that cannot start any token". ruamel accepts many of them."""
    import bisect

    scalars.sort()
    starts = [start for start, _, _ in scalars]
    index = text.find("\t")
    while index != -1:
        position = bisect.bisect_right(starts, index) - 1
        inside = position >= 0 and scalars[position][0] <= index < scalars[position][1]
        if inside:
            start, _, style = scalars[position]
            allowed = style in ("'", '"') or (style in ("|", ">") and not _on_header_line(text, start, index))
        else:
            line_start = text.rfind("\n", 0, index) + 1
            after = max(line_start, scalars[position][1] if position >= 0 else 0)
            allowed = _in_comment(text, after, index)
        if not allowed:
            raise ParseError("invalid YAML for yaml.safe_load: a tab outside quotes, a block scalar or a comment "
                             "(PyYAML's scanner refuses tabs there; ruamel accepts them)", index)
        index = text.find("\t", index + 1)


def _on_header_line(text: str, start: int, index: int) -> bool:
    """A tab on a block scalar's header line (`key: |  # c`) outside its comment."""
    line_end = text.find("\n", start)
    if line_end != -1 and index > line_end:
        return False
    return not _in_comment(text, start, index)


def _in_comment(text: str, start: int, index: int) -> bool:
    """Is `index` inside a comment that starts at or after `start` on the same line?"""
    hash_at = text.find("#", start, index)
    while hash_at != -1:
        if hash_at == 0 or text[hash_at - 1] in " \t\n\r" or hash_at == start:
            return True
        hash_at = text.find("#", hash_at + 1, index)
    return False


def _scalar_value(node, tag: str | None) -> Any:
    text = node.value
    if tag is not None:
        return _SCALAR_TAGS[tag](text)
    if node.style:  # quoted and block scalars are strings
        return text
    return resolve_plain(text)
