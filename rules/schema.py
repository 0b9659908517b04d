"""Keys and values checked against each format's JSON Schema (schemas/<format>.schema.json)."""

from __future__ import annotations

from linter.changes import RenameKey
from linter.fixes import Applicability
from linter.lazy_pattern import LazyPattern
from linter.registry import ERROR, INFO, WARNING, Rule, register

from .facts import dropped_by_release, key_history, refusal_note, removed_known_keys
from .schema_releases import never_top_level, older_than_schema_noted
from .facts import schema_errors as _schema_errors
from .script_keywords import refused_keywords

# PyYAML's YAML 1.1 booleans: an unquoted `NO` or `on` reaches the framework as a bool.
_YAML11_BOOLEANS = {spelling for word in ("yes", "no", "on", "off", "true", "false")
                    for spelling in (word, word.capitalize(), word.upper())}
# A number PyYAML leaves a string: no dot in the mantissa, or an unsigned exponent (`2e-5`, `1.0e5`).
_UNREAD_FLOAT = LazyPattern(r"^[-+]?(?:\d+(?:\.\d*)?|\.\d+)[eE][-+]?\d+$")


def _each_error(run):
    """(config, schema, key tree, error) for every schema error of every file in the run."""
    for config in run.configs:
        schema, tree, errors = _schema_errors(config)
        for error in errors:
            yield config, schema, tree, error


_CLOSE: dict = {}  # (key, known keys) -> the hint's names: the same unknown keys recur across files


def _close_keys(key: str, known: tuple) -> list[str]:
    """The known keys close to `key` (difflib ratio >= 0.8, at most 3), worked out once a process."""
    close = _CLOSE.get((key, known))
    if close is None:
        import difflib  # only where a key is unknown

        close = _CLOSE[key, known] = difflib.get_close_matches(key, known, n=3, cutoff=0.8)
    return close


def _dotted(path: tuple) -> str:
    return ".".join(f"[{step}]" if isinstance(step, int) else str(step) for step in path).replace(".[", "[")


def _misread(schema, tree, error):
    """(kind, intended value, literal) when the error is a YAML 1.1 misreading of a plain scalar
    the framework does not repair, else None."""
    if error.kind not in ("type", "enum") or tree.format != "yaml":
        return None
    located = tree.locate(error.path)
    if located is None or not located.plain:
        return None
    text = located.text.strip()
    if (_UNREAD_FLOAT.match(text) and error.kind == "type" and not schema.coerces_numeric_strings
            and schema.expects_number_at(error.path)):
        return "number", float(text), tree.spell(error.path, float(text))
    strings_expected = "string" in error.expected_types or (
        error.kind == "enum" and error.allowed and all(isinstance(option, str) for option in error.allowed))
    if text in _YAML11_BOOLEANS and strings_expected:
        return "string", text, tree.spell(error.path, text)
    return None


def _boolean_int(schema, tree, error) -> bool:
    """A 0 or 1 where a boolean belongs that the loader reads as that boolean (x-trainlint
    boolean-ints), unless the framework compares the field by identity (its `identity` list)."""
    value = tree.value if error.kind == "type" and "boolean" in error.expected_types and schema.boolean_ints else None
    for step in error.path if value is not None else ():
        value = value[step]
    return type(value) is int and value in (0, 1) and \
        _dotted(error.path) not in schema.boolean_ints.get("identity", {}).get(str(value), ())


def _renamed_value(schema, tree, error) -> dict | None:
    """The documented rename of a top-level key's value that an older release accepts
    (x-trainlint renamed-values: {key: {old value: {to, package, removed, source}}})."""
    if len(error.path) != 1 or error.kind != "enum":
        return None
    value = tree.value.get(error.path[0]) if isinstance(tree.value, dict) else None
    return schema.renamed_values.get(error.path[0], {}).get(value) if isinstance(value, str) else None


def _still_read(context, config, code: str, package: str, removed: str, what: str) -> bool:
    """Does the version in use still read `what`, or is that version unknown? Then a finding
    would be a guess about which release reads the file: silent, noted for --verbose."""
    if context.version_before(package, removed, config, code) is not None:
        return True
    if config.version(package) is None:
        context.notes.append(f"{config.path}: {code}: {what} was removed in {package} {removed}; "
                             f"valid before (no {package} version pinned)")
        return True
    return False


def _accepts(schema, tree, path: tuple, value) -> bool:
    """Would the schema accept `value` at `path`? (A fix that trades one invalid value for
    another is no fix: accelerate's SageMaker config accepts no "NO" at all.)"""
    import copy

    document = copy.deepcopy(tree.value)
    parent = document
    for step in path[:-1]:
        parent = parent[step]
    parent[path[-1]] = value
    return not any(error.path == path for error in schema.validate(document))


@register
class UnknownKey(Rule):
    """SCH001 unknown-key

    ## What it does
    Reports a key the framework does not know at that place in its config, naming the closest
    known key. Known keys come from the format's schema (schemas/<format>.schema.json), written
    from the framework's own source; objects the framework passes on unread (kwargs blocks) are
    not checked.

    ## Why is this bad?
    Depending on the framework a misspelled key is rejected at launch (HfArgumentParser,
    accelerate, pydantic `extra="forbid"`) or silently ignored (DeepSpeed's top level, Ludwig's
    sections) — then the run trains with the default the author meant to change, and the loss
    curve is the first sign.

    ## Example
    `ds_config.json` (DeepSpeed ignores the misspelled key):
        {"zero_optimization": {"stage": 2, "overlap_com": true}}
    Use instead:
        {"zero_optimization": {"stage": 2, "overlap_comm": true}}

    ## Fix safety
    A rename is an edit only where the framework documents it (its deprecation: the schema's
    `renamed-keys`, with the release that renamed the key and the one that removed it) and the
    version in use accepts the new name; then it is safe. A key that is merely close to a known
    one (difflib ratio >= 0.8) is named as a hint ("did you mean"), never edited: the author may
    have meant another key, or a key of the project's own argument classes.

    A key of one block written one level too high (DeepSpeed's `offload_optimizer` or
    `stage3_max_live_parameters` beside `zero_optimization`, deepspeedai/DeepSpeed#1935) names
    that block. DeepSpeed reads its top level by name and has never read a ZeRO field there
    (deepspeed/runtime/config.py _initialize_params; deepspeed/pt/deepspeed_config.py before
    v0.3), so this one is an error for every release, also those older than the schema.

    Keys the repository's own argument dataclasses define (found with `ast` in the linted
    file's repository) are known. Where those classes read the file, the script that reads it
    decides, so other unknown keys are reported as info, with that reason. Where a parser call
    of the repository names classes imported from another installed package (`from alignment
    import DataArguments`), neither transformers' nor TRL's, their fields are not known here:
    unknown top-level keys of its argument files are not reported (noted for --verbose). Nor
    where the repository's own classes that read the file are parsed with
    `parse_dict(..., allow_extra_keys=True)` (transformers/hf_argparser.py: keys no field takes
    are ignored, not refused): the file is shared with other readers, e.g. a Hydra config whose
    `defaults` list and interpolated variables Hydra reads. A
    renamed key is reported only where the version in use no longer accepts it; with no version
    known it is not reported (an older release accepts it). Likewise a key a released version read and a
    later one removed (the schema's `removed-keys`, built from the framework's history: Axolotl's
    `eval_table_max_new_tokens`, read by v0.4.0 and gone in v0.5.0; accelerate's
    `fsdp_config.fsdp_backward_prefetch_policy`, read until v1.0.0; TRL's `use_liger` and
    GRPO's colocated-vLLM keys, fields until PR #3364, v0.18.0): reported, naming the release
    that removed it, only where the pinned version is that release or newer; with no version
    known, only noted for --verbose ("valid before"). Where the format has a per-release key
    history (linter/data/key_releases.json `paths`, SCH004's: for Axolotl, the fields of the
    pydantic class that validates each block at each release, `datasets` entries by the class
    validate_config picks for the `rl` in use, and for a block a release passes on whole, the keys
    its reader takes; for DeepSpeed's nested blocks, the fields of the model that validates the
    block at each release or the keys its sources name), a key some release keeps there is
    reported only where the pinned release drops it (naming the releases that keep it and the
    commit that dropped it, and, for DeepSpeed, whether that release refuses or ignores it); with
    no version known it is noted for --verbose. A key no release keeps there is reported as unknown. So are
    the TrainingArguments fields a pinned transformers removed, where no later release has them
    again (from the fields of every released wheel, bench/transformers_key_history.py):
    `overwrite_output_dir`, `no_cuda`, `per_gpu_train_batch_size` from 5.0.0, `logging_dir` and
    `warmup_ratio` from 5.15.0, `evaluation_strategy` from 4.51.0 (deprecated in 4.41.0 but a
    field, read as eval_strategy, through 4.50.3): HfArgumentParser refuses them at launch
    ("Some keys are not used by the HfArgumentParser"); TrlParser drops or refuses them by
    release. A key TRL's or LLaMA-Factory's own classes declare too (LLaMA-Factory's
    `overwrite_output_dir` from v0.9.4) only where their pinned release does not.

    A training script's `TrainingArguments(...)` / `Seq2SeqTrainingArguments(...)` / TRL config
    call (`SFTConfig(...)`) is checked keyword by keyword against the class's fields per release
    (linter/argument_keys.py): a keyword the class lacks in the pinned release, or, unpinned, in
    every release read, raises TypeError at construction (an error, naming the releases that keep
    it). Keys a `**kwargs` splat carries and classes the tables do not cover are not judged. No fix.

    ## References
    - schemas/*.schema.json (each names the upstream files and version it was written from)
    - deepspeed/runtime/config.py (top-level keys are read by name; others are ignored)
    - transformers/hf_argparser.py: HfArgumentParser.parse_dict(allow_extra_keys=False)
    - transformers training_args.py TrainingArguments, per released wheel (4.20.0 to 5.24.0):
      linter/data/key_releases.json `transformers`; TRL configs per tag: linter/data/trl_config_keys.json
    """

    code = "SCH001"
    name = "unknown-key"
    severity = WARNING
    fix_applicability = Applicability.UNSAFE

    def check(self, run, context):
        for config, schema, tree, error in _each_error(run):
            if error.kind != "unknown-key":
                continue
            key = error.path[-1]
            if len(error.path) == 1 and key in (config.value("arguments.project_keys") or ()):
                continue  # a field of the repository's own argument classes
            located = tree.locate(error.path)
            span = located.key_span if located else None
            siblings = tree.value
            for step in error.path[:-1]:
                siblings = siblings[step]
            renamed = schema.renamed_keys.get(key) if len(error.path) == 1 else None
            if renamed is not None:
                finding = self._renamed(config, span, key, renamed, siblings, context)
                if finding is not None:
                    yield finding
                continue
            where = _dotted(error.path)  # a nested key is listed by its path: fsdp_config.x
            removed = schema.removed_keys.get(where)
            if removed is not None:
                if not _still_read(context, config, self.code, removed["package"], removed["removed"], where):
                    yield self._removed(config, span, key, removed, siblings, where)
                continue
            history = key_history(config, error.path, tree.value)
            if history is not None and (history[2][0] or len(history[2]) > 1):
                dropped = dropped_by_release(config, context, self.code, where, *history, path=error.path)
                if dropped:
                    yield self.finding(config, span, dropped[0], severity=ERROR if dropped[1] else WARNING)
                continue  # a key a release keeps: judged by the release in use
            home = schema.block_of(key) if len(error.path) == 1 else None
            if home is not None and schema.drops_unknown_silently and never_top_level(schema, key):
                # A key of a block written one level too high is dropped by every release, so
                # the release the schema was written from does not matter.
                yield self.finding(config, span, f"{key} is a key of {home}, written at the top level: {schema.name} "
                                   f"reads it only inside {home} and ignores it here, in every release; "
                                   f"move it into {home}", severity=ERROR)
                continue
            if older_than_schema_noted(config, schema, context, self.code):
                continue
            imported = config.value("arguments.imported_classes") or config.value("arguments.extra_keys_allowed")
            if len(error.path) == 1 and imported:
                context.notes.append(f"{config.path}: {self.code}: {key} not reported: the repository's parser "
                                     f"calls read argument files into classes of {imported}")
                continue  # a field of those classes or not: their fields are not known here
            close = _close_keys(str(key), error.known_keys)
            hint = f"; did you mean {' or '.join(repr(name) for name in close)}?" if close else ""
            if home is not None:
                hint += f"; {key} is a key of {home}: write it inside that block"
            # DeepSpeed drops an unknown key without a word; the others warn or refuse.
            severity = ERROR if schema.drops_unknown_silently else WARNING
            if schema.unknown_keys == "dropped-with-warning":
                severity = INFO
                hint += f"; {schema.name} drops keys it does not know, with a warning"
            hint += refusal_note(config, error.path, tree.value)
            if config.value("arguments.project_parser") is True:
                severity = INFO
                hint += ("; this repository's own argument classes read this file, and the script that "
                         "reads it decides")
            yield self.finding(config, span, f"unknown key {_dotted(error.path)!s} for {schema.name}{hint}",
                               severity=severity)

        yield from refused_keywords(self, run, context)  # a training script's argument call
        for config in run.configs:
            for path, message, refused in removed_known_keys(config, context, self.code):
                located = config.key_tree.locate(path)
                yield self.finding(config, located.key_span if located else config.file_span, message,
                                   severity=ERROR if refused else WARNING)

    def _removed(self, config, span, key, removed, siblings, where):
        """A key a released version read, which the version in use no longer does."""
        package, (version, origin) = removed["package"], config.version(removed["package"])
        instead = f"; use {removed['instead']}" if removed.get("instead") else ""
        refused = bool(removed.get("raises")) and bool(siblings.get(key))
        return self.finding(config, span, f"{where} was removed in {package} {removed['removed']}{instead}; "
                                          f"{package} {version} ({origin}) {'refuses' if refused else 'ignores'} it",
                            severity=ERROR if refused else WARNING)

    def _renamed(self, config, span, key, renamed, siblings, context):
        """A documented rename: reported where the version in use no longer accepts the key."""
        package, new = renamed["package"], renamed["to"]
        found = context.version_before(package, renamed["removed"], config, self.code)
        if found is not None or config.version(package) is None:
            return None  # the version in use still accepts it, or which version runs is unknown
        version, origin = config.version(package)
        fix = None
        if new not in siblings:
            fix = self.fix(f"Rename {key!r} to {new!r}", RenameKey(config, (key,), new),
                           applicability=Applicability.SAFE)
        return self.finding(config, span, f"{key} was renamed {new} in {package} {renamed['renamed']} and removed "
                                          f"in {renamed['removed']}; {package} {version} ({origin}) refuses it",
                            fix=fix)


@register
class InvalidValue(Rule):
    """SCH002 invalid-value

    ## What it does
    Reports a value of the wrong type, or not among the values the framework accepts
    (`bits: 3`, `bnb_4bit_compute_dtype: bfloat15`, `zero_optimization.stage: 4`), as the
    format's schema describes them (schemas/<format>.schema.json).

    ## Why is this bad?
    The framework rejects it at launch — after the queue wait — or, worse, accepts it and
    behaves differently from what was written (a string where a number was meant).

    ## Example
    `ds_config.json`:
        {"zero_optimization": {"stage": 4}}
    Use instead:
        {"zero_optimization": {"stage": 3}}

    ## Fix safety
    No fix: only the author knows the intended value.

    An integer 0 or 1 where a boolean belongs is not reported where the loader reads it as that
    boolean (the schema's `boolean-ints`), except for fields compared by identity (`is False`).

    A value a released version accepted and a later one removed (the schema's `removed-values`:
    Axolotl's dataset `type: sharegpt`, valid before v0.5.0; `flash_attn_rms_norm: true`, read
    through v0.16.x and refused by a validator from v0.17.0) is reported only where the pinned
    version is the removing release or newer, naming it; with no version known, it is only
    noted for --verbose.

    A key that the repository's own argument dataclasses declare (a parser call of the
    checkout names the class) takes the type that class gives it: `lora_r: null` read into a
    project's `ModelArguments` with `lora_r: int | None` is a declared value, whatever TRL's
    `ModelConfig.lora_r` says. Such values are not checked against the framework's schema
    (noted for --verbose).

    ## References
    - schemas/*.schema.json (each names the upstream files and version it was written from;
      `x-trainlint` removed-keys / removed-values give the commit and release of each removal)
    - axolotl PR #2021 (fd3b80716, "remove fastchat and sharegpt", v0.5.0), PR #1274
      (5a5d47458, eval_table_max_new_tokens -> eval_max_new_tokens, v0.5.0), PR #3664
      (afd74aed7, flash_attn_rms_norm / s2_attention refused, v0.17.0)
    - transformers/hf_argparser.py: HfArgumentParser.parse_dict builds every parsed dataclass
      from the keys its fields take (`obj = dtype(**inputs)`), with no conversion or type check
    """

    code = "SCH002"
    name = "invalid-value"
    severity = ERROR

    def check(self, run, context):
        for config, schema, tree, error in _each_error(run):
            if error.kind == "unknown-key" or _misread(schema, tree, error) or _boolean_int(schema, tree, error):
                continue
            if error.path and error.path[0] in (config.value("arguments.project_keys") or ()):
                # parse_dict hands the value to the parsed classes declaring the field: the project's
                # class types it (`lora_r: int | None`), not a framework class the parser may not include.
                context.notes.append(f"{config.path}: {self.code}: {_dotted(error.path)} not checked against the "
                                     f"{schema.name} schema: a field of the repository's own argument classes")
                continue
            located = tree.locate(error.path)
            if located is not None and "${" in located.text:
                continue  # a placeholder a launcher fills in before the framework reads the file
            span = located.value_span if located else None
            where = _dotted(error.path) or "the file"
            if older_than_schema_noted(config, schema, context, self.code):
                continue
            gone = schema.removed_value(tree.value, error)
            if gone is not None:
                value, entry = gone
                package = entry["package"]
                if not _still_read(context, config, self.code, package, entry["removed"], f"{where}: {value!r}"):
                    version, origin = config.version(package)
                    instead = f"; use {entry['instead']}" if entry.get("instead") else ""
                    yield self.finding(config, span, f"{where}: {value!r} was removed in {package} {entry['removed']}"
                                                     f"{instead}; {package} {version} ({origin}) refuses it")
                continue
            renamed = _renamed_value(schema, tree, error)
            if renamed is not None:
                found = context.version_before(renamed["package"], renamed["removed"], config, self.code)
                if found is not None or config.version(renamed["package"]) is None:
                    continue  # the version in use still accepts the old value, or is unknown
            yield self.finding(config, span, f"{where}: {error.message} ({schema.name} schema)")
        yield from self._type_errors(run)

    def _type_errors(self, run):
        """Values the adapter could not take as the fact they configure (a list where a name
        belongs, `auto` where a number does), where the schema did not already say so."""
        from linter.catalogue import KEYS

        for config in run.configs:
            if not config.type_errors or _schema_errors(config)[0] is not None:
                continue  # a schema judges the file's values itself (and knows what the loader coerces)
            for key, value, origin in config.type_errors:
                where = origin.written_as or key
                expected = KEYS[key].type.replace("|", " or ").replace("numbers", "a list of numbers") \
                    .replace("list", "a list of names").replace("num", "number")
                yield self.finding(config, origin.span, f"{where}: {value!r} is not {expected} "
                                                        f"({KEYS[key].meaning})")
