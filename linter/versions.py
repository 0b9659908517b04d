"""Framework versions a run will use: an exact pin near the config, else the installed package.

Pins are read from `requirements*.txt` and `pyproject.toml` dependencies in the config's folder
and each folder above it (the nearest file that names the package wins). Only an exact pin
(`==`) counts; a range does not say which version runs. Without a pin, the distribution
installed beside trainlint is used (the common case of linting where you train). Unknown is
None, and version-bound rules stay silent on it.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path

_REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*==\s*([A-Za-z0-9.+!-]+)")


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


@lru_cache(maxsize=None)
def _pins_in(path: Path) -> dict[str, str]:
    try:
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError):
        return {}
    pins = {}
    for line in text.splitlines():
        line = line.strip().strip("\"',")  # pyproject dependency lists quote each requirement
        match = _REQUIREMENT.match(line)
        if match:
            pins[_normalise(match.group(1))] = match.group(2)
    return pins


def pinned(package: str, near: Path) -> tuple[str, Path] | None:
    """The exact version pinned for `package` nearest to `near`, with the file that pins it."""
    wanted = _normalise(package)
    # Absolute: a relative path's parents stop at "." (the folders above the working directory
    # were never searched), and _pins_in caches by path.
    relative = not Path(near).is_absolute()
    near = Path(near).absolute()
    for folder in (near.parent, *near.parent.parents):
        candidates = sorted(folder.glob("requirements*.txt")) + [folder / "pyproject.toml"]
        for candidate in candidates:
            version = _pins_in(candidate).get(wanted) if candidate.is_file() else None
            if version:
                # Named as the config was: relative to the working directory for a relative path.
                return version, Path(os.path.relpath(candidate)) if relative else candidate
    return None


def installed(package: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version  # only version rules need it

    try:
        return version(package)
    except PackageNotFoundError:
        return None


def version_of(package: str, near: Path) -> tuple[str, str] | None:
    """(version, where it comes from) or None when unknown."""
    found = pinned(package, near)
    if found is not None:
        return found[0], str(found[1])
    version = installed(package)
    return (version, "installed") if version else None


def older_than(version: str, bound: str) -> bool | None:
    from packaging.version import InvalidVersion, Version

    try:
        return Version(version) < Version(bound)
    except InvalidVersion:
        return None
