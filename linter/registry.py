"""Rules, findings, and the registry rule packs register into.

A rule is a small class: code, name, severity, and `check(run, context)` yielding findings.
Its docstring is its documentation (What it does / Why is this bad? / Example / Fix safety /
References), printed by `trainlint rule CODE`. Packs — the built-in one included — are
modules named by the `trainlint.rules` entry-point group; importing them registers their rules.

A check imports only the built-in rule modules whose rules can fire. A rule may declare
`triggers`: IR keys (or file kinds) at least one of which some config of the run must hold for
its check() to find anything. rules/manifest.json (`python -m linter.rule_manifest` writes it; held to the modules by
tests/test_rule_triggers.py) records every rule of each module whose rules all declare them, so a
check chooses among them (`available()`) without importing the module, and imports it
(`resolve()`) only for a run holding one of the keys. A rule without triggers, a module the
manifest does not list or whose size changed since, and third-party packs are imported and run
as always; `trainlint rules`, `rule`, --select checks, noqa checks and SARIF import everything
(`load()`).
"""

from __future__ import annotations

from typing import Iterable

from .changes import Change
from .fixes import Applicability, Fix, Frozen
from .hardware import Hardware, Target
from .ir import ConfigIR, Run, Span

ERROR, WARNING, INFO = "error", "warning", "info"
ENTRY_POINT_GROUP = "trainlint.rules"


class Context:
    """What a rule knows besides the run: the target GPUs and the world size, and where it notes
    why it stayed silent (shown with --verbose)."""

    __slots__ = ("hardware", "world_size", "notes", "verbose")

    def __init__(self, hardware: Hardware, world_size: int | None = None, notes: list[str] | None = None,
                 verbose: bool = True):
        self.hardware = hardware
        self.world_size = world_size
        self.notes = notes if notes is not None else []
        self.verbose = verbose  # notes are read only under --verbose: a costly reason is worked out only then

    def unknown_version(self, config: ConfigIR, package: str, code: str) -> None:
        """Note, for --verbose, that rule `code` skipped `config` because `package`'s version is
        unknown, and why (searching the pins again costs: only when the notes are shown)."""
        if self.verbose:
            from .versions import unknown_version_reason

            self.notes.append(f"{config.path}: {code} skipped: the {package} version is unknown "
                              f"({unknown_version_reason(package, config.path, config.framework)})")

    @property
    def targets(self) -> list[Target]:
        return self.hardware.targets

    def version_before(self, package: str, bound: str, config: ConfigIR, code: str) -> tuple[str, str] | None:
        """(version, where it comes from) when the run's `package` is older than `bound`; None
        when it is not, or when the version is unknown (noted for --verbose: the rule is silent).
        Pins that disagree (versions.disagreeing) still answer when every one is older."""
        from .versions import disagreeing, older_than

        found = config.version(package)
        pins = disagreeing(package, config.path) if found is None else []
        if pins and all(older_than(version, bound) for version, _ in pins):
            versions = " or ".join(dict.fromkeys(version for version, _ in pins))
            return versions, ", ".join(dict.fromkeys(str(path) for _, path in pins))
        if found is None:
            self.unknown_version(config, package, code)
            return None
        return found if older_than(found[0], bound) else None


class Finding(Frozen):
    """One problem, immutable once made: a rule decides everything, severity included, first."""

    __slots__ = ("code", "name", "severity", "message", "span", "framework", "targets", "fix")

    def __init__(self, code: str, name: str, severity: str, message: str, span: Span, framework: str,
                 targets: tuple[str, ...] = (), fix: Fix | None = None):
        self._init(code=code, name=name, severity=severity, message=message, span=span, framework=framework,
                   targets=tuple(targets), fix=fix)

    def with_fix(self, fix: Fix | None) -> "Finding":
        return Finding(self.code, self.name, self.severity, self.message, self.span, self.framework,
                       self.targets, fix)

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
    # What some config of the run must hold for check() to find anything, any one of: an IR key
    # (linter/ir_keys.py) present in its fields (a key a binding default fills is present in every
    # config of that adapter), or `file.kind=<kind>` (kinds(...)): a config of that kind. Declared
    # only where it follows from check(): a run holding none skips the rule, and a check imports
    # its module only for a run holding one. Empty: the rule always runs.
    triggers: tuple[str, ...] = ()

    def check(self, run: Run, context: Context) -> Iterable[Finding]:
        raise NotImplementedError

    @classmethod
    def documentation(cls) -> str:
        import inspect  # only `rule`, `rules` and SARIF need the docs

        return inspect.cleandoc(cls.__doc__ or "")

    def finding(
        self,
        config: ConfigIR,
        span: Span | None,
        message: str,
        targets: Iterable[Target] = (),
        fix: Fix | None = None,
        severity: str | None = None,
    ) -> Finding:
        launched = config.fields.get("launch.overridden")
        if launched is not None:
            message, fix = _from_launch(config, launched.value, span, message, fix)
        return Finding(
            code=self.code,
            name=self.name,
            severity=severity or self.severity,
            message=message,
            span=span or config.file_span,
            framework=config.framework,
            targets=tuple(target.name for target in targets),
            fix=fix,
        )

    def fix(self, message: str, *changes: Change, applicability: Applicability | None = None) -> Fix:
        """A fix asking for typed changes; the engine renders them through each config's adapter."""
        return Fix(applicability or self.fix_applicability, message, changes)


def _from_launch(config: ConfigIR, keys: list[str], span: Span | None, message: str,
                 fix: Fix | None) -> tuple[str, Fix | None]:
    """A finding at a key whose value the launch command gives says so; a fix that edits such a
    key (or the precision a launched key sets) is dropped: the file's value is not the run's."""
    where = config.value("launch.override_source")
    said = span is not None and any((found := config.fields.get(key)) is not None and found.span == span for key in keys)
    if said:
        message += f" (the value comes from the launch command {where}, which replaces the file's)"
    if fix is not None and any(getattr(change, "key", None) in keys or (
            not hasattr(change, "key") and hasattr(change, "mode") and any(key.startswith("precision.") for key in keys))
            for change in fix.changes):
        fix = None
        if not said:
            message += f" (some of these values come from the launch command {where}, which replaces the file's)"
    return message, fix


_RULES: dict[str, Rule] = {}


def register(rule_class: type[Rule]) -> type[Rule]:
    if rule_class.code in _RULES and type(_RULES[rule_class.code]) is not rule_class:
        raise ValueError(f"rule code {rule_class.code} registered twice")
    _RULES[rule_class.code] = rule_class()
    return rule_class


_loaded = False  # every pack imported
_started = False  # the packs imported, the built-in one's skippable modules only declared
BUILTIN_PACK = "rules"
EMPTY_PACKS: list[str] = []  # packs that registered no rule: the CLI reports them
MANIFEST = "manifest.json"  # in the built-in pack's folder
SKIPPING = True  # False: a run runs every selected rule, triggers or not (tests compare the two)


class PackError(Exception):
    """The built-in rule pack cannot be imported as itself (exit 2)."""


class Declared:
    """A built-in rule as rules/manifest.json records it, its module not imported yet: enough to
    select it and to decide whether a run can trigger it."""

    __slots__ = ("code", "name", "severity", "default_enabled", "needs_targets", "triggers", "module")

    def __init__(self, module: str, code: str, name: str, severity: str, default_enabled: bool,
                 needs_targets: bool, triggers: list[str]):
        self.module, self.code, self.name, self.severity = module, code, name, severity
        self.default_enabled, self.needs_targets, self.triggers = default_enabled, needs_targets, tuple(triggers)


_DECLARED: dict[str, Declared] = {}


def load() -> dict[str, Rule]:
    """Import every rule pack named in the `trainlint.rules` entry-point group (every built-in
    module included), once."""
    global _loaded
    if not _loaded:
        _start(everything=True)
        if _DECLARED:  # a check declared some before: import them now
            import importlib

            for module in dict.fromkeys(declared.module for declared in _DECLARED.values()):
                importlib.import_module(module)
        _loaded = True
    return _RULES


def available() -> list[Rule | Declared]:
    """What a check selects from, by code: every rule imported, and the built-in rules of the
    modules it has not imported (Declared)."""
    _start(everything=False)
    return sorted([*_RULES.values(), *(found for code, found in _DECLARED.items() if code not in _RULES)],
                  key=lambda rule: rule.code)


def resolve(rule: Rule | Declared) -> Rule:
    """The rule itself: a declared one's module is imported (once: asked per run and rule)."""
    if type(rule) is Declared:
        found = _RULES.get(rule.code)
        if found is None:
            import importlib

            importlib.import_module(rule.module)
            found = _RULES[rule.code]
        return found
    return rule


def kinds(*names: str) -> tuple[str, ...]:
    """Triggers for configs of these file kinds (their `file.kind` value)."""
    return tuple(f"file.kind={name}" for name in names)


def present(run: Run) -> set[str]:
    """What a run holds that triggers may name: its configs' IR keys and file kinds."""
    return {*(key for config in run.configs for key in config.fields),
            *(f"file.kind={config.value('file.kind')}" for config in run.configs)}


def can_fire(rule: Rule | Declared, held: set[str]) -> bool:
    """Whether a run holding `held` (present(run)) can trigger `rule`."""
    return not SKIPPING or not rule.triggers or not held.isdisjoint(rule.triggers)


def _start(everything: bool) -> None:
    global _started
    if _started:
        return
    _started = True
    import importlib

    modules = _entry_point_modules()
    if BUILTIN_PACK not in modules:  # running from a source tree that is not installed
        modules.insert(0, BUILTIN_PACK)
    for module in modules:
        before = len(_RULES)
        if module == BUILTIN_PACK:
            _import_builtin_pack(importlib, everything)
        else:
            importlib.import_module(module)
        if len(_RULES) == before and not (module == BUILTIN_PACK and _DECLARED):
            EMPTY_PACKS.append(module)


def _import_builtin_pack(importlib, everything: bool) -> None:
    """The top-level name `rules` is shared with other PyPI packages (django-rules installs one):
    when one of them shadows or overwrote ours, every check would pass with no rule at all."""
    import os

    try:
        pack = importlib.import_module(BUILTIN_PACK)
    except ImportError as error:
        raise PackError(f"trainlint's built-in rule pack `rules` cannot be imported ({error}); "
                        "another package named `rules` may have replaced it: reinstall trainlint "
                        "in an environment of its own (pipx install, or a virtual environment)") from None
    if getattr(pack, "TRAINLINT_BUILTIN_PACK", False):
        declared = {} if everything else _skippable(os.path.dirname(pack.__file__))
        for module in pack.MODULES:
            if module in declared:
                _DECLARED.update((rule.code, rule) for rule in declared[module])
            else:
                importlib.import_module(f"{BUILTIN_PACK}.{module}")
        return
    where = getattr(pack, "__file__", None) or ", ".join(getattr(pack, "__path__", [])) or "an unknown location"
    ours = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "rules")
    raise PackError(f"the module `rules` imported from {where} is not trainlint's built-in rule pack "
                    f"(expected {ours}): another package named `rules` (such as django-rules, "
                    "`pip install rules`) shadows it, and trainlint would check nothing. Uninstall it, "
                    "or install trainlint in an environment of its own (pipx install, or a virtual environment)")


def _skippable(folder: str) -> dict[str, list[Declared]]:
    """The manifest's modules, each with its rules, whose file still has the size recorded: a
    module edited since (a rule added without a trigger) is imported as any other."""
    import json
    import os

    try:
        with open(os.path.join(folder, MANIFEST), encoding="utf-8") as stream:
            manifest = json.load(stream)
    except (OSError, ValueError):
        return {}
    found: dict[str, list[Declared]] = {}
    for module, entry in manifest.items():
        try:
            if os.stat(os.path.join(folder, f"{module}.py")).st_size != entry["size"]:
                continue
        except OSError:
            continue
        found[module] = [Declared(f"{BUILTIN_PACK}.{module}", *rule) for rule in entry["rules"]]
    return found


def _entry_point_modules() -> list[str]:
    """Modules named in the `trainlint.rules` group of the installed distributions.

    Read straight from each `*.dist-info/entry_points.txt` on sys.path: importing
    importlib.metadata costs about 20 ms, a quarter of a one-file run, on every commit.
    """
    import os
    import sys

    found: list[str] = []
    header = f"[{ENTRY_POINT_GROUP}]"
    for folder in sys.path:
        try:
            names = os.listdir(folder or ".")
        except OSError:
            continue
        for name in names:
            if not name.endswith(".dist-info"):
                continue
            try:
                with open(os.path.join(folder or ".", name, "entry_points.txt"), encoding="utf-8") as stream:
                    text = stream.read()
            except OSError:
                continue
            if header not in text:
                continue
            section = text.split(header, 1)[1].split("\n[", 1)[0]
            for line in section.splitlines():
                if "=" in line and not line.lstrip().startswith(("#", ";")):
                    module = line.split("=", 1)[1].strip().split(":", 1)[0].strip()
                    if module and module not in found:
                        found.append(module)
    return found


def all_rules() -> list[Rule]:
    return sorted(load().values(), key=lambda rule: rule.code)


def get(code: str) -> Rule | None:
    return load().get(code.upper())


def selected(select: list[str] | None, extend_select: list[str], ignore: list[str]) -> list[Rule | Declared]:
    """ruff's selection: `select` (or the default set) plus `extend-select`, minus `ignore`.

    Codes and prefixes (`PRE`, `QNT0`, `ALL`) both work; a rule that is off by default is on
    only when a selector names it or a prefix of it explicitly. A built-in rule whose module is
    not imported comes as its Declared entry: `resolve()` gives the rule.
    """

    def matches(rule: Rule, selectors: Iterable[str]) -> bool:
        return any(sel == "ALL" or rule.code.startswith(sel) for sel in selectors)

    chosen = []
    for rule in available():
        if select is None:
            on = rule.default_enabled or matches(rule, extend_select)
        else:
            on = matches(rule, [*select, *extend_select])
        if on and not matches(rule, ignore):
            chosen.append(rule)
    return chosen
