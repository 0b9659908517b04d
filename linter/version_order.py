"""Release order: whether one version string is older than another, by packaging's rules.

A module of its own so that both `versions` (pins and installed packages) and
`reader_requirements` (the floors a framework release needs) can use it without importing each
other."""

from __future__ import annotations


def older_than(version: str, bound: str) -> bool | None:
    """Is `version` older than `bound`? None when either does not parse as a version."""
    from packaging.version import InvalidVersion, Version

    try:
        return Version(version) < Version(bound)
    except InvalidVersion:
        return None
