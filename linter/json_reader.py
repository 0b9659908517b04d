"""JSON -> `Document`: a small position-aware scanner.

Python's `json` module reports no positions for values, and the frameworks read JSON with
it, so this scanner accepts exactly what `json.loads` accepts (NaN and Infinity included,
duplicate keys last-wins) and records every key's and value's span. Strings go through
`json.decoder.scanstring`, the same C routine `json.loads` uses; no extra dependency.
"""

from __future__ import annotations

import re
from json import JSONDecodeError
from json.decoder import scanstring

from .document import Document, Mapping, Pair, ParseError, Scalar, Sequence
from .source import Source

_NUMBER = re.compile(r"(-?(?:0|[1-9]\d*))(\.\d+)?([eE][-+]?\d+)?")
_WHITESPACE = re.compile(r"[ \t\n\r]*")
_LITERALS = {"true": True, "false": False, "null": None, "NaN": float("nan"),
             "Infinity": float("inf"), "-Infinity": float("-inf")}
MAX_DEPTH = 200  # real configs nest < 10 deep; this keeps Python's stack safe


def parse_json(source: Source) -> Document:
    text = source.text
    parser = _Parser(text)
    try:
        index = parser.skip(0)
        root, index = parser.value(index, 0)
        index = parser.skip(index)
        if index != len(text):
            raise ParseError("invalid JSON: extra data after the top-level value", index)
    except JSONDecodeError as error:
        raise ParseError(f"invalid JSON: {error.msg}", error.pos) from None
    except RecursionError:
        raise ParseError("invalid JSON: nested too deeply", 0) from None
    return Document(source=source, root=root, format="json")


class _Parser:
    def __init__(self, text: str):
        self.text = text

    def skip(self, index: int) -> int:
        return _WHITESPACE.match(self.text, index).end()

    def value(self, index: int, depth: int):
        text = self.text
        if index >= len(text):
            raise ParseError("invalid JSON: expecting a value, found the end of the file", index)
        char = text[index]
        if char == "{":
            return self.object(index, depth + 1)
        if char == "[":
            return self.array(index, depth + 1)
        if char == '"':
            string, end = scanstring(text, index + 1, True)
            return Scalar(string, index, end, "json"), end
        for literal, value in _LITERALS.items():
            if text.startswith(literal, index):
                return Scalar(value, index, index + len(literal), "json"), index + len(literal)
        match = _NUMBER.match(text, index)
        if match:
            integer, fraction, exponent = match.groups()
            number = float(match.group()) if fraction or exponent else int(integer)
            return Scalar(number, index, match.end(), "json"), match.end()
        raise ParseError(f"invalid JSON: expecting a value, found {text[index]!r}", index)

    def _check_depth(self, index: int, depth: int) -> None:
        if depth > MAX_DEPTH:
            raise ParseError(f"invalid JSON: nested deeper than {MAX_DEPTH} levels", index)

    def object(self, start: int, depth: int):
        self._check_depth(start, depth)
        text = self.text
        mapping = Mapping([], start, start, flow=True)
        index = self.skip(start + 1)
        if text.startswith("}", index):
            mapping.end = index + 1
            return mapping, index + 1
        while True:
            if not text.startswith('"', index):
                raise ParseError("invalid JSON: expecting a property name in double quotes", index)
            name, end = scanstring(text, index + 1, True)
            key = Scalar(name, index, end, "json")
            index = self.skip(end)
            if not text.startswith(":", index):
                raise ParseError("invalid JSON: expecting ':' after a property name", index)
            value, index = self.value(self.skip(index + 1), depth)
            mapping.pairs.append(Pair(key, value))
            index = self.skip(index)
            if text.startswith(",", index):
                index = self.skip(index + 1)
                continue
            if text.startswith("}", index):
                mapping.end = index + 1
                return mapping, index + 1
            raise ParseError("invalid JSON: expecting ',' or '}'", index)

    def array(self, start: int, depth: int):
        self._check_depth(start, depth)
        text = self.text
        sequence = Sequence([], start, start, flow=True)
        index = self.skip(start + 1)
        if text.startswith("]", index):
            sequence.end = index + 1
            return sequence, index + 1
        while True:
            item, index = self.value(index, depth)
            sequence.items.append(item)
            index = self.skip(index)
            if text.startswith(",", index):
                index = self.skip(index + 1)
                continue
            if text.startswith("]", index):
                sequence.end = index + 1
                return sequence, index + 1
            raise ParseError("invalid JSON: expecting ',' or ']'", index)
