"""The conditions of the launch-refusal table (rules/refusal_table.py): each tests IR values the
way a framework's validator tests the written ones. `Set` is Python truthiness (`data.get(key)`),
`Unset` its negation (absent counts as unset)."""

from __future__ import annotations

import operator
from typing import Any

from .facts import is_number


class Condition:
    keys: tuple[str, ...] = ()
    # Keys one of which must hold a value (not None) for the condition to hold: () where it may hold
    # with all of them absent. Lets a table skip the rows a config cannot match (tests/
    # test_refusal_requires.py holds each class to it).
    requires: tuple[str, ...] = ()

    def holds(self, config) -> bool:
        raise NotImplementedError


class Set(Condition):
    def __init__(self, key: str):
        self.keys = self.requires = (key,)

    def holds(self, config) -> bool:
        return bool(config.value(self.keys[0]))


class Unset(Set):
    def __init__(self, key: str):
        self.keys, self.requires = (key,), ()

    def holds(self, config) -> bool:
        return not super().holds(config)


class Eq(Condition):
    def __init__(self, key: str, value: Any):
        self.keys, self.value = (key,), value
        self.requires = self.keys  # None is neither a bool nor `is not None`

    def holds(self, config) -> bool:
        found = config.value(self.keys[0])
        if isinstance(self.value, bool) or isinstance(found, bool):
            return found is self.value  # True is not 1 here
        return found is not None and found == self.value


class IsNot(Eq):
    """`data.get(key) is not value` (absent is not)."""

    def __init__(self, key: str, value: Any):
        super().__init__(key, value)
        self.requires = self.keys if value is None else ()

    def holds(self, config) -> bool:
        return config.value(self.keys[0]) is not self.value


class In(Condition):
    def __init__(self, key: str, *values: Any):
        self.keys, self.values = (key,), values
        self.requires = () if None in values else self.keys

    def holds(self, config) -> bool:
        return config.value(self.keys[0]) in self.values


class NotIn(In):
    def __init__(self, key: str, *values: Any):
        super().__init__(key, *values)
        self.requires = self.keys if None in values else ()

    def holds(self, config) -> bool:
        return not super().holds(config)


class Contains(Condition):
    """A lower-cased substring of a name (`"falcon" in cfg.base_model.lower()`)."""

    def __init__(self, key: str, part: str):
        self.keys = self.requires = (key,)
        self.part = part

    def holds(self, config) -> bool:
        found = config.value(self.keys[0])
        return isinstance(found, str) and self.part in found.lower()


class NotContains(Contains):
    """A string without the lower-cased `part` (a value that is no string does not hold)."""

    def holds(self, config) -> bool:
        found = config.value(self.keys[0])
        return isinstance(found, str) and self.part not in found.lower()


class AnyOf(Condition):
    def __init__(self, *conditions: Condition):
        self.conditions = conditions
        self.keys = tuple(key for condition in conditions for key in condition.keys)
        if all(condition.requires for condition in conditions):  # each needs one of its own
            self.requires = tuple(key for condition in conditions for key in condition.requires)

    def holds(self, config) -> bool:
        return any(condition.holds(config) for condition in self.conditions)


class FewerThan(Condition):
    """Fewer than `count` of `keys` set (truthy)."""

    def __init__(self, count: int, *keys: str):
        self.count, self.keys = count, keys

    def holds(self, config) -> bool:
        return sum(bool(config.value(key)) for key in self.keys) < self.count


class NotMultiple(Condition):
    """`config[key] % config[of] != 0`, both numbers."""

    def __init__(self, key: str, of: str):
        self.keys = self.requires = (key, of)

    def holds(self, config) -> bool:
        value, base = (config.value(key) for key in self.keys)
        return is_number(value) and is_number(base) and base != 0 and value % base != 0


class Compare(Condition):
    """`config[key] <op> bound` for a number written as one (not a bool, not a string)."""

    _OPS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}

    def __init__(self, key: str, op: str, bound: float):
        self.keys, self.test, self.bound = (key,), self._OPS[op], bound
        self.requires = self.keys

    def holds(self, config) -> bool:
        found = config.value(self.keys[0])
        return is_number(found) and self.test(found, self.bound)


class Differ(Condition):
    """`data[a] and data[b] and data[a] != data[b]`: both written truthy, with unequal values."""

    def __init__(self, key: str, other: str):
        self.keys = self.requires = (key, other)

    def holds(self, config) -> bool:
        value, other = (config.value(key) for key in self.keys)
        return bool(value) and bool(other) and value != other


class HasOtherThan(Condition):
    """A list (or a mapping's keys) naming something outside `allowed` (`set(value) - allowed`)."""

    def __init__(self, key: str, *allowed: str):
        self.keys, self.allowed = (key,), frozenset(allowed)
        self.requires = self.keys

    def holds(self, config) -> bool:
        found = config.value(self.keys[0])
        return isinstance(found, (list, tuple)) and any(
            not isinstance(item, str) or item not in self.allowed for item in found)


class FromRelease(Condition):
    """Conditions a check added in a later release than the check itself: they hold for a pinned
    release older than `bound` (or an unknown one, which TRN025 never judges)."""

    def __init__(self, bound: str, *conditions: Condition):
        self.bound, self.conditions = bound, conditions
        self.keys = tuple(key for condition in conditions for key in condition.keys)

    def holds(self, config) -> bool:
        from linter.versions import older_than

        pinned = config.version("axolotl")
        if pinned is None or older_than(pinned[0], self.bound) is not False:
            return True
        return all(condition.holds(config) for condition in self.conditions)


class Since(FromRelease):
    """Conditions that hold only from release `bound` on (a default that changed there): False for a
    pinned older release or an unknown one."""

    def holds(self, config) -> bool:
        from linter.versions import older_than

        pinned = config.version("axolotl")
        if pinned is None or older_than(pinned[0], self.bound) is not False:
            return False
        return all(condition.holds(config) for condition in self.conditions)


class TorchBelow(Condition):
    """The torch in use (pinned near the config, or installed) is older than `bound`; unknown: no.
    Axolotl's torch checks read env_capabilities.torch_version, the installed torch."""

    def __init__(self, bound: str):
        self.bound = bound

    def holds(self, config) -> bool:
        from linter.versions import older_than

        found = config.version("torch")
        return found is not None and older_than(found[0], self.bound) is True


class NotLaxBool(Condition):
    """Written as a value pydantic v2's lax bool refuses ("Input should be a valid boolean"): a
    string whose lower-cased form is none of its words, a number other than 0 and 1."""

    _WORDS = frozenset(("0", "off", "f", "false", "n", "no", "1", "on", "t", "true", "y", "yes"))

    def __init__(self, key: str):
        self.keys = self.requires = (key,)

    def holds(self, config) -> bool:
        found = config.value(self.keys[0])
        if isinstance(found, str):
            return found.strip().lower() not in self._WORDS
        return isinstance(found, (int, float)) and not isinstance(found, bool) and found not in (0, 1)


class InvalidRegex(Condition):
    """A list with a string Python's `re` cannot compile (a string value, not a list, is not checked)."""

    def __init__(self, key: str):
        self.keys = self.requires = (key,)

    def holds(self, config) -> bool:
        import re

        found = config.value(self.keys[0])
        if not isinstance(found, list):
            return False
        for pattern in found:
            if isinstance(pattern, str):
                try:
                    re.compile(pattern)
                except re.error:
                    return True
        return False


class SavedQuantized(Condition):
    """The checkpoint `model.name` names was saved quantized (config.json `quantization_config`, or
    a -GPTQ / -AWQ / -bnb-4bit upload name: linter/models.py prequantized); unknown does not hold."""

    keys = requires = ("model.name",)

    def holds(self, config) -> bool:
        name = config.value("model.name")
        if not isinstance(name, str) or not name:
            return False
        from linter.models import prequantized

        return prequantized(name, config.path.parent) is not None


class Refusal:
    """A row: when every condition holds, `package` from release `since` (commit, PR), and before
    release `until` where the check was later dropped, refuses the file at launch with `message`,
    raised in `where`."""

    __slots__ = ("conditions", "message", "where", "since", "commit", "until", "package", "note",
                 "outside_validation", "unpinned", "before", "requirements")

    def __init__(self, conditions: tuple[Condition, ...], message: str, where: str, since: str, commit: str,
                 until: str | None = None, package: str = "axolotl", note: str = "", outside_validation: bool = False,
                 unpinned: str = "", before: tuple[str, str] | None = None):
        self.conditions, self.message, self.where = conditions, message, where
        self.since, self.commit, self.until, self.package = since, commit, until, package
        self.note = note  # what the message leaves out (shown after it)
        # A check raised at launch outside the config validation (its `where` holds in every release)
        self.outside_validation = outside_validation
        # The key (and commit) no release before `since` reads, for a check no release dropped: every
        # release that reads the key fails, so the row fires unpinned (older ones drop the key).
        # before: (release, how it fails from there up to `since`), as in validation_table.Row
        self.unpinned, self.before = unpinned, before
        # Per condition that needs a value, the keys one of which must hold one (Condition.requires)
        self.requirements = tuple(frozenset(condition.requires) for condition in conditions if condition.requires)

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(key for condition in self.conditions for key in condition.keys)

    def holds(self, config) -> bool:
        return all(condition.holds(config) for condition in self.conditions)


class PartOf(Condition):
    """A list holding a string (other than `skip`) found inside one of `names` (`spec in op`)."""

    def __init__(self, key: str, names: tuple[str, ...], skip: str = ""):
        self.keys, self.names, self.skip = (key,), names, skip
        self.requires = self.keys  # a list value is needed

    def holds(self, config) -> bool:
        found = config.value(self.keys[0])
        return isinstance(found, list) and any(
            isinstance(spec, str) and spec != self.skip and any(spec in name for name in self.names) for spec in found)


class RowIndex:
    """The rows of a table (each with `requirements`, as Refusal's) by the keys their conditions
    need: `candidates(config)` gives, in table order, the rows whose every requirement the
    config meets (one of its keys holds a value), the only ones that can hold. A config that sets
    none of a row's keys skips the row without testing it (~130 rows x 256 Axolotl files)."""

    def __init__(self, rows):
        self.rows = tuple(rows)
        self.always: list[int] = []  # rows that may hold with none of their keys set
        self.by_key: dict[str, list[int]] = {}  # the others, by the keys of their first requirement
        for position, row in enumerate(self.rows):
            for key in row.requirements[0] if row.requirements else ():
                self.by_key.setdefault(key, []).append(position)
            if not row.requirements:
                self.always.append(position)

    def candidates(self, config) -> list:
        held = {key for key, found in config.fields.items() if found.value is not None}
        positions = set(self.always)
        for key in held & self.by_key.keys():
            positions.update(self.by_key[key])
        rows = (self.rows[position] for position in sorted(positions))
        return [row for row in rows if all(not needed.isdisjoint(held) for needed in row.requirements)]
