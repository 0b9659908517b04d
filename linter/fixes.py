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
    """Replace the file's content with `data`, only if it still holds `expected`.

    A symlink is followed: its target is rewritten and the link stays. The file keeps its mode,
    owner and group (as root, the new file is chowned to the original owner), and its hard links:
    a file with other links (or whose owner we cannot give the new file) is rewritten in place,
    through its own inode, after the new content has been written and read back in a temporary
    file beside it. Otherwise the new content replaces the file by an atomic swap, verified
    afterwards (see `_swap`). SIGINT and SIGTERM are held back while the temporary file exists, so
    an interrupted fix leaves no `.NAME.XXXX.trainlint-tmp` behind; they are delivered after.
    """
    from .source import SourceError, read_bounded

    target = Path(os.path.realpath(path))
    try:
        status = os.stat(target)
        if not stat.S_ISREG(status.st_mode):
            raise WriteError("not a regular file; not written")
        current = read_bounded(target)  # never blocks on a FIFO swapped in, never unbounded
    except OSError as error:
        raise WriteError(f"cannot re-read before writing: {error.strerror or error}") from None
    except SourceError as error:
        raise WriteError(f"cannot re-read before writing: {error.message}") from None
    if current != expected:
        raise WriteError("file changed on disk since it was read; not written")
    if not os.access(target, os.W_OK):
        raise WriteError("file is not writable; not written")
    import tempfile  # only --fix writes: keep it off the start-up path

    with _signals_held():
        try:
            handle, temp_name = tempfile.mkstemp(
                dir=target.parent, prefix=f".{target.name}.", suffix=".trainlint-tmp"
            )
        except OSError as error:
            raise WriteError(f"cannot create a temporary file beside it: {error.strerror or error}") from None
        try:
            in_place = status.st_nlink > 1
            try:
                with os.fdopen(handle, "wb") as stream:
                    stream.write(data)
                    stream.flush()
                    os.fsync(stream.fileno())
                    os.fchmod(stream.fileno(), stat.S_IMODE(status.st_mode))
                    if (status.st_uid, status.st_gid) != _owner_of(stream.fileno()):
                        try:
                            os.fchown(stream.fileno(), status.st_uid, status.st_gid)
                        except PermissionError:
                            in_place = True  # a new file would change the owner: keep the inode
                if _read(Path(temp_name)) != data:
                    raise WriteError("the temporary copy did not read back as written; not written")
            except OSError as error:
                raise WriteError(f"cannot write: {error.strerror or error}") from None
            if in_place:
                _write_in_place(target, status, data, expected)
            else:
                _swap(Path(temp_name), target, status, expected)
        finally:
            try:
                os.unlink(temp_name)
            except OSError:
                pass


def _read(path: Path) -> bytes:
    with open(path, "rb") as stream:
        return stream.read()


def _owner_of(descriptor: int) -> tuple[int, int]:
    status = os.fstat(descriptor)
    return status.st_uid, status.st_gid


def _same_file(a: os.stat_result, b: os.stat_result) -> bool:
    """Same inode, and not modified since `a` (a save in place changes mtime). Not ctime: the
    exchange itself changes the displaced inode's ctime."""
    return (a.st_dev, a.st_ino, a.st_size, a.st_mtime_ns) == (b.st_dev, b.st_ino, b.st_size, b.st_mtime_ns)


def _swap(temp: Path, target: Path, status: os.stat_result, expected: bytes) -> None:
    """Put `temp` in the target's place without losing a save that lands meanwhile.

    Why this cannot race: compare-then-rename always leaves a window between the comparison and
    the rename in which another program's save is overwritten unseen (issue 19, fault 3), and
    advisory locks do not help since editors take none. So the check comes *after* the change,
    on what the change displaced: renameat2(RENAME_EXCHANGE) swaps the two names atomically, and
    the temporary name then holds exactly the file that was at the target at that instant. If
    that is not the inode we read, unmodified (a save by rename gives a new inode; a save in place
    changes its mtime and usually its bytes), we swap back — atomically again — so their save is at the
    target and ours is discarded. What remains is a writer that opened the old inode before the
    swap and writes to it after our check: its bytes go to a file no name reaches, exactly as if
    it had written just before an ordinary save of ours; no scheme without mandatory locks closes
    that. Where the kernel or file system has no RENAME_EXCHANGE, the check runs just before a
    plain rename: the window is then the microseconds between the last stat and the rename.
    """
    try:
        exchanged = _rename_exchange(temp, target)
        if not exchanged:
            now = os.stat(target)
            if not _same_file(status, now) or _read(target) != expected:
                raise WriteError("file changed on disk while the fix was written; not written")
            os.replace(temp, target)
            _sync_directory(target.parent)
            return
        displaced = os.stat(temp)
        if not _same_file(status, displaced) or _read(temp) != expected:
            _rename_exchange(temp, target)  # theirs back in place; the temp name holds ours again
            raise WriteError("file changed on disk while the fix was written; their version kept, not written")
        _sync_directory(target.parent)
    except OSError as error:
        raise WriteError(f"cannot write: {error.strerror or error}") from None


def _sync_directory(directory: Path) -> None:
    """Make the rename itself durable (the file's data was fsynced before it); best effort, as
    some file systems refuse to open or sync a directory."""
    try:
        descriptor = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)


def _rename_exchange(a: Path, b: Path) -> bool:
    """Atomically swap two names (Linux renameat2 RENAME_EXCHANGE); False where unsupported."""
    import sys

    if not sys.platform.startswith("linux"):
        return False
    global _renameat2
    if _renameat2 is None:
        import ctypes

        try:
            function = ctypes.CDLL(None, use_errno=True).renameat2
        except (OSError, AttributeError):  # glibc < 2.28, musl without it
            _renameat2 = False
            return False
        function.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
        function.restype = ctypes.c_int
        _renameat2 = function
    if _renameat2 is False:
        return False
    import ctypes
    import errno

    at_fdcwd, rename_exchange = -100, 2
    if _renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.EXDEV):  # EXDEV: overlayfs before copy-up
        return False  # this file system cannot exchange: fall back to check-then-rename
    raise OSError(code, os.strerror(code))


_renameat2 = None


def _write_in_place(target: Path, status: os.stat_result, data: bytes, expected: bytes) -> None:
    """Rewrite the file through its own inode (its other hard links, owner and group stay),
    checking on the open descriptor that it is the same, unchanged file. If the write fails
    part-way, the original bytes are written back."""
    try:
        descriptor = os.open(target, os.O_RDWR | getattr(os, "O_NOFOLLOW", 0))
    except OSError as error:
        raise WriteError(f"cannot open for writing: {error.strerror or error}") from None
    try:
        with os.fdopen(descriptor, "r+b") as stream:
            if not _same_file(status, os.fstat(stream.fileno())) or stream.read() != expected:
                raise WriteError("file changed on disk since it was read; not written")
            try:
                _overwrite(stream, data)
            except OSError as error:
                try:
                    _overwrite(stream, expected)
                except OSError:
                    raise WriteError(f"cannot write ({error.strerror or error}), and the original could not "
                                     "be restored") from None
                raise WriteError(f"cannot write: {error.strerror or error}; the original is kept") from None
    except OSError as error:
        raise WriteError(f"cannot write: {error.strerror or error}") from None


def _overwrite(stream, data: bytes) -> None:
    stream.seek(0)
    stream.write(data)
    stream.truncate(len(data))
    stream.flush()
    os.fsync(stream.fileno())


class _signals_held:
    """Hold SIGINT and SIGTERM back (delivered on exit) so that cleanup always runs. Only the
    main thread can change the signal mask usefully; elsewhere this does nothing."""

    _HELD = ("SIGINT", "SIGTERM", "SIGHUP")

    def __enter__(self):
        import signal
        import threading

        self.previous = None
        if hasattr(signal, "pthread_sigmask") and threading.current_thread() is threading.main_thread():
            held = {getattr(signal, name) for name in self._HELD if hasattr(signal, name)}
            self.previous = signal.pthread_sigmask(signal.SIG_BLOCK, held)
        return self

    def __exit__(self, *exc_info):
        if self.previous is not None:
            import signal

            signal.pthread_sigmask(signal.SIG_SETMASK, self.previous)
        return False
