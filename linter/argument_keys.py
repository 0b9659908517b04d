"""Which keywords the argument classes a training script constructs take, per release: a keyword
the class lacks in the release that runs raises TypeError at construction (every one is a
`@dataclass`: its generated __init__ takes its fields and nothing else).

- transformers TrainingArguments / Seq2SeqTrainingArguments: the fields of every released wheel
  from 4.20.0 to 5.24.0 (bench/transformers_key_history.py): linter/data/key_releases.json
  `transformers` `paths` rows for the keys some release lacks (`seq2seq`: the keys only
  Seq2SeqTrainingArguments has), and the keys schemas/trl.schema.json tags `[transformers
  TrainingArguments]` (4.56.2 to 5.23.0), which every release read keeps where no row says
  otherwise. The wheels of 4.0.1, 4.10.3 and 4.19.4 hold no TrainingArguments field outside those;
  3.5.1 holds `evaluate_during_training` (PRE_FLOOR), which 4.0.1 dropped.
- TRL's trainer configs (SFTConfig, DPOConfig, GRPOConfig, ...): linter/data/trl_config_keys.json
  (bench/trl_config_keys.py, every release tag from v0.7.0; no config of v0.4 to v0.7.0 extends
  TrainingArguments: PPOConfig and DDPOConfig were plain classes), the keys each config declares
  beyond TrainingArguments' in each release, its TRL bases' included; a TrainingArguments field
  TRL re-declares is key_releases.json `transformers` `supplied-by` `trl`. The config takes a key
  its TRL release declares or the installed transformers' TrainingArguments has. A trainer whose
  table row covers two classes (PPOConfig and PPOv2Config, where PPOConfig was a plain class until
  v0.12.0) is not judged.

Answers are True (taken), False (refused) or None (not known: a release between two read, or
outside the releases read, or a class the tables do not cover). Facts only; rules decide.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

TRANSFORMERS_CLASSES = ("TrainingArguments", "Seq2SeqTrainingArguments")
# TrainingArguments fields of a release before the floor read (4.20.0) that no release read has:
# transformers 3.5.1's wheel (training_args.py), gone from 4.0.1.
PRE_FLOOR = {"evaluate_during_training": "3.5.1"}


@lru_cache(maxsize=1)
def _trl_table() -> dict:
    import json

    return json.loads((Path(__file__).parent / "data" / "trl_config_keys.json").read_text("utf-8"))


@lru_cache(maxsize=1)
def _always_kept() -> frozenset[str]:
    """TrainingArguments fields the trl schema tags as transformers' (kept by every release read
    unless a `paths` row says otherwise)."""
    from .schema import load

    schema = load("trl")
    properties = schema.root.get("properties", {}) if schema is not None else {}
    return frozenset(key for key, spec in properties.items()
                     if "transformers TrainingArguments" in spec.get("description", ""))


def _transformers() -> dict:
    from .versions import key_releases

    return key_releases()["transformers"]


def transformers_range() -> str:
    history = _transformers()
    return f"{history['floor']} to {history['newest']}"


def _within(version: str, floor: str, newest: str) -> bool:
    from .versions import older_than

    return older_than(version, floor) is False and older_than(newest, version) is False


def transformers_takes(cls: str, key: str, version: str | None) -> bool | None:
    """Does `cls` (TrainingArguments or Seq2SeqTrainingArguments) of transformers `version` take
    `key`? With no version: does some release take it (False only where none read does, nor a
    release before them)?"""
    from .versions import kept_by

    history = _transformers()
    if version is not None and not _within(version, history["floor"], history["newest"]):
        return None
    if key in history.get("seq2seq", ()) and cls != "Seq2SeqTrainingArguments":
        return False
    row = history["paths"].get(key)
    if row is not None:
        return True if version is None else kept_by(row, version)
    if key in _always_kept() or key in history.get("seq2seq", ()):
        return True
    return None if version is None and key in PRE_FLOOR else False


def transformers_periods(key: str) -> str | None:
    """The releases read that keep `key`, in words, where some do and some do not."""
    from .versions import kept_periods

    history = _transformers()
    row = history["paths"].get(key)
    return kept_periods(row, history["floor"], history["newest"]) if row is not None else None


def trl_trainer(cls: str) -> str | None:
    """The trainer name of a TRL config class the table covers alone (SFTConfig -> sft)."""
    for trainer, entry in _trl_table()["trainers"].items():
        if cls in entry["classes"]:
            return trainer if len(entry["classes"]) == 1 else None
    return None


def _existing(trainer: str) -> set[int]:
    """Indexes into `releases` of the releases where the trainer's config exists."""
    return {index for runs in _trl_table()["keys"].values() for first, last in runs.get(trainer, ())
            for index in range(first, last + 1)}


def _indexes(version: str) -> list[int] | None:
    """The release read that is `version`, or the two on either side of it; None outside them."""
    from .versions import older_than

    releases = _trl_table()["releases"]
    if not _within(version, releases[0], releases[-1]):
        return None
    if version in releases:
        return [releases.index(version)]
    above = next((index for index, release in enumerate(releases) if older_than(version, release)), None)
    return None if above is None or above == 0 else [above - 1, above]


def trl_class_range(cls: str) -> str | None:
    """The TRL releases read that have the config, in words ("0.9.3 to 1.9.0")."""
    trainer = trl_trainer(cls)
    existing = sorted(_existing(trainer)) if trainer is not None else []
    releases = _trl_table()["releases"]
    return f"{releases[existing[0]]} to {releases[existing[-1]]}" if existing else None


def trl_declares(cls: str, key: str, version: str | None) -> bool | None:
    """Does TRL config `cls` of release `version` declare `key` itself (beyond TrainingArguments)?
    With no version: does it in some release read? None where the class is not covered there."""
    from .versions import kept_by

    trainer = trl_trainer(cls)
    if trainer is None:
        return None
    existing = _existing(trainer)
    indexes = sorted(existing) if version is None else _indexes(version)
    if not indexes or not set(indexes) <= existing:
        return None  # a release without the class as a TrainingArguments subclass, or not read
    runs = _trl_table()["keys"].get(key, {}).get(trainer, ())
    if any(first <= index <= last for index in indexes for first, last in runs):
        return True
    supplied = _transformers().get("supplied-by", {}).get("trl", {}).get(key)
    if supplied is None:
        return False
    # a TrainingArguments field TRL re-declares, in some config (the row is not per config)
    return True if version is None else (None if kept_by(supplied, version) is not False else False)


def trl_periods(cls: str, key: str) -> str | None:
    """The TRL releases read whose `cls` declares `key`, in words, where some do."""
    trainer = trl_trainer(cls)
    runs = _trl_table()["keys"].get(key, {}).get(trainer, ()) if trainer is not None else ()
    releases = _trl_table()["releases"]
    return ", ".join(f"{releases[first]} to {releases[last]}" for first, last in runs) or None


def known_keys(cls: str) -> tuple[str, ...]:
    """Every keyword some release read of `cls` takes (for a "did you mean" hint)."""
    history = _transformers()
    keys = set(_always_kept()) | set(history["paths"])
    if cls == "Seq2SeqTrainingArguments":
        keys |= set(history.get("seq2seq", ()))
    trainer = trl_trainer(cls) if cls not in TRANSFORMERS_CLASSES else None
    if trainer is not None:
        keys |= {key for key, runs in _trl_table()["keys"].items() if trainer in runs}
    return tuple(sorted(keys))
