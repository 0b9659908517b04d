"""One mechanism for the tables of pinned releases known to break what a config runs.

A table is a tuple of `Row`s: the rule code that reports it, the affected releases of every
package involved (`Range`s, read in the projects' history), an `applies` predicate over the
config's facts (a `Facts`, or a subclass with the table's own questions), the IR key the finding
points at, and what it says. A rule reporting a table subclasses `ReleaseTable`: for each config
it tests the rows' predicates first (IR values only, cheap) and asks for versions only for the
rows that apply; a row fires where every package's version is known (an exact pin near the
config, or the installed package) and inside its range. Unknown -> silent, with a --verbose
note; a row marked `unpinned` fires on an unknown version too (every release that reads the key
has the bug). The tables: rules/release_bugs.py (TRN073, TRN074, PEF011), incompatible_versions.py
(VER002) and deepspeed_releases.py (DS020-DS022, DS025, DS028, DS030).
"""

from __future__ import annotations

from linter.registry import Rule

from .facts import world_size

ARGUMENT_FILES = ("trl", "trainer", "llamafactory")  # read by transformers' TrainingArguments
_UNSET = object()


class Range:
    """A package's affected releases: from `first` (None: every earlier one) up to, not
    including, `fixed` (None: none fixed yet). A plain class: a NamedTuple costs ~0.4 ms to
    define, paid by every run at import."""

    __slots__ = ("package", "first", "fixed")

    def __init__(self, package: str, first: str | None, fixed: str | None):
        self.package, self.first, self.fixed = package, first, fixed

    def holds(self, version: str) -> bool:
        from linter.versions import older_than

        low = self.first is None or older_than(version, self.first) is False
        high = self.fixed is None or older_than(version, self.fixed) is True
        return low and high

    def spelled(self) -> str:
        bounds = [f">={self.first}" if self.first else "", f"<{self.fixed}" if self.fixed else ""]
        return self.package + ",".join(bound for bound in bounds if bound)


class Row:
    """One bug: `applies(facts) -> bool` says the config runs the code path that breaks; `point`
    is the IR key the finding points at (space-separated keys: the first present); `what` may
    name facts in braces, filled by `fill`."""

    __slots__ = ("code", "ranges", "applies", "point", "what", "failure", "reference", "unpinned")

    def __init__(self, code: str, ranges: tuple[Range, ...], applies, point: str, what: str, failure: str,
                 reference: str = "", unpinned: bool = False):
        self.code, self.ranges, self.applies, self.point = code, ranges, applies, point
        self.what, self.failure, self.reference, self.unpinned = what, failure, reference, unpinned


class Facts:
    """What the rows ask of one config of a run: `facts(key)` is the config's IR value; the
    run's training config (the one whose trainer fills DeepSpeed's "auto" values) and world size
    are worked out once, when first asked."""

    __slots__ = ("config", "run", "context", "_trainer", "_world")

    def __init__(self, config, run, context):
        self.config, self.run, self.context = config, run, context
        self._trainer = self._world = _UNSET  # not `self`: a cycle would keep the run's documents alive

    def __call__(self, key):
        return self.config.value(key)

    @property
    def trainer(self):
        if self._trainer is _UNSET:
            from .facts import training_config

            self._trainer = training_config(self.run)
        return self._trainer

    @property
    def world(self) -> int | None:
        if self._world is _UNSET:
            self._world = world_size(self.run, self.context)
        return self._world

    def arguments(self) -> bool:
        """A TrainingArguments / TRL / LLaMA-Factory file that transformers' own classes read."""
        return self("file.kind") in ARGUMENT_FILES and self("arguments.project_parser") is not True

    def fsdp2(self) -> bool:
        """An accelerate config with FSDP on and fsdp_version 2."""
        return (self("file.kind") == "accelerate" and self("parallel.fsdp") is True
                and str(self("parallel.fsdp_version")) == "2")

    def others(self):
        return [other for other in self.run.configs if other is not self.config]

    def zero_stages(self):
        """The ZeRO stages the run's other configs apply: a DeepSpeed JSON's stage, or an
        accelerate config's own (written) deepspeed_config zero_stage under distributed_type
        DEEPSPEED (the key holds an int or None: linter/ir_keys.py)."""
        for other in self.others():
            stage = other.get("parallel.zero_stage")
            if stage is None or stage.value is None:
                continue
            if other.value("file.kind") == "deepspeed" or (
                    other.value("parallel.accelerate_distributed_type") == "DEEPSPEED" and not stage.origin.is_default):
                yield stage.value


def pins_in_ranges(config, ranges, code: str, context, noted: set | None = None):
    """[(version, where), ...] when every package of `ranges` is pinned inside its range; False
    when one is pinned outside it; None when one's version is unknown (noted for --verbose, once
    per package in `noted`: the row is silent). Packages are asked in order, and no further once
    one is outside its range."""
    pins = []
    for part in ranges:
        found = config.version(part.package)
        if found is None:
            if noted is None or part.package not in noted:
                context.unknown_version(config, part.package, code)
                if noted is not None:
                    noted.add(part.package)
            return None
        if not part.holds(found[0]):
            return False
        pins.append(found)
    return pins


def named(ranges, pins) -> str:
    """`pkg version (where), ...` for messages."""
    return ", ".join(f"{part.package} {pin[0]} ({pin[1]})" for part, pin in zip(ranges, pins))


def fill(text: str, facts: Facts) -> str:
    """`text` with each `{name}` filled: a dotted name is an IR key's value, another a method of
    the facts (`{stage}`: facts.stage())."""
    while "{" in text:
        head, _, rest = text.partition("{")
        name, _, tail = rest.partition("}")
        text = f"{head}{facts(name) if '.' in name else getattr(facts, name)()}{tail}"
    return text


class ReleaseTable(Rule):
    """Base of the rules that report the rows of a table with their own code. Subclasses set
    `rows`, and may set `facts` (the accessor class), `once` (one finding per config: the first
    row that holds) and override `reads` (a cheap filter of configs) and the messages."""

    rows: tuple = ()
    facts = Facts
    once = False

    def reads(self, config) -> bool:
        return True

    def message(self, row: Row, facts: Facts, pins) -> str:
        return f"{fill(row.what, facts)} on {named(row.ranges, pins)}: {row.failure} ({row.reference})"

    def unpinned_message(self, row: Row, facts: Facts) -> str:
        raise NotImplementedError  # only tables with `unpinned` rows say it

    def check(self, run, context):
        rows = type(self).__dict__.get("_own_rows")  # the rule's rows, selected once per process
        if rows is None:
            rows = type(self)._own_rows = tuple(row for row in self.rows if row.code == self.code)
        for config in run.configs:
            if not self.reads(config):
                continue
            facts = self.facts(config, run, context)
            matching = [row for row in rows if row.applies(facts)]  # the IR predicates, before the pins
            if matching:
                yield from self.report(facts, matching)

    def report(self, facts: Facts, rows):
        config, noted = facts.config, set()
        for row in rows:
            pins = pins_in_ranges(config, row.ranges, self.code, facts.context, noted)
            if pins:
                message = self.message(row, facts, pins)
            elif pins is None and row.unpinned:
                message = self.unpinned_message(row, facts)
            else:
                continue
            yield self.finding(config, config.span(*row.point.split()), message)
            if self.once:
                return

