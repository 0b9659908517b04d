"""Which files a check looks at: the paths named, and the config files under named folders (walked
by linter/walk.py: regular files only, symlinks kept inside the tree), less what the settings
exclude and what git ignores."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from .settings import Settings
from .walk import MissingPath, walk

__all__ = ["MissingPath", "discover"]


def discover(paths: list[Path], settings_for: Callable[[Path], Settings],
             notes: list[str] | None = None) -> list[tuple[Path, bool]]:
    """(path, named explicitly) for every candidate file, in a stable order; `notes` receives a
    line for each entry skipped for a reason a user may want to know (--verbose)."""
    ignored = {}  # one .gitignore matcher per named folder

    def excluded(candidate: Path) -> bool:
        if settings_for(candidate).excludes(candidate):
            return True
        for folder, matcher in ignored.items():
            if candidate.is_relative_to(folder):
                # What git ignores (checkpoints, caches) is not the project's config.
                return matcher.ignored(candidate, is_dir=False)
        return False

    for path in paths:
        if path.is_dir():
            from .gitignore import ignore_matcher  # only a folder walk reads .gitignore files

            ignored[path] = ignore_matcher(path)
    found = walk(paths, excluded, notes)
    # Named files are excluded too (ruff's --force-exclude): pre-commit names every file.
    return [(path, explicit) for path, explicit in found if not explicit or not settings_for(path).excludes(path)]
