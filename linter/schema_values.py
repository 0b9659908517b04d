"""The value-level pieces of the schema validator (linter/schema.py): type and equality tests as
JSON Schema means them, how an error message describes a value or a list of options, and what
types a schema accepts at a path."""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any

NUMERIC = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")
_TYPES = {"string": str, "boolean": bool, "object": dict, "array": list, "null": type(None)}


@lru_cache(maxsize=None)
def _pattern(pattern: str) -> "re.Pattern":
    return re.compile(pattern)


def _is_type(value: Any, expected: Any) -> bool:
    if isinstance(expected, list):
        return any(_is_type(value, one) for one in expected)
    if expected == "integer":
        return (isinstance(value, int) and not isinstance(value, bool)) or (isinstance(value, float) and value.is_integer())
    if expected == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, _TYPES.get(expected, object))


def _simple_types(expected: Any) -> tuple[type, ...] | None:
    """The Python types a `type` keyword stands for, where an isinstance test is the whole answer
    (not for integer or number: a boolean is no number, and 2.0 is an integer)."""
    names = expected if isinstance(expected, list) else [expected]
    if not names or not all(isinstance(name, str) and name in _TYPES for name in names):
        return None
    return tuple(_TYPES[name] for name in names)


def _equal(value: Any, option: Any) -> bool:
    if isinstance(value, bool) or isinstance(option, bool):
        return value is option if isinstance(value, bool) and isinstance(option, bool) else False
    return value == option


def _describe(value: Any) -> str:
    if isinstance(value, str):
        return f"string {json.dumps(value)}"
    if isinstance(value, bool):
        return f"boolean {json.dumps(value)}"
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return f"number {value!r}"
    return "an object" if isinstance(value, dict) else "a list"


def _options(options: list) -> str:
    shown = ", ".join(json.dumps(option) for option in options[:12])
    return f"[{shown}{', ...' if len(options) > 12 else ''}]"


class TypeQuestions:
    """What types a schema accepts at a path (the Schema's own walk, for SCH003's "a number is
    meant here"), and which block a key belongs to (SCH001's "a key of zero_optimization"): a
    mixin of linter.schema.Schema, which gives `root` and `_resolve`."""

    _key_blocks: dict | None = None  # key -> its one top-level block, worked out once (block_of)

    def block_of(self, key: str) -> str | None:
        """The one top-level block whose object schema lists `key` (written one level too high:
        DeepSpeed's `offload_optimizer`), or None (no block, several, or a top-level key itself)."""
        if self._key_blocks is None:
            found: dict = {}
            top = self.root.get("properties", {})
            for block, sub in top.items():
                for option in [sub, *sub.get("anyOf", ()), *sub.get("oneOf", ())] if isinstance(sub, dict) else ():
                    for name in self._resolve(option).get("properties", ()):
                        if name not in top:
                            found.setdefault(name, set()).add(block)
            self._key_blocks = {name: min(homes) for name, homes in found.items() if len(homes) == 1}
        return self._key_blocks.get(key)

    def expects_number_at(self, path: tuple) -> bool:
        """Does some schema branch that applies at `path` accept a number (and not a string)?"""
        return any("number" in types or "integer" in types for types in self._types_at(self.root, path))

    def _branch_types(self, schema: Any) -> list[tuple[str, ...]]:
        if not isinstance(schema, dict):
            return []
        schema = self._resolve(schema)
        found = []
        if "type" in schema:
            found.append(tuple(schema["type"]) if isinstance(schema["type"], list) else (schema["type"],))
        for keyword in ("anyOf", "oneOf", "allOf"):
            for branch in schema.get(keyword, ()):
                found.extend(self._branch_types(branch))
        return found

    def _types_at(self, schema: Any, path: tuple) -> list[tuple[str, ...]]:
        if not isinstance(schema, dict):
            return []
        schema = self._resolve(schema)
        if not path:
            return self._branch_types(schema)
        key, rest = path[0], path[1:]
        found = []
        if isinstance(key, str):
            if key in schema.get("properties", {}):
                found.extend(self._types_at(schema["properties"][key], rest))
            for pattern, sub in schema.get("patternProperties", {}).items():
                if re.search(pattern, key):
                    found.extend(self._types_at(sub, rest))
            if isinstance(schema.get("additionalProperties"), dict) and key not in schema.get("properties", {}):
                found.extend(self._types_at(schema["additionalProperties"], rest))
        elif isinstance(key, int):
            prefix = schema.get("prefixItems", [])
            found.extend(self._types_at(prefix[key] if key < len(prefix) else schema.get("items"), rest))
        for keyword in ("anyOf", "oneOf", "allOf"):
            for branch in schema.get(keyword, ()):
                found.extend(self._types_at(branch, path))
        for keyword in ("then", "else"):
            if keyword in schema:
                found.extend(self._types_at(schema[keyword], path))
        return found
