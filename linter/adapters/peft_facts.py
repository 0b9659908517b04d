"""PEFT `adapter_config.json`: the fields the hf adapter records (peft/config.py PeftConfig and
peft/tuners/lora/config.py LoraConfig, tuners/adalora/config.py AdaLoraConfig, huggingface/peft
at 5d602fdbf, after v0.20.0). PEFT writes the file with save_pretrained; it is never a fix target."""

from __future__ import annotations

from ..document import Scalar
from ..ir import Field, Origin
from . import Binding, comma_list
from .hf_kinds import written


def _layers(value):
    """layers_to_transform / layers_pattern: an int or str as written, a list as a list."""
    return value if isinstance(value, (int, str)) else list(value)


# peft/utils/peft_types.py TaskType: every task but FEATURE_EXTRACTION (a bare AutoModel) has
# PeftModelFor<Task> wrap a model class with a head, whose embedding is a nested module.
_HEAD_TASKS = {"CAUSAL_LM", "SEQ_CLS", "SEQ_2_SEQ_LM", "TOKEN_CLS", "QUESTION_ANS"}


def _task_model(task_type) -> bool:
    return str(task_type).upper() in _HEAD_TASKS


PEFT_BINDINGS = (
    Binding("model.name", "base_model_name_or_path"),
    Binding("adapter.kind", "peft_type", convert=lambda kind: str(kind).lower()),
    Binding("adapter.r", "r"),
    Binding("adapter.alpha", "lora_alpha", "alpha"),  # LoHaConfig / LoKrConfig name it alpha
    Binding("adapter.target_modules", "target_modules", convert=comma_list),
    Binding("adapter.modules_to_save", "modules_to_save", convert=comma_list),
    Binding("adapter.exclude_modules", "exclude_modules"),
    Binding("adapter.target_parameters", "target_parameters", convert=bool),  # LoraConfig, PEFT >= 0.17.0
    # The LoraConfig / AdaLoraConfig fields whose __post_init__ checks rules/peft_configs.py reads.
    Binding("adapter.dora", "use_dora"),
    Binding("adapter.ensure_weight_tying", "ensure_weight_tying"),  # LoraConfig, PEFT >= 0.18.0 (see below)
    Binding("adapter.init_weights", "init_lora_weights"),
    Binding("adapter.loftq_config", "loftq_config", convert=bool),
    Binding("adapter.lora_bias", "lora_bias"),
    Binding("adapter.megatron_config", "megatron_config", convert=bool),
    Binding("adapter.layers_to_transform", "layers_to_transform", convert=_layers),
    Binding("adapter.layers_pattern", "layers_pattern", convert=_layers),
    Binding("adapter.task_model", "task_type", convert=_task_model),
    Binding("adapter.task_type", "task_type", convert=lambda task: str(task).upper()),
    Binding("adapter.adalora_tinit", "tinit"),
    Binding("adapter.adalora_tfinal", "tfinal"),
    Binding("adapter.adalora_total_step", "total_step"),
    # Other config classes' fields whose __post_init__ checks rules/peft_refusal_table.py reads
    # (tuners/prompt_tuning/config.py PromptTuningConfig, oft/config.py OFTConfig, boft/config.py
    # BOFTConfig); inference_mode is PeftConfig's.
    Binding("adapter.inference_mode", "inference_mode"),
    Binding("adapter.prompt_init", "prompt_tuning_init"),
    Binding("adapter.prompt_init_text", "prompt_tuning_init_text"),
    Binding("adapter.tokenizer_name", "tokenizer_name_or_path"),
    Binding("adapter.tokenizer_kwargs", "tokenizer_kwargs", convert=bool),
    Binding("adapter.oft_block_size", "oft_block_size"),
    Binding("adapter.boft_block_size", "boft_block_size"),
    Binding("adapter.boft_block_num", "boft_block_num"),
)


def null_or_absent(read, *path: str) -> bool:
    """The key is absent or written null (None reaches the framework)."""
    node = read.node(*path)
    return node is None or (isinstance(node, Scalar) and node.value is None)


def record_peft_facts(read) -> None:
    """What PEFT's config class receives beyond the bindings: a target_modules string (LoraConfig
    keeps it a str: a regular expression, or "all-linear") and every top-level key
    (peft/config.py PeftConfig.from_pretrained passes each one to the class as a keyword)."""
    config = read.config
    if isinstance(written(read.document, "target_modules"), str):
        read.take("adapter.target_string", "target_modules")
    if isinstance(written(read.document, "target_parameters"), str):  # LoraConfig, PEFT >= 0.17.0
        read.take("adapter.target_parameters_string", "target_parameters")
    feedforward = read.node("feedforward_modules")  # IA3Config
    feedforward = feedforward.plain() if feedforward is not None else None
    if isinstance(feedforward, list) and all(isinstance(name, str) for name in feedforward):
        read.take("adapter.feedforward_modules", "feedforward_modules", convert=list)
    if config.value("adapter.kind") == "road":  # RoadConfig (PEFT >= 0.18.0) names them generically
        read.take("adapter.road_variant", "variant")
        read.take("adapter.road_group_size", "group_size")
    if config.key_tree is not None and isinstance(config.key_tree.value, dict):
        tokens = config.key_tree.value.get("trainable_token_indices")
        if isinstance(tokens, dict):  # layer name -> token ids (a list means the input embedding)
            read.take("adapter.trainable_token_layers", "trainable_token_indices", convert=lambda value: sorted(value))
        config.set("adapter.config_keys", Field(sorted(map(str, config.key_tree.value)), Origin(config.file_span)))
        # LoraConfig rank_pattern / alpha_pattern (PEFT >= 0.6.0, #873): module-name regex -> r / alpha,
        # recorded as the keys in written order and the numbers beside them.
        for name, keys, values in (("rank_pattern", "adapter.rank_pattern_keys", "adapter.rank_pattern_values"),
                                   ("alpha_pattern", "adapter.alpha_pattern_keys", "adapter.alpha_pattern_values")):
            pattern = config.key_tree.value.get(name)
            if isinstance(pattern, dict) and pattern and all(isinstance(key, str) for key in pattern):
                read.take(keys, name, convert=lambda value: list(value))
                numbers = list(pattern.values())
                if all(isinstance(n, (int, float)) and not isinstance(n, bool) for n in numbers):
                    config.set(values, Field(numbers, Origin(read.key_span(name))))
    # peft/tuners/lora/config.py LoraConfig.ensure_weight_tying (d0fa97413, #2803, v0.18.0): default False.
    if config.value("adapter.kind") == "lora" and read.node("ensure_weight_tying") is None:
        config.set("adapter.ensure_weight_tying", Field(False, Origin(
            config.file_span, "peft/tuners/lora/config.py LoraConfig.ensure_weight_tying", "ensure_weight_tying")))
    # peft/tuners/lora/config.py LoraConfig: target_modules defaults to None; LoraModel then takes the
    # model_type's defaults from TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING (target_parameters,
    # peft >= 0.17.0, is the other way to name what the adapter wraps).
    if config.value("adapter.kind") == "lora" and null_or_absent(read, "target_modules") \
            and null_or_absent(read, "target_parameters"):
        if read.node("target_modules") is not None:
            read.set("adapter.peft_default_targets", True, "target_modules")
        else:
            config.set("adapter.peft_default_targets", Field(True, Origin(config.file_span)))
