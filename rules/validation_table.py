"""A framework's own config validation, as a table (issue 16: recall from the checks a framework runs
on the config before it loads anything).

Each row is one check the framework makes from the config alone: a condition on IR keys, the
framework's own refusal message, the function that raises it, and the release that added it.
`since=None` marks a hazard on every version that reads those keys (the check was there from the
first release that accepted the keys, or the run failed without it); a row with `since` fires only
where the pinned version is at least that release, and is silent where the version is unknown,
unless the row says what every release that reads the keys does (`unpinned`: the finding's text
then names both behaviours and the release where it changes) and, optionally, what the releases
before the check do (`before`: from which release, and what goes wrong there).
The rules (rules/llm_validation.py) are small classes that list their rows; the logic lives in
`TableRule`.
"""

from __future__ import annotations

import re
from typing import Callable

from linter.registry import ERROR, Rule
from linter.versions import older_than


class Row:
    """One check of the table. A plain class, not a NamedTuple: defining one costs ~0.5 ms, which
    every run would pay at import."""

    __slots__ = ("when", "at", "what", "message", "source", "added", "since", "package", "unpinned", "before",
                 "until")

    def __init__(self, when: Callable, at: str, what: str, message: str, source: str, added: str,
                 since: str | None = None, package: str = "ludwig", unpinned: str | None = None,
                 before: tuple[str, str] | None = None, until: str | None = None):
        self.when = when  # config -> bool: the framework refuses the config
        self.at = at  # the IR key whose place the finding points at
        self.what = what  # what is wrong, in our words
        self.message = message  # the framework's own message, verbatim
        self.source = source  # file: function that raises it
        self.added = added  # the commit / PR / release that added the check
        self.since = since  # first release with the check; None: a hazard on every version
        self.package = package  # the package whose version bounds `since`
        # with `since`: the finding's text where the version is unknown, true for every release that
        # reads the keys (None: silent there)
        self.unpinned = unpinned
        # with `since`: (first release that reads the keys, what goes wrong on a pinned release from it
        # up to `since`); None: silent before `since`
        self.before = before
        # with `since`: the first release without the check (a pinned release from it is silent)
        self.until = until


class TableRule(Rule):
    """Fires one finding per row whose condition holds (and whose version bound is met)."""

    severity = ERROR
    rows: tuple[Row, ...] = ()

    def check(self, run, context):
        for config in run.configs:
            for row in self.rows:
                if not row.when(config):
                    continue
                if row.since is not None:
                    found = config.version(row.package)
                    if found is None:
                        if row.unpinned is None:
                            context.notes.append(f"{config.path}: {self.code} row {row.source} skipped: the "
                                                 f"{row.package} version is unknown (the check exists from "
                                                 f"{row.since})")
                            continue
                        bound = row.unpinned
                    elif row.until is not None and older_than(found[0], row.until) is not True:
                        continue
                    elif older_than(found[0], row.since) is not False:
                        if row.before is None or older_than(found[0], row.before[0]) is not False:
                            continue
                        bound = f"{row.package} {found[0]} ({found[1]}) {row.before[1]}"
                    else:
                        bound = f"{row.package} {found[0]} ({found[1]}) refuses it"
                else:
                    bound = "refused at config validation"
                yield self.finding(
                    config, config.span(row.at),
                    f"{row.what}: {bound}: \"{row.message}\" ({row.source}, {row.added})")


# ---- conditions on IR keys (shared by the rows) ------------------------------------------------------

def llm(config) -> bool:
    return config.value("model.kind") == "llm"


def first(config, key: str) -> str | None:
    types = config.value(key)
    return types[0].lower() if types else None


def lowered(config, key: str) -> str | None:
    """A type name as the framework matches it: case-insensitively (TypeSelection lowers it)."""
    value = config.value(key)
    return value.lower() if isinstance(value, str) else value


def trainer_is(*kinds: str) -> Callable:
    return lambda config: llm(config) and lowered(config, "training.trainer") in kinds


def trains(config) -> bool:
    trainer = lowered(config, "training.trainer")
    return llm(config) and trainer is not None and trainer != "none"


def quantized(config) -> bool:
    return config.value("quantization.bits") in (4, 8)


def template_refs(config) -> set[str] | None:
    template = config.value("prompt.template")
    return set(re.findall(r"\{(.*?)\}", template)) if isinstance(template, str) and template else None
