"""Which TRL trainer reads a TRL argument file: the trainer whose config class alone defines the
file's keys, in the TRL release that reads it.

linter/data/trl_config_keys.json (written by bench/trl_config_keys.py from every TRL release tag)
says, per key, which trainer configs (subclasses of TrainingArguments under trl/, SFTConfig to
PRMConfig and the trl/experimental ones) define it in which releases. HfArgumentParser refuses a
key no parsed dataclass has (transformers/hf_argparser.py, allow_extra_keys=False), so the
trainers that may read the file in a release are those whose config defines every one of the
file's TRL config keys there (keys no TRL config has, ModelConfig's and ScriptArguments' among
them, say nothing). With TRL pinned, that release (or, for a version between two tags, both);
unpinned, every release. Where the candidates are one config and its subclasses (XPOConfig and
NashMDConfig extend OnlineDPOConfig, GKDConfig extends SFTConfig: their __post_init__ and the
trainer's __init__ call the base's), the base's trainer is recorded; any other mix is unknown.

Configs that only ever lived under trl/experimental (GOLD, the distillation and self-distillation
configs, GFPO, PAPO, ...: `stable` false in the data) are no candidates: no `trl` command or example
script of TRL reads a file for them, only a project's own script, and TRL gives their API no
stability. A key only such a config defines leaves no stable candidate: the trainer is unknown."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path


@lru_cache(maxsize=1)
def _table() -> dict:
    import json

    return json.loads((Path(__file__).parents[1] / "data" / "trl_config_keys.json").read_text("utf-8"))


def _indexes(version: str | None, releases: list[str]) -> list[int]:
    """The releases that may read the file: all when unknown; the pinned one, else the tags on
    either side of it (0.9.0 to 0.9.2 have none); the newest for a later release."""
    if version is None:
        return list(range(len(releases)))
    from packaging.version import InvalidVersion, Version

    try:
        wanted = Version(version)
    except InvalidVersion:
        return list(range(len(releases)))
    parsed = [Version(release) for release in releases]
    if wanted in parsed:
        return [parsed.index(wanted)]
    below = [index for index, release in enumerate(parsed) if release < wanted]
    above = [index for index, release in enumerate(parsed) if release > wanted]
    return [index for index in (below[-1:] + above[:1])] if below and above else (below[-1:] or [0])


def candidates(keys: set[str], version: str | None) -> set[str] | None:
    """The trainers whose config defines every one of `keys` that some TRL config defines, in
    some release that may read the file; None where no key says."""
    table = _table()
    stable = {trainer for trainer, entry in table["trainers"].items() if entry["stable"]}
    rows = {key: {trainer: runs for trainer, runs in table["keys"][key].items() if trainer in stable}
            for key in keys if key in table["keys"]}
    if not rows:
        return None
    found: set[str] = set()
    for index in _indexes(version, table["releases"]):
        common: set[str] | None = None
        for spans in rows.values():
            here = {trainer for trainer, runs in spans.items() if any(first <= index <= last for first, last in runs)}
            common = here if common is None else common & here
        found |= common or set()
    return found or None


def trainer_of(keys: set[str], version: str | None) -> str | None:
    """The one trainer (or base config of all the candidates) that reads a file with `keys`."""
    return _base_of(candidates(keys, version))


def _base_of(found: set[str] | None) -> str | None:
    """The one trainer of `found`, or the base config of all of them; None otherwise."""
    if not found:
        return None
    trainers = _table()["trainers"]
    for trainer in sorted(found):
        if all(other == trainer or trainer in trainers[other]["bases"] for other in found):
            return trainer
    return None


def config_keys() -> frozenset[str]:
    """Every key some TRL trainer config has defined, in any release."""
    return frozenset(_table()["keys"])


def trainer_of_class(name: str) -> str | None:
    """The trainer whose config class is `name` (SFTConfig -> sft); None for any other class."""
    return next((trainer for trainer, entry in _table()["trainers"].items() if name in entry["classes"]), None)


def record_trainer(read) -> None:
    """training.trainer, where the file's keys leave one TRL trainer (see the module doc)."""
    root = read.document.root
    keys = {pair.key.value for pair in root.pairs if isinstance(pair.key.value, str)}
    trl = read.config.version("trl")
    version = trl[0] if trl else None
    found = candidates(keys, version)
    if found is None and not any(key in _table()["keys"] for key in keys):
        return
    from ..ir import Field, Origin

    read.config.set("training.trainer_candidates", Field(sorted(found or ()), Origin(read.config.file_span)))
    trainer = _base_of(found)
    if trainer is not None:
        read.config.set("training.trainer", _field(read, trainer, keys, trl))


def _field(read, trainer: str, keys: set[str], trl):
    from ..ir import Field, Origin

    table = _table()["keys"]
    marks = sorted(key for key in keys if key in table and set(table[key]) <= {trainer, *_family(trainer)})
    origin = Origin(read.config.file_span, f"{', '.join(marks[:3]) or 'its keys'}: only {trainer}'s config "
                    f"defines {'them' if len(marks) > 1 else 'it'} ({'TRL ' + trl[0] if trl else 'any TRL release'})")
    return Field(trainer, origin)


def _family(trainer: str) -> list[str]:
    return [name for name, entry in _table()["trainers"].items() if trainer in entry["bases"]]
