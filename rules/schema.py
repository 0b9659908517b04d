"""Keys and values checked against each format's JSON Schema (schemas/<format>.schema.json)."""

from __future__ import annotations

import difflib
import re

from linter.changes import RenameKey, WriteLiteral
from linter.fixes import Applicability
from linter.registry import ERROR, WARNING, Rule, register

# PyYAML's YAML 1.1 booleans: an unquoted `NO` or `on` reaches the framework as a bool.
_YAML11_BOOLEANS = {spelling for word in ("yes", "no", "on", "off", "true", "false")
                    for spelling in (word, word.capitalize(), word.upper())}
# A number PyYAML leaves a string: no dot in the mantissa, or an unsigned exponent (`2e-5`, `1.0e5`).
_UNREAD_FLOAT = re.compile(r"^[-+]?(?:\d+(?:\.\d*)?|\.\d+)[eE][-+]?\d+$")


def _schema_errors(config):
    """The config's schema errors, computed once per config and shared by the three rules."""
    cached = config.cache.get("schema_errors")
    if cached is None:
        from linter import schema as schemas

        schema = schemas.load(config.schema) if config.schema else None
        tree = config.key_tree if schema is not None else None
        cached = (schema, tree, schema.validate(tree.value) if tree is not None else [])
        config.cache["schema_errors"] = cached
    return cached


def _each_error(run):
    """(config, schema, key tree, error) for every schema error of every file in the run."""
    for config in run.configs:
        schema, tree, errors = _schema_errors(config)
        for error in errors:
            yield config, schema, tree, error


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
    Unsafe: renames the key when exactly one known key is close to it (difflib ratio >= 0.8) and
    the mapping does not already hold that key. The author may have meant another key, so the
    rename is offered, not applied by `--fix` alone.

    ## References
    - schemas/*.schema.json (each names the upstream files and version it was written from)
    - deepspeed/runtime/config.py (top-level keys are read by name; others are ignored)
    - transformers/hf_argparser.py: HfArgumentParser.parse_dict(allow_extra_keys=False)
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
            close = difflib.get_close_matches(str(key), error.known_keys, n=3, cutoff=0.8)
            located = tree.locate(error.path)
            span = located.key_span if located else None
            siblings = tree.value
            for step in error.path[:-1]:
                siblings = siblings[step]
            hint = f"; did you mean {' or '.join(repr(name) for name in close)}?" if close else ""
            fix = None
            if len(close) == 1 and close[0] not in siblings:
                fix = self.fix(f"Rename {key!r} to {close[0]!r}",
                               RenameKey(config, error.path, close[0]))
            # DeepSpeed drops an unknown key without a word; the others warn or refuse.
            severity = ERROR if schema.drops_unknown_silently else WARNING
            yield self.finding(config, span, f"unknown key {_dotted(error.path)!s} for {config.schema}{hint}",
                               fix=fix, severity=severity)


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

    ## References
    - schemas/*.schema.json (each names the upstream files and version it was written from)
    """

    code = "SCH002"
    name = "invalid-value"
    severity = ERROR

    def check(self, run, context):
        for config, schema, tree, error in _each_error(run):
            if error.kind == "unknown-key" or _misread(schema, tree, error):
                continue
            located = tree.locate(error.path)
            if located is not None and "${" in located.text:
                continue  # a placeholder a launcher fills in before the framework reads the file
            span = located.value_span if located else None
            where = _dotted(error.path) or "the file"
            yield self.finding(config, span, f"{where}: {error.message} ({config.schema} schema)")


@register
class Yaml11Misread(Rule):
    """SCH003 yaml11-misread

    ## What it does
    Reports an unquoted YAML value that the framework's loader reads differently from what is
    written, where nothing repairs it afterwards: PyYAML (YAML 1.1) reads `2e-5` as the string
    "2e-5" (a float needs a dot and a signed exponent) and `NO` or `on` as booleans. It fires only
    for formats whose loader keeps the string (the schema's `x-trainlint.numeric-strings` is
    "kept", established per framework: pydantic (Axolotl) and argparse (TRL) convert numeric
    strings for number fields and are not flagged; LLaMA-Factory's OmegaConf loader reads `2e-5`
    as a float, which its adapter does too) and only where the schema expects the other type.

    ## Why is this bad?
    A learning rate that arrives as a string fails deep inside the optimizer or scheduler
    (`TypeError: '<=' not supported between instances of 'float' and 'str'`), after the model
    has loaded; `distributed_type: NO` becomes `False`.

    ## Example
    `ludwig.yaml`:
        model_type: llm
        base_model: meta-llama/Llama-2-7b-hf
        trainer:
          type: finetune
          learning_rate: 2e-5
    Use instead:
        model_type: llm
        base_model: meta-llama/Llama-2-7b-hf
        trainer:
          type: finetune
          learning_rate: 2.0e-5

    ## Fix safety
    Safe: writes the number in a spelling YAML 1.1 reads as that float (`2.0e-5`), or quotes the
    word that was meant as a string (`"NO"`); the fix is verified by re-reading the file.

    ## References
    - PyYAML resolver.py: the YAML 1.1 float and bool patterns
    - schemas/*.schema.json `x-trainlint` (which loader each framework uses, and the evidence)
    """

    code = "SCH003"
    name = "yaml11-misread"
    severity = WARNING
    fix_applicability = Applicability.SAFE

    def check(self, run, context):
        for config, schema, tree, error in _each_error(run):
            misread = _misread(schema, tree, error)
            if misread is None:
                continue
            kind, intended, literal = misread
            located = tree.locate(error.path)
            written = located.text.strip()
            reads_as = f"the string {written!r}" if kind == "number" else f"the boolean {str(intended.lower() in ('yes', 'on', 'true')).lower()}"
            message = f"{_dotted(error.path)}: YAML 1.1 reads `{written}` as {reads_as}, which {config.schema} does not convert"
            if _accepts(schema, tree, error.path, intended):
                fix = self.fix(f"Write {literal}", WriteLiteral(config, error.path, intended, literal))
                yield self.finding(config, located.value_span, f"{message}; write {literal}", fix=fix)
            else:
                yield self.finding(config, located.value_span, f"{message}, and {literal} is not accepted there either")
