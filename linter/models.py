"""Model knowledge: the family a model name belongs to, its numeric hazards, and its dimensions.

Data lives in data/models.json (each family and checkpoint with its source). A `base_model`
that is a local folder is read from its own config.json; nothing is fetched from the Hub.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path

from .lazy_pattern import LazyPattern
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
                 "tied_embeddings", "head_dim", "experts", "active_experts", "expert_intermediate",
                 "shared_intermediate", "dense_layers", "gated_mlp")

    def __init__(self, params_b: float, hidden: int, layers: int, heads: int, kv_heads: int, intermediate: int,
                 vocab: int, source: str, tied_embeddings: bool = False, head_dim: int | None = None,
                 experts: int = 0, active_experts: int = 0, expert_intermediate: int | None = None,
                 shared_intermediate: int = 0, dense_layers: int = 0, gated_mlp: bool = True):
        self.params_b = params_b  # parameters, billions
        self.hidden = hidden
        self.layers = layers
        self.heads = heads
        self.kv_heads = kv_heads
        self.intermediate = intermediate
        self.vocab = vocab
        self.source = source
        self.tied_embeddings = tied_embeddings  # lm_head shares the embedding matrix (config.json tie_word_embeddings)
        # Qwen3-4B and -32B set head_dim apart from hidden / heads (2560 / 32 = 80, head_dim 128).
        self.head_dim = head_dim or hidden // heads
        # Mixture of experts (0 experts: a dense model). Each MoE layer holds `experts` MLPs of
        # `expert_intermediate` (config.json moe_intermediate_size, else intermediate_size), a router
        # (hidden x experts) and optionally always-on shared experts; each token runs through
        # `active_experts` of them (num_experts_per_tok). `dense_layers` leading layers keep a dense
        # MLP of `intermediate` (DeepSeek's first_k_dense_replace).
        self.experts = experts
        self.active_experts = active_experts
        self.expert_intermediate = expert_intermediate or intermediate
        self.shared_intermediate = shared_intermediate
        self.dense_layers = dense_layers
        # SwiGLU/GeGLU MLPs have three matrices (gate, up, down); GPT-NeoX, Falcon and Phi-2 two.
        self.gated_mlp = gated_mlp

    def layer_params(self, moe: bool = True) -> int:
        """Parameters of one decoder layer (attention + MLP; norms are negligible)."""
        attention = self.hidden * self.head_dim * (2 * self.heads + 2 * self.kv_heads)
        matrices = 3 if self.gated_mlp else 2
        if not (moe and self.experts):
            return attention + matrices * self.hidden * self.intermediate
        return (attention + matrices * self.hidden * (self.experts * self.expert_intermediate + self.shared_intermediate)
                + self.hidden * self.experts)

    @property
    def active_params_b(self) -> float:
        """Parameters a token runs through (the total for a dense model), billions."""
        if not self.experts:
            return self.params_b
        idle = (self.experts - self.active_experts) * (3 if self.gated_mlp else 2) * self.hidden * self.expert_intermediate
        return self.params_b - (self.layers - self.dense_layers) * idle / 1e9

    @property
    def mlp_width(self) -> int:
        """The intermediate width a token's activations scale with (active experts for MoE)."""
        if not self.experts:
            return self.intermediate
        return self.active_experts * self.expert_intermediate + self.shared_intermediate

    @property
    def largest_module_params(self) -> int:
        """The most parameters one module holds itself: DeepSpeed's largest_layer_params
        (deepspeed/runtime/zero/stage3.py model_to_params: max over modules of their own params)."""
        return max(self.vocab * self.hidden, self.hidden * max(self.intermediate, self.expert_intermediate),
                   self.hidden * self.heads * self.head_dim)


@lru_cache(maxsize=1)
def _data() -> dict:
    return json.loads((Path(__file__).parent / "data" / "models.json").read_text("utf-8"))


@lru_cache(maxsize=1)
def _families() -> list[tuple[LazyPattern, dict]]:
    # Compiled as the lookup reaches them: a name matched by an early row never pays for the rest.
    return [(LazyPattern(entry["pattern"], re.I), entry) for entry in _data()["families"]]


def family_of(model_name: str) -> Family | None:
    """The first family whose pattern matches the model's name (Hub id or path), if any."""
    for pattern, entry in _families():
        if pattern.search(model_name):
            chat = entry.get("chat_pattern")
            is_chat = bool(chat and re.search(chat, model_name, re.I)) or bool(re.search(r"chat|instruct", model_name, re.I))
            return Family(entry["family"], tuple(entry["hazards"]), is_chat, entry["source"])
    return None


_VARIANT_SUFFIXES = ("-bnb-4bit", "-instruct", "-chat", "-it", "-pt", "-hf", "-base")


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


def _hub_cache_config(model_name: str) -> Path | None:
    """config.json of a Hub id in the local Hugging Face cache (huggingface_hub's layout:
    $HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub; models--org--name/snapshots/
    <revision>/config.json, the revision named by refs/main when present). Nothing is downloaded."""
    import os

    if model_name.count("/") != 1 or model_name.startswith((".", "/")):
        return None
    hub = os.environ.get("HF_HUB_CACHE") or (Path(os.environ["HF_HOME"]) / "hub" if os.environ.get("HF_HOME")
                                              else Path.home() / ".cache" / "huggingface" / "hub")
    repo = Path(hub) / ("models--" + model_name.replace("/", "--"))
    snapshots = repo / "snapshots"
    if not snapshots.is_dir():
        return None
    ref = repo / "refs" / "main"
    try:
        revision = ref.read_text("utf-8").strip() if ref.is_file() else None
    except OSError:
        revision = None
    candidates = [snapshots / revision] if revision else sorted(snapshots.iterdir())
    for snapshot in candidates:
        if (snapshot / "config.json").is_file():
            return snapshot / "config.json"
    return None


def _from_config_json(config_file: Path) -> Dimensions | None:
    """Dimensions from a transformers config.json (a multimodal one's text_config where present)."""
    try:
        config = json.loads(config_file.read_text("utf-8"))
        text = config.get("text_config") if isinstance(config.get("text_config"), dict) else config
        get = lambda *names, default=None: next((text[n] for n in names if text.get(n) is not None), default)
        hidden, layers = int(get("hidden_size", "n_embd", "d_model")), int(get("num_hidden_layers", "n_layer", "num_layers"))
        heads = int(get("num_attention_heads", "n_head"))
        intermediate = int(get("intermediate_size", "ffn_hidden_size", "n_inner", default=4 * hidden))
        vocab = int(get("vocab_size", "padded_vocab_size"))
        kv_heads = int(get("num_key_value_heads", "multi_query_group_num", default=heads))
        head_dim = int(get("head_dim", "kv_channels", default=hidden // heads))
        experts = int(get("num_local_experts", "num_experts", "n_routed_experts", default=0) or 0)
        active = int(get("num_experts_per_tok", "moe_topk", default=0) or 0) if experts else 0
        expert_intermediate = int(get("moe_intermediate_size", default=intermediate)) if experts else None
        shared = int(get("shared_expert_intermediate_size", default=0) or 0)
        if not shared and experts and get("n_shared_experts"):
            shared = int(get("n_shared_experts")) * int(expert_intermediate)
        dense_layers = int(get("first_k_dense_replace", default=0) or 0) if experts else 0
        tied = bool(text.get("tie_word_embeddings", config.get("tie_word_embeddings", False)))
    except (OSError, ValueError, KeyError, TypeError, StopIteration):
        return None
    dims = Dimensions(0.0, hidden, layers, heads, kv_heads, intermediate, vocab, str(config_file), tied, head_dim,
                      experts, active, expert_intermediate, shared, dense_layers)
    params = (dense_layers * dims.layer_params(moe=False) + (layers - dense_layers) * dims.layer_params()
              + vocab * hidden * (1 if tied else 2))
    dims.params_b = round(params / 1e9, 2)
    return dims


def dimensions_of(model_name: str, config_dir: Path | None = None) -> Dimensions | None:
    """Dimensions from a local model folder's config.json, the Hugging Face cache, or the
    checkpoint table (in that order: a file the run will read beats the shipped table)."""
    local = Path(model_name) if Path(model_name).is_absolute() or config_dir is None else config_dir / model_name
    config_file = local / "config.json"
    if not config_file.is_file():
        config_file = _hub_cache_config(model_name)
    if config_file is not None:
        found = _from_config_json(config_file)
        if found is not None:
            return found
    entry = _checkpoints().get(_checkpoint_key(model_name))
    if entry is not None:
        return Dimensions(**{key: value for key, value in entry.items() if key != "aliases"})
    return None


def why_unknown(model_name: object) -> str:
    """Why dimensions_of found nothing, for --verbose notes and usage errors."""
    if not isinstance(model_name, str):
        return "the config names no model"
    return (f"the dimensions of {model_name} are unknown (not in trainlint's table, no local config.json, "
            "not in the Hugging Face cache)")


# ---- what a checkpoint is: its own config.json, else the shipped table (data/architectures.json) ----

@lru_cache(maxsize=1)
def _architectures() -> dict:
    return json.loads((Path(__file__).parent / "data" / "architectures.json").read_text("utf-8"))


@lru_cache(maxsize=None)
def name_table(section: str) -> list[tuple[LazyPattern, dict]]:
    # Compiled as the lookup reaches them (see _families).
    return [(LazyPattern(row["pattern"], re.I), row) for row in _architectures()[section]]


def _hub_cache() -> Path:
    """huggingface_hub's cache folder (constants.py): HF_HUB_CACHE, else $HF_HOME/hub, else
    $XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub."""
    import os

    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    home = os.environ.get("HF_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "huggingface")
    return Path(home).expanduser() / "hub"


def _config_file(model_name: str, config_dir: Path | None) -> Path | None:
    """The checkpoint's config.json: a local folder (absolute, or relative to the config), else the
    Hub cache's snapshot for `org/name` (the one refs/main names, else the newest)."""
    local = Path(model_name) if Path(model_name).is_absolute() or config_dir is None else config_dir / model_name
    if (local / "config.json").is_file():
        return local / "config.json"
    if model_name.count("/") != 1 or model_name.startswith((".", "/")):
        return None
    repo = _hub_cache() / ("models--" + model_name.replace("/", "--"))
    try:
        revision = (repo / "refs" / "main").read_text("utf-8").strip()
        if (repo / "snapshots" / revision / "config.json").is_file():
            return repo / "snapshots" / revision / "config.json"
        snapshots = sorted((repo / "snapshots").glob("*/config.json"), key=lambda path: path.stat().st_mtime)
    except OSError:
        return None
    return snapshots[-1] if snapshots else None


@lru_cache(maxsize=256)
def checkpoint_config(model_name: str, config_dir: Path | None) -> tuple[dict, str] | None:
    """The checkpoint's own config.json as a dict, with its path; None where none can be read here."""
    found = _config_file(model_name, config_dir)
    if found is None:
        return None
    try:
        config = json.loads(found.read_text("utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    return (config, str(found)) if isinstance(config, dict) else None


def _by_name(section: str, model_name: str) -> dict | None:
    for pattern, row in name_table(section):
        if pattern.search(model_name):
            return row
    return None


def checkpoint_dtype(model_name: str, config_dir: Path | None = None) -> tuple[str, str] | None:
    """(torch_dtype the checkpoint declares, where that is read) — its own config.json (`torch_dtype`,
    or `dtype` as transformers >= 4.56 writes it), else the shipped table; None when unknown."""
    own = checkpoint_config(model_name, config_dir)
    if own is not None:
        config, path = own
        dtype = config.get("torch_dtype", config.get("dtype"))
        if dtype is None and isinstance(config.get("text_config"), dict):  # multimodal wrappers
            dtype = config["text_config"].get("torch_dtype", config["text_config"].get("dtype"))
        return (str(dtype).replace("torch.", ""), f"{path} torch_dtype") if isinstance(dtype, str) else None
    row = _by_name("checkpoint_dtypes", model_name)
    return (row["torch_dtype"], row["source"]) if row else None


def model_type_of(model_name: str, config_dir: Path | None = None) -> tuple[str, str] | None:
    """(transformers model_type, where it is read): config.json, else the shipped name table."""
    own = checkpoint_config(model_name, config_dir)
    if own is not None:
        model_type = own[0].get("model_type")
        return (model_type, f"{own[1]} model_type") if isinstance(model_type, str) else None
    exclude = _architectures()["model_type_exclude"]["pattern"]
    if re.search(exclude, model_name.rsplit("/", 1)[-1], re.I):
        return None
    row = _by_name("model_types", model_name)
    return (row["model_type"], row["source"]) if row else None


def module_names(model_type: str) -> tuple[frozenset[str], str] | None:
    """Every module name PEFT can target in `model_type` (last path component), with its source."""
    entry = _architectures()["modules"].get(model_type)
    return (frozenset(entry["names"]), entry["source"]) if entry else None


def prequantized(model_name: str, config_dir: Path | None = None) -> tuple[str, str, str | None] | None:
    """(quant_method, where it is read, bitsandbytes 4-bit storage dtype or None) for a checkpoint
    saved already quantized: its config.json's quantization_config, else an Unsloth `-bnb-4bit`
    upload (bitsandbytes with the default uint8 storage, by its naming)."""
    own = checkpoint_config(model_name, config_dir)
    if own is not None:
        quantization = own[0].get("quantization_config")
        if not isinstance(quantization, dict):
            return None
        method = quantization.get("quant_method") or ("bitsandbytes" if quantization.get("load_in_4bit")
                                                      or quantization.get("load_in_8bit") else None)
        if not method:
            return None
        storage = quantization.get("bnb_4bit_quant_storage", "uint8") if quantization.get("load_in_4bit") else None
        return str(method), f"{own[1]} quantization_config", storage
    named = re.search(r"[-_](gptq|awq)([-_]|$)", model_name.rsplit("/", 1)[-1], re.I)
    if named:
        method = named.group(1).lower()
        # Each method's own upload: GPTQ writes quant_method "gptq", AWQ "awq" (transformers
        # utils/quantization_config.py GPTQConfig, AwqConfig).
        example = (f"https://huggingface.co/Qwen/Qwen2.5-7B-Instruct-{'GPTQ-Int4' if method == 'gptq' else 'AWQ'}"
                   "/blob/main/config.json")
        return method, (f"the -{method.upper()} name of pre-quantized uploads (e.g. {example} quantization_config, "
                        f"quant_method \"{method}\")"), None
    if re.search(r"-bnb-4bit$", model_name, re.I):
        return "bitsandbytes", ("the -bnb-4bit name of Unsloth's pre-quantized uploads (e.g. "
                                "https://huggingface.co/unsloth/llama-3-8b-bnb-4bit/blob/main/config.json "
                                "quantization_config, bnb_4bit_quant_storage uint8)"), "uint8"
    return None


# ---- decoder-layer classes (data/layer_classes.json: transformers modeling_*.py _no_split_modules) ----

@lru_cache(maxsize=1)
def _layer_table() -> dict:
    return json.loads((Path(__file__).parent / "data" / "layer_classes.json").read_text("utf-8"))["model_types"]


def layer_classes(model_type: str) -> tuple[tuple[str, ...], frozenset[str], str] | None:
    """(the model_type's decoder-layer classes, every layer class of the table its modeling file
    names, source); None for a model_type the table does not hold."""
    row = _layer_table().get(model_type)
    if row is None:
        return None
    own = tuple(row["layer_classes"])
    return own, frozenset(own) | frozenset(row.get("also_contains", ())), row["source"]


def layer_class_owner(class_name: str) -> str | None:
    """The model_type whose decoder layer `class_name` is, where the table knows it."""
    return next((model_type for model_type, row in _layer_table().items() if class_name in row["layer_classes"]), None)


def remote_code(model_name: str, config_dir: Path | None = None) -> bool:
    """The checkpoint's own config.json maps its classes to code shipped with it (auto_map): what
    the model contains is that code's, not the transformers modeling file's."""
    own = checkpoint_config(model_name, config_dir)
    return own is not None and bool(own[0].get("auto_map"))


def tied_embeddings(model_name: str, config_dir: Path | None = None) -> tuple[bool, str] | None:
    """(tie_word_embeddings, where it is read): the checkpoint's own config.json where it writes the
    key (a multimodal one's text_config too), else the checkpoint table's row (each citing its
    config.json); None when unknown."""
    own = checkpoint_config(model_name, config_dir)
    if own is not None:
        config, path = own
        text = config.get("text_config") if isinstance(config.get("text_config"), dict) else {}
        tied = config.get("tie_word_embeddings", text.get("tie_word_embeddings"))
        return (tied, f"{path} tie_word_embeddings") if isinstance(tied, bool) else None
    entry = _checkpoints().get(_checkpoint_key(model_name))
    if entry is None:
        return None
    return bool(entry.get("tied_embeddings", False)), _config_json_cited(entry["source"])


def _config_json_cited(source: str) -> str:
    """The config.json address a row's source cites (what a message names), else the source."""
    import re

    found = re.search(r"https://huggingface\.co/\S+?/config\.json", source)
    return found.group(0) if found else source
