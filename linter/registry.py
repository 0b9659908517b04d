"""Rules, findings, and the registry rule packs register into.

A rule is a small class: code, name, severity, and `check(run, context)` yielding findings.
Its docstring is its documentation (What it does / Why is this bad? / Example / Fix safety /
References), printed by `trainlint rule CODE`. Packs — the built-in one included — are
modules named by the `trainlint.rules` entry-point group; importing them registers their rules.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Iterable, Iterator

from .fixes import Applicability, Change, Fix
from .hardware import Hardware, Target
from .ir import ConfigIR, Run, Span

ERROR, WARNING, INFO = "error", "warning", "info"
ENTRY_POINT_GROUP = "trainlint.rules"


@dataclass
class Context:
    hardware: Hardware
    world_size: int | None = None

    @property
    def targets(self) -> list[Target]:
        return self.hardware.targets


@dataclass
class Finding:
    code: str
    name: str
    severity: str
    message: str
    span: Span
    framework: str
    targets: list[str] = field(default_factory=list)
    fix: Fix | None = None

    @property
    def sort_key(self):
        return (str(self.span.path), self.span.start, self.code)


class Rule:
    code: str = ""
    name: str = ""
    severity: str = WARNING
    default_enabled: bool = True
    fix_applicability: Applicability | None = None  # what kind of fix the rule offers, if any
    needs_targets: bool = False  # skipped when no GPU target is known

    def check(self, run: Run, context: Context) -> Iterable[Finding]:
        raise NotImplementedError

    @classmethod
    def documentation(cls) -> str:
        return inspect.cleandoc(cls.__doc__ or "")

    def finding(
        self,
        config: ConfigIR,
        span: Span | None,
        message: str,
        targets: Iterable[Target] = (),
        fix: Fix | None = None,
    ) -> Finding:
        return Finding(
            code=self.code,
            name=self.name,
            severity=self.severity,
            message=message,
            span=span or config.file_span,
            framework=config.framework,
            targets=[target.name for target in targets],
            fix=fix,
        )

    def fix(self, message: str, *changes: Change, applicability: Applicability | None = None) -> Fix:
        """A fix asking for IR changes; the engine renders them through each config's adapter."""
        return Fix(applicability or self.fix_applicability, message, list(changes))


_RULES: dict[str, Rule] = {}


def register(rule_class: type[Rule]) -> type[Rule]:
    if rule_class.code in _RULES and type(_RULES[rule_class.code]) is not rule_class:
        raise ValueError(f"rule code {rule_class.code} registered twice")
    _RULES[rule_class.code] = rule_class()
    return rule_class


_loaded = False


def load() -> dict[str, Rule]:
    """Import every rule pack named in the `trainlint.rules` entry-point group, once."""
    global _loaded
    if not _loaded:
        _loaded = True
        from importlib.metadata import entry_points

        names = set()
        for entry in entry_points(group=ENTRY_POINT_GROUP):
            names.add(entry.value)
            entry.load()
        if "rules" not in names:  # running from a source tree that is not installed
            import rules  # noqa: F401
    return _RULES


def all_rules() -> list[Rule]:
    return sorted(load().values(), key=lambda rule: rule.code)


def get(code: str) -> Rule | None:
    return load().get(code.upper())


def selected(select: list[str] | None, extend_select: list[str], ignore: list[str]) -> list[Rule]:
    """ruff's selection: `select` (or the default set) plus `extend-select`, minus `ignore`.

    Codes and prefixes (`PRE`, `QNT0`, `ALL`) both work; a rule that is off by default is on
    only when a selector names it or a prefix of it explicitly.
    """

    def matches(rule: Rule, selectors: Iterable[str]) -> bool:
        return any(sel == "ALL" or rule.code.startswith(sel) for sel in selectors)

    chosen = []
    for rule in all_rules():
        if select is None:
            on = rule.default_enabled or matches(rule, extend_select)
        else:
            on = matches(rule, [*select, *extend_select])
        if on and not matches(rule, ignore):
            chosen.append(rule)
    return chosen


def iter_codes() -> Iterator[str]:
    return iter(sorted(load()))
