"""Ludwig's model family, feature list and LLM prompt/adapter facts (the config validation reads them).

Sources (ludwig-ai/ludwig):
- ludwig/schema/model_types/base.py: model_type defaults to "ecd"; feature `column` defaults to `name`
  (ludwig/schema/model_types/utils.py).
- ludwig/schema/trainer.py LLMTrainerDataclassField(default="none"): an LLM config with no trainer.type
  does not train (zero/few-shot), since model_type llm exists (0.8).
- ludwig/schema/llms/peft.py: adapter is a type selection (`adapter: lora` or `adapter: {type: lora}`),
  pretrained_adapter_weights, postprocessor.merge_adapter_into_base_model.
- ludwig/schema/llms/prompt.py: prompt.template, prompt.task, prompt.retrieval.type (None: no retrieval).
- ludwig/schema/llms/quantization.py (0.15+): quantization.backend (default bitsandbytes), mode, qat.
"""

from __future__ import annotations

from ..document import Document, Mapping, Scalar, Sequence
from ..ir import Field, Origin
from . import Binding, Reader, span_of

_TRAINER = "ludwig/schema/trainer.py"
_MODEL_TYPES = "ludwig/schema/model_types/base.py"

LLM_BINDINGS = (
    Binding("training.trainer", "trainer.type", default="none", source=_TRAINER, anchor="trainer"),
    Binding("model.multimodal", "is_multimodal"),
    Binding("adapter.pretrained_weights", "adapter.pretrained_adapter_weights"),
    Binding("adapter.merge_on_save", "adapter.postprocessor.merge_adapter_into_base_model"),
    Binding("prompt.template", "prompt.template"),
    Binding("prompt.task", "prompt.task"),
    Binding("prompt.retrieval", "prompt.retrieval.type"),
    Binding("prompt.retrieval_k", "prompt.retrieval.k"),
    Binding("prompt.retrieval_model", "prompt.retrieval.model_name"),
    Binding("quantization.mode", "quantization.mode"),
    Binding("quantization.qat", "quantization.qat"),
    # ludwig/schema/llms/generation.py LLMGenerationConfig.max_new_tokens: schema default 32 in every
    # release; from cb1f7d9d1 (#3713, v0.8.6) schema/model_types/utils.py _set_generation_max_new_tokens
    # replaces a value equal to 32 by the output length, so only the written value is recorded.
    Binding("generation.max_new_tokens", "generation.max_new_tokens"),
)
_QUANTIZATION_BACKEND = Binding("quantization.backend", "quantization.backend", default="bitsandbytes",
                                source="ludwig/schema/llms/quantization.py", anchor="quantization")


def read_model_kind(read: Reader) -> str | None:
    found = read.take("model.kind", "model_type", default="ecd", default_source=_MODEL_TYPES)
    return found.value if found is not None else None


def read_llm(read: Reader, document: Document) -> None:
    """The adapter's type (a string or a block's `type`; a block without one stays unknown), the
    trainer type and the prompt, adapter and quantization keys the LLM checks read."""
    adapter = read.node("adapter")
    if adapter is None:
        read.set("adapter.kind", None, "adapter")
    elif isinstance(adapter, Scalar):
        if adapter.value is None or isinstance(adapter.value, str):
            read.take("adapter.kind", "adapter")
    else:
        read.take("adapter.kind", "adapter", "type")
    read.bind(LLM_BINDINGS)
    if isinstance(read.node("quantization"), Mapping):
        read.bind((_QUANTIZATION_BACKEND,))
    # ludwig/schema/llms/model_parameters.py RoPEScalingConfig: the method is `type` to 0.10.x, `rope_type` from
    # 0.11.0 (86a97e521); an unknown key is dropped (marshmallow EXCLUDE, pydantic extra="ignore").
    rope = read.node("model_parameters", "rope_scaling") if isinstance(read.node("model_parameters"), Mapping) else None
    if isinstance(rope, Mapping):
        read.set("model.rope_scaling_keys", [key for key in ("type", "rope_type", "factor") if _given(rope.value(key))],
                 "model_parameters", "rope_scaling")
    # ludwig/schema/llms/peft.py NamedAdaptersConfig (`adapters:`, 79c226a6a, v0.15.0): its `adapters` map.
    named = read.node("adapters")
    if isinstance(named, Mapping):
        names = named.value("adapters")
        read.set("adapter.named_adapters", [str(pair.key.value) for pair in names.pairs]
                 if isinstance(names, Mapping) else [], "adapters")


def _given(node) -> bool:
    """A key written with a value (not null)."""
    return node is not None and not (isinstance(node, Scalar) and node.value is None)


def _types(document: Document, features) -> tuple[list[str], Scalar | None] | None:
    """Each feature's type, in order, and the first one's node; None where any is not a plain string."""
    if not isinstance(features, Sequence) or not features.items:
        return None
    types, first = [], None
    for item in features.items:
        node = item.value("type") if isinstance(item, Mapping) else None
        if not isinstance(node, Scalar) or not isinstance(node.value, str):
            return None
        types.append(node.value)
        first = first or node
    return types, first


def read_features(read: Reader, document: Document) -> None:
    """data.input_types / data.output_types (located at the first feature's type), the first output
    feature's column and its own preprocessing.max_sequence_length, and the first input feature's
    encoder checkpoint."""
    config = read.config
    for key, name in (("data.input_types", "input_features"), ("data.output_types", "output_features")):
        found = _types(document, read.node(name))
        if found is not None:
            types, first = found
            span = span_of(document, first.start, first.end)
            config.set(key, Field(types, Origin(span, written_as=f"{name}[0].type")))
    outputs, inputs = read.node("output_features"), read.node("input_features")
    if isinstance(outputs, Sequence) and outputs.items and isinstance(outputs.items[0], Mapping):
        first = outputs.items[0]
        node = first.value("column")
        node = first.value("name") if node is None else node
        if isinstance(node, Scalar) and isinstance(node.value, str):
            config.set("data.output_column", Field(node.value, Origin(span_of(document, node.start, node.end),
                                                                      written_as="output_features[0].column")))
        length = first.value("preprocessing")
        length = length.value("max_sequence_length") if isinstance(length, Mapping) else None
        if isinstance(length, Scalar) and isinstance(length.value, int) and not isinstance(length.value, bool):
            config.set("data.output_max_length", Field(length.value, Origin(
                span_of(document, length.start, length.end),
                written_as="output_features[0].preprocessing.max_sequence_length")))
    if isinstance(inputs, Sequence) and inputs.items and isinstance(inputs.items[0], Mapping):
        _read_encoder_checkpoint(read, document, inputs.items[0])


# ludwig/schema/encoders/text_encoders.py: the text encoders whose config has a
# pretrained_model_name_or_path with a default checkpoint (as at 0.17.8), registered under these
# names in every release from 0.9.2 (the first with check_llm_text_encoder_is_not_used_with_ecd) to
# 0.17.8 (read at v0.9.2, v0.10.4, v0.11.0, v0.14.0 and v0.17.8; deberta's default was
# sileod/deberta-v3-base-tasksource-nli before 0.14; flaubert and transformer_xl were dropped in
# 0.14 and modernbert added then, so they are left out). auto_transformer has the field without a
# default; the other text encoders (parallel_cnn, the default, rnn, embed, llm, ...) lack it.
_DEFAULT_CHECKPOINT = {
    "albert": "albert-base-v2", "bert": "bert-base-uncased", "camembert": "camembert-base",
    "deberta": "tasksource/deberta-base-long-nli", "distilbert": "distilbert-base-uncased",
    "electra": "google/electra-small-discriminator", "gpt": "openai-gpt", "gpt2": "gpt2",
    "longformer": "allenai/longformer-base-4096", "roberta": "roberta-base", "t5": "t5-small",
    "xlmroberta": "xlm-roberta-base", "xlnet": "xlnet-base-cased",
}
_TEXT_ENCODERS = "ludwig/schema/encoders/text_encoders.py"
_PATH = "pretrained_model_name_or_path"


def _read_encoder_checkpoint(read: Reader, document: Document, feature: Mapping) -> None:
    """data.encoder_pretrained: the checkpoint the first input feature's encoder loads, as written or
    as its type's default. The type is the encoder's own (`encoder: {type: ...}`, or the pre-0.6
    `encoder: bert` string, whose flat keys utils/backward_compatibility.py
    _upgrade_encoder_decoder_params nests under it), else the `defaults.<feature type>.encoder`
    section's; an unknown type records nothing. Types are matched as written (the JSON schema's enum
    is case-sensitive)."""
    encoder = feature.value("encoder")
    if isinstance(encoder, Scalar) and isinstance(encoder.value, str):
        kind, node, spelled = encoder.value, feature.value(_PATH), f"input_features[0].{_PATH}"
    elif encoder is None or isinstance(encoder, Mapping):
        kind = node = None
        spelled = f"input_features[0].encoder.{_PATH}"
        if encoder is not None:
            if encoder.value("type") is not None and _text(encoder.value("type")) is None:
                return  # a type that is not a plain string
            kind, node = _text(encoder.value("type")), encoder.value(_PATH)
        if kind is None:
            feature_type = _text(feature.value("type"))
            section = read.node("defaults", feature_type, "encoder") if feature_type else None
            if not isinstance(section, Mapping) or (kind := _text(section.value("type"))) is None:
                return  # the feature type's own default encoder (text: parallel_cnn, no checkpoint), or unknown
            if node is None and section.value(_PATH) is not None:
                node, spelled = section.value(_PATH), f"defaults.{feature_type}.encoder.{_PATH}"
    else:
        return
    if isinstance(node, Scalar) and isinstance(node.value, str) and (kind == "auto_transformer"
                                                                     or kind in _DEFAULT_CHECKPOINT):
        read.config.set("data.encoder_pretrained", Field(node.value, Origin(
            span_of(document, node.start, node.end), written_as=spelled)))
    elif node is None and kind in _DEFAULT_CHECKPOINT:
        pair = next((pair for pair in feature.pairs if pair.key.value == "encoder"), None)
        span = span_of(document, pair.key.start, pair.value.end) if pair else read.config.file_span
        read.config.set("data.encoder_pretrained", Field(_DEFAULT_CHECKPOINT[kind], Origin(
            span, _TEXT_ENCODERS, f"input_features[0].encoder.{_PATH}")))


def _text(node) -> str | None:
    return node.value if isinstance(node, Scalar) and isinstance(node.value, str) else None
