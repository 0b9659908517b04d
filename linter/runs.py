"""Runs: a config and the files it links (its DeepSpeed JSON), as the framework would resolve them."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

from .ir import ConfigIR, Field, Link, Origin, Run, Span
from .loading import Loader
from .registry import Finding
from .settings import Settings
from .source import real_path


# The kind of a declared link whose file says what it is (claimed by content, like a named file).
_DECLARED = "declared"


# The frameworks whose configs a launch command passes as an argument and whose launch facts
# (entry, process count, command-line accelerate/DeepSpeed configs) rules read; the others (a
# script that is its own entry, a DeepSpeed JSON, a Ludwig config) skip the checkout scan.
_LAUNCHED = ("hf", "llamafactory", "axolotl", "xtuner")


class BadSettings(Exception):
    """A settings file that cannot be acted on: a usage error."""


class RunBuilder:
    def __init__(self, loader: Loader, settings_for: Callable[[Path], Settings]):
        self.loader = loader
        self.settings_for = settings_for
        self._declared: dict[int, dict[Path, list[list[str]]]] = {}  # by id of a Settings (they live as long)
        # A linked file that was also named or walked keeps that spelling in reports.
        self.spellings: dict[Path, Path] = {}

    def build(self, configs: list[ConfigIR], findings: list[Finding]) -> list[Run]:
        """One run per config, with the files it links; a config that another run links (and that
        links nothing itself) is linted only as part of that run. SYN001 of linked files is
        added to `findings`."""
        runs = [self._run_of(config, findings) for config in configs]
        linked = {id(linked) for run in runs for linked in run.linked}
        runs = [run for run in runs if id(run.primary) not in linked or run.linked or run.missing]
        return [joined for run in runs for joined in self._with_linkers(run, linked, findings)]

    def _with_linkers(self, run: Run, linked: set[int], findings: list[Finding]) -> list[Run]:
        """A linked-kind file (a DeepSpeed config) linted without the config that links it (a
        commit that stages only ds.json) is checked within the runs of the configs in its
        repository that link it: cross-file checks need the whole run. An accelerate config
        likewise joins the runs of the configs its repository's launch commands start with it."""
        config = run.primary
        kind = config.value("file.kind")
        if run.linked or id(config) in linked or kind not in ("deepspeed", "accelerate") or not config.editable:
            return [run]
        from .repository import mentioning, root_of

        root = root_of(config.path)
        if root is None:
            return [run]
        target = real_path(config.path)
        if kind == "accelerate":
            from .launches import launched_with

            candidates = launched_with(config.path, root)
        else:
            candidates = mentioning(root, config.path.name)
        joined = []
        for path in candidates:
            if real_path(path) == target:
                continue
            primary = self.loader.load(path, explicit=False).config
            if primary is None or kind == "deepspeed" and not any(
                    real_path(candidate) == target for link in primary.links
                    for candidate in link.candidates if candidate.is_file()):
                continue
            whole = self._run_of(primary, findings)
            if any(real_path(other.path) == target for other in whole.linked):
                joined.append(whole)
        return joined or [run]

    def _run_of(self, config: ConfigIR, findings: list[Finding]) -> Run:
        """`config` with the files it links and the ones settings declare for it."""
        run = Run(config)
        declared = self._declared_links(config)
        links = [*config.links, *declared]
        # A run declared in settings replaces what the launch commands say about it; one that
        # links no file declares a run with no DeepSpeed config.
        is_declared = real_path(config.path) in self._declared_runs(self.settings_for(config.path))
        launched, passes = self._launch_links(config, links) if not declared else ([], None)
        if passes is not None and config.editable:
            config.set("launch.passes_deepspeed", Field(passes, Origin(config.file_span)))
        links = [*links, *launched]
        self._launch_decides(config, links, known=is_declared or passes is not None)
        for link in links:
            self._attach(run, link, findings)
        return run

    def _launch_decides(self, config: ConfigIR, links: list[Link], known: bool) -> None:
        """The file's values that a DeepSpeed config given on the command line replaces
        (`launch.deepspeed_replaces`) hold only where the run is known to get none: with a
        DeepSpeed link they are the DeepSpeed config's to say; with no launch command (or
        declared run) naming the file they are unknown, and so is the run's sharding."""
        replaced = config.value("launch.deepspeed_replaces")
        if not replaced or not config.editable:
            return
        if any(link.kind == "deepspeed" for link in links):
            why = "a DeepSpeed config on the command line replaces them"
        elif known:
            return  # launched without a DeepSpeed config: the file's own values hold
        else:
            why = "no launch command of the checkout names this file, or they disagree on --deepspeed"
            config.set("launch.undecided", Field("its precision and sharding (" + why + ")", Origin(config.file_span)))
        dropped = [key for key in replaced if config.fields.pop(key, None) is not None]
        note = f"{config.path}: {', '.join(dropped) or 'precision'} left unknown: {why}"
        if note not in self.loader.notes:
            self.loader.notes.append(note)

    def _launch_links(self, config: ConfigIR, links: list[Link]) -> tuple[list[Link], bool | None]:
        """What the checkout's launch commands that name `config` agree on (linter/launches.py),
        recorded on it: the entry that reads it, the process count the command fixes, and the
        accelerate config and DeepSpeed JSON (or a name the framework ships) on the command
        line, linked like declared files; with whether the commands pass a DeepSpeed config
        (None: no command names the file, or they disagree)."""
        if not config.editable or config.framework not in _LAUNCHED:
            return [], None
        from .launches import (REPLACES_MODEL_INIT_KWARGS, UNKNOWN, facts_of, readers_of, trl_example,
                               vllm_server_launched)
        from .repository import root_of

        root = root_of(config.path)
        readers = readers_of(config.path, root) if config.framework == "llamafactory" else []
        if readers:
            first = readers[0]
            span = Span(first.path, 0, 0, first.line, 1, first.line, 1)
            config.set("launch.readers", Field([command.entry for command in readers],
                                               Origin(span, f"{os.path.relpath(first.path, root)}:{first.line}")))
        release = config.version("llamafactory") if readers else None
        facts = facts_of(config.path, root, release and release[0]) if root is not None else None
        if facts is None:
            self._unread_by_entry(config, None, "")
            return [], None
        for note in facts.notes:
            if f"{config.path}: {note}" not in self.loader.notes:
                self.loader.notes.append(f"{config.path}: {note}")
        first = facts.commands[0]
        where = f"{os.path.relpath(first.path, root)}:{first.line}"
        origin = Origin(Span(first.path, 0, 0, first.line, 1, first.line, 1), where)
        self._launch_overrides(config, facts.commands, root, where, origin)
        if isinstance(facts.entry, str) and facts.entry:
            config.set("launch.entry", Field(facts.entry, origin))
            if facts.entry in REPLACES_MODEL_INIT_KWARGS:
                config.set("launch.replaces_model_init_kwargs", Field(True, origin))
            self._unread_by_entry(config, root / facts.entry, where)
            trainer = facts.entry[4:] if facts.entry.startswith("trl ") else trl_example(facts.entry)
            keyed = config.value("training.trainer_candidates")
            if trainer and config.value("file.kind") in ("trl", "trainer") and (
                    config.get("training.trainer") is None or keyed and trainer in keyed):
                config.set("training.trainer", Field(trainer, origin))  # the command names the one that runs
                config.set("training.trainer_candidates", Field([trainer], origin))
        if isinstance(facts.processes, int) and config.get("batch.world_size") is None:
            config.set("batch.world_size", Field(facts.processes, origin))
        for key, value in (("launch.distributed_when", facts.distributed_when),
                           ("launch.visible_devices", facts.visible_devices)):
            if isinstance(value, str):
                config.set(key, Field(int(value) if value.isdigit() else value, origin))
        config.set("launch.vllm_server", Field(vllm_server_launched(root), origin))
        if facts.accelerate_config is UNKNOWN and config.get("launch.undecided") is None:
            # an accelerate config named but not in the checkout (or commands naming different
            # ones) decides the distributed type and sharding the run gets: unknown here
            config.set("launch.undecided", Field(f"its sharding (the accelerate config {where} passes is not known "
                                                 "here)", origin))
        linked = {real_path(candidate) for link in links for candidate in link.candidates}
        found = []
        for path, kind in ((facts.accelerate_config, _DECLARED), (facts.deepspeed, "deepspeed")):
            if not isinstance(path, Path) or path in linked or path == real_path(config.path):
                continue
            if kind == "deepspeed" and any(link.kind == "deepspeed" for link in links):
                continue  # the config links its own DeepSpeed JSON: which one wins is the script's
            found.append(Link(kind, os.path.relpath(path, real_path(config.path).parent), origin.span, (path,)))
            linked.add(path)
        written = facts.deepspeed_written
        if isinstance(written, str) and facts.deepspeed is UNKNOWN and not any(
                link.kind == "deepspeed" for link in links):
            loaded = self.loader.document_of(config)
            named = loaded[1].named_link(loaded[0], config, written) if loaded else None
            if named is not None:
                found.append(Link(named.kind, named.text, origin.span, builtin=named.builtin,
                                  builtin_source=named.builtin_source))
        return found, (None if written is UNKNOWN else written is not None)

    def _unread_by_entry(self, config: ConfigIR, script: Path | None, where: str) -> None:
        """The file's keys that the script every launch command runs never reads
        (adapters/script_fields.py) give no value to the run: their IR keys are left unknown. With
        no launch command naming the file (`script` None), so are those one of the repository's
        scripts that may read it never reads: which of them runs is not known."""
        from .adapters.script_fields import unread_keys

        loaded = self.loader.document_of(config)
        unread, why = unread_keys(config, loaded[0], script, where) if loaded is not None else ([], "")
        dropped = [key for name in unread for key in _left_unknown(config, loaded[0], loaded[1], (name,))]
        if dropped:
            self.loader.notes.append(f"{config.path}: {', '.join(sorted(set(dropped)))} left unknown: {why}")

    def _launch_overrides(self, config: ConfigIR, commands: list, root: Path, where: str, origin: Origin) -> None:
        """Values the launch commands give on their command line for keys of `config`
        (linter/launch_overrides.py): the file re-read with them says which IR keys they change.
        Where every command gives the same value the run reads, those keys hold it, at the
        file's key (`launch.overridden` lists them); a key the commands disagree on, or that the
        entry reads in a way not known here, leaves every IR key it changes unknown."""
        from .adapters import written
        from .launch_overrides import agreed
        from .launches import UNKNOWN
        from .versions import older_than

        loaded = self.loader.document_of(config)
        if loaded is None:
            return
        document, adapter = loaded
        find = getattr(document, "find", None)  # a Python config has no key paths to write

        def present(path: tuple) -> bool:
            return find is not None and find(*path) is not None

        trl = config.version("trl")
        overrides = agreed(commands, real_path(config.path), root, trl and older_than(trl[0], "0.9.6"),
                           find is not None and written(document, "strict") is True, present)
        if not overrides:
            return
        known = {path: value for path, value in overrides.items() if value is not UNKNOWN}
        unknown = [path for path, value in overrides.items() if value is UNKNOWN]
        launched = _reread(document, adapter, known) if known else None
        if launched is not None and launched.value("file.kind") != config.value("file.kind"):
            launched = None  # the keys make it read as another kind of file: not a value of this one
        if known and launched is None:
            unknown += list(known)
        overridden = []
        if launched is not None:
            anchor = next((find(*path) for path in known if present(path)), None)
            span = config.file_span
            if anchor is not None:
                from .adapters import span_of

                span = span_of(document, anchor.start, anchor.end)
            for key in _changed(config, launched):
                before, after = config.fields.get(key), launched.fields.get(key)
                config.fields.pop(key, None)
                if after is not None:
                    written_as = (before.origin.written_as if before else None) or after.origin.written_as
                    config.set(key, Field(after.value, Origin(before.span if before else span, None, written_as)))
                    overridden.append(key)
        dropped = [key for path in unknown for key in _left_unknown(config, document, adapter, path)]
        overridden = [key for key in overridden if key not in dropped]
        if overridden:
            config.set("launch.overridden", Field(sorted(overridden), origin))
            config.set("launch.override_source", Field(where, origin))
            self.loader.notes.append(f"{config.path}: {', '.join(sorted(overridden))} from the launch command {where}")
        if dropped:
            self.loader.notes.append(f"{config.path}: {', '.join(sorted(set(dropped)))} left unknown: the launch "
                                     f"commands ({where}) give them on the command line in a way not known here")

    def _declared_runs(self, settings: Settings) -> dict[Path, list[list[str]]]:
        """The settings' `[[runs]]` by their primary file, read once per settings file (a
        settings file with a million runs is read once, not once per linted file)."""
        found = self._declared.get(id(settings))
        if found is None:
            found = self._declared[id(settings)] = {}
            for declared in settings.runs:
                files = declared.get("files") if isinstance(declared, dict) else None
                if not isinstance(files, list) or not files or not all(isinstance(f, str) for f in files):
                    raise BadSettings(f"{settings.path}: each [[runs]] needs `files`, a list of paths")
                found.setdefault(real_path(settings.root / files[0]), []).append(files)
        return found

    def _declared_links(self, config: ConfigIR) -> list[Link]:
        """Links that settings declare (`[[runs]] files = [primary, linked, ...]`)."""
        settings = self.settings_for(config.path)
        links = []
        for files in self._declared_runs(settings).get(real_path(config.path), ()):
            for entry in files[1:]:
                path = settings.root / entry
                named = None
                if not path.exists():
                    loaded = self.loader.document_of(config)
                    named = loaded[1].named_link(loaded[0], config, entry) if loaded else None
                # A declared YAML (an accelerate launcher config) is read by whichever adapter
                # claims it; a JSON is a DeepSpeed config.
                kind = _DECLARED if path.suffix.lower() in (".yaml", ".yml") and path.exists() else "deepspeed"
                links.append(named or Link(kind, entry, config.file_span, (path,)))
        return links

    def _attach(self, run: Run, link: Link, findings: list[Finding]) -> None:
        if link.builtin is not None:
            run.linked.append(_builtin_config(link))
            return
        for candidate in link.candidates:
            if candidate.is_file():
                candidate = self.spellings.get(real_path(candidate), candidate)
                loaded = self.loader.load(candidate, explicit=True,
                                          adapter_name=None if link.kind == _DECLARED else link.kind)
                if loaded.syntax is not None and loaded.syntax not in findings:
                    findings.append(loaded.syntax)
                if loaded.config is not None:
                    run.linked.append(loaded.config)
                return
        run.missing.append(link)


def _builtin_config(link: Link) -> ConfigIR:
    """A framework's shipped config, known by name: values only, nothing to edit."""
    origin = Origin(link.span, link.builtin_source)
    spans = link.builtin_spans or {}
    fields = {key: Field(value, Origin(spans[key]) if key in spans else origin)
              for key, value in (link.builtin or {}).items()}
    fields["file.kind"] = Field(link.kind, origin)
    return ConfigIR(path=Path(link.text), framework=link.kind, fields=fields, file_span=link.span, editable=False)


def _reread(document, adapter, values: dict) -> ConfigIR | None:
    """The config `document` would be with `values` at their key paths; None where the file
    cannot be written that way (a key under a list; in a Python config, a key it does not write)."""
    from .adapters import set_path
    from .document import ParseError, RenderError
    from .fixes import apply_edits
    from .loading import PARSERS

    from .launch_overrides import python_node

    text, current = document.source.text, document
    try:
        for path, value in values.items():
            if document.format == "python":
                node = python_node(current, path)
                if node is None:
                    return None
                edit = current.replace(node, value)
            else:
                edit = set_path(current, path, value)
            text = apply_edits(text, [edit])
            current = PARSERS[document.format](document.source.with_text(text))
        return adapter.parse(current)
    except (ParseError, RenderError, ValueError, TypeError, KeyError, AttributeError):
        return None


def _left_unknown(config: ConfigIR, document, adapter, path: tuple) -> list[str]:
    """Remove from `config` every IR key the file's value at `path` gives (those that change when
    the file is re-read with another value there, else those bound to it); the keys removed."""
    variant = _reread(document, adapter, {path: "launch override"})
    if variant is not None and variant.value("file.kind") != config.value("file.kind"):
        variant = None
    keys = _changed(config, variant) if variant is not None else [
        binding.key for binding in adapter.bindings_for(config) if path in binding.paths]
    return [key for key in keys if config.fields.pop(key, None) is not None]


def _changed(config: ConfigIR, other: ConfigIR) -> list[str]:
    """The IR keys whose values differ between two readings of one file: not the launch facts,
    nor the facts about the file's text (its kind, the keys the project's classes define)."""
    keys = dict.fromkeys([*config.fields, *other.fields])
    return [key for key in keys if not key.startswith(("launch.", "arguments.")) and key != "file.kind"
            and not _same(config.value(key), other.value(key))]


def _same(one, other) -> bool:
    return type(one) is type(other) and one == other


def named_by_others(discovered: list[tuple[Path, bool]]) -> set[Path]:
    """The discovered files whose name appears in another discovered file's text (read bounded,
    not parsed): the files some run may link, which wait for it."""
    import re

    from .source import MAX_FILE_BYTES, SourceError, read_bounded

    names: dict[str, list[Path]] = {}
    for path, _ in discovered:
        names.setdefault(path.name, []).append(real_path(path))
    if len(discovered) < 2:
        return set()
    # A file name as a config writes it: the last path component of a word ending in a suffix.
    mention = re.compile(r"[^\s\"'/\\:=,\[\]{}()]+\.(?:json|ya?ml|py|conf)\b")
    named: set[Path] = set()
    for path, _ in discovered:
        try:
            text = read_bounded(path, MAX_FILE_BYTES).decode("utf-8", "replace")
        except SourceError:
            continue
        own = real_path(path)
        for name in set(mention.findall(text)) & names.keys():
            named.update(other for other in names[name] if other != own)
    return named

