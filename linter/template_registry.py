"""The chat template names a framework registers in each release, from the shipped tables
data/<package>_templates.json (written by bench/llamafactory_templates.py from every release tag).
Loaded only when a rule asks (lazily)."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

_TABLES = {"llamafactory": "llamafactory_templates.json"}


@lru_cache(maxsize=None)
def _table(package: str) -> dict | None:
    name = _TABLES.get(package)
    if name is None:
        return None
    return json.loads((Path(__file__).parent / "data" / name).read_text("utf-8"))


def registered(package: str, version: str) -> frozenset[str] | None:
    """The names `package` `version` registers and refuses others of; None where the table does not
    hold that release (a development build, a release after the table, an unknown package)."""
    table = _table(package)
    if table is None or version not in table["releases"] or version not in table["raises"]:
        return None
    return frozenset(table["releases"][version])


def ever_registered(package: str) -> frozenset[str] | None:
    """Every name any release, or the mirror's HEAD, registered."""
    table = _table(package)
    if table is None:
        return None
    return frozenset(name for names in table["releases"].values() for name in names) | frozenset(table["head"])


def releases_with(package: str, name: str) -> list[str]:
    table = _table(package)
    return [version for version, names in table["releases"].items() if name in names] if table else []


def source(package: str) -> str:
    table = _table(package)
    return table["source"] if table else ""


@lru_cache(maxsize=1)
def fastchat() -> dict:
    """data/fastchat_conversations.json (bench/fastchat_conversations.py): the conversation names of each
    fschat Axolotl pinned, Axolotl's own, and its chat_template names before and after #1664."""
    return json.loads((Path(__file__).parent / "data" / "fastchat_conversations.json").read_text("utf-8"))


def plugin(package: str, version: str, template: str) -> tuple[str, frozenset[str]] | None:
    """(mm_plugin name, the modalities it has a token for) of `template` in `package` `version`
    ("head": the mirror's HEAD); ("base", {}) for a registered template without one; None where the
    table does not hold the release (before the first with plugins, a development build) or the
    release does not register the name."""
    table = _table(package)
    plugins = (table or {}).get("plugins", {})
    if version not in plugins or template not in (table["head"] if version == "head" else
                                                  table["releases"].get(version, ())):
        return None
    kind, modalities = plugins[version].get(template, ("base", ""))
    return kind, frozenset(filter(None, modalities.split(",")))


def plugin_versions(package: str) -> tuple[str, ...]:
    """The releases (then "head") the plugin table holds, oldest first."""
    table = _table(package)
    return tuple((table or {}).get("plugins", {}))
