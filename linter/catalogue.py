"""The key catalogue: every IR key (its rows are in linter/ir_keys.py), with the type of its value
and what it means.

Adapters write these keys and rules read them; nothing else crosses between the two. A key that
is not listed here cannot be written (`ConfigIR.set`) or read (`ConfigIR.get`): a typo fails
loudly instead of silently reading None. Types use these names: bool, int, num (int or float),
str, dtype (float16 | bfloat16 | float32 | auto), list (of str), and `|auto` where the value may
be "auto", which a launcher resolves later.
"""

from __future__ import annotations

from .ir_keys import IR_KEYS  # the rows (a long table: its own module)


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


# What each type name accepts (None, a key written empty or null, is accepted by every type: the
# adapters record "written, no value" facts with it).
_CHECKS = {
    "bool": lambda value: isinstance(value, bool),
    "int": lambda value: isinstance(value, int) and not isinstance(value, bool),
    "num": _is_number,
    "str": lambda value: isinstance(value, str),
    "dtype": lambda value: isinstance(value, str),
    "list": lambda value: isinstance(value, (list, tuple)) and all(isinstance(item, str) for item in value),
    "numbers": lambda value: isinstance(value, (list, tuple)) and all(_is_number(item) for item in value),
    "auto": lambda value: value == "auto",
}


class Key:
    __slots__ = ("name", "type", "meaning", "_checks", "_check")

    def __init__(self, name: str, type: str, meaning: str):
        self.name = name
        self.type = type
        self.meaning = meaning
        self._checks = tuple(_CHECKS[part] for part in type.split("|"))
        self._check = self._checks[0] if len(self._checks) == 1 else None  # most keys have one type

    def accepts(self, value) -> bool:
        """Is `value` of this key's type? Rules may rely on it: a value of another type never
        reaches them (the adapter reports it instead)."""
        if value is None:
            return True
        if self._check is not None:
            return self._check(value)
        return any(check(value) for check in self._checks)

    def __repr__(self) -> str:
        return f"Key({self.name!r}, {self.type!r})"



KEYS: dict[str, Key] = {name: Key(name, type_, meaning) for name, type_, meaning in IR_KEYS}


def known(key: str) -> bool:
    return key in KEYS


class UnknownKey(KeyError):
    """An IR key that is not in the catalogue: a bug in a rule or an adapter."""

    def __str__(self) -> str:
        return f"{self.args[0]!r} is not an IR key (linter/ir_keys.py lists them)"
