"""Base checkpoints whose chat-template special tokens were never trained (data/untrained_tokens.json)."""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path


@lru_cache(maxsize=1)
def _rows() -> list[tuple[re.Pattern, dict]]:
    data = json.loads((Path(__file__).parent / "data" / "untrained_tokens.json").read_text("utf-8"))
    return [(re.compile(row["pattern"], re.I), row) for row in data["base_models"]]


def untrained_template_tokens(model_name: str, template: str) -> tuple[tuple[str, ...], str] | None:
    """(the template's tokens the base checkpoint never trained, source) where `template` formats
    the samples of a base model the table lists; None otherwise."""
    last = model_name.rstrip("/").rsplit("/", 1)[-1]
    for pattern, row in _rows():
        if pattern.fullmatch(last) and template.lower() in row["templates"]:
            return tuple(row["tokens"]), row["source"]
    return None
