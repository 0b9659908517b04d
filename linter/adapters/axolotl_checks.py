"""The Axolotl settings its own config validation checks together at launch (the facts
rules/launch_refusals.py reads).

`axolotl train|preprocess config.yml` loads the YAML and validates it (cli/config.py load_cfg ->
utils/config/__init__.py validate_config -> AxolotlInputConfig, whose model validators live in
utils/schemas/validation.py, utils/schemas/config.py and utils/schemas/peft.py; before v0.5.0
the same checks were plain `raise ValueError` lines in utils/config.py validate_config). The
"before" validators see the YAML values as written (`data.get(key)`, so truthiness counts), the
"after" ones the schema's values (unset keys default to None / False). These bindings record
those values: flags as their truthiness, numbers as numbers. A `${VAR}` placeholder in any of
them leaves the file unvalidated here (the launcher decides the value).

Plugins: cli/config.py load_cfg calls each listed plugin's register(cfg) before validate_config,
and a plugin may change the config there (integrations/hatchery sets remove_unused_columns;
nemo_gym and swanlab override register too; base.BasePlugin.register does nothing, and no other
built-in plugin overrides it, checked v0.5.0 to 067b021c8). A file that lists any other plugin
(or one outside axolotl.integrations) is left unvalidated here.
"""

from __future__ import annotations

from ..document import Mapping, Scalar, Sequence
from ..ir import Field, Origin
from ..versions import older_than
from . import _MISSING, Binding, Reader, span_of, templated
from .axolotl_check_bindings import CHECKED_BINDINGS

_VALIDATION = "axolotl/utils/schemas/validation.py"
_RL_DATA = "axolotl/utils/data/rl.py"
_PLUGINS_CHANGING_CFG = ("hatchery", "nemo_gym", "swanlab")


_LEGACY_FLAGS = ("xformers_attention", "sage_attention", "flex_attention", "flash_attention", "sdp_attention",
                 "eager_attention")  # utils/schemas/enums.py LEGACY_ATTN_FLAG_TO_IMPL (v0.17.0+)
_CROSS_ENTROPY = ("cut_cross_entropy", "chunked_cross_entropy", "liger_cross_entropy",
                  "liger_fused_linear_cross_entropy")  # validation.py check_cross_entropy_conflicts
# Keys read through other bindings that the refusals also test.
_ALSO_READ = ("adapter", "load_in_4bit", "load_in_8bit", "rl", "base_model", "optimizer", "micro_batch_size",
              "gradient_accumulation_steps", "max_steps", "gradient_checkpointing", "activation_offloading",
              "save_strategy", "lora_mlp_kernel", "lora_qkv_kernel", "lora_o_kernel", "dpo_loss_type",
              "dpo_loss_weights", "peft_use_dora", "lora_target_linear", "tokens") + _LEGACY_FLAGS + _CROSS_ENTROPY


def _by_first_key(bindings) -> dict[str, tuple[int, ...]]:
    """The indices of `bindings` by the top-level key of each of their paths."""
    index: dict[str, list[int]] = {}
    for position, binding in enumerate(bindings):
        if binding.default is not _MISSING:  # read only where written (see record_checked)
            raise ValueError(f"{binding.key}: a checked binding has no default")
        for path in binding.paths:
            if position not in index.setdefault(path[0], []):
                index[path[0]].append(position)
    return {key: tuple(positions) for key, positions in index.items()}


_CHECKED_BY_KEY = _by_first_key(CHECKED_BINDINGS)


def record_checked(read: Reader) -> None:
    """Record the settings Axolotl's validation checks, and that it checks them."""
    _record_sharegpt(read)
    _record_preparation(read)
    _record_untrainable(read)
    root = read.document.root
    written = {pair.key.value for pair in root.pairs} if isinstance(root, Mapping) else set()
    # The checked bindings under a top-level key the file writes, in table order (none has a
    # default: the others record nothing).
    checked = [CHECKED_BINDINGS[index] for index in sorted(
        {index for key in written & _CHECKED_BY_KEY.keys() for index in _CHECKED_BY_KEY[key]})]
    paths = [path for binding in checked for path in binding.paths if path[0] in written]
    paths += [(key,) for key in _ALSO_READ if key in written]
    if any(templated(read.node(*path)) for path in paths):
        return  # a launcher fills some of them in: which combination reaches Axolotl is unknown
    if not _plugins_leave_config(read):
        return
    read.bind(checked)
    # utils/schemas/validation.py check_lora_kernels_*: any of the three kernel flags
    kernels = [key for key in ("lora_mlp_kernel", "lora_qkv_kernel", "lora_o_kernel") if _truthy(read, key)]
    read.set("adapter.kernels", bool(kernels), *(kernels[:1] or ["lora_mlp_kernel"]))
    # check_dpo: `dpo_loss_type` / `dpo_loss_weights` not None
    losses = [key for key in ("dpo_loss_type", "dpo_loss_weights") if _given(read, key)]
    if losses:
        read.set("training.dpo_loss_mix", True, losses[0])
    flags = [key for key in _LEGACY_FLAGS if _truthy(read, key)]
    if flags:
        read.set("attention.legacy_flags_on", True, flags[0])
    patches = [key for key in _CROSS_ENTROPY if _truthy(read, key)]
    if patches:  # located at the second one (the one that conflicts)
        read.set("training.cross_entropy_patches", len(patches), patches[min(1, len(patches) - 1)])
    _record_grpo_batch(read)
    _record_dataset_templates(read)
    _record_message_fields(read)
    # check_better_transformers (utils/config.py validate_config to v0.4.x, then an after-validator):
    # `self.fp16 or self.bf16`, with bf16 defaulting to "auto" in the schema from v0.5.0
    if "flash_optimum" in written:
        amp = [key for key in ("fp16", "bf16") if _truthy(read, key)]
        read.set("precision.amp_written", bool(amp), *(amp[:1] or ["flash_optimum"]))
        read.set("precision.bf16_unwritten", "bf16" not in written, "flash_optimum")
    read.config.set("launch.validated_by", _fact(read, "axolotl"))
    # utils/data/rl.py load_prepare_dpo_datasets (load_prepare_preference_datasets from v0.7.0): every
    # `rl` kind takes this loader (cli/train.py `if cfg.rl:`), and it built the eval set from
    # test_datasets only, from `rl` itself (f243c2186, #935, v0.4.0) until c513487d1 (#2572, first in
    # v0.9.0) split val_set_size off the training data; HFRLTrainerBuilder then sets eval_strategy "no".
    if read.config.value("training.trainer") not in (None, "sft"):
        read.config.set("eval.preference_split_ignored",
                        Field(["0.4.0", "0.9.0"], Origin(read.key_span("rl"), _RL_DATA, "rl")))


def _record_grpo_batch(read: Reader) -> None:
    """The generation batch check_grpo_batch_size_divisibility divides by trl.num_generations:
    trl.generation_batch_size where written, else micro_batch_size * gradient_accumulation_steps
    (each `or 1`); recorded only where every factor is an integer as written."""
    if read.config.value("training.grpo_num_generations") is None:
        return
    explicit = read.node("trl", "generation_batch_size")
    if explicit is not None and not (isinstance(explicit, Scalar) and explicit.value is None):
        factors, at = [explicit.plain()], ("trl", "generation_batch_size")
    else:
        factors = [(node.plain() if node is not None else None) or 1
                   for node in (read.node("micro_batch_size"), read.node("gradient_accumulation_steps"))]
        at = ("micro_batch_size",) if read.node("micro_batch_size") is not None else ("trl", "num_generations")
    if all(isinstance(f, int) and not isinstance(f, bool) for f in factors):
        read.set("training.grpo_generation_batch", factors[0] * (factors[1] if len(factors) > 1 else 1), *at)


def _record_dataset_templates(read: Reader) -> None:
    """The first datasets[] entry that SFTDataset.check_chat_template_config refuses (utils/schemas/
    datasets.py): `chat_template: jinja` without a `chat_template_jinja` of its own (`_synthetic`
    datasets are built as SyntheticDataset instead)."""
    datasets = read.node("datasets")
    if not isinstance(datasets, Sequence):
        return
    for item in datasets.items:
        if not isinstance(item, Mapping):
            continue
        template, jinja, kind = (item.get(key) for key in ("chat_template", "chat_template_jinja", "type"))
        if template is None or not isinstance(template.value, Scalar) or template.value.value != "jinja":
            continue
        if (jinja is not None and jinja.value.plain()) or (kind is not None and kind.value.plain() == "_synthetic"):
            continue
        span = span_of(read.document, template.key.start, template.value.end)
        read.config.set("data.dataset_jinja_missing", Field(True, Origin(span, written_as="datasets[].chat_template")))
        return


def _record_message_fields(read: Reader) -> None:
    """The first datasets[] entry SFTDataset.handle_legacy_message_fields refuses (utils/schemas/utils.py
    handle_legacy_message_fields_logic, b194e17c2, #2260, v0.7.0): message_field_role (checked first)
    or message_field_content written and differing from message_property_mappings' role / content."""
    datasets = read.node("datasets")
    if not isinstance(datasets, Sequence):
        return
    for item in datasets.items:
        if not isinstance(item, Mapping) or item.get("message_property_mappings") is None:
            continue
        fields = item.plain()
        mappings = fields.get("message_property_mappings")
        if not isinstance(mappings, dict) or fields.get("type") == "_synthetic":
            continue  # None reads as {}: nothing to conflict with
        for legacy, mapped in (("message_field_role", "role"), ("message_field_content", "content")):
            if legacy in fields and mapped in mappings and mappings[mapped] != fields[legacy] \
                    and "${" not in f"{mappings[mapped]}{fields[legacy]}":
                pair = item.get(legacy)
                read.config.set("data.message_field_conflict", Field(mapped, Origin(
                    span_of(read.document, pair.key.start, pair.value.end), written_as=f"datasets[].{legacy}")))
                return


# How the data is prepared: utils/schemas/config.py excess_length_strategy (drop, truncate; raise from
# 92ee4256f, #3321, v0.13.1; read lower-cased by utils/data/utils.py handle_long_seq_in_dataset and, from
# 63a58cfec, #3578, v0.17.0, utils/data/rl.py) and skip_prepare_dataset; datasets[].type as the loaders
# read it (utils/data/rl.py _load_split: a mapping is a user-defined type, loaded as user_defined.default).
MAPPING_TYPE = "<mapping>"  # a `type:` mapping: a user-defined type (its fields under `type:`)
_PREPARATION = (
    Binding("data.excess_length_strategy", "excess_length_strategy", convert=lambda value: str(value).lower()),
    Binding("data.skip_prepare", "skip_prepare_dataset", convert=bool),
)


def _record_preparation(read: Reader) -> None:
    read.bind(_PREPARATION)
    datasets = read.node("datasets")
    if not isinstance(datasets, Sequence):
        return
    types, first = [], None
    for item in datasets.items:
        pair = item.get("type") if isinstance(item, Mapping) else None
        value = pair.value.plain() if pair is not None else None
        types.append(value if isinstance(value, str) else MAPPING_TYPE if isinstance(value, dict) else "")
        if first is None and pair is not None:
            first = pair
    span = span_of(read.document, first.key.start, first.value.end) if first else read.key_span("datasets")
    read.config.set("data.dataset_types", Field(types, Origin(span, written_as="datasets[].type")))


# No release trains a file that gives neither `datasets` nor `pretraining_dataset`: from v0.5.0
# every load refuses it (check_dataset_or_pretraining_dataset, cc3cebfa7, #1239; in every release
# since, v0.5.0 to v0.18.0 and main 067b021c8); before, the training path loaded cfg.datasets
# unguarded (v0.1-v0.2 scripts/finetune.py -> load_prepare_datasets, v0.3.0/v0.4.0 cli/train.py
# -> load_datasets -> prepare_dataset -> load_tokenized_prepared_datasets: `for d in cfg.datasets`
# in the hash of the prepared set, a TypeError on None; the rl loader iterates cfg.datasets too).
# Such a file is read by inference / merge-lora only (cli/inference.py, scripts/finetune.py
# --inference before v0.3.0): nothing in it trains.
_NO_DATA = ("axolotl/utils/schemas/validation.py check_dataset_or_pretraining_dataset (v0.5.0+); "
            "utils/data.py load_tokenized_prepared_datasets iterates cfg.datasets (before)")


def _record_untrainable(read: Reader) -> None:
    """training.enabled False for a file with neither `datasets` nor `pretraining_dataset`
    (written null counts as absent: both checks test `is None` / iterate it), where no listed
    plugin may change the config first."""
    if _given(read, "datasets") or _given(read, "pretraining_dataset") or not _plugins_leave_config(read):
        return
    read.config.set("training.enabled", Field(False, Origin(read.config.file_span, _NO_DATA)))


_SHAREGPT_FILL = ("utils/config/__init__.py normalize_cfg_datasets (9d4225a05, #1664, until fd3b80716): a type: "
                  "sharegpt dataset without `conversation` gets `conversation: <chat_template>`")


def _record_sharegpt(read: Reader) -> None:
    """datasets[] of a sharegpt type (sharegpt, sharegpt:chat, sharegpt.load_role, ...): their types,
    the first `type: sharegpt` dataset's `conversation` (a FastChat template name), or the
    chat_template that fills an empty one."""
    datasets = read.node("datasets")
    if not isinstance(datasets, Sequence):
        return
    types, first_type, conversation, empty = [], None, None, False
    for item in datasets.items:
        pair = item.get("type") if isinstance(item, Mapping) else None
        if pair is None or not isinstance(pair.value, Scalar) or not isinstance(pair.value.value, str):
            continue
        if not pair.value.value.startswith("sharegpt"):
            continue
        types.append(pair.value.value)
        first_type = first_type or pair.value
        if pair.value.value != "sharegpt" or conversation is not None or empty:
            continue
        written = item.get("conversation")
        if written is not None and isinstance(written.value, Scalar) and isinstance(written.value.value, str) \
                and written.value.value:
            conversation = written.value
        elif written is None or isinstance(written.value, Scalar) and not written.value.value:
            empty = True
    if not types:
        return
    document = read.document
    read.config.set("data.sharegpt_types", Field(types, Origin(span_of(document, first_type.start, first_type.end))))
    if conversation is not None:
        read.config.set("data.sharegpt_conversation",
                        Field(conversation.value, Origin(span_of(document, conversation.start, conversation.end))))
    elif empty:
        template = read.node("chat_template")
        if isinstance(template, Scalar) and isinstance(template.value, str) and template.value:
            read.config.set("data.sharegpt_filled", Field(template.value, Origin(
                span_of(document, template.start, template.end), _SHAREGPT_FILL)))


def _plugins_leave_config(read: Reader) -> bool:
    """Do the listed plugins leave the config as written until validation?"""
    node = read.node("plugins")
    if node is None or (isinstance(node, Scalar) and node.value is None):
        return True
    names = node.plain()
    if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
        return False
    return all(name.startswith("axolotl.integrations.") and name.split(".")[2] not in _PLUGINS_CHANGING_CFG
               for name in names)


def _given(read: Reader, key: str) -> bool:
    node = read.node(key)
    return node is not None and not (isinstance(node, Scalar) and node.value is None)


def _truthy(read: Reader, key: str) -> bool:
    node = read.node(key)
    return node is not None and bool(node.plain())


def _fact(read: Reader, value: str) -> Field:
    return Field(value, Origin(read.config.file_span, _VALIDATION))


_LORA_CONFIG = "axolotl/loaders/adapter.py _build_peft_lora_config (task_type=_get_peft_task_type(model))"


def record_lora_config(read: Reader) -> None:
    """What PEFT's LoraConfig receives beyond the bindings (loaders/adapter.py
    _build_peft_lora_config at 067b021c8, since layers_to_transform arrived in 8487b97cf #1118,
    v0.4.0): LoraConfig(target_modules=lora_target_modules, layers_to_transform=
    peft_layers_to_transform, task_type=_get_peft_task_type(model)) for the loaded
    *ForCausalLM / *ForSequenceClassification / *ForTokenClassification model (a task model);
    a string lora_target_modules goes to PEFT as written (a regular expression) unless
    lora_target_linear adds the linear names to it, as a list."""
    config = read.config
    if config.value("adapter.kind") not in ("lora", "qlora"):
        return
    config.set("adapter.task_model", Field(True, Origin(config.file_span, _LORA_CONFIG)))
    target = read.node("lora_target_modules")
    linear = read.node("lora_target_linear")
    if isinstance(target, Scalar) and isinstance(target.value, str) and not (
            isinstance(linear, Scalar) and linear.value):
        read.take("adapter.target_string", "lora_target_modules")


def record_step_cap(read: Reader) -> None:
    """What a written `max_steps` does beside `num_epochs`. From max_steps' introduction
    (3c2ad00d0, #387, 2023-08-14, v0.3.0) Axolotl computes total_num_steps =
    min(calculate_total_num_steps(cfg, train_dataset), cfg.max_steps) (utils/data.py, later
    utils/data/sft.py), the first from num_epochs, and core/trainer_builder.py passes
    `total_num_steps if self.cfg.max_steps else -1` as TrainingArguments.max_steps: a cap, the
    run stops at whichever bound comes first. fee3c13bb (#2611, 2025-05-01, first released in
    v0.10.0) passes `self.cfg.max_steps` itself (core/builders/base.py today: `self.cfg.max_steps
    or total_num_steps or -1`), so the Trainer runs exactly max_steps steps whatever the epochs.
    Recorded as True (caps) for a pinned release before 0.10.0, False from 0.10.0, None unpinned."""
    if read.node("max_steps") is None:
        return
    pinned = read.config.version("axolotl")
    caps = older_than(pinned[0], "0.10.0") if pinned else None
    read.set("training.max_steps_caps", caps, "max_steps")
