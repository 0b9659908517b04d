"""Checkpoints whose chat-template special tokens were never trained (data/untrained_tokens.json)."""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple


class Untrained(NamedTuple):
    tokens: tuple[str, ...]  # the template's tokens the checkpoint never trained
    kind: str  # what the checkpoint is ("a base model")
    instead: str  # what to train from or with
    unsloth_detects_from: str | None  # the first Unsloth release whose fix_untrained_tokens finds them (None: every)
    source: str


@lru_cache(maxsize=1)
def _rows() -> list[tuple[re.Pattern, dict]]:
    data = json.loads((Path(__file__).parent / "data" / "untrained_tokens.json").read_text("utf-8"))
    return [(re.compile(row["pattern"], re.I), row) for row in data["base_models"]]


def untrained_template_tokens(model_name: str, template: str, written: list[str] | None = None) -> Untrained | None:
    """What the table says of `model_name`'s untrained tokens where a template puts them in the
    samples: one named `template` in the row, or (`written`, the special tokens the template
    writes, where they are known) one writing any of them; None otherwise."""
    last = model_name.rstrip("/").rsplit("/", 1)[-1]
    for pattern, row in _rows():
        if not pattern.fullmatch(last):
            continue
        tokens = tuple(token for token in row["tokens"] if token in written) if written is not None else \
            tuple(row["tokens"]) if template.lower() in row["templates"] else ()
        if tokens:
            return Untrained(tokens, row["kind"], row["instead"], row["unsloth_detects_from"], row["source"])
    return None
