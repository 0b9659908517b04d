"""The pipeline: files -> adapter -> IR -> rules -> fixes -> adapter -> edits -> files.

`Session` discovers files, loads each into a ConfigIR (or a SYN001 finding), groups configs
into runs, runs the selected rules, and — with --fix or --diff — applies fixes pass by pass
until nothing changes (at most MAX_PASSES), verifying that every fix re-parses to the value it
asked for.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from . import registry
from .adapters import RENAME_KEY, WRITE_LITERAL, Adapter, adapters_for, render_key_change
from .document import Document, ParseError, RenderError
from .fixes import Fix, WriteError, apply_edits, select_non_overlapping, write_atomic
from .hardware import Hardware, parse_targets, resolve
from .ir import ConfigIR, Field, Link, Origin, Run, Span
from .json_reader import parse_json
from .registry import Context, Finding
from .settings import Settings, for_directory, load_file
from .source import Source, SourceError, real_path
from .yaml_reader import parse_yaml

MAX_PASSES = 10
CONFIG_SUFFIXES = {".yaml": "yaml", ".yml": "yaml", ".json": "json", ".py": "python"}


def _parse_python(source: Source):
    from .python_reader import parse_python  # `ast` only when a Python config is seen

    return parse_python(source)


PARSERS = {"yaml": parse_yaml, "json": parse_json, "python": _parse_python}
SKIPPED_DIRS = {"node_modules", "__pycache__", "site-packages"}
_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Za-z]+[0-9]+(?:\s*,\s*[A-Za-z]+[0-9]+)*))?", re.I)


class UsageError(Exception):
    """Bad command-line input or settings: exit 2 with a one-line message."""


class Options:
    __slots__ = ("fix", "unsafe_fixes", "diff", "select", "ignore", "extend_select", "gpu", "detect",
                 "world_size", "config_file", "verbose")

    def __init__(self, fix: bool = False, unsafe_fixes: bool | None = None, diff: bool = False,
                 select: list[str] | None = None, ignore: list[str] | None = None,
                 extend_select: list[str] | None = None, gpu: str | None = None, detect: bool = True,
                 world_size: int | None = None, config_file: Path | None = None, verbose: bool = False):
        self.fix = fix
        self.unsafe_fixes = unsafe_fixes  # None: the settings decide
        self.diff = diff
        self.select = select
        self.ignore = ignore if ignore is not None else []
        self.extend_select = extend_select if extend_select is not None else []
        self.gpu = gpu
        self.detect = detect
        self.world_size = world_size
        self.config_file = config_file
        self.verbose = verbose


class FileResult:
    __slots__ = ("path", "source", "config", "syntax")

    def __init__(self, path: Path, source: Source | None = None, config: ConfigIR | None = None,
                 syntax: Finding | None = None):
        self.path = path
        self.source = source
        self.config = config
        self.syntax = syntax


class Outcome:
    __slots__ = ("findings", "sources", "fixed", "applied", "diffs", "notes", "no_target_note")

    def __init__(self, findings: list[Finding] | None = None, sources: dict[Path, Source] | None = None,
                 fixed: int = 0, applied: list[tuple[Path, str, str]] | None = None,
                 diffs: list[str] | None = None, notes: list[str] | None = None,
                 no_target_note: str | None = None):
        self.findings = findings if findings is not None else []
        self.sources = sources if sources is not None else {}
        self.fixed = fixed
        self.applied = applied if applied is not None else []  # (file, code, name) per applied fix
        self.diffs = diffs if diffs is not None else []
        self.notes = notes if notes is not None else []  # one-line diagnostics for stderr
        self.no_target_note = no_target_note


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
        self._adapters: dict[str, list[Adapter]] = {}
        self._explicit_settings = load_file(options.config_file) if options.config_file else None
        self._hardware: dict[tuple, Hardware] = {}
        self._loaded: dict[Path, FileResult] = {}
        self._rules: dict[int, list[registry.Rule]] = {}
        self._verbose_notes: dict[str, None] = {}  # ordered and without repeats across fix passes  # by id of a Settings: they live as long as the session
        self._writable: set[Path] = set()  # the linted paths: referenced files elsewhere are never written
        for named in (options.gpu, os.environ.get("TRAINLINT_GPU")):
            if named:
                parse_targets(named)  # a typo in a target is a usage error even with nothing to lint

    # ---- settings and hardware ---------------------------------------------------------------

    def settings_for(self, path: Path) -> Settings:
        if self._explicit_settings is not None:
            return self._explicit_settings
        return for_directory(real_path(path).parent)

    def hardware_for(self, settings: Settings) -> Hardware:
        key = tuple(settings.target_gpus or ())
        if key not in self._hardware:
            self._hardware[key] = resolve(
                self.options.gpu, os.environ.get("TRAINLINT_GPU"), settings.target_gpus, self.options.detect)
        return self._hardware[key]

    def rules_for(self, settings: Settings) -> list[registry.Rule]:
        """The rules in force under `settings` (asked per file and per pass: computed once)."""
        chosen = self._rules.get(id(settings))
        if chosen is None:
            options = self.options
            select = options.select if options.select is not None else settings.select
            chosen = self._rules[id(settings)] = registry.selected(
                select, [*settings.extend_select, *options.extend_select], [*settings.ignore, *options.ignore])
        return chosen

    def unsafe(self, settings: Settings) -> bool:
        return self.options.unsafe_fixes if self.options.unsafe_fixes is not None else settings.unsafe_fixes

    # ---- discovery and loading ---------------------------------------------------------------

    def discover(self, paths: list[Path]) -> list[tuple[Path, bool]]:
        """(path, named explicitly) for every candidate file, in a stable order."""
        # [reliability, issue 19] Walking lives in linter/walk.py: only regular files, bounded,
        # symlinks kept inside the tree, one note per entry it cannot use (shown under --verbose).
        from .walk import MissingPath, walk

        notes: list[str] = []
        try:
            found = list(walk(paths, lambda path: self.settings_for(path).excludes(path), notes))
        except MissingPath as error:
            raise UsageError(str(error)) from None
        if self.options.verbose:
            self._verbose_notes.update(dict.fromkeys(notes))
        return found

    def load(self, path: Path, explicit: bool, adapter_name: str | None = None) -> FileResult:
        """Read, parse and claim a file, once per process (linked files are shared by runs)."""
        key = real_path(path)
        cached = self._loaded.get(key)
        if cached is not None:
            return cached
        result = FileResult(path)
        self._loaded[key] = result
        kind = CONFIG_SUFFIXES.get(path.suffix.lower())
        if kind is None:
            return result
        try:
            source = Source.read(path)
        except SourceError as error:
            if kind == "python" and not explicit:
                return result  # a walked .py file that is not UTF-8 is not a config we could read
            result.syntax = _syntax_finding(path, error.message, None, error.line, error.column)
            return result
        except OSError as error:
            raise UsageError(f"{path}: cannot read: {error.strerror or error}") from None
        result.source = source
        if kind == "python" and not any(adapter.sniffs(source.text) for adapter in self.adapters(kind)):
            return result  # most Python files are not configs: not worth parsing
        try:
            document = PARSERS[kind](source)
        except ParseError as error:
            if (explicit and kind != "python") or any(adapter.sniffs(source.text) for adapter in self.adapters(kind)):
                position = source.position(min(error.offset, len(source.text)))
                result.syntax = _syntax_finding(path, error.message, source, position.line, position.column,
                                                error.offset)
            return result
        result.config = self.claim(document, adapter_name)
        return result

    def adapters(self, file_format: str) -> list[Adapter]:
        if file_format not in self._adapters:
            self._adapters[file_format] = adapters_for(file_format)
        return self._adapters[file_format]

    def claim(self, document: Document, adapter_name: str | None = None) -> ConfigIR | None:
        for adapter in self.adapters(document.format):
            if adapter.name == adapter_name or (adapter_name is None and adapter.claims(document)):
                return adapter.parse(document)
        return None

    # ---- runs --------------------------------------------------------------------------------

    def build_runs(self, configs: list[ConfigIR], outcome: Outcome) -> list[Run]:
        """One run per config, with the files it links; a config that another run links (and that
        links nothing itself) is linted only as part of that run."""
        runs = []
        for config in configs:
            run = Run(config)
            for link in [*config.links, *self._declared_links(config)]:
                self._attach(run, link, outcome)
            runs.append(run)
        linked = {id(linked) for run in runs for linked in run.linked}
        return [run for run in runs if id(run.primary) not in linked or run.linked or run.missing]

    def _declared_links(self, config: ConfigIR) -> list[Link]:
        """Links that settings declare (`[[runs]] files = [primary, linked, ...]`)."""
        settings = self.settings_for(config.path)
        links = []
        for declared in settings.runs:
            files = declared.get("files") if isinstance(declared, dict) else None
            if not isinstance(files, list) or not files or not all(isinstance(f, str) for f in files):
                raise UsageError(f"{settings.path}: each [[runs]] needs `files`, a list of paths")
            if real_path(settings.root / files[0]) != real_path(config.path):
                continue
            for entry in files[1:]:
                path = settings.root / entry
                named = None if path.exists() else config.adapter.named_link(config, entry)
                links.append(named or Link("deepspeed", entry, config.file_span, (path,)))
        return links

    def _attach(self, run: Run, link: Link, outcome: Outcome) -> None:
        if link.builtin is not None:
            run.linked.append(_builtin_config(link, self._adapter("deepspeed")))
            return
        for candidate in link.candidates:
            if candidate.is_file():
                loaded = self.load(candidate, explicit=True, adapter_name=link.kind)
                if loaded.syntax is not None and loaded.syntax not in outcome.findings:
                    outcome.findings.append(loaded.syntax)
                if loaded.config is not None:
                    run.linked.append(loaded.config)
                return
        run.missing.append(link)

    def _adapter(self, name: str) -> Adapter:
        return next(adapter for kind in ("json", "yaml") for adapter in self.adapters(kind) if adapter.name == name)

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
        if self.options.verbose:
            self._verbose_notes.update(dict.fromkeys(context.notes))
        return [finding for finding in findings if not self._suppressed(finding, run)]

    def _render(self, fix: Fix) -> None:
        edits = []
        try:
            for change in fix.changes:
                if change.config.document is None:
                    raise RenderError(f"{change.config.path} is a framework's built-in config, not a file")
                if change.key in (RENAME_KEY, WRITE_LITERAL):
                    edits.extend(render_key_change(change.config, change))
                else:
                    edits.extend(change.config.adapter.render(change.config, change))
        except RenderError as error:
            fix.message = f"{fix.message} (not applied automatically: {error})"
            edits = []
        fix.edits = list(dict.fromkeys(edits))  # two changes may render the same edit

    def _suppressed(self, finding: Finding, run: Run) -> bool:
        path = finding.span.path
        settings = self.settings_for(path)
        if any(finding.code.startswith(code) for code in settings.ignored_codes(path)):
            return True
        config = next((config for config in run.configs if config.path == path), None)
        if config is None or config.document is None or config.document.format == "json":
            return False
        source = config.document.source
        line_start = source.line_starts[finding.span.line - 1]
        match = _NOQA.search(source.text, line_start, source.line_end(line_start))
        if not match:
            return False
        codes = match.group("codes")
        return codes is None or finding.code in {code.strip().upper() for code in codes.split(",")}

    # ---- fixing ------------------------------------------------------------------------------

    def _reparse(self, config: ConfigIR, text: str) -> ConfigIR:
        document = config.document
        reparsed = config.adapter.parse(PARSERS[document.format](document.source.with_text(text)))
        reparsed.links = config.links  # what the file links was resolved once, before fixing
        return reparsed

    @staticmethod
    def _reads_as_intended(config: ConfigIR, key: str, value) -> bool:
        if key == "precision.mode":
            return config.mode() == value
        if key in (RENAME_KEY, WRITE_LITERAL):
            tree = config.key_tree()
            found = tree.value if tree else None
            path, target = (value[0][:-1] + (value[1],), value[0]) if key == RENAME_KEY else (value[0], None)
            for step in path:
                if not isinstance(found, (dict, list)) or (isinstance(found, dict) and step not in found):
                    return False
                if isinstance(found, list) and not (isinstance(step, int) and step < len(found)):
                    return False
                found = found[step]
            if key == WRITE_LITERAL:
                return type(found) is type(value[1]) and found == value[1]
            parent = tree.value
            for step in target[:-1]:
                parent = parent[step]
            return target[-1] not in parent
        return config.value(key) == value

    def _verify(self, run: Run, texts: dict[Path, str], fix: Fix) -> Run | str:
        """The run re-parsed from `texts`, or why the fix does not re-parse to its intent."""
        configs = []
        for config in run.configs:
            text = texts.get(config.path)
            if config.document is None or text == config.document.source.text:
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
        return Run(configs[0], configs[1:], run.missing)

    def _fixable(self, fix: Fix, unsafe: bool, outcome: Outcome) -> bool:
        if not fix.applies(unsafe):
            return False
        outside = sorted({str(e.path) for e in fix.edits if real_path(e.path) not in self._writable})
        if outside:
            note = f"{outside[0]}: not written: it is referenced from the linted files but not among them"
            if note not in outcome.notes:
                outcome.notes.append(note)
            return False
        return True

    def fix_run(self, run: Run, settings: Settings, hardware: Hardware, outcome: Outcome) -> tuple[Run, list]:
        """Apply fixes pass by pass; the fixed run and the (file, code, name) of each applied fix."""
        unsafe = self.unsafe(settings)
        applied = []
        dropped: set[tuple] = set()  # a fix that failed verification is not tried again next pass
        for _ in range(MAX_PASSES):
            findings = self.lint(run, settings, hardware)
            fixable = {id(f.fix): f for f in findings if f.fix is not None and self._fixable(f.fix, unsafe, outcome)
                       and (f.code, f.span.path, f.fix.message) not in dropped}
            candidates = [finding.fix for finding in fixable.values()]
            if not candidates:
                break
            texts = {config.path: config.document.source.text for config in run.configs if config.document}
            accepted_edits = []
            new_run = None
            for fix in select_non_overlapping(candidates):
                trial = {path: apply_edits(text, [e for e in accepted_edits + fix.edits if e.path == path])
                         for path, text in texts.items()}
                verified = self._verify(run, trial, fix)
                if isinstance(verified, str):
                    finding = fixable[id(fix)]
                    dropped.add((finding.code, finding.span.path, fix.message))
                    outcome.notes.append(f"{finding.span.path}: {finding.code} fix dropped: {fix.message}: {verified}")
                    continue
                accepted_edits.extend(fix.edits)
                new_run = verified
                finding = fixable[id(fix)]
                applied.append((finding.span.path, finding.code, finding.name))
            if new_run is None:
                break
            # Verified against all edits accepted so far, new_run is this pass's final text.
            run = new_run
        return run, applied

    # ---- the whole check ---------------------------------------------------------------------

    def check(self, paths: list[Path]) -> Outcome:
        import gc

        # Parsing builds many small objects and almost no reference cycles: collecting the
        # youngest generation every 700 allocations made a 7,000-file run 1.6x slower.
        thresholds = gc.get_threshold()
        gc.set_threshold(100_000, 50, 100)
        try:
            return self._check(paths)
        finally:
            gc.set_threshold(*thresholds)

    def _check(self, paths: list[Path]) -> Outcome:
        outcome = Outcome()
        configs = []
        for path, explicit in self.discover(paths):
            self._writable.add(real_path(path))
            loaded = self.load(path, explicit)
            if loaded.syntax is not None:
                if registry.get("SYN001") in self.rules_for(self.settings_for(path)):
                    outcome.findings.append(loaded.syntax)
            elif loaded.config is not None:
                configs.append(loaded.config)
            elif explicit and self.options.verbose:
                outcome.notes.append(f"{path}: skipped: no adapter recognises this file")
        runs = self.build_runs(configs, outcome)
        del configs
        shared = {real_path(config.path) for run in runs for config in run.linked}
        runs.reverse()
        seen: set[tuple] = set()
        while runs:
            run = self._current(runs.pop())
            settings = self.settings_for(run.primary.path)
            hardware = self.hardware_for(settings)
            if not hardware.targets and outcome.no_target_note is None and any(
                    rule.needs_targets for rule in self.rules_for(settings)):
                outcome.no_target_note = _no_target_note(hardware)
            if self.options.fix or self.options.diff:
                fixed, applied = self.fix_run(run, settings, hardware, outcome)
                if self._write(run, fixed, outcome):
                    run = fixed
                    outcome.fixed += len(applied)
                    outcome.applied.extend(applied)
            for finding in self.lint(run, settings, hardware):
                key = (finding.code, str(finding.span.path), finding.span.start, finding.message)
                if key not in seen:
                    seen.add(key)
                    outcome.findings.append(finding)
                    if finding.fix is not None:
                        finding.fix.changes = []  # rendered; the IR they point into can be freed
                    # Reporters need a file's text only to place the edits of its fixes.
                    for edit in finding.fix.edits if finding.fix else ():
                        source = next(c.document.source for c in run.configs if c.path == edit.path)
                        outcome.sources[edit.path] = source
            for config in run.configs:
                if config.document is not None and real_path(config.path) not in shared:
                    self._loaded[real_path(config.path)] = FileResult(config.path)  # done with it: free the tree
        outcome.findings.sort(key=lambda finding: finding.sort_key)
        outcome.notes.extend(self._verbose_notes)
        return outcome

    def _current(self, run: Run) -> Run:
        """The run with each config as last written: runs that share a linked file see each other's fixes."""
        def current(config: ConfigIR) -> ConfigIR:
            loaded = self._loaded.get(real_path(config.path)) if config.document is not None else None
            return loaded.config if loaded is not None and loaded.config is not None else config

        return Run(current(run.primary), [current(config) for config in run.linked], run.missing)

    def _write(self, original: Run, fixed: Run, outcome: Outcome) -> bool:
        """Write (or, with --diff, show) what the fixes changed; False if a file could not be written."""
        import difflib

        before = {config.path: config.document.source for config in original.configs if config.document}
        for config in fixed.configs:
            if config.document is None:
                continue
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
            self._loaded[real_path(config.path)] = FileResult(config.path, config.document.source, config)
        return True


def _builtin_config(link: Link, adapter: Adapter) -> ConfigIR:
    """A framework's shipped config, known by name: values only, nothing to edit."""
    origin = Origin(link.span, link.builtin_source)
    return ConfigIR(path=Path(link.text), framework=adapter.name, document=None, adapter=adapter,
                    fields={key: Field(value, origin) for key, value in (link.builtin or {}).items()},
                    file_span=link.span)


def _no_target_note(hardware: Hardware) -> str:
    why = "; ".join(hardware.reasons) or "no GPU detected"
    return (f"trainlint: no GPU target ({why}); hardware-dependent rules were skipped. "
            "Name one with --gpu (e.g. --gpu A100) or TRAINLINT_GPU.")
