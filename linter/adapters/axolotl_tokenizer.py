"""Axolotl's tokenizer settings (axolotl-ai-cloud/axolotl, bare mirror at 067b021c8).

- loaders/tokenizer.py load_tokenizer (utils/models.py before #2680): `tokenizer_cls =
  getattr(transformers, cfg.tokenizer_type)` when tokenizer_type is set (AutoTokenizer
  otherwise), then `tokenizer_cls.from_pretrained(cfg.tokenizer_config, ..., use_fast=...)`; a
  concrete class ignores use_fast. tokenizer_config defaults to base_model_config, else
  base_model (utils/config/__init__.py normalize_config; utils/models.py load_tokenizer in v0.4.0).
- Axolotl pins transformers exactly: 4.x through v0.13.2 (transformers==4.57.6), 5.x from v0.14.0
  (transformers==5.0.0; requirements.txt, later pyproject.toml). transformers 5 makes
  LlamaTokenizer a tokenizers-backed class (TokenizersBackend) that loads tokenizer.json.
- fix_untrained_tokens (train.py, #1771) resets the untrained embedding rows.
"""

from __future__ import annotations

from ..ir import Field, Origin
from ..versions import older_than
from ..document import Scalar
from . import Reader

_TRANSFORMERS_5 = "0.14.0"  # the first axolotl release that pins transformers 5 (5.0.0)


def record_tokenizer(read: Reader) -> None:
    _record_processor(read)
    _record_turn_template(read)
    read.take("tokenizer.fix_untrained", "fix_untrained_tokens", convert=lambda value: bool(value))
    if read.take("tokenizer.class", "tokenizer_type") is None:
        return
    # utils/config/__init__.py normalize_config: tokenizer_config or base_model_config or base_model
    if read.take("tokenizer.path", "tokenizer_config") is None and \
            read.take("tokenizer.path", "base_model_config") is None and read.config.get("model.name") is not None:
        read.config.set("tokenizer.path", read.config.get("model.name"))
    pinned = read.config.version("axolotl")
    if pinned is not None and older_than(pinned[0], _TRANSFORMERS_5):
        read.set("tokenizer.transformers_below", "5.0.0", "tokenizer_type")


def _record_processor(read: Reader) -> None:
    """core/builders/causal.py build_collator: with processor_type (loaders/processor.py
    load_processor) an unpacked SFT run collates with MultiModalChatDataCollator and
    get_processing_strategy(processor, ..., cfg.chat_template) (processing_strategies.py), whose
    labels decide the loss; train_on_inputs (utils/schemas/training.py, default False) asks for
    the assistant turns only."""
    if read.take("data.multimodal_processor", "processor_type") is None:
        return
    read.take("data.multimodal_template", "chat_template")
    read.take("data.train_on_prompt", "train_on_inputs", default=False,
              default_source="axolotl/utils/schemas/training.py: train_on_inputs = False")


def _record_turn_template(read: Reader) -> None:
    """The turn terminators of a chat_template dataset (prompt_strategies/chat_template.py): the
    top-level `eot_tokens` (`cfg.get("eot_tokens")`, never the dataset's; 7099343c5, #2364, v0.9.0),
    else `[tokenizer.eos_token]` (v0.5.0-v0.8.x find turn ends by tokenizer.eos_token_id). Recorded:
    what the named template writes (linter/data/chat_templates.json axolotl_templates) and the
    settings that change the eos token or the terminators. Nothing where a dataset brings its own
    template or another tokenizer is named: the template or the eos token is then not known."""
    name = read.config.value("data.chat_template")
    datasets = read.node("datasets")
    if not isinstance(name, str) or datasets is None or any(
            isinstance(entry, dict) and (entry.get("chat_template") or entry.get("chat_template_jinja"))
            for entry in datasets.plain()):
        return
    if any(isinstance(written := read.node(key), Scalar) and written.value not in (None, read.config.value("model.name"))
           for key in ("tokenizer_config", "base_model_config")):
        return
    from ..chat_templates import axolotl_template

    template = axolotl_template(name)
    if template is None:
        return
    tokens, names_eos, source = template
    origin = read.config.get("data.chat_template").origin
    read.config.set("data.template_special_tokens", Field(tokens, Origin(origin.span, f"{source}{name}.jinja")))
    read.config.set("data.template_names_eos", Field(names_eos, Origin(origin.span, f"{source}{name}.jinja")))
    read.take("data.turn_terminators", "eot_tokens", convert=lambda value: value if isinstance(value, list) else [value])
    read.take("tokenizer.eos_written", "special_tokens", "eos_token")
