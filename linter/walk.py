"""Which files a check reads: the named files, and the config files found by walking named folders.

A walked tree is hostile input: it may hold FIFOs, sockets and devices named `*.yaml`, symlinks
to /dev/zero or out of the tree, dangling links, link loops, and folders that can be listed but
not entered. None of these may hang, exhaust memory or stop the run. So the walk

- yields only regular files (a FIFO, device or socket is a note, never opened here; the reader
  opens what it is given with O_NONBLOCK and checks the opened descriptor again, since an entry
  can be swapped between this walk and the read);
- follows a symlinked *file* only when its target lies inside the walked folder, and never
  descends into a symlinked folder (no loops, no walking out of the tree);
- turns every entry it cannot list, stat or resolve into one note and goes on.

Files named on the command line are yielded as given (the user asked for them): the reader
reports a non-regular or unreadable one as a finding.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

from .source import kind_of, real_path

CONFIG_SUFFIXES = {".yaml": "yaml", ".yml": "yaml", ".json": "json", ".py": "python"}
SKIPPED_DIRS = {"node_modules", "__pycache__", "site-packages"}


class MissingPath(Exception):
    """A path named on the command line does not exist (not even as a dangling symlink)."""

    def __init__(self, path: Path):
        super().__init__(f"{path}: no such file or directory")
        self.path = path


def walk(paths: list[Path], excluded: Callable[[Path], bool],
         notes: list[str] | None = None) -> Iterator[tuple[Path, bool]]:
    """(path, named explicitly) for every candidate file, in a stable order, each real file once.

    `excluded(path)` is asked of walked files (settings' `exclude`); `notes` receives one line
    for each entry skipped for a reason a user may want to know (shown under --verbose).
    Raises MissingPath, before yielding anything, when a named path does not exist.
    """
    notes = notes if notes is not None else []
    for path in paths:
        if not os.path.lexists(path):
            raise MissingPath(path)
    return _walk(paths, excluded, notes)


def _walk(paths: list[Path], excluded: Callable[[Path], bool], notes: list[str]) -> Iterator[tuple[Path, bool]]:
    seen: set[Path] = set()
    for path in paths:
        if not _is_dir(path):
            real = real_path(path)
            if real not in seen:
                seen.add(real)
                yield path, True
            continue
        root = real_path(path)
        pending = [path]
        while pending:
            directory = pending.pop()
            files, subdirs = _list(directory, notes)
            for name in files:
                candidate = directory / name
                if candidate.suffix.lower() not in CONFIG_SUFFIXES:
                    continue
                real = _regular_file(candidate, root, notes)
                if real is None or real in seen:
                    continue
                try:
                    if excluded(candidate):
                        continue
                except OSError as error:
                    notes.append(f"{candidate}: skipped: cannot read the settings that apply to it "
                                 f"({error.strerror or error})")
                    continue
                seen.add(real)
                yield candidate, False
            # Depth-first in name order, as os.walk gave: push in reverse.
            pending.extend(reversed([directory / name for name in subdirs]))


def _is_dir(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.stat(path).st_mode)
    except OSError:  # a dangling or looping link named explicitly: the reader reports it
        return False


def _list(directory: Path, notes: list[str]) -> tuple[list[str], list[str]]:
    """Sorted names of the folder's non-folder entries, and of the subfolders to walk."""
    files, subdirs = [], []
    try:
        with os.scandir(directory) as entries:
            for entry in entries:
                try:
                    is_dir = entry.is_dir(follow_symlinks=False)
                except OSError:
                    is_dir = False
                if not is_dir:
                    files.append(entry.name)
                elif not entry.name.startswith(".") and entry.name not in SKIPPED_DIRS:
                    subdirs.append(entry.name)
    except OSError as error:
        notes.append(f"{directory}: skipped: cannot list this folder ({error.strerror or error})")
        return [], []
    kept = []
    for name in sorted(subdirs):
        try:
            if os.path.isfile(os.path.join(directory, name, "pyvenv.cfg")):
                continue  # a virtual environment: other people's packages, not this project's configs
        except OSError:
            pass
        kept.append(name)
    return sorted(files), kept


def _regular_file(candidate: Path, root: Path, notes: list[str]) -> Path | None:
    """The candidate's real path if it is a regular file the walk may read, else None (with a note)."""
    try:
        link = os.lstat(candidate)
    except OSError as error:
        notes.append(f"{candidate}: skipped: {error.strerror or error}")
        return None
    if stat.S_ISLNK(link.st_mode):
        try:
            status = os.stat(candidate)
        except OSError as error:
            why = "a symlink loop" if error.errno == errno.ELOOP else \
                "a dangling symlink" if error.errno == errno.ENOENT else (error.strerror or str(error))
            notes.append(f"{candidate}: skipped: {why}")
            return None
        real = real_path(candidate)
        if not _inside(real, root):
            notes.append(f"{candidate}: skipped: a symlink that leaves the walked folder (to {real})")
            return None
    else:
        status = link
        real = real_path(candidate)
    if not stat.S_ISREG(status.st_mode):
        notes.append(f"{candidate}: skipped: not a regular file ({kind_of(status.st_mode)})")
        return None
    return real


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents
