"""A config file's bytes, its decoded text, and the mapping between offsets and positions.

Every span in trainlint is a pair of *character* offsets into `Source.text` (the file decoded
as UTF-8, BOM removed). Edits splice that text; `Source.encode` turns it back into bytes with
the BOM the file had. Because UTF-8 decoding is lossless, every byte outside an edit survives.
"""

from __future__ import annotations

import bisect
import os
import stat
from functools import lru_cache
from pathlib import Path

from .value import Value
from .lazy_pattern import LazyPattern

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


def read_bounded(path: Path, limit: int = MAX_FILE_BYTES, truncate: bool = False) -> bytes:
    """The bytes of a regular file, at most `limit` of them, or a SourceError that says why not.

    The file is opened with O_NONBLOCK and checked with fstat on the *opened* descriptor: a FIFO,
    a device or a /proc entry that passed a name-based check (or was swapped in after it) is
    refused before anything blocks on it, and a symlink to /dev/zero is a character device, not
    a file. The limit counts bytes actually read, not what stat claims (stat says 0 for
    /proc files and can be stale), so no entry can make a read unbounded. With `truncate`, a
    longer file gives its first `limit` bytes instead of an error.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        descriptor = os.open(path, flags)
    except OSError as error:
        raise SourceError(f"cannot read: {error.strerror or error}") from None
    try:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            raise SourceError(f"not a regular file ({kind_of(status.st_mode)}); skipped")
        chunks = []
        total = 0
        while True:
            chunk = os.read(descriptor, min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                if truncate:
                    return b"".join(chunks)[:limit]
                raise SourceError(f"file is over the {limit}-byte limit; skipped")
        return b"".join(chunks)
    except OSError as error:
        raise SourceError(f"cannot read: {error.strerror or error}") from None
    finally:
        os.close(descriptor)


def kind_of(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a directory")):
        if test(mode):
            return name
    return "not a regular file"


_COOKIE = LazyPattern(rb"^[ \t\f]*#.*?coding[:=]")


def _may_declare_encoding(raw: bytes) -> bool:
    """Does a Python file's first or second line carry a coding cookie (PEP 263)? Most do not,
    and then the file is UTF-8, the default, without importing `tokenize`."""
    lines = raw.split(b"\n", 2)[:2]
    return any(_COOKIE.match(line) for line in lines)


class Position(Value):
    __slots__ = ("line", "column")

    def __init__(self, line: int, column: int):
        self.line = line  # 1-based
        self.column = column  # 1-based, in characters


class Source:
    __slots__ = ("path", "text", "bom", "encoding", "_line_starts")

    def __init__(self, path: Path, text: str, bom: bool = False, _line_starts: list[int] | None = None,
                 encoding: str = "utf-8"):
        self.path = path
        self.text = text
        self.bom = bom
        self.encoding = encoding  # "utf-8" except for a Python file whose coding cookie names another
        self._line_starts = _line_starts if _line_starts is not None else []

    @classmethod
    def from_bytes(cls, path: Path, raw: bytes) -> Source:
        if path.suffix.lower() == ".py" and _may_declare_encoding(raw):
            return cls._from_python_bytes(path, raw)
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
    def _from_python_bytes(cls, path: Path, raw: bytes) -> Source:
        """A Python file decoded as Python decodes it: PEP 263's coding cookie (`# -*- coding:
        latin-1 -*-`) in its first two lines, checked by the tokenizer's own `detect_encoding`, so
        an unknown codec, or a cookie that contradicts a BOM, is the SyntaxError Python raises."""
        import io
        import tokenize  # only for a .py file that names an encoding

        try:
            encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
        except SyntaxError as error:
            raise SourceError(f"invalid Python: {error.msg}") from None  # e.g. "unknown encoding: ..."
        bom = encoding == "utf-8-sig"
        body = raw[len(BOM):] if bom else raw
        codec = "utf-8" if bom else encoding
        try:
            text = body.decode(codec)
        except UnicodeDecodeError as error:
            good = body[: error.start].decode(codec, errors="replace")
            line = good.count("\n") + 1
            column = len(good) - (good.rfind("\n") + 1) + 1
            raise SourceError(f"not valid {encoding} (byte 0x{body[error.start]:02x})", line, column) from None
        return cls(path=path, text=text, bom=bom, encoding=codec)

    @classmethod
    def read(cls, path: Path) -> Source:
        return cls.from_bytes(path, read_bounded(path))

    def with_text(self, text: str) -> Source:
        return Source(path=self.path, text=text, bom=self.bom, encoding=self.encoding)

    def encode(self, text: str | None = None) -> bytes:
        body = (self.text if text is None else text).encode(self.encoding)
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
        starts = self._line_starts or self.line_starts
        line_index = bisect.bisect_right(starts, offset) - 1
        return Position(line_index + 1, offset - starts[line_index] + 1)

    def span_lines(self, start: int, end: int) -> tuple[int, int, int, int]:
        """(line, column, end line, end column) of two offsets: position() of each, unboxed (asked
        for every fact an adapter records)."""
        starts = self._line_starts or self.line_starts
        first, last = bisect.bisect_right(starts, start) - 1, bisect.bisect_right(starts, end) - 1
        return first + 1, start - starts[first] + 1, last + 1, end - starts[last] + 1

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


def folders_to_checkout(start: Path) -> list[Path]:
    """`start` and each folder above it, up to and including the checkout root (the nearest one
    holding `.git`); every folder up to the file-system root outside a checkout."""
    return list(_folders_to_checkout(start))


@lru_cache(maxsize=4096)
def _folders_to_checkout(start: Path) -> tuple[Path, ...]:
    # Cached per check (forget_checkouts), and built from the parent's chain: every file of a
    # tree asks for its folder's, and sibling folders share everything above them.
    if (start / ".git").exists() or start.parent == start:
        return (start,)
    return (start, *_folders_to_checkout(start.parent))


@lru_cache(maxsize=1024)
def checkout_of_folder(folder: Path) -> Path | None:
    """checkout_root of `folder` resolved, cached per check: resolving every file's path (an
    lstat per component) was a tenth of a corpus check."""
    return checkout_root(_real_folder(folder))


@lru_cache(maxsize=4096)
def _real_folder(folder: Path) -> Path:
    # Path.resolve, built from the parent's (cached) real path: one lstat per folder, not one
    # per component of every folder.
    parent = folder.parent
    if parent == folder or folder.name in ("", ".", "..") or not folder.is_absolute():
        return folder.resolve()
    candidate = _real_folder(parent) / folder.name
    return candidate.resolve() if candidate.is_symlink() else candidate


def forget_checkouts() -> None:
    """Drop the cached folder chains and checkouts: a new check may see a `.git` created since."""
    _folders_to_checkout.cache_clear()
    checkout_of_folder.cache_clear()
    _real_folder.cache_clear()


def checkout_root(start: Path) -> Path | None:
    """The nearest folder at or above `start` that holds `.git`; None outside a checkout."""
    top = folders_to_checkout(start)[-1]
    return top if (top / ".git").exists() else None

