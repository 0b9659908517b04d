"""A config file's bytes, its decoded text, and the mapping between offsets and positions.

Every span in trainlint is a pair of *character* offsets into `Source.text` (the file decoded
as UTF-8, BOM removed). Edits splice that text; `Source.encode` turns it back into bytes with
the BOM the file had. Because UTF-8 decoding is lossless, every byte outside an edit survives.
"""

from __future__ import annotations

import bisect
import os
from functools import lru_cache
from pathlib import Path

from .value import Value

BOM = b"\xef\xbb\xbf"
MAX_FILE_BYTES = 10 * 1024 * 1024


@lru_cache(maxsize=None)
def real_path(path: Path) -> Path:
    """The path with symlinks resolved, computed once per path: discovery, settings and the
    writable set all ask, and each realpath is several system calls."""
    return Path(os.path.realpath(path))


class SourceError(Exception):
    """The file cannot be read as text. `offset` is a character offset into the decodable prefix."""

    def __init__(self, message: str, line: int = 1, column: int = 1):
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column


class Position(Value):
    __slots__ = ("line", "column")

    def __init__(self, line: int, column: int):
        self.line = line  # 1-based
        self.column = column  # 1-based, in characters


class Source:
    __slots__ = ("path", "text", "bom", "_line_starts")

    def __init__(self, path: Path, text: str, bom: bool = False, _line_starts: list[int] | None = None):
        self.path = path
        self.text = text
        self.bom = bom
        self._line_starts = _line_starts if _line_starts is not None else []

    @classmethod
    def from_bytes(cls, path: Path, raw: bytes) -> Source:
        bom = raw.startswith(BOM)
        body = raw[len(BOM):] if bom else raw
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError as error:
            good = body[: error.start].decode("utf-8")
            line = good.count("\n") + 1
            column = len(good) - (good.rfind("\n") + 1) + 1
            raise SourceError(
                f"not valid UTF-8 (byte 0x{body[error.start]:02x})", line, column
            ) from None
        return cls(path=path, text=text, bom=bom)

    @classmethod
    def read(cls, path: Path) -> Source:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise SourceError(f"file is {size} bytes, over the {MAX_FILE_BYTES}-byte limit; skipped")
        return cls.from_bytes(path, path.read_bytes())

    def with_text(self, text: str) -> Source:
        return Source(path=self.path, text=text, bom=self.bom)

    def encode(self, text: str | None = None) -> bytes:
        body = (self.text if text is None else text).encode("utf-8")
        return BOM + body if self.bom else body

    @property
    def line_starts(self) -> list[int]:
        if not self._line_starts:
            starts = [0]
            find = self.text.find
            index = find("\n")
            while index != -1:
                starts.append(index + 1)
                index = find("\n", index + 1)
            self._line_starts = starts
        return self._line_starts

    def position(self, offset: int) -> Position:
        line_index = bisect.bisect_right(self.line_starts, offset) - 1
        return Position(line_index + 1, offset - self.line_starts[line_index] + 1)

    def offset(self, line: int, column: int) -> int:
        return self.line_starts[line - 1] + column - 1

    @property
    def newline(self) -> str:
        """The file's line ending: CRLF when its first line ends that way, else LF."""
        first = self.text.find("\n")
        return "\r\n" if first > 0 and self.text[first - 1] == "\r" else "\n"

    def line_start(self, offset: int) -> int:
        return self.text.rfind("\n", 0, offset) + 1

    def line_end(self, offset: int) -> int:
        """Offset of the line break ending the line that holds `offset` (len(text) on the last line)."""
        end = self.text.find("\n", offset)
        if end == -1:
            return len(self.text)
        return end - 1 if end > 0 and self.text[end - 1] == "\r" else end

    def after_line(self, offset: int) -> int:
        """Offset just past the line break ending the line that holds `offset`."""
        end = self.text.find("\n", offset)
        return len(self.text) if end == -1 else end + 1

    def indentation_of(self, offset: int) -> str:
        start = self.line_start(offset)
        stripped = len(self.text[start:offset]) - len(self.text[start:offset].lstrip(" \t"))
        return self.text[start : start + stripped]


def display_path(path: Path) -> str:
    """`path` as a user would type it from where trainlint runs: relative below the current
    directory, else as given."""
    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive on Windows
        return str(path)
    return str(path) if relative.startswith("..") else relative
