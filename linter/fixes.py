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


class Change(Value):
    """An IR change a rule asks for; the config's adapter renders it into edits."""

    __slots__ = ("config", "key", "value")
    _compared = ("key", "value")

    def __init__(self, config: Any, key: str = "", value: Any = None):
        self.config = config  # the ConfigIR whose file the change edits
        self.key = key  # an IR key, e.g. "precision.mode", "quantization.compute_dtype"
        self.value = value


class Fix:
    __slots__ = ("applicability", "message", "changes", "edits")

    def __init__(self, applicability: Applicability, message: str, changes: list[Change] | None = None,
                 edits: list[Edit] | None = None):
        self.applicability = applicability
        self.message = message
        self.changes = changes if changes is not None else []
        self.edits = edits if edits is not None else []

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
