"""Which files a check looks at: the paths named, and the config files under named folders."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

from .loading import CONFIG_SUFFIXES
from .settings import Settings
from .source import real_path

SKIPPED_DIRS = {"node_modules", "__pycache__", "site-packages"}


class MissingPath(Exception):
    """A named path that does not exist: a usage error."""


def _is_venv(directory: Path) -> bool:
    return (directory / "pyvenv.cfg").is_file()


def discover(paths: list[Path], settings_for: Callable[[Path], Settings]) -> list[tuple[Path, bool]]:
    """(path, named explicitly) for every candidate file, in a stable order."""
    found: list[tuple[Path, bool]] = []
    seen: set[Path] = set()
    for path in paths:
        if not path.exists():
            raise MissingPath(f"{path}: no such file or directory")
        if path.is_file():
            # Named files are excluded too (ruff's --force-exclude): pre-commit names every file.
            if real_path(path) not in seen and not settings_for(path).excludes(path):
                seen.add(real_path(path))
                found.append((path, True))
            continue
        from .gitignore import ignore_matcher  # only a folder walk reads .gitignore files

        ignored = ignore_matcher(path)
        for directory, subdirs, files in os.walk(path):
            current = Path(directory)
            subdirs[:] = sorted(
                name for name in subdirs
                if not name.startswith(".") and name not in SKIPPED_DIRS and not _is_venv(current / name)
                and not ignored.ignored(current / name, is_dir=True)
            )
            for name in sorted(files):
                candidate = current / name
                if candidate.suffix.lower() not in CONFIG_SUFFIXES or real_path(candidate) in seen:
                    continue
                if ignored.ignored(candidate, is_dir=False):
                    continue  # what git ignores (checkpoints, caches) is not the project's config
                if settings_for(candidate).excludes(candidate):
                    continue
                seen.add(real_path(candidate))
                found.append((candidate, False))
    return found
