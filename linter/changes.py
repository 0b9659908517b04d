"""Typed changes: what a rule asks a file to say, before any adapter turns it into text edits.

Each change names the config it edits and owns the check that the re-parsed file now says what
was intended (`reads_as_intended`): the fixer drops a fix whose result does not. Adapters render
`SetValue` through their bindings and `SetPrecision` through their one precision hook; the
format's writer renders `RenameKey` and `WriteLiteral` in the file's own keys.
"""

from __future__ import annotations

from typing import Any

from .catalogue import KEYS, UnknownKey
from .value import Value

# A training precision as the two mixed-precision switches: (fp16 on, bf16 on).
PRECISION_MODES = {"bf16": (False, True), "fp16": (True, False), "fp32": (False, False)}


class Change(Value):
    __slots__ = ("config",)
    _compared: tuple = ()

    def reads_as_intended(self, reparsed) -> bool:
        raise NotImplementedError

    def describe(self) -> str:
        raise NotImplementedError


class SetValue(Change):
    """Make IR `key` read `value` (the adapter's binding says where the key lives in the file)."""

    __slots__ = ("key", "value")
    _compared = ("key", "value")

    def __init__(self, config: Any, key: str, value: Any):
        if key not in KEYS:
            raise UnknownKey(key)
        self.config, self.key, self.value = config, key, value

    def reads_as_intended(self, reparsed) -> bool:
        return reparsed.value(self.key) == self.value

    def describe(self) -> str:
        return f"{self.key} = {self.value!r}"


class SetPrecision(Change):
    """Train in `mode` (bf16, fp16 or fp32), in whatever keys the framework decides it by."""

    __slots__ = ("mode",)
    _compared = ("mode",)

    def __init__(self, config: Any, mode: str):
        if mode not in PRECISION_MODES:
            raise ValueError(f"unknown precision mode {mode!r}")
        self.config, self.mode = config, mode

    def reads_as_intended(self, reparsed) -> bool:
        return reparsed.mode() == self.mode

    def describe(self) -> str:
        return f"precision {self.mode}"


def _at(tree: Any, path: tuple) -> tuple[bool, Any]:
    """(found, value) at `path` in plain data."""
    for step in path:
        if isinstance(tree, dict) and step in tree:
            tree = tree[step]
        elif isinstance(tree, list) and isinstance(step, int) and 0 <= step < len(tree):
            tree = tree[step]
        else:
            return False, None
    return True, tree


class RenameKey(Change):
    """Rename the file key at `path` (a key path of the file's own keys) to `new_name`."""

    __slots__ = ("path", "new_name")
    _compared = ("path", "new_name")

    def __init__(self, config: Any, path: tuple, new_name: str):
        self.config, self.path, self.new_name = config, tuple(path), new_name

    def reads_as_intended(self, reparsed) -> bool:
        tree = reparsed.key_tree.value if reparsed.key_tree else None
        renamed, _ = _at(tree, self.path[:-1] + (self.new_name,))
        old, _ = _at(tree, self.path)
        return renamed and not old

    def describe(self) -> str:
        return f"{'.'.join(map(str, self.path))} renamed to {self.new_name}"


class WriteLiteral(Change):
    """Write `literal` in place of the scalar at `path`, so that the framework reads `value`."""

    __slots__ = ("path", "value", "literal")
    _compared = ("path", "value", "literal")

    def __init__(self, config: Any, path: tuple, value: Any, literal: str):
        self.config, self.path, self.value, self.literal = config, tuple(path), value, literal

    def reads_as_intended(self, reparsed) -> bool:
        found, value = _at(reparsed.key_tree.value if reparsed.key_tree else None, self.path)
        return found and type(value) is type(self.value) and value == self.value

    def describe(self) -> str:
        return f"{'.'.join(map(str, self.path))} = {self.literal}"
