"""SCH001's check of a training script's argument call (adapters/hf_script.py: `arguments.class`,
and the call's keywords as the file's key tree): a keyword the class lacks in every release that
may run raises TypeError at construction (linter/argument_keys.py says which releases take it)."""

from __future__ import annotations

from linter.registry import ERROR


def _hint(cls: str, key: str) -> str:
    """A documented rename (the trl schema's `renamed-keys`), else the close known keywords."""
    from linter import argument_keys
    from linter.schema import load

    schema = load("trl")
    renamed = (schema.renamed_keys if schema is not None else {}).get(key)
    if renamed is not None:
        return f"; renamed {renamed['to']} in {renamed['package']} {renamed['renamed']}"
    import difflib

    close = difflib.get_close_matches(key, argument_keys.known_keys(cls), n=3, cutoff=0.8)
    return f"; did you mean {' or '.join(repr(name) for name in close)}?" if close else ""


def _transformers_scope(config, cls: str, key: str, context, code: str) -> str | None:
    """Where `cls` (or a TRL config's TrainingArguments base) lacks `key` in the transformers that
    runs: "transformers 4.51.0 (requirements.txt)" or "any transformers release 4.20.0 to 5.24.0";
    None where it takes it, or may (noted for --verbose)."""
    from linter import argument_keys

    found = config.version("transformers")
    takes = argument_keys.transformers_takes(cls, key, found[0] if found else None)
    if takes is not False:
        if takes is None:
            context.notes.append(f"{config.path}: {code}: {cls}({key}=...) not judged: the transformers release in "
                                 f"use is not one read")
        return None
    kept = argument_keys.transformers_periods(key)
    where = f"transformers {found[0]} ({found[1]})" if found else \
        f"any transformers release {argument_keys.transformers_range()}"
    return where + (f" (kept by transformers {kept})" if kept else "")


def _refusal(config, cls: str, key: str, context, code: str) -> str | None:
    from linter import argument_keys

    if cls in argument_keys.TRANSFORMERS_CLASSES:
        scope = _transformers_scope(config, cls, key, context, code)
        return scope and f"{cls} takes no keyword {key} in {scope}"
    trl = config.version("trl")
    declares = argument_keys.trl_declares(cls, key, trl[0] if trl else None)
    if declares is not False:
        if declares is None:
            context.notes.append(f"{config.path}: {code}: {cls}({key}=...) not judged: the TRL release in use "
                                 f"is not one read with {cls}")
        return None
    scope = _transformers_scope(config, "TrainingArguments", key, context, code)
    if scope is None:
        return None
    kept = argument_keys.trl_periods(cls, key)
    where = f"trl {trl[0]} ({trl[1]})" if trl else f"any trl release {argument_keys.trl_class_range(cls)}"
    return (f"{cls} takes no keyword {key} in {where}{f' (kept by trl {kept})' if kept else ''}, nor does its "
            f"TrainingArguments base in {scope}")


def refused_keywords(rule, run, context):
    """SCH001 findings for the keywords a script's argument call gives that its class lacks."""
    for config in run.configs:
        cls = config.value("arguments.class")
        tree = config.key_tree if cls is not None else None
        if tree is None or not isinstance(tree.value, dict):
            continue
        for key in tree.value:
            message = _refusal(config, cls, key, context, rule.code)
            if message is not None:
                located = tree.locate((key,))
                yield rule.finding(config, located.key_span if located else config.file_span,
                                   f"{message}: {cls}(...) raises TypeError at construction{_hint(cls, key)}",
                                   severity=ERROR)
