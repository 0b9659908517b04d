"""Validation of a config's plain values against its format's JSON Schema (schemas/<name>.schema.json).

A subset of JSON Schema draft 2020-12, enough for the schemas trainlint ships: type, enum, const,
properties, additionalProperties, patternProperties, items, prefixItems, allOf, anyOf, oneOf (as
anyOf), not, if/then/else, local $ref, minimum/maximum (exclusive too), minLength, pattern,
minItems/maxItems. Its own, because importing the jsonschema package costs ~100 ms, more than a
whole pre-commit run of one file; tests/test_schema_rules.py checks it agrees with jsonschema on
every shipped schema and the corpus.

Errors carry the path of the offending key or value and what the schema expected there, so the
SCH rules can name the closest known key or the accepted values.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from .schema_accept import ARRAY_KEYWORDS as _ARRAY_KEYWORDS, OBJECT_KEYWORDS as _OBJECT_KEYWORDS
from .schema_accept import VALUE_KEYWORDS as _VALUE_KEYWORDS, acceptor, excluded, listed_pattern
from .schema_values import NUMERIC, TypeQuestions, _describe, _equal, _is_type, _options, _pattern, _simple_types

_HERE = Path(__file__).parent
SCHEMA_DIRS = (_HERE / "schemas", _HERE.parent / "schemas")  # in an installed wheel; beside a checkout
_IF_ONLY = frozenset(("if", "then", "else"))
_ANY, _TAG, _LACKS, _TYPE, _LISTS = range(5)  # the forms of an `if` condition (Schema._condition_form)


class SchemaError:
    """One violation: the path of the offending key or value, and what the schema expected there."""

    __slots__ = ("path", "kind", "message", "known_keys", "expected_types", "allowed")

    def __init__(self, path: tuple, kind: str, message: str, known_keys: tuple[str, ...] = (),
                 expected_types: tuple[str, ...] = (), allowed: tuple = ()):
        self.path = path  # keys and indices from the root to the offending key or value
        self.kind = kind  # "unknown-key", "type", "enum", "const", "range", "pattern", "length", "required"
        self.message = message
        self.known_keys = known_keys  # for unknown-key: the keys the enclosing object accepts
        self.expected_types = expected_types  # for type: every type a branch would accept
        self.allowed = allowed  # for enum/const: the accepted values


class Schema(TypeQuestions):
    boolean_ints: dict = {}  # x-trainlint boolean-ints: integers 0/1 the loader reads as booleans

    def __init__(self, name: str, root: dict, coerces_numeric_strings: bool = False,
                 drops_unknown_silently: bool = False, renamed_keys: dict | None = None,
                 unknown_keys: str = "", renamed_values: dict | None = None, written_from: dict | None = None):
        self.name = name
        self.root = root
        self.coerces_numeric_strings = coerces_numeric_strings
        # The framework ignores a key it does not know without a word (x-trainlint unknown-keys).
        self.drops_unknown_silently = drops_unknown_silently
        # Top-level keys the framework renamed, as its own deprecation documents it (x-trainlint
        # renamed-keys): {old: {to, package, renamed (first release with the new name),
        # removed (first release without the old one), source}}.
        self.renamed_keys = renamed_keys or {}
        self.unknown_keys = unknown_keys  # what the loader does with a key it does not know
        self.renamed_values = renamed_values or {}  # {key: {old value: {to, package, removed, source}}}
        # The releases the schema was written from ({package: version}): what it says of an older
        # release's keys and values is not known (x-trainlint written-from).
        self.written_from = written_from or {}
        # Keys and values a released version read and a later one removed (x-trainlint removed-keys:
        # {key: {package, removed (first release without it), source, instead}}; removed-values:
        # {key path, "[]" for any list item: [{pattern or truthy, package, removed, source, instead}]}).
        self.removed_keys: dict = {}
        self.removed_values: dict = {}
        self.refs: dict = {}
        # (id of a patternProperties object, key) -> the subschemas whose pattern the key matches:
        # the same keys recur in every file (Axolotl's plugin-key patterns test each top-level key).
        self._pattern_hits: dict = {}
        self._plans: dict = {}  # id(subschema) -> Schema._plan(subschema)
        self._conditions: dict = {}  # id(`if` condition) -> (condition, *Schema._condition_form(condition))
        # id(object subschema) -> (subschema, the keys it accepts and checks nothing of)
        self._quiet: dict = {}
        self._accepting: dict = {}  # id(anyOf/oneOf branches) -> (branches, schema_accept.acceptor(branches))

    def validate(self, value: Any) -> list[SchemaError]:
        errors: list[SchemaError] = []
        self._check(self.root, value, (), errors)
        return errors

    def removed_value(self, document: Any, error: SchemaError) -> tuple[Any, dict] | None:
        """(value, entry): a value a release accepted and a later one removed (x-trainlint removed-values, by path, `[]`
        any list item), named by `pattern` (strings), `truthy` (`if value:`) or `fraction` (a non-integral float)."""
        if not self.removed_values or error.kind == "unknown-key" or not error.path:
            return None
        where = "".join("[]" if isinstance(step, int) else f".{step}" for step in error.path).lstrip(".")
        value = document
        for step in error.path:
            try:
                value = value[step]
            except (KeyError, IndexError, TypeError):
                return None
        for entry in self.removed_values.get(where, ()):
            if entry.get("truthy") and value and not isinstance(value, str) or entry.get("fraction") and \
                    isinstance(value, float) and not value.is_integer() \
                    or isinstance(value, str) and "pattern" in entry and _pattern(entry["pattern"]).search(value):
                return value, entry
        return None

    # ---- walking -----------------------------------------------------------------------------

    def _resolve(self, schema: dict) -> dict:
        seen = 0
        while "$ref" in schema and seen < 32:
            schema = self._ref(schema["$ref"])
            seen += 1
        return schema

    def _ref(self, ref: str) -> dict:
        if ref not in self.refs:
            node: Any = self.root
            for part in ref.lstrip("#/").split("/") if ref != "#" else []:
                node = node[part.replace("~1", "/").replace("~0", "~")]
            self.refs[ref] = node
        return self.refs[ref]

    def _check(self, schema: Any, value: Any, path: tuple, errors: list[SchemaError]) -> None:
        if schema is True or schema is None:
            return
        if schema is False:
            errors.append(SchemaError(path, "type", "no value is allowed here"))
            return
        plan = self._plans.get(id(schema))
        if plan is None or plan[0] is not schema:
            plan = self._plan(schema)
        _, schema, expected, simple, values, objects, arrays, all_of, any_of, negated, condition = plan
        if self.coerces_numeric_strings and isinstance(value, str) and NUMERIC.match(value.strip()):
            if self.expects_number_here(schema):
                value = float(value) if not re.fullmatch(r"[-+]?\d+", value.strip()) else int(value)
        if expected is not None and not (isinstance(value, simple) if simple else _is_type(value, expected)):
            types = tuple(expected) if isinstance(expected, list) else (expected,)
            errors.append(SchemaError(path, "type", f"expected {' or '.join(types)}, got {_describe(value)}",
                                      expected_types=types))
            return
        if values:
            self._check_value(schema, value, path, errors)
        if objects and isinstance(value, dict):
            self._check_object(schema, value, path, errors)
        if arrays and isinstance(value, list):
            self._check_array(schema, value, path, errors)
        for wrapper, sub in all_of:
            if wrapper and isinstance(value, dict):
                # an if/then/else wrapper (tag dispatch, dozens per object): for an object, just that
                branch = sub.get("then") if self._holds(sub["if"], value) else sub.get("else")
                if branch is not None:
                    self._check(branch, value, path, errors)
                continue
            self._check(sub, value, path, errors)
        for branches in any_of:
            self._check_any(branches, value, path, errors)
        if negated and not self.validate_at(schema["not"], value):
            errors.append(SchemaError(path, "type", f"{_describe(value)} is not allowed here"))
        if condition:
            branch = schema.get("then") if self._holds(schema["if"], value) else schema.get("else")
            if branch is not None:
                self._check(branch, value, path, errors)

    def _plan(self, schema: dict) -> tuple:
        """What a (sub)schema asks, worked out once: its $ref resolved, its type, whether it has
        value, object or array keywords, its allOf (each entry marked when an if/then/else
        wrapper), anyOf/oneOf, not, if. A corpus run checks ~75,000 values against ~2,000 schemas."""
        resolved = self._resolve(schema)
        keys, expected = resolved.keys(), resolved.get("type")
        plan = self._plans[id(schema)] = (
            schema, resolved, expected, _simple_types(expected), not keys.isdisjoint(_VALUE_KEYWORDS),
            not keys.isdisjoint(_OBJECT_KEYWORDS), not keys.isdisjoint(_ARRAY_KEYWORDS),
            tuple((type(sub) is dict and "if" in sub and sub.keys() <= _IF_ONLY, sub) for sub in resolved.get("allOf", ())),
            tuple(resolved[keyword] for keyword in ("anyOf", "oneOf") if keyword in resolved),
            "not" in resolved, "if" in resolved)
        return plan

    def _check_value(self, schema: dict, value: Any, path: tuple, errors: list[SchemaError]) -> None:
        if "enum" in schema and not any(_equal(value, option) for option in schema["enum"]):
            errors.append(SchemaError(path, "enum", f"{_describe(value)} is not one of {_options(schema['enum'])}",
                                      allowed=tuple(schema["enum"])))
        if "const" in schema and not _equal(value, schema["const"]):
            errors.append(SchemaError(path, "const", f"expected {json.dumps(schema['const'])}", allowed=(schema["const"],)))
        self._check_number(schema, value, path, errors)
        if isinstance(value, str):
            if "pattern" in schema and not _pattern(schema["pattern"]).search(value):
                errors.append(SchemaError(path, "pattern", f"{_describe(value)} does not match {schema['pattern']}"))
            if "minLength" in schema and len(value) < schema["minLength"]:
                errors.append(SchemaError(path, "length", f"{_describe(value)} is shorter than {schema['minLength']}"))

    def _holds(self, condition: Any, value: Any) -> bool:
        """Does `value` satisfy an `if` condition? The generated schemas dispatch on a tag
        (`{"properties": {"type": {"const": "lora"}}, "required": ["type"]}`) dozens of times per
        file; that form is answered directly, without building the error messages a full check
        writes for every branch that does not match (a third of a corpus run's validation)."""
        form = self._conditions.get(id(condition))
        if form is None or form[0] is not condition:
            form = self._conditions[id(condition)] = (condition, *self._condition_form(condition))
        _, kind, first, second = form
        if kind == _TAG:
            return not isinstance(value, dict) or first in value and _equal(value[first], second)
        if kind == _LACKS:
            return isinstance(value, dict) and any(key not in value for key in first)
        if kind == _TYPE:
            return _is_type(value, first)
        if kind == _LISTS:  # an object's list `first` holds a string matching `second` (a plugin listed)
            return not isinstance(value, dict) or isinstance(found := value.get(first, _LISTS), list) and any(
                isinstance(item, str) and _pattern(second).search(item) for item in found)
        # `required` (like `properties`) says nothing of a value that is not an object; on an
        # object that lacks a required key the whole condition fails, whatever else it says.
        if first is not None and isinstance(value, dict) and any(key not in value for key in first):
            return False
        return not self.validate_at(condition, value)

    def _condition_form(self, condition: Any) -> tuple:
        """(kind, first, second) of an `if` condition, worked out once: _TAG (key, const): the key
        is there with that value; _LACKS (keys,): an object without one of the keys; _TYPE (type,);
        _LISTS (key, pattern): a list under the key names a match; else _ANY (its `required` list or None,): a full check."""
        if isinstance(condition, dict):
            keys = condition.keys()
            required = condition.get("required")
            if keys == {"properties", "required"}:
                properties = condition["properties"]
                if len(properties) == 1 and required == list(properties):
                    (key, spec), = properties.items()
                    if isinstance(spec, dict) and spec.keys() == {"const"}:
                        return _TAG, key, spec["const"]
                    if (pattern := listed_pattern(spec)) is not None:
                        return _LISTS, key, pattern
            elif keys == {"not"} and isinstance(condition["not"], dict) and condition["not"].keys() == {"required"}:
                return _LACKS, condition["not"]["required"], None
            elif keys == {"type"} and not self.coerces_numeric_strings:
                return _TYPE, condition["type"], None
            return _ANY, required if isinstance(required, list) else None, None
        return _ANY, None, None

    def validate_at(self, schema: Any, value: Any) -> list[SchemaError]:
        errors: list[SchemaError] = []
        self._check(schema, value, (), errors)
        return errors

    def expects_number_here(self, schema: dict) -> bool:
        return any("number" in types or "integer" in types for types in self._branch_types(schema))

    def _check_number(self, schema: dict, value: Any, path: tuple, errors: list[SchemaError]) -> None:
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            return
        for keyword, fails in (("minimum", lambda limit: value < limit), ("maximum", lambda limit: value > limit),
                               ("exclusiveMinimum", lambda limit: value <= limit),
                               ("exclusiveMaximum", lambda limit: value >= limit)):
            if keyword in schema and fails(schema[keyword]):
                errors.append(SchemaError(path, "range", f"{value!r} is outside the allowed range "
                                                          f"({keyword} {schema[keyword]!r})"))

    def _check_object(self, schema: dict, value: dict, path: tuple, errors: list[SchemaError]) -> None:
        properties = schema.get("properties", {})
        patterns = schema.get("patternProperties", {})
        additional = schema.get("additionalProperties", True)
        keyed = properties or patterns or additional is False or isinstance(additional, dict)  # else: no key checks
        if keyed:
            # Keys this schema accepts and checks nothing of (a `true` property, a key matched only by
            # `true` patterns: Axolotl's plugin wrappers accept every key but the plugin's own) are
            # skipped at C speed: each file's ~50 top-level keys meet ~16 such wrappers.
            quiet = self._quiet.get(id(schema))
            if quiet is None or quiet[0] is not schema:
                quiet = self._quiet[id(schema)] = (schema, set())
            quiet = quiet[1]
            if patterns or additional is False or isinstance(additional, dict):
                rest = value.keys() - quiet if quiet else value.keys()
            else:  # properties only: nothing here checks another key
                rest = value.keys() & properties.keys()
                rest -= quiet
        pairs = ()
        if keyed and rest:
            # A few keys to check among many (an `if` condition on one key, a plugin wrapper whose
            # `true` pattern takes all but the plugin's keys): found in the file's order at C speed.
            if len(rest) * 4 < len(value):
                order = list(value)
                pairs = [(key, value[key]) for key in sorted(rest, key=order.index)]
            else:
                pairs = value.items()
        for key, item in pairs:
            if key not in rest:
                continue
            if key in properties:
                if (sub := properties[key]) is not True and sub is not None:  # `"key": true` checks nothing
                    self._check(sub, item, path + (key,), errors)
                else:
                    quiet.add(key)
                continue
            if patterns:
                hit = (id(patterns), key)
                matched = self._pattern_hits.get(hit)
                if matched is None:
                    matched = self._pattern_hits[hit] = tuple(
                        sub for pattern, sub in patterns.items() if isinstance(key, str) and _pattern(pattern).search(key))
            else:
                matched = ()
            checked = False
            for sub in matched:
                if sub is not True and sub is not None:  # `"^.*$": true`
                    self._check(sub, item, path + (key,), errors)
                    checked = True
            if matched:
                if not checked:
                    quiet.add(key)
                continue
            if additional is False:
                errors.append(SchemaError(path + (key,), "unknown-key", f"unknown key {key!r}",
                                          known_keys=tuple(properties)))
            elif isinstance(additional, dict):
                self._check(additional, item, path + (key,), errors)
        for key in schema.get("required", ()):
            if key not in value:
                errors.append(SchemaError(path, "required", f"missing required key {key!r}"))

    def _check_array(self, schema: dict, value: list, path: tuple, errors: list[SchemaError]) -> None:
        prefix = schema.get("prefixItems", [])
        for index, item in enumerate(value):
            sub = prefix[index] if index < len(prefix) else schema.get("items", True)
            self._check(sub, item, path + (index,), errors)
        if "minItems" in schema and len(value) < schema["minItems"]:
            errors.append(SchemaError(path, "length", f"expected at least {schema['minItems']} items"))
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            errors.append(SchemaError(path, "length", f"expected at most {schema['maxItems']} items"))

    def _check_any(self, branches: list, value: Any, path: tuple, errors: list[SchemaError]) -> None:
        quick = self._accepting.get(id(branches))  # (branches, schema_accept.acceptor(branches))
        if quick is None or quick[0] is not branches:
            quick = self._accepting[id(branches)] = (branches, acceptor(self, branches))
        if quick[1] is not None and (isinstance(value, quick[1][0]) or any(test(value) for test in quick[1][1])) \
                and not (self.coerces_numeric_strings and isinstance(value, str) and NUMERIC.match(value.strip())):
            return  # a branch accepts it
        if isinstance(value, dict):
            # A branch whose const/enum property disagrees with the value fails for certain:
            # validate only the others (schemas dispatch on `type` this way, over dozens of branches).
            possible = [branch for branch in branches if not excluded(self, branch, value)]
            if possible:
                branches = possible
        attempts = []
        for branch in branches:
            attempt = self.validate_at(branch, value)
            if not attempt:
                return  # one branch accepts the value: the others need not be tried
            attempts.append(attempt)
        # A branch whose type matched but that failed deeper down says the most: report it.
        deeper = [attempt for attempt in attempts if any(error.path for error in attempt)]
        if deeper:
            best = min(deeper, key=len)
            errors.extend(SchemaError(path + error.path, error.kind, error.message, error.known_keys,
                                      error.expected_types, error.allowed) for error in best)
            return
        expected: list[str] = []
        types: list[str] = []
        allowed: list = []
        for branch in branches:
            resolved = self._resolve(branch) if isinstance(branch, dict) else {}
            for group in self._branch_types(branch):
                types.extend(t for t in group if t not in types)
            options = list(resolved.get("enum", ())) + ([resolved["const"]] if "const" in resolved else [])
            allowed.extend(options)
            described = " or ".join(group[0] if len(group) == 1 else "/".join(group) for group in self._branch_types(branch)) \
                if "type" in resolved or not options else _options(options) if len(options) > 1 else json.dumps(options[0])
            if described and described not in expected:
                expected.append(described)
        errors.append(SchemaError(path, "type", f"expected {' or '.join(expected) or 'another value'}, "
                                                f"got {_describe(value)}", expected_types=tuple(types),
                                  allowed=tuple(allowed)))


@lru_cache(maxsize=None)
def load(name: str) -> Schema | None:
    """The schema for a format name (`deepspeed`, `axolotl`, ...), or None where none ships."""
    # A cut of a schema (`ludwig-llm` of `ludwig`) is used only where it lies beside the schema it
    # was cut from; a folder holding the whole schema alone serves it whole.
    parent = name.split("-", 1)[0]
    for directory in SCHEMA_DIRS:
        path = directory / f"{name}.schema.json"
        if not path.is_file() and parent != name:
            path = directory / f"{parent}.schema.json"
        if path.is_file():
            root = json.loads(path.read_text("utf-8"))
            options = root.get("x-trainlint", {})
            # A cut (ludwig-llm) speaks as the schema it was cut from.
            schema = Schema(options.get("name", path.name.split(".")[0]), root, options.get("numeric-strings") == "coerced",
                            options.get("unknown-keys") == "dropped-silently", options.get("renamed-keys"),
                            options.get("unknown-keys", ""), options.get("renamed-values"),
                            options.get("written-from"))
            schema.removed_keys = options.get("removed-keys", {})
            schema.removed_values = options.get("removed-values", {})
            schema.boolean_ints = options.get("boolean-ints", {})  # 0/1 the loader reads as a boolean
            return schema
    return None
