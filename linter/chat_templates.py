"""Does a checkpoint's chat template carry `{% generation %}` markers, and which known template is it?

Read from the checkpoint itself where it is here (a local folder, or the Hugging Face cache's
snapshot; never downloaded): `chat_template.jinja`, else `tokenizer_config.json`'s `chat_template`
(transformers' tokenization_utils_base.py: a separate chat_template.jinja wins; a list of named
templates uses the one named "default"). Else from the shipped table data/chat_templates.json,
whose rows cite where each template was read. Loaded only when a rule asks (lazily).
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

# transformers' apply_chat_template looks for this to build assistant masks
# (tokenization_utils_base.py: re.search(r"\{\%-?\s*generation\s*-?\%\}", chat_template)).
_GENERATION = re.compile(r"\{%-?\s*generation\s*-?%\}")


class ChatTemplate(NamedTuple):
    markers: bool  # the template has {% generation %} markers
    sha256: str | None  # of the template text, where it was read from the checkpoint's own files
    known: str | None  # the table's name for it (a TRL original template), where it came from the table
    source: str


@lru_cache(maxsize=1)
def _table() -> dict:
    return json.loads((Path(__file__).parent / "data" / "chat_templates.json").read_text("utf-8"))


def _own_template(folder: Path) -> tuple[str, str] | None:
    jinja = folder / "chat_template.jinja"
    try:
        if jinja.is_file():
            return jinja.read_text("utf-8"), str(jinja)
        config_file = folder / "tokenizer_config.json"
        if not config_file.is_file():
            return None
        template = json.loads(config_file.read_text("utf-8")).get("chat_template")
    except (OSError, ValueError, UnicodeDecodeError, AttributeError):
        return None
    if isinstance(template, list):  # [{"name": ..., "template": ...}]
        template = next((row.get("template") for row in template
                         if isinstance(row, dict) and row.get("name") == "default"), None)
    return (template, f"{config_file} chat_template") if isinstance(template, str) else None


def checkpoint_folders(model_name: str, config_dir: Path | None) -> list[Path]:
    """The local checkpoint folder, else the Hub cache's snapshot (refs/main's, else the newest)."""
    from .models import _hub_cache

    local = Path(model_name) if Path(model_name).is_absolute() or config_dir is None else config_dir / model_name
    if local.is_dir():
        return [local]
    if model_name.count("/") != 1 or model_name.startswith((".", "/")):
        return []
    repo = _hub_cache() / ("models--" + model_name.replace("/", "--"))
    try:
        revision = (repo / "refs" / "main").read_text("utf-8").strip()
        if (repo / "snapshots" / revision).is_dir():
            return [repo / "snapshots" / revision]
        return sorted((repo / "snapshots").iterdir(), key=lambda path: path.stat().st_mtime)[-1:]
    except OSError:
        return []


def chat_template(model_name: str, config_dir: Path | None = None) -> ChatTemplate | None:
    """What is known of `model_name`'s chat template; None when it can be read nowhere here."""
    import hashlib

    for folder in checkpoint_folders(model_name, config_dir):
        own = _own_template(folder)
        if own is not None:
            text, where = own
            return ChatTemplate(bool(_GENERATION.search(text)), hashlib.sha256(text.encode("utf-8")).hexdigest(),
                                None, where)
    for row in _table()["models"]:
        if re.fullmatch(row["pattern"], model_name.strip().rstrip("/"), re.I):
            return ChatTemplate(row["generation_markers"], None, row["template"],
                                f"the {row['template']} template, data/chat_templates.json")
    return None


def training_swap(template: ChatTemplate) -> tuple[str, str] | None:
    """(first TRL release whose SFTTrainer swaps this template for a training template with
    generation markers, the PR) — get_training_chat_template matches the exact template text."""
    for name, row in _table()["trl_swaps"].items():
        if template.known == name or template.sha256 == row["sha256"]:
            return row["since"], row["pr"]
    return None


def swaps_checked_through() -> str:
    """The last TRL release whose get_training_chat_template the table was read from."""
    return _table()["trl_checked_through"]


# Special tokens as chat templates spell them: `<|im_start|>`, `<|start_header_id|>`, and the
# underscored `<start_of_turn>` / `<tool_call>` kind (never a plain word in angle brackets).
_SPECIAL = re.compile(r"<\|[^|<>\s]+\|>|<[a-z][a-z0-9]*(?:_[a-z0-9]+)+>")


def special_tokens(text: str) -> list[str]:
    """The special tokens `text` spells, in order, each once."""
    return list(dict.fromkeys(_SPECIAL.findall(text)))


def unsloth_template(name: str) -> tuple[list[str], int, str] | None:
    """(the special tokens the template writes literally, how many bos/eos placeholders it renders,
    source) for the template unsloth's get_chat_template installs under `name`; None for a name
    the table does not hold."""
    block = _table()["unsloth_templates"]
    row = block["templates"].get(name)
    return None if row is None else (row["tokens"], row["placeholders"], block["source"])


def axolotl_template(name: str) -> tuple[list[str], bool, str] | None:
    """(the special tokens the template writes literally, whether its text names eos_token, source)
    for the template Axolotl's `chat_template: NAME` installs; None for a name the table lacks."""
    block = _table()["axolotl_templates"]
    row = block["templates"].get(name)
    return None if row is None else (row["tokens"], row["eos_token"], block["source"])


def eos_token_of(model_type: str) -> str | None:
    """The eos_token of the tokenizer that checkpoints of `model_type` ship, where the table knows it."""
    for row in _table()["eos_tokens"]["models"]:
        if model_type in row["model_types"]:
            return row["eos_token"]
    return None
