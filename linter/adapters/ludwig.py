"""Ludwig YAML configs (model_type: llm, and ECD configs with input/output features).

Key names and defaults from Ludwig's own schema (ludwig-ai/ludwig):
- ludwig/schema/llms/quantization.py: QuantizationConfig — bits 4, bnb_4bit_compute_dtype
  "float16", bnb_4bit_use_double_quant True, bnb_4bit_quant_type "nf4".
- ludwig/utils/llm_utils.py (load_pretrained_from_config): a quantized model is loaded with
  torch_dtype = the compute dtype, so the float16 default also sets the weights' dtype.
- ludwig/schema/trainer.py (FineTuneTrainerConfig): batch_size, gradient_accumulation_steps,
  learning_rate, enable_gradient_checkpointing.
- ludwig/schema/llms/peft.py: adapter.type (lora, adalora, ia3, ...).
- Model type, features, trainer type, prompt: ludwig_features.py.
"""

from __future__ import annotations

import re

from ..document import Document, Mapping, Scalar
from ..fixes import Edit
from ..ir import ConfigIR, Field, Origin, canonical_dtype
from . import Adapter, Binding, Reader, new_config
from .ludwig_features import read_features, read_llm, read_model_kind
from ..lazy_pattern import LazyPattern

_QUANTIZATION = "ludwig/schema/llms/quantization.py"
# For a file that does not parse: a top-level key only Ludwig configs have.
_SNIFF = LazyPattern(r"^(?:input_features|output_features|model_type:\s*llm\b)", re.M)
_LLM_UTILS = "ludwig/utils/llm_utils.py"

# Read where a `quantization:` block exists (its defaults live in that block's schema).
_QUANTIZATION_BINDINGS = (
    Binding("quantization.bits", "quantization.bits", default=4, source=_QUANTIZATION, anchor="quantization"),
    Binding("quantization.compute_dtype", "quantization.bnb_4bit_compute_dtype", convert=canonical_dtype,
            default="float16", source=_QUANTIZATION, anchor="quantization"),
    Binding("quantization.quant_type", "quantization.bnb_4bit_quant_type", default="nf4", source=_QUANTIZATION,
            anchor="quantization"),
    Binding("quantization.double_quant", "quantization.bnb_4bit_use_double_quant", default=True,
            source=_QUANTIZATION, anchor="quantization"),
)


def _init_weights(value):
    return True if value == "default" else value  # LoraConfig.to_config: "default" -> init_lora_weights=True


def _block(value) -> bool:
    if not isinstance(value, dict):
        raise TypeError("a sub-config is a mapping")
    return True  # a block, empty or not: its fields have schema defaults (null is recorded as None)


def _modules(value) -> list:
    """target_modules as Ludwig takes it: a list of names (LoraConfig / IA3Config `list[str] | None`,
    schema_utils.List: a JSON-schema array and a marshmallow List to 0.11, a pydantic list[str] from 0.12).
    A string (`all-linear`, PEFT's shorthand) is refused, never split into characters."""
    if not isinstance(value, list):
        raise TypeError("target_modules is a list of module names")
    return value


def _pattern_keys(value) -> list:
    if not isinstance(value, dict):
        raise TypeError("a pattern is a mapping of module names")
    return list(value)


# Read for LLM configs (model_type: llm), as written (ludwig/schema/llms/peft.py LoraConfig, which
# AdaloraConfig extends: use_rslora / use_dora from a707840b6, v0.10.2; init_lora_weights, alpha_pattern
# and layer_replication from 5fe1e8701, v0.16.0; init_lora_weights "default" is PEFT's True).
_ADAPTER_BINDINGS = (
    Binding("adapter.r", "adapter.r"),
    Binding("adapter.alpha", "adapter.alpha"),
    Binding("adapter.target_modules", "adapter.target_modules", convert=_modules),
    Binding("adapter.dora", "adapter.use_dora"),
    Binding("adapter.rslora", "adapter.use_rslora"),
    Binding("adapter.init_weights", "adapter.init_lora_weights", convert=_init_weights),
    Binding("adapter.alpha_pattern_keys", "adapter.alpha_pattern", convert=_pattern_keys),
    Binding("adapter.layer_replication", "adapter.layer_replication", convert=list),
    Binding("adapter.loftq_config", "adapter.loftq_config", convert=_block),
    Binding("adapter.eva_config", "adapter.eva_config", convert=_block),
)


# ludwig/schema/model_types/utils.py set_llm_parameters: base models whose LoRA target_modules Ludwig
# fills itself when none are written (_set_mixtral_target_modules from 74a71e944 #3852, v0.10.0;
# _set_phi2_target_modules with llm_utils.py _PHI_MODELS; _set_phi3_target_modules; _set_gemma_target_modules;
# read at v0.10.0-v0.17.8, the union of every release's names).
_LUDWIG_FILLS_TARGETS = frozenset({
    "mistralai/Mixtral-8x7B-v0.1", "mistralai/Mixtral-8x7B-Instruct-v0.1",
    "susnato/phi-1_dev", "susnato/phi-1_5_dev", "susnato/phi-2", "microsoft/phi-1", "microsoft/phi-1_5", "microsoft/phi-2",
    "microsoft/Phi-3-mini-4k-instruct", "microsoft/Phi-3-mini-128k-instruct",
    "google/gemma-2b", "google/gemma-2b-it", "google/gemma-7b", "google/gemma-7b-it",
})


def _record_total_step(read: Reader, config: ConfigIR) -> None:
    """The schedule AdaloraConfig.to_config hands PEFT's AdaLoraConfig (ludwig/schema/llms/peft.py):
    tinit / tfinal as written; total_step as written, else the schema default, None before 0.11.0
    and 10000 from 86a97e521 (#4059, v0.11.0), not recorded where the ludwig version is unknown."""
    for key, name in (("adapter.adalora_tinit", "tinit"), ("adapter.adalora_tfinal", "tfinal")):
        if read.node("adapter", name) is not None:  # schema default 0 in every release
            read.take(key, "adapter", name)
    if read.node("adapter", "total_step") is not None:
        read.take("adapter.adalora_total_step", "adapter", "total_step")
        return
    from ..versions import older_than

    pinned = config.version("ludwig")
    before = older_than(pinned[0], "0.11.0") if pinned is not None else None
    if before is not None:
        read.set("adapter.adalora_total_step", None if before else 10000, "adapter")


def _record_default_targets(read: Reader, config: ConfigIR) -> None:
    """A `lora` adapter with no target_modules: ludwig/schema/llms/peft.py LoraConfig.to_config passes
    target_modules=None to peft's LoraConfig (v0.9+; v0.8 passes none at all) unless Ludwig fills them
    for the base model (above); pretrained adapter weights bring their own saved config."""
    if config.value("adapter.kind") != "lora" or config.value("adapter.pretrained_weights"):
        return
    node = read.node("adapter", "target_modules") if isinstance(read.node("adapter"), Mapping) else None
    if node is not None and not (isinstance(node, Scalar) and node.value is None):
        return
    if config.value("model.name") in _LUDWIG_FILLS_TARGETS or not isinstance(config.value("model.name"), str):
        return
    read.set("adapter.peft_default_targets", True, "adapter")


def _record_dora_reach(read: Reader, config: ConfigIR) -> None:
    """Whether use_dora reaches PEFT (ludwig/schema/llms/peft.py): LoraConfig takes the key from a707840b6
    (#3948, v0.10.2) but its to_config passes it only from 337f40746 (#3984, v0.10.3); AdaloraConfig.to_config
    and the other adapters' builders never pass it (read at every tag to v0.17.8). None: the release is unknown."""
    if config.value("adapter.dora") is not True:
        return
    reaches = False
    if config.value("adapter.kind") == "lora":
        from ..versions import older_than

        pinned = config.version("ludwig")
        before = older_than(pinned[0], "0.10.3") if pinned is not None else None
        reaches = None if before is None else not before
    read.set("adapter.dora_reaches_peft", reaches, "adapter", "use_dora")


class LudwigAdapter(Adapter):
    name = "ludwig"
    bindings = (
        Binding("model.name", "base_model"),
        Binding("batch.micro", "trainer.batch_size"),
        Binding("batch.grad_accum", "trainer.gradient_accumulation_steps"),
        Binding("batch.effective", "trainer.effective_batch_size"),
        Binding("optimizer.lr", "trainer.learning_rate"),
        Binding("optimizer.name", "trainer.optimizer.type"),
        Binding("memory.gradient_checkpointing", "trainer.enable_gradient_checkpointing"),
        Binding("sequence.max_length", "preprocessing.global_max_sequence_length"),
        # backend.type picks the execution backend (local, ray, ...); unset, Ludwig uses Ray when a Ray
        # cluster is running (ludwig/config_validation/checks.py check_llm_quantization_backend_incompatibility).
        Binding("training.backend", "backend.type"),
        *_QUANTIZATION_BINDINGS,
        *_ADAPTER_BINDINGS,
    )

    def evidence(self, document: Document) -> int:
        root = document.root
        if not isinstance(root, Mapping):
            return 0
        marks = sum(root.get(key) is not None for key in ("input_features", "output_features"))
        model_type = root.value("model_type")
        if model_type is not None and getattr(model_type, "value", None) in ("llm", "ecd", "gbm"):
            return marks + 1 if root.get("input_features") is not None or root.get("base_model") is not None else 0
        return marks if marks == 2 else 0

    def sniffs(self, text: str) -> bool:
        return bool(_SNIFF.search(text))

    def parse(self, document: Document) -> ConfigIR:
        config = new_config(self, document)
        read = Reader(config, document)
        is_llm = read_model_kind(read) == "llm"
        if is_llm and not config.get("model.kind").origin.is_default:
            # The schema's llm branch alone (schemas/ludwig-llm.schema.json, 80 KB of the full 350 KB):
            # the same checks for a model_type: llm file, read in a fifth of the time.
            config.schema = "ludwig-llm"
        read_features(read, document)
        read.bind(binding for binding in self.bindings
                  if binding not in _QUANTIZATION_BINDINGS and binding not in _ADAPTER_BINDINGS)
        if isinstance(read.node("quantization"), Mapping):
            read.bind(_QUANTIZATION_BINDINGS)
            compute = config.get("quantization.compute_dtype")
            if compute is not None:
                # The model is loaded in the compute dtype: same place, derived (llm_utils.py).
                config.set("model.load_dtype", Field(compute.value, Origin(compute.span, _LLM_UTILS,
                                                                           compute.origin.written_as)))
        if is_llm:
            read_llm(read, document)
            read.bind(_ADAPTER_BINDINGS)
            _record_default_targets(read, config)
            _record_dora_reach(read, config)
            if config.value("adapter.kind") == "adalora":
                # ludwig/trainers/trainer.py (every commit: `git log -S update_and_allocate` finds none)
                # never calls AdaLoraModel.update_and_allocate; PEFT does not call it by itself.
                read.set("adapter.allocates_ranks", False, "adapter")
                _record_total_step(read, config)
            if isinstance(read.node("quantization"), Mapping) and config.value("quantization.backend") in (
                    None, "bitsandbytes"):
                # llm_utils.py load_pretrained_from_config (models/llm.py before): quantization_config =
                # quantization.to_bitsandbytes() for from_pretrained, the checkpoint's own config unread.
                read.set("quantization.bnb_on_load", True, "quantization")
        return config

    def render_value(self, document: Document, config: ConfigIR, key: str, value) -> list[Edit]:
        if key == "model.load_dtype":
            # Ludwig has no key of its own for it: the compute dtype decides (llm_utils.py).
            key = "quantization.compute_dtype"
        return super().render_value(document, config, key, value)
