"""Model knowledge: the family a model name belongs to, its numeric hazards, and its dimensions.

Data lives in data/models.json (each family and checkpoint with its source). A `base_model`
that is a local folder is read from its own config.json; nothing is fetched from the Hub.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path

from .value import Value


class Family(Value):
    __slots__ = ("name", "hazards", "is_chat", "source")

    def __init__(self, name: str, hazards: tuple[str, ...], is_chat: bool, source: str):
        self.name = name
        self.hazards = hazards
        self.is_chat = is_chat
        self.source = source


class Dimensions(Value):
    __slots__ = ("params_b", "hidden", "layers", "heads", "kv_heads", "intermediate", "vocab", "source",
                 "tied_embeddings")

    def __init__(self, params_b: float, hidden: int, layers: int, heads: int, kv_heads: int, intermediate: int,
                 vocab: int, source: str, tied_embeddings: bool = False):
        self.params_b = params_b  # parameters, billions
        self.hidden = hidden
        self.layers = layers
        self.heads = heads
        self.kv_heads = kv_heads
        self.intermediate = intermediate
        self.vocab = vocab
        self.source = source
        self.tied_embeddings = tied_embeddings  # lm_head shares the embedding matrix (config.json tie_word_embeddings)


@lru_cache(maxsize=1)
def _data() -> dict:
    return json.loads((Path(__file__).parent / "data" / "models.json").read_text("utf-8"))


@lru_cache(maxsize=1)
def _families() -> list[tuple[re.Pattern, dict]]:
    return [(re.compile(entry["pattern"], re.I), entry) for entry in _data()["families"]]


def family_of(model_name: str) -> Family | None:
    """The first family whose pattern matches the model's name (Hub id or path), if any."""
    for pattern, entry in _families():
        if pattern.search(model_name):
            chat = entry.get("chat_pattern")
            is_chat = bool(chat and re.search(chat, model_name, re.I)) or bool(re.search(r"chat|instruct", model_name, re.I))
            return Family(entry["family"], tuple(entry["hazards"]), is_chat, entry["source"])
    return None


_VARIANT_SUFFIXES = ("-bnb-4bit", "-instruct", "-chat", "-it", "-hf")


def _checkpoint_key(name: str) -> str:
    """Instruct/chat/quantized uploads share their base checkpoint's shape: compare by that."""
    key = name.rsplit("/", 1)[-1].lower()
    trimmed = True
    while trimmed:
        trimmed = False
        for suffix in _VARIANT_SUFFIXES:
            if key.endswith(suffix):
                key, trimmed = key[: -len(suffix)], True
    return key


@lru_cache(maxsize=1)
def _checkpoints() -> dict[str, dict]:
    table = {}
    for name, entry in _data()["checkpoints"].items():
        for alias in [name, *entry.get("aliases", [])]:
            table[_checkpoint_key(alias)] = entry
    return table


def dimensions_of(model_name: str, config_dir: Path | None = None) -> Dimensions | None:
    """Dimensions from the checkpoint table, or from a local model folder's config.json."""
    entry = _checkpoints().get(_checkpoint_key(model_name))
    if entry is not None:
        return Dimensions(**{key: value for key, value in entry.items() if key != "aliases"})
    local = Path(model_name) if Path(model_name).is_absolute() or config_dir is None else config_dir / model_name
    config_file = local / "config.json"
    if not config_file.is_file():
        return None
    try:
        config = json.loads(config_file.read_text("utf-8"))
        hidden, layers = int(config["hidden_size"]), int(config["num_hidden_layers"])
        heads = int(config["num_attention_heads"])
        intermediate, vocab = int(config.get("intermediate_size", 4 * hidden)), int(config["vocab_size"])
        kv_heads = int(config.get("num_key_value_heads", heads))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    head_dim = hidden // heads
    per_layer = hidden * (heads * head_dim) * 2 + hidden * (kv_heads * head_dim) * 2 + 3 * hidden * intermediate
    params = layers * per_layer + vocab * hidden * (1 if config.get("tie_word_embeddings") else 2)
    tied = bool(config.get("tie_word_embeddings"))
    return Dimensions(round(params / 1e9, 2), hidden, layers, heads, kv_heads, intermediate, vocab, str(config_file), tied)
