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

# PyYAML's implicit resolvers (yaml/resolver.py, Resolver.add_implicit_resolver calls).
_BOOL = re.compile(r"^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$")
_TRUE = {"yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"}
_FLOAT = re.compile(
    r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?
    |\.[0-9_]+(?:[eE][-+][0-9]+)?
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
MAX_NODES = 1_000_000


def resolve_plain(text: str) -> Any:
    """What PyYAML's safe_load makes of an untagged plain scalar."""
    if _NULL.match(text):
        return None
    if _BOOL.match(text):
        return text in _TRUE
    if _INT.match(text):
        return _to_int(text)
    if _FLOAT.match(text):
        return _to_float(text)
    return text


def _sign(text: str) -> tuple[int, str]:
    if text[0] in "+-":
        return (-1 if text[0] == "-" else 1), text[1:]
    return 1, text


def _to_int(text: str) -> int:
    sign, digits = _sign(text.replace("_", ""))
    if digits == "0":
        return 0
    if digits.startswith("0b"):
        return sign * int(digits[2:], 2)
    if digits.startswith("0x"):
        return sign * int(digits[2:], 16)
    if digits.startswith("0"):
        return sign * int(digits, 8)
    if ":" in digits:
        value = 0
        for part in digits.split(":"):
            value = value * 60 + int(part)
        return sign * value
    return sign * int(digits)


def _to_float(text: str) -> float:
    sign, digits = _sign(text.replace("_", "").lower())
    if digits == ".inf":
        return sign * float("inf")
    if digits == ".nan":
        return float("nan")
    if ":" in digits:
        value = 0.0
        for part in digits.split(":"):
            value = value * 60 + float(part)
        return sign * value
    return sign * float(digits)


_STANDARD_TAGS = {
    "tag:yaml.org,2002:str": str,
    "tag:yaml.org,2002:int": _to_int,
    "tag:yaml.org,2002:float": _to_float,
    "tag:yaml.org,2002:bool": lambda text: resolve_plain(text) if _BOOL.match(text) else text,
    "tag:yaml.org,2002:null": lambda text: None,
}


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
    global _yaml
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    if _yaml is None:
        _yaml = _composer()
    try:
        documents = _yaml.compose_all(source.text)
        root = next(iter(documents), None)
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
    return Document(source=source, root=_convert(root, source.text), format="yaml", resolve=resolve_plain)


def _convert(root, text: str):
    """ruamel nodes -> Document nodes. Aliases share the anchored node: no expansion, no blow-up."""
    if root is None:
        return None
    seen: dict[int, Any] = {}
    count = 0
    limit = sys.getrecursionlimit()

    def convert(node, depth: int):
        nonlocal count
        if id(node) in seen:
            converted = seen[id(node)]
            if isinstance(converted, Scalar):  # an alias: editing it would edit the anchor
                return Scalar(converted.value, converted.start, converted.end, converted.style, True)
            return converted
        count += 1
        if count > MAX_NODES or depth > limit - 100:
            raise ParseError("invalid YAML: document too large or too deeply nested", node.start_mark.index)
        start, end = node.start_mark.index, node.end_mark.index
        decorated = start < len(text) and text[start] in "&!"
        kind = node.id
        if kind == "scalar":
            result = Scalar(_scalar_value(node, text[start:start + 200]), start, end, node.style or "", decorated)
        elif kind == "mapping":
            result = Mapping([], start, end, bool(node.flow_style))
            seen[id(node)] = result
            for key, value in node.value:
                key_node = convert(key, depth + 1)
                if not isinstance(key_node, Scalar):
                    key_node = Scalar(None, key_node.start, key_node.end)
                result.pairs.append(Pair(key_node, convert(value, depth + 1)))
            return result
        else:
            result = Sequence([], start, end, bool(node.flow_style))
            seen[id(node)] = result
            result.items.extend(convert(item, depth + 1) for item in node.value)
            return result
        seen[id(node)] = result
        return result

    try:
        return convert(root, 0)
    except RecursionError:
        raise ParseError("invalid YAML: nesting too deep", 0) from None


_EXPLICIT_TAG = re.compile(r"(?:&\S+\s+)?!")


def _scalar_value(node, token: str) -> Any:
    text = node.value
    if _EXPLICIT_TAG.match(token):
        convert = _STANDARD_TAGS.get(node.tag)
        try:
            return convert(text) if convert else text  # an unknown tag constructs nothing
        except ValueError:
            return text
    if node.style:  # quoted and block scalars are strings
        return text
    return resolve_plain(text)
