"""Which releases a format's schema speaks for: a release older than the one it was written from,
and keys no release reads at the top level."""

from __future__ import annotations


def release_older_than_schema(config, schema) -> tuple[str, tuple[str, str], str] | None:
    """(package, (version, where), the schema's floor) where the run uses a release older than the
    one the schema describes (its keys and values are then not known here); None otherwise."""
    from linter.versions import older_than

    for package, floor in schema.written_from.items():
        found = config.version(package)
        if found is not None and older_than(found[0], floor):
            return package, found, floor
    return None


def older_than_schema_noted(config, schema, context, code) -> bool:
    """release_older_than_schema, noted for --verbose: unknown means silent."""
    older = release_older_than_schema(config, schema)
    if older is not None:
        package, found, floor = older
        context.notes.append(f"{config.path}: {code} skipped: {package} {found[0]} ({found[1]}) is older than "
                             f"the {floor} the {schema.name} schema describes")
    return older is not None


def never_top_level(schema, key: str) -> bool:
    """No release of the schema's package reads `key` at the top level: its per-release top-level
    key history (linter/data/key_releases.json `keys`, from the package's floor release; for
    DeepSpeed every top-level constant _initialize_params reads, deepspeed/runtime/config.py, and
    before it deepspeed/pt/deepspeed_config.py: none is a ZeRO field name at v0.1.0-v0.3.0) omits it."""
    from linter.versions import key_releases

    for package in schema.written_from:
        keys = key_releases().get(package, {}).get("keys")
        if keys is not None and key not in keys:
            return True
    return False
