"""Fixes as text edits on the original text, in ruff's model.

A fix is a list of edits (character range + replacement) with an applicability. Fixes whose
edits overlap an already accepted fix wait for the next pass. Writing is atomic.
"""

from __future__ import annotations

import enum
import os
import stat
from pathlib import Path
from typing import Any, Iterable

from .value import Value


class Applicability(str, enum.Enum):
    SAFE = "safe"
    UNSAFE = "unsafe"
    DISPLAY_ONLY = "display-only"


class Edit(Value):
    __slots__ = ("path", "start", "end", "content")

    def __init__(self, path: Path, start: int, end: int, content: str):
        self.path = path
        self.start = start  # character offsets into Source.text
        self.end = end
        self.content = content

    def overlaps(self, other: Edit) -> bool:
        if self.path != other.path:
            return False
        if self.start == self.end == other.start == other.end:
            return True  # two insertions at one point: their order would be arbitrary
        return self.start < other.end and other.start < self.end


class Frozen:
    """Set once in __init__, never after: findings and fixes are values once a rule made them."""

    __slots__ = ()

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable; make a new one")

    def _init(self, **fields: Any) -> None:
        for name, value in fields.items():
            object.__setattr__(self, name, value)


class Fix(Frozen):
    """What a rule offers: typed changes (linter/changes.py) and, once the engine rendered them
    through the file's adapter, the text edits."""

    __slots__ = ("applicability", "message", "changes", "edits")

    def __init__(self, applicability: Applicability, message: str, changes: tuple = (),
                 edits: tuple[Edit, ...] = ()):
        self._init(applicability=applicability, message=message, changes=tuple(changes), edits=tuple(edits))

    def rendered(self, edits: "Iterable[Edit]", why_not: str | None = None, keep_changes: bool = False) -> "Fix":
        """This fix with its edits (two changes may render the same edit: kept once); with no
        edits and the reason where the changes could not be rendered. The changes are kept only
        for verification: they point into IR that can otherwise be freed."""
        message = self.message if why_not is None else f"{self.message} (not applied automatically: {why_not})"
        return Fix(self.applicability, message, self.changes if keep_changes else (),
                   () if why_not is not None else tuple(dict.fromkeys(edits)))

    def applies(self, unsafe: bool) -> bool:
        if not self.edits:
            return False
        return self.applicability is Applicability.SAFE or (
            unsafe and self.applicability is Applicability.UNSAFE
        )


def select_non_overlapping(fixes: Iterable[Fix]) -> list[Fix]:
    """Fixes in order whose edits overlap no earlier accepted fix; the rest wait for the next pass."""
    accepted: list[Fix] = []
    taken: list[Edit] = []
    for fix in fixes:
        if any(edit.overlaps(other) for edit in fix.edits for other in taken):
            continue
        if any(a.overlaps(b) for i, a in enumerate(fix.edits) for b in fix.edits[i + 1 :]):
            continue
        accepted.append(fix)
        taken.extend(fix.edits)
    return accepted


def apply_edits(text: str, edits: Iterable[Edit]) -> str:
    """Splice non-overlapping edits into text; bytes outside them are untouched."""
    pieces = []
    cursor = 0
    for edit in sorted(edits, key=lambda e: (e.start, e.end)):
        pieces.append(text[cursor : edit.start])
        pieces.append(edit.content)
        cursor = edit.end
    pieces.append(text[cursor:])
    return "".join(pieces)


class WriteError(Exception):
    pass


def write_atomic(path: Path, data: bytes, expected: bytes) -> None:
    """Replace the file's content with `data`: temp file beside it, fsync, rename, mode kept.

    A symlink is followed: its target is rewritten and the link stays. If the file no longer
    holds `expected` (changed or deleted since it was read), nothing is written.
    """
    target = Path(os.path.realpath(path))
    try:
        current = target.read_bytes()
        mode = stat.S_IMODE(target.stat().st_mode)
    except OSError as error:
        raise WriteError(f"cannot re-read before writing: {error.strerror or error}") from None
    if current != expected:
        raise WriteError("file changed on disk since it was read; not written")
    if not os.access(target, os.W_OK):
        raise WriteError("file is not writable; not written")
    import tempfile  # only --fix writes: keep it off the start-up path
    try:
        handle, temp_name = tempfile.mkstemp(
            dir=target.parent, prefix=f".{target.name}.", suffix=".trainlint-tmp"
        )
    except OSError as error:
        raise WriteError(f"cannot create a temporary file beside it: {error.strerror or error}") from None
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temp_name, mode)
        os.replace(temp_name, target)
    except OSError as error:
        try:
            os.unlink(temp_name)
        except OSError:
            pass
        raise WriteError(f"cannot write: {error.strerror or error}") from None
