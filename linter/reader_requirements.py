"""A pin the framework that reads a file cannot run with is not the version that reads it.

A repository may pin `transformers==4.30.1` at its root for one of its parts while its README
installs LLaMA-Factory (from a clone, or unpinned) for another: every LLaMA-Factory release with
llamafactory-cli requires transformers>=4.37.2, so installing it replaces 4.30.1, and a rule that
judged a LLaMA-Factory file by 4.30.1 would be wrong. linter/data/requirement_floors.json
(bench/requirement_floors.py, from the frameworks' release tags) holds, per release the adapter
models, the lowest version it requires of each package. A file pin below the floor of the pinned
framework release (or, with none pinned, below the lowest floor of every release) leaves the
version unknown: rules are silent, and --verbose says why. The installed distribution and the
exact requirements of a pinned framework (versions.py _implied) are what pip resolved, so they
are never doubted here.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from .version_order import older_than


@lru_cache(maxsize=None)
def _table() -> dict:
    import json

    with open(Path(__file__).parent / "data" / "requirement_floors.json", encoding="utf-8") as handle:
        return json.load(handle)["frameworks"]


def has_table(reader: str) -> bool:
    return reader in _table()



def below_reader_floor(package: str, version: str, reader: str, own: tuple[str, Path] | None) -> str | None:
    """Why a pin of `package` at `version` cannot be the one a `reader` run uses (`own`: the
    reader's own pin and its file, or None), for --verbose notes; None where it can (or the
    reader has no table)."""
    frameworks = _table()
    if reader not in frameworks:
        return None
    from packaging.version import InvalidVersion, Version

    releases = frameworks[reader]["releases"]
    if own is not None:
        try:
            row = next((r for v, r in releases.items() if Version(v) == Version(own[0])), None)
        except InvalidVersion:
            row = None
        floor = row["floors"].get(package) if row else None
        if floor and older_than(version, floor) is True:
            return (f"{package}=={version} is below what {reader} {own[0]} ({own[1].name}) requires, "
                    f"{package}>={floor}: installing it replaces the pin")
        return None
    start = Version(frameworks[reader]["from"])
    modelled = [row for release, row in releases.items() if Version(release) >= start]
    floors = [row["floors"][package] for row in modelled if package in row["floors"]]
    if len(floors) != len(modelled) or not floors:
        return None  # a release without a floor for it: any version may read the file
    lowest = min(floors, key=Version)
    if older_than(version, lowest) is True:
        return (f"{package}=={version} is below what every {reader} release from {frameworks[reader]['from']} "
                f"requires ({package}>={lowest} at the least): installing {reader} replaces the pin")
    return None
