"""The pipeline: files -> adapter -> IR -> rules -> fixes -> adapter -> edits -> files.

`Session` discovers files, loads each into a ConfigIR (or a SYN001 finding), groups configs
into runs, runs the selected rules, and — with --fix or --diff — applies fixes pass by pass
until nothing changes (at most MAX_PASSES), verifying that every fix re-parses to the value it
asked for.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from . import registry
from .adapters import Adapter, all_adapters
from .document import Document, ParseError, RenderError
from .fixes import Fix, WriteError, apply_edits, select_non_overlapping, write_atomic
from .hardware import Hardware, parse_targets, resolve
from .ir import ConfigIR, Run, Span
from .json_reader import parse_json
from .registry import Context, Finding
from .settings import Settings, for_directory, load_file
from .source import Source, SourceError
from .yaml_reader import parse_yaml

MAX_PASSES = 10
CONFIG_SUFFIXES = {".yaml": "yaml", ".yml": "yaml", ".json": "json"}
SKIPPED_DIRS = {"node_modules", "__pycache__", "site-packages"}
_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Za-z]+[0-9]+(?:\s*,\s*[A-Za-z]+[0-9]+)*))?", re.I)


class UsageError(Exception):
    """Bad command-line input or settings: exit 2 with a one-line message."""


@dataclass
class Options:
    fix: bool = False
    unsafe_fixes: bool | None = None  # None: the settings decide
    diff: bool = False
    select: list[str] | None = None
    ignore: list[str] = field(default_factory=list)
    extend_select: list[str] = field(default_factory=list)
    gpu: str | None = None
    detect: bool = True
    world_size: int | None = None
    config_file: Path | None = None
    verbose: bool = False


@dataclass
class FileResult:
    path: Path
    source: Source | None = None
    config: ConfigIR | None = None
    syntax: Finding | None = None


@dataclass
class Outcome:
    findings: list[Finding] = field(default_factory=list)
    sources: dict[Path, Source] = field(default_factory=dict)
    fixed: int = 0
    diffs: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # one-line diagnostics for stderr
    no_target_note: str | None = None


def _is_venv(directory: Path) -> bool:
    return (directory / "pyvenv.cfg").is_file()


def _syntax_finding(path: Path, message: str, source: Source | None, line: int, column: int,
                    offset: int | None = None) -> Finding:
    rule = registry.get("SYN001")
    start = offset if offset is not None else 0
    span = Span(path, start, start, line, column, line, column)
    return Finding(rule.code, rule.name, rule.severity, message, span, framework="")


class Session:
    def __init__(self, options: Options):
        self.options = options
        self.adapters: list[Adapter] = all_adapters()
        self._explicit_settings = load_file(options.config_file) if options.config_file else None
        self._hardware: dict[tuple, Hardware] = {}
        for named in (options.gpu, os.environ.get("TRAINLINT_GPU")):
            if named:
                parse_targets(named)  # a typo in a target is a usage error even with nothing to lint

    # ---- settings and hardware ---------------------------------------------------------------

    def settings_for(self, path: Path) -> Settings:
        if self._explicit_settings is not None:
            return self._explicit_settings
        return for_directory(path.resolve().parent)

    def hardware_for(self, settings: Settings) -> Hardware:
        key = tuple(settings.target_gpus or ())
        if key not in self._hardware:
            self._hardware[key] = resolve(
                self.options.gpu, os.environ.get("TRAINLINT_GPU"), settings.target_gpus, self.options.detect)
        return self._hardware[key]

    def rules_for(self, settings: Settings) -> list[registry.Rule]:
        options = self.options
        select = options.select if options.select is not None else settings.select
        return registry.selected(select, [*settings.extend_select, *options.extend_select],
                                 [*settings.ignore, *options.ignore])

    def unsafe(self, settings: Settings) -> bool:
        return self.options.unsafe_fixes if self.options.unsafe_fixes is not None else settings.unsafe_fixes

    # ---- discovery and loading ---------------------------------------------------------------

    def discover(self, paths: list[Path]) -> list[tuple[Path, bool]]:
        """(path, named explicitly) for every candidate file, in a stable order."""
        found: list[tuple[Path, bool]] = []
        seen: set[Path] = set()
        for path in paths:
            if not path.exists():
                raise UsageError(f"{path}: no such file or directory")
            if path.is_file():
                if path.resolve() not in seen:
                    seen.add(path.resolve())
                    found.append((path, True))
                continue
            for directory, subdirs, files in os.walk(path):
                current = Path(directory)
                subdirs[:] = sorted(
                    name for name in subdirs
                    if not name.startswith(".") and name not in SKIPPED_DIRS and not _is_venv(current / name)
                )
                for name in sorted(files):
                    candidate = current / name
                    if candidate.suffix.lower() not in CONFIG_SUFFIXES or candidate.resolve() in seen:
                        continue
                    if self.settings_for(candidate).excludes(candidate):
                        continue
                    seen.add(candidate.resolve())
                    found.append((candidate, False))
        return found

    def load(self, path: Path, explicit: bool) -> FileResult:
        result = FileResult(path)
        kind = CONFIG_SUFFIXES.get(path.suffix.lower())
        if kind is None:
            return result
        try:
            source = Source.read(path)
        except SourceError as error:
            result.syntax = _syntax_finding(path, error.message, None, error.line, error.column)
            return result
        except OSError as error:
            raise UsageError(f"{path}: cannot read: {error.strerror or error}") from None
        result.source = source
        try:
            document = parse_yaml(source) if kind == "yaml" else parse_json(source)
        except ParseError as error:
            if explicit or any(adapter.sniffs(source.text) for adapter in self.adapters):
                position = source.position(min(error.offset, len(source.text)))
                result.syntax = _syntax_finding(path, error.message, source, position.line, position.column,
                                                error.offset)
            return result
        result.config = self.claim(document)
        return result

    def claim(self, document: Document) -> ConfigIR | None:
        for adapter in self.adapters:
            if document.format in adapter.formats and adapter.claims(document):
                return adapter.parse(document)
        return None

    # ---- linting -----------------------------------------------------------------------------

    def lint(self, run: Run, settings: Settings, hardware: Hardware) -> list[Finding]:
        context = Context(hardware, self.options.world_size or settings.world_size)
        findings: list[Finding] = []
        for rule in self.rules_for(settings):
            if rule.needs_targets and not hardware.targets:
                continue
            for finding in rule.check(run, context):
                if finding.fix is not None:
                    self._render(finding.fix)
                findings.append(finding)
        return [finding for finding in findings if not self._suppressed(finding, run)]

    def _render(self, fix: Fix) -> None:
        edits = []
        try:
            for change in fix.changes:
                edits.extend(change.config.adapter.render(change.config, change))
        except RenderError as error:
            fix.message = f"{fix.message} (not applied automatically: {error})"
            edits = []
        fix.edits = edits

    def _suppressed(self, finding: Finding, run: Run) -> bool:
        path = finding.span.path
        settings = self.settings_for(path)
        if any(finding.code.startswith(code) for code in settings.ignored_codes(path)):
            return True
        config = next((config for config in run.configs if config.path == path), None)
        if config is None or config.document.format == "json":
            return False
        source = config.document.source
        line_start = source.line_starts[finding.span.line - 1]
        line = source.text[line_start : source.line_end(line_start)]
        match = _NOQA.search(line)
        if not match:
            return False
        codes = match.group("codes")
        return codes is None or finding.code in {code.strip().upper() for code in codes.split(",")}

    # ---- fixing ------------------------------------------------------------------------------

    def _reparse(self, config: ConfigIR, text: str) -> ConfigIR:
        source = config.document.source.with_text(text)
        parse = parse_yaml if config.document.format == "yaml" else parse_json
        return config.adapter.parse(parse(source))

    @staticmethod
    def _reads_as_intended(config: ConfigIR, key: str, value) -> bool:
        if key == "precision.mode":
            return config.mode() == value
        return config.value(key) == value

    def _verify(self, run: Run, texts: dict[Path, str], fix: Fix) -> Run | str:
        """The run re-parsed from `texts`, or why the fix does not re-parse to its intent."""
        configs = []
        for config in run.configs:
            text = texts[config.path]
            if text == config.document.source.text:
                configs.append(config)
                continue
            try:
                configs.append(self._reparse(config, text))
            except ParseError as error:
                return f"the result would not parse ({error.message})"
        by_path = {config.path: config for config in configs}
        for change in fix.changes:
            if not self._reads_as_intended(by_path[change.config.path], change.key, change.value):
                return f"the result would not read {change.key} = {change.value!r}"
        return Run(configs[0], configs[1:])

    def fix_run(self, run: Run, settings: Settings, hardware: Hardware, outcome: Outcome) -> Run:
        unsafe = self.unsafe(settings)
        for _ in range(MAX_PASSES):
            findings = self.lint(run, settings, hardware)
            candidates = [f.fix for f in findings if f.fix is not None and f.fix.applies(unsafe)]
            if not candidates:
                break
            texts = {config.path: config.document.source.text for config in run.configs}
            accepted_edits = []
            new_run = None
            for fix in select_non_overlapping(candidates):
                trial = {path: apply_edits(text, [e for e in accepted_edits + fix.edits if e.path == path])
                         for path, text in texts.items()}
                verified = self._verify(run, trial, fix)
                if isinstance(verified, str):
                    outcome.notes.append(f"{run.primary.path}: fix dropped: {fix.message}: {verified}")
                    continue
                accepted_edits.extend(fix.edits)
                new_run = verified
                outcome.fixed += 1
            if new_run is None:
                break
            # Verified against all edits accepted so far, new_run is this pass's final text.
            run = new_run
        return run

    # ---- the whole check ---------------------------------------------------------------------

    def check(self, paths: list[Path]) -> Outcome:
        outcome = Outcome()
        for path, explicit in self.discover(paths):
            loaded = self.load(path, explicit)
            settings = self.settings_for(path)
            if loaded.syntax is not None:
                if registry.get("SYN001") in self.rules_for(settings):
                    outcome.findings.append(loaded.syntax)
                if loaded.source is not None:
                    outcome.sources[path] = loaded.source
                continue
            if loaded.config is None:
                if explicit and self.options.verbose:
                    outcome.notes.append(f"{path}: skipped: no adapter recognises this file")
                continue
            hardware = self.hardware_for(settings)
            if not hardware.targets and outcome.no_target_note is None and any(
                    rule.needs_targets for rule in self.rules_for(settings)):
                outcome.no_target_note = _no_target_note(hardware)
            run = Run(loaded.config)
            if self.options.fix or self.options.diff:
                fixed = self.fix_run(run, settings, hardware, outcome)
                if self._write(run, fixed, outcome):
                    run = fixed
            outcome.findings.extend(self.lint(run, settings, hardware))
            for config in run.configs:
                outcome.sources[config.path] = config.document.source
        outcome.findings.sort(key=lambda finding: finding.sort_key)
        return outcome

    def _write(self, original: Run, fixed: Run, outcome: Outcome) -> bool:
        """Write (or, with --diff, show) what the fixes changed; False if a file could not be written."""
        import difflib

        before = {config.path: config.document.source for config in original.configs}
        for config in fixed.configs:
            old = before[config.path]
            new_text = config.document.source.text
            if new_text == old.text:
                continue
            if self.options.diff:
                outcome.diffs.append("".join(difflib.unified_diff(
                    old.text.splitlines(keepends=True), new_text.splitlines(keepends=True),
                    fromfile=f"a/{config.path}", tofile=f"b/{config.path}")))
                continue
            try:
                write_atomic(config.path, old.encode(new_text), old.encode())
            except WriteError as error:
                outcome.notes.append(f"{config.path}: error: {error}")
                return False
        return True


def _no_target_note(hardware: Hardware) -> str:
    why = "; ".join(hardware.reasons) or "no GPU detected"
    return (f"trainlint: no GPU target ({why}); hardware-dependent rules were skipped. "
            "Name one with --gpu (e.g. --gpu A100) or TRAINLINT_GPU.")
