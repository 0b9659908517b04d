"""Linting one run: the selected rules, their fixes rendered through each file's adapter, and
suppression applied."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from . import registry
from .document import RenderError
from .fixes import Fix
from .hardware import Hardware
from .ir import Run
from .loading import Loader
from .registry import Context, Finding
from .settings import Settings
from .suppression import check_noqa, suppressed


class Linter:
    def __init__(self, loader: Loader, settings_for: Callable[[Path], Settings],
                 select: list[str] | None, extend_select: list[str], ignore: list[str],
                 world_size: int | None, verbose: bool):
        self.loader = loader
        self.settings_for = settings_for
        self._select, self._extend_select, self._ignore = select, extend_select, ignore
        self._world_size = world_size
        self._verbose = verbose
        self._rules: dict[int, list[registry.Rule | registry.Declared]] = {}  # by id of a Settings: they live as long as the session
        self._triggers: dict[int, tuple[list[int], dict[str, list[int]]]] = {}  # by id of a Settings, as _rules
        self._resolved: dict[int, registry.Rule] = {}  # registry.resolve, by id of an entry of _rules' lists
        self.notes: dict[str, None] = {}  # why rules stayed silent (--verbose), ordered, without repeats

    def rules_for(self, settings: Settings) -> list[registry.Rule | registry.Declared]:
        """The rules in force under `settings` (asked per file and per pass: computed once); a
        built-in rule whose module is not imported comes as its manifest entry (registry.Declared)."""
        chosen = self._rules.get(id(settings))
        if chosen is None:
            select = self._select if self._select is not None else settings.select
            chosen = self._rules[id(settings)] = registry.selected(
                select, [*settings.extend_select, *self._extend_select], [*settings.ignore, *self._ignore])
        return chosen

    def _can_fire(self, settings: Settings, held: set[str]) -> list[registry.Rule | registry.Declared]:
        """registry.can_fire over the rules in force, in their order, through an index of their
        triggers (asked per run: ~180 rules x 617 runs in a corpus check): the rules without
        triggers and those with a trigger the run holds. A rule whose triggers no config holds
        finds nothing: its module stays unimported."""
        chosen = self.rules_for(settings)
        if not registry.SKIPPING:
            return chosen
        index = self._triggers.get(id(settings))
        if index is None:
            always, by_trigger = [], {}
            for position, rule in enumerate(chosen):
                if not rule.triggers:
                    always.append(position)
                for trigger in rule.triggers:
                    by_trigger.setdefault(trigger, []).append(position)
            index = self._triggers[id(settings)] = (always, by_trigger)
        always, by_trigger = index
        positions = set(always)
        for trigger in held & by_trigger.keys():
            positions.update(by_trigger[trigger])
        return [chosen[position] for position in sorted(positions)]

    def lint(self, run: Run, settings: Settings, hardware: Hardware, keep_changes: bool = False) -> list[Finding]:
        """The run's findings, their fixes rendered (with `keep_changes`, the typed changes stay
        in each fix for the fixer to verify)."""
        if run.value("device.kind") not in (None, "cuda"):
            # NVIDIA targets say nothing about a job on CPUs or another accelerator.
            hardware = Hardware([], hardware.origin, [f"the job runs on {run.value('device.kind')}"])
        check_noqa((config.path, loaded[0]) for config in run.configs
                   if (loaded := self.loader.document_of(config)) is not None)
        context = Context(hardware, self._world_size or settings.world_size, verbose=self._verbose)
        findings: list[Finding] = []
        targets, resolved = hardware.targets, self._resolved
        for chosen in self._can_fire(settings, registry.present(run)):
            if chosen.needs_targets and not targets:
                continue
            rule = resolved.get(id(chosen))
            if rule is None:
                rule = resolved[id(chosen)] = registry.resolve(chosen)
            for finding in rule.check(run, context):
                if finding.fix is not None:
                    finding = finding.with_fix(self.render(finding.fix, keep_changes))
                findings.append(finding)
        if self._verbose:
            self.notes.update(dict.fromkeys(context.notes))
        return [finding for finding in findings if not self._suppressed(finding, run)]

    def render(self, fix: Fix, keep_changes: bool = False) -> Fix:
        """The fix with its changes rendered as text edits by each file's adapter."""
        edits = []
        try:
            for change in fix.changes:
                loaded = self.loader.document_of(change.config)
                if loaded is None:
                    raise RenderError(f"{change.config.path} is a framework's built-in config, not a file")
                document, adapter = loaded
                edits.extend(adapter.render(document, change.config, change))
        except RenderError as error:
            return fix.rendered((), str(error), keep_changes)
        return fix.rendered(edits, keep_changes=keep_changes)

    def _suppressed(self, finding: Finding, run: Run) -> bool:
        path = finding.span.path
        config = next((config for config in run.configs if config.path == path), None)
        loaded = self.loader.document_of(config) if config is not None else None
        return suppressed(finding, loaded[0] if loaded else None, self.settings_for(path))
