"""A base for small immutable records (spans, edits, GPU targets) compared and hashed by value.

These were frozen dataclasses; `dataclasses` imports `inspect` (~10 ms) and each dataclass costs
about a millisecond to create, on every lint. The modules that define them import nothing else
from the package, so the base lives in a leaf module of its own rather than coupling them.
"""

from __future__ import annotations


class Value:
    """Equal to an instance of the same class with equal fields; hashed and shown by those fields.
    The fields are the class's `__slots__`, or `_compared` where a slot is not part of the value."""

    __slots__ = ()
    _compared: tuple[str, ...] = ()

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._compared = cls.__dict__.get("_compared", cls.__slots__)

    def _key(self) -> tuple:
        return tuple(getattr(self, name) for name in self._compared)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._compared)
        return f"{self.__class__.__qualname__}({fields})"
