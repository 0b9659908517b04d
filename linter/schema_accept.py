"""The anyOf / oneOf shortcuts of the schema validator (linter/schema.py): which branches cannot
accept an object, and whether some branch accepts a value, answered without building errors
where every branch is made of types, values and nested anyOf/oneOf only (an optional key's
`anyOf: [{"$ref": "#/$defs/bool"}, {"type": "null"}]`, ~120 keys of the Axolotl schema). Only
where no branch accepts are the branches validated one by one, for their errors."""

from __future__ import annotations

from typing import Any

from .schema_values import _equal, _is_type, _simple_types

VALUE_KEYWORDS = frozenset(("enum", "const", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
                            "pattern", "minLength"))
OBJECT_KEYWORDS = frozenset(("properties", "patternProperties", "additionalProperties", "required"))
ARRAY_KEYWORDS = frozenset(("prefixItems", "items", "minItems", "maxItems"))
# What Schema._check looks at besides `type`, values and anyOf/oneOf (everything else annotates)
_STRUCTURE = OBJECT_KEYWORDS | ARRAY_KEYWORDS | {"allOf", "not", "if"}
_ANYTHING = ((object,), ())


def excluded(owner, branch: Any, value: dict) -> bool:
    """Does a const/enum property of `branch` disagree with the object `value` (the branch fails
    for certain)?"""
    if not isinstance(branch, dict):
        return branch is False
    properties = owner._resolve(branch).get("properties", {})
    for key, item in value.items():
        sub = properties.get(key)
        if not isinstance(sub, dict):
            continue
        sub = owner._resolve(sub)
        if "const" in sub and not _equal(item, sub["const"]):
            return True
        if "enum" in sub and not any(_equal(item, option) for option in sub["enum"]):
            return True
    return False


def listed_pattern(spec: Any) -> str | None:
    """p of `{"type": "array", "not": {"items": {"not": {"type": "string", "pattern": p}}}}` (a
    list holding a string that matches p: Axolotl's schema asks it of `plugins` 17 times a file),
    else None."""
    try:
        if spec.keys() == {"type", "not"} and spec["type"] == "array" and spec["not"].keys() == {"items"} \
                and spec["not"]["items"].keys() == {"not"}:
            wanted = spec["not"]["items"]["not"]
            if wanted.keys() == {"type", "pattern"} and wanted["type"] == "string" and isinstance(wanted["pattern"], str):
                return wanted["pattern"]
    except (AttributeError, TypeError):  # not a mapping where one is written: no such form
        pass
    return None


def acceptor(owner, branches: list, building: set | None = None) -> tuple[tuple, tuple] | None:
    """(types, tests): a value some branch accepts (`owner.validate_at(branch, value) == []`) is
    an instance of `types` or passes one of `tests`; None where a branch has other keywords. Not
    asked for a numeric string where the owner reads those as numbers (its _check converts them
    where a branch expects a number)."""
    building = set() if building is None else building
    types: list[type] = []
    tests: list = []
    for branch in branches:
        part = _branch(owner, branch, building)
        if part is None:
            return None
        types.extend(part[0])
        tests.extend(part[1])
    return tuple(dict.fromkeys(types)), tuple(tests)


def _branch(owner, schema: Any, building: set) -> tuple[tuple, tuple] | None:
    if schema is True or schema is None:
        return _ANYTHING
    if schema is False:
        return (), ()
    if not isinstance(schema, dict) or id(schema) in building:
        return None  # not a schema here, or a recursive one: validated the long way
    resolved = owner._resolve(schema)
    keys = resolved.keys()
    if not keys.isdisjoint(_STRUCTURE):
        return None
    expected = resolved.get("type")
    simple = _simple_types(expected) if expected is not None else None
    values = not keys.isdisjoint(VALUE_KEYWORDS)
    building.add(id(schema))
    groups = [acceptor(owner, resolved[keyword], building) for keyword in ("anyOf", "oneOf") if keyword in resolved]
    building.discard(id(schema))
    if any(group is None for group in groups):
        return None
    if expected is None and not values:
        if not groups:
            return _ANYTHING  # annotations only
        if len(groups) == 1:
            return groups[0]  # a bare anyOf: its branches are this one's
    if simple and not values and not groups:
        return simple, ()

    def test(value: Any) -> bool:
        if expected is not None and not (isinstance(value, simple) if simple else _is_type(value, expected)):
            return False
        if values:
            errors: list = []
            owner._check_value(resolved, value, (), errors)
            if errors:
                return False
        return all(isinstance(value, kinds) or any(each(value) for each in checks) for kinds, checks in groups)

    return (), (test,)
