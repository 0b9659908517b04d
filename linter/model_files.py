"""Which tokenizer files a checkpoint ships: read from the checkpoint itself where it is here (a
local folder, or the Hugging Face cache's snapshot, whose `.no_exist/<revision>/` records the
files the Hub answered 404 for; never downloaded), else from the shipped table
data/tokenizer_files.json, whose rows cite their evidence. Loaded only when a rule asks."""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path

SENTENCEPIECE_FILE = "tokenizer.model"  # transformers' slow Llama/T5-style VOCAB_FILES_NAMES["vocab_file"]
_TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json")


@lru_cache(maxsize=1)
def _rows() -> list[tuple[re.Pattern, str]]:
    data = json.loads((Path(__file__).parent / "data" / "tokenizer_files.json").read_text("utf-8"))
    return [(re.compile(row["pattern"], re.I), f"{row['what']}, data/tokenizer_files.json")
            for row in data["no_sentencepiece_model"]]


def _from_folder(folder: Path) -> tuple[bool, str] | None:
    if (folder / SENTENCEPIECE_FILE).is_file():
        return True, str(folder / SENTENCEPIECE_FILE)
    if folder.parent.name == "snapshots":  # the Hub cache: absent here may only mean not downloaded yet
        missing = folder.parent.parent / ".no_exist" / folder.name / SENTENCEPIECE_FILE
        return (False, f"{missing} (the Hub answered that it has no {SENTENCEPIECE_FILE})") if missing.exists() else None
    if any((folder / name).is_file() for name in _TOKENIZER_FILES):
        return False, f"{folder} (a tokenizer folder without {SENTENCEPIECE_FILE})"
    return None


def ships_sentencepiece_model(model_name: str, config_dir: Path | None = None) -> tuple[bool, str] | None:
    """(whether `model_name` ships tokenizer.model, where that was read); None when unknown."""
    from .chat_templates import checkpoint_folders

    for folder in checkpoint_folders(model_name, config_dir):
        found = _from_folder(folder)
        if found is not None:
            return found
        if folder.parent.name != "snapshots":
            return None  # a local folder that is no tokenizer folder: unknown, never the table
    name = model_name.strip().rstrip("/")
    for pattern, source in _rows():
        if pattern.fullmatch(name):
            return False, source
    return None
