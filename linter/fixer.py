"""Fixing one run: apply fixes pass by pass until nothing changes, keep only those whose result
re-parses to what each typed change intended, then write (or, with --diff, show) every file."""

from __future__ import annotations

from pathlib import Path

from .document import ParseError
from .fixes import Fix, WriteError, apply_edits, select_non_overlapping, write_atomic
from .hardware import Hardware
from .ir import Run
from .linting import Linter
from .loading import Loader
from .settings import Settings
from .source import real_path

MAX_PASSES = 10


class Fixer:
    def __init__(self, loader: Loader, linter: Linter, writable: set[Path], diff: bool):
        self.loader = loader
        self.linter = linter
        self.writable = writable  # the linted paths (resolved)
        self.diff = diff
        self._roots: set[Path] | None = None
        self.notes: list[str] = []
        self.diffs: list[str] = []

    def _text(self, config) -> str:
        return self.loader.document_of(config)[0].source.text

    def _verify(self, run: Run, texts: dict[Path, str], fix: Fix, edits: list) -> Run | str:
        """The run re-parsed from `texts`, or why the fix does not re-parse to its intent: each
        change must read as intended, and nothing outside the edited text may read differently
        (an edit inside an anchored node would also change every alias of it)."""
        configs = []
        for config in run.configs:
            text = texts.get(config.path)
            if not config.editable or text == self._text(config):
                configs.append(config)
                continue
            try:
                reparsed = self.loader.reparse(config, text)
            except ParseError as error:
                return f"the result would not parse ({error.message})"
            stray = _changed_elsewhere(config, reparsed, [edit for edit in edits if edit.path == config.path])
            if stray is not None:
                return f"the edit would also change {stray}"
            configs.append(reparsed)
        by_path = {config.path: config for config in configs}
        for change in fix.changes:
            if not change.reads_as_intended(by_path[change.config.path]):
                return f"the result would not read {change.describe()}"
        return Run(configs[0], configs[1:], run.missing)

    def may_write(self, path: Path) -> bool:
        """A linted file, or a regular file of the checkout a linted file lies in (a linked
        DeepSpeed JSON, the trainer config that links a staged one), reached without a symlink
        that leaves the checkout."""
        resolved = real_path(path)
        if resolved in self.writable:
            return True
        if self._roots is None:
            from .repository import root_of

            self._roots = {root for root in map(root_of, self.writable) if root is not None}
        return resolved.is_file() and any(resolved.is_relative_to(root) for root in self._roots)

    def _outside(self, fix: Fix) -> list[str]:
        return sorted({str(edit.path) for edit in fix.edits if not self.may_write(edit.path)})

    def fix_run(self, run: Run, settings: Settings, hardware: Hardware, unsafe: bool) -> tuple[Run, list]:
        """Apply fixes pass by pass; the fixed run and the (file, code, name) of each applied fix."""
        applied = []
        dropped: set[tuple] = set()  # a fix that failed verification is not tried again next pass
        for _ in range(MAX_PASSES):
            findings = self.linter.lint(run, settings, hardware, keep_changes=True)
            offered = [f for f in findings if f.fix is not None and f.fix.applies(unsafe)]
            outside = sorted({path for f in offered for path in self._outside(f.fix)})
            if outside:
                # The run's fixes are planned together: fixing one file of it and not the file
                # it links would leave the run worse (a trainer in bf16, its DeepSpeed JSON in fp16).
                note = (f"{outside[0]}: not written, and no fix of its run applied: it lies outside the "
                        f"linted files' checkout; pass it to trainlint check to fix the run")
                if note not in self.notes:
                    self.notes.append(note)
                break
            fixable = {id(f.fix): f for f in offered if (f.code, f.span.path, f.fix.message) not in dropped}
            if not fixable:
                break
            texts = {config.path: self._text(config) for config in run.configs if config.editable}
            accepted_edits = []
            new_run = None
            for fix in select_non_overlapping(finding.fix for finding in fixable.values()):
                finding = fixable[id(fix)]
                trial = {path: apply_edits(text, [e for e in accepted_edits + list(fix.edits) if e.path == path])
                         for path, text in texts.items()}
                verified = self._verify(run, trial, fix, accepted_edits + list(fix.edits))
                if isinstance(verified, str):
                    dropped.add((finding.code, finding.span.path, fix.message))
                    self.notes.append(f"{finding.span.path}: {finding.code} fix dropped: {fix.message}: {verified}")
                    continue
                accepted_edits.extend(fix.edits)
                new_run = verified
                applied.append((finding.span.path, finding.code, finding.name))
            if new_run is None:
                break
            # Verified against all edits accepted so far, new_run is this pass's final text.
            run = new_run
        return run, applied

    def write(self, original: Run, fixed: Run) -> bool:
        """Write (or, with --diff, show) what the fixes changed; False if a file could not be written."""
        import difflib

        before = {config.path: self.loader.document_of(config)[0].source for config in original.configs
                  if config.editable}
        changed = [(config, before[config.path]) for config in fixed.configs
                   if config.editable and self._text(config) != before[config.path].text]
        if self.diff:
            for config, old in changed:
                self.diffs.append("".join(difflib.unified_diff(
                    old.text.splitlines(keepends=True), self._text(config).splitlines(keepends=True),
                    fromfile=f"a/{config.path}", tofile=f"b/{config.path}")))
            return True
        # The files of one run are written together or not at all: a failure rolls back the
        # files already written (each back to the bytes it was read with).
        written: list[tuple] = []
        for config, old in changed:
            new_bytes = old.encode(self._text(config))
            try:
                write_atomic(config.path, new_bytes, old.encode())
            except WriteError as error:
                self.notes.append(f"{config.path}: error: {error}")
                for done, done_old, done_new in reversed(written):
                    try:
                        write_atomic(done.path, done_old.encode(), done_new)
                        self.notes.append(f"{done.path}: restored: the other files of its run could not be written")
                    except WriteError as undo_error:
                        self.notes.append(f"{done.path}: error: could not restore it: {undo_error}")
                return False
            written.append((config, old, new_bytes))
        for config, _ in changed:
            self.loader.written(config)
        return True


def _differences(old, new, path: tuple = ()):
    """(kind, key path) of every place two plain documents differ: added, removed or changed."""
    if isinstance(old, dict) and isinstance(new, dict):
        for key in (*old, *(key for key in new if key not in old)):
            if key not in new:
                yield "removed", path + (key,)
            elif key not in old:
                yield "added", path + (key,)
            else:
                yield from _differences(old[key], new[key], path + (key,))
    elif isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for index, (before, after) in enumerate(zip(old, new)):
            yield from _differences(before, after, path + (index,))
    elif type(old) is not type(new) or (old != new and not (old != old and new != new)):  # NaN equals NaN here
        yield "changed", path


def _changed_elsewhere(config, reparsed, edits: list) -> str | None:
    """The first key path whose value changed although no edit touches it, or None."""
    if config.key_tree is None or reparsed.key_tree is None:
        return None  # Python configs: each change's own check is the whole check
    old_regions = [(edit.start, edit.end) for edit in edits]
    new_regions, shift = [], 0
    for edit in sorted(edits, key=lambda edit: (edit.start, edit.end)):
        start = edit.start + shift
        new_regions.append((start, start + len(edit.content)))
        shift += len(edit.content) - (edit.end - edit.start)

    def touched(located, regions) -> bool:
        spans = [span for span in (located.key_span, located.value_span) if span is not None] if located else []
        return any(start <= span.end and span.start <= end for span in spans for start, end in regions)

    for kind, path in _differences(config.key_tree.value, reparsed.key_tree.value):
        if kind == "removed":
            ok = touched(config.key_tree.locate(path), old_regions)
        else:
            ok = touched(reparsed.key_tree.locate(path), new_regions)
        if not ok:
            return ".".join(map(str, path)) or "the document"
    return None

