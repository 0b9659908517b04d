"""How Hugging Face-family files are told apart, and which script reads them: TrainingArguments and TRL argument files (YAML
or JSON, what HfArgumentParser reads), accelerate configs (YAML or JSON) and PEFT adapter
configs, each by keys only that kind has (see hf.py for the sources of each key list)."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from ..document import Document, Mapping, Scalar
from ..ir import Field, Origin, upper_name
from ..versions import older_than
from . import Binding, written

# Field names only TrainingArguments defines (common words such as output_dir, learning_rate,
# max_steps or seed are left out: other formats use them too).
TRAINING_ARGUMENTS_KEYS = {
    "per_device_train_batch_size", "per_device_eval_batch_size", "gradient_accumulation_steps",
    "num_train_epochs", "lr_scheduler_type", "lr_scheduler_kwargs", "warmup_ratio", "logging_steps",
    "logging_strategy", "save_steps", "save_strategy", "save_total_limit", "eval_strategy",
    "evaluation_strategy", "eval_steps", "fp16", "bf16", "tf32", "deepspeed", "fsdp", "fsdp_config",
    "gradient_checkpointing", "gradient_checkpointing_kwargs", "max_grad_norm", "adam_beta1", "adam_beta2",
    "adam_epsilon", "optim", "report_to", "dataloader_num_workers", "ddp_find_unused_parameters",
    "push_to_hub", "hub_model_id", "remove_unused_columns", "logging_first_step", "load_best_model_at_end",
    "overwrite_output_dir", "torch_compile", "use_liger_kernel",
}
# Field names only TRL defines: SFTConfig (trl/trainer/sft_config.py), ModelConfig
# (trl/trainer/model_config.py) and ScriptArguments (trl/scripts/utils.py), at v1.9, plus
# `max_seq_length` of TRL < 0.20.
TRL_KEYS = {
    "dataset_name", "dataset_config", "dataset_train_split", "dataset_test_split", "dataset_streaming",
    "dataset_text_field", "dataset_num_proc", "dataset_kwargs", "packing", "packing_strategy", "padding_free",
    "eval_packing", "completion_only_loss", "assistant_only_loss", "chat_template_path", "model_init_kwargs",
    "max_seq_length", "use_peft", "lora_r", "lora_target_modules", "lora_target_parameters",
    "lora_modules_to_save", "lora_task_type", "use_rslora", "use_bnb_nested_quant",
    # GRPOConfig's (and RLOOConfig's from 0.22) group and generation-batch fields (linter/data/
    # trl_config_keys.json: no other config defines them)
    "num_generations", "generation_batch_size", "steps_per_generation",
}
# TrainingArguments names a DeepSpeed config uses too (as blocks or with the same meaning).
_SHARED_WITH_DEEPSPEED = {"fp16", "bf16", "tf32", "gradient_accumulation_steps"}
# Keys of the family that other formats use too (ModelConfig's, and common training words):
# they count toward a TRL file, but do not mark one.
SHARED_KEYS = {
    "model_name_or_path", "model_revision", "dtype", "torch_dtype", "attn_implementation", "load_in_4bit",
    "load_in_8bit", "bnb_4bit_quant_type", "bnb_4bit_quant_storage", "lora_alpha", "lora_dropout", "use_dora",
    "trust_remote_code", "max_length", "learning_rate", "output_dir",
}
# accelerate/utils/dataclasses.py: DistributedType and SageMakerDistributedType. YAML 1.1
# reads an unquoted `NO` as False.
_DISTRIBUTED_TYPES = {
    "NO", "MULTI_CPU", "MULTI_GPU", "MULTI_NPU", "MULTI_MLU", "MULTI_SDAA", "MULTI_MUSA", "MULTI_XPU",
    "DEEPSPEED", "FSDP", "XLA", "MEGATRON_LM", "MULTI_HPU", "MULTI_NEURON", "DATA_PARALLEL", "MODEL_PARALLEL",
}
_COMPUTE_ENVIRONMENTS = {"LOCAL_MACHINE", "AMAZON_SAGEMAKER"}

def classify(document: Document) -> tuple[str | None, int]:
    """(kind of file, evidence): peft, accelerate, trl or trainer, and how many keys only that
    kind has. A TrainingArguments file has no key that LLaMA-Factory's YAML lacks, so a plain
    trainer YAML is weak evidence (1); as JSON (HfArgumentParser.parse_json_file) its boolean
    fp16/bf16 and keys such as output_dir tell it from a DeepSpeed config."""
    root = document.root
    if not isinstance(root, Mapping):
        return None, 0
    if (distributed_type_of(document) in _DISTRIBUTED_TYPES
            or written(document, "compute_environment") in _COMPUTE_ENVIRONMENTS):
        return "accelerate", 2  # accelerate loads YAML and JSON alike (config_args.py load_config_from_file)
    keys = {pair.key.value for pair in root.pairs if isinstance(pair.key.value, str)}
    if document.format == "json":
        peft_type = root.value("peft_type")
        if isinstance(peft_type, Scalar) and isinstance(peft_type.value, str):
            return "peft", 2
        booleans = {key for key in ("fp16", "bf16") if isinstance(written(document, key), bool)}
        marks = (keys & TRAINING_ARGUMENTS_KEYS) - _SHARED_WITH_DEEPSPEED | booleans | (keys & {"output_dir"})
        if len(marks) >= 2 and argument_file(document, keys):
            return ("trl" if keys & TRL_KEYS else "trainer"), len(marks)
        return None, 0
    trainer_keys = keys & TRAINING_ARGUMENTS_KEYS
    trl_marks = keys & TRL_KEYS | (keys & {"max_length"} if trainer_keys else set())
    if trl_marks and len(keys & (TRL_KEYS | SHARED_KEYS | TRAINING_ARGUMENTS_KEYS)) >= 2:
        if not argument_file(document, keys):
            return None, 0
        return "trl", len(trl_marks) + _project_parsed(document, keys - _framework_fields())
    if len(trainer_keys) >= 2 and argument_file(document, keys):
        return "trainer", 1 + _project_parsed(document, keys - _framework_fields())
    return None, 0


def _project_parsed(document: Document, own_keys: set[str]) -> int:
    """1 where a parser call of the repository (HfArgumentParser or the project's subclass of it,
    project_args) names a class that defines one of the file's keys no framework field has: that
    parser reads the file, which tells it from another framework's YAML with the same
    TrainingArguments names (LLaMA-Factory's)."""
    if not own_keys:
        return 0
    from ..project_args import project_arguments

    return int(any(cls.parsed and own_keys & cls.fields for cls in project_arguments(document.source.path).classes))


def argument_file(document: Document, keys: set[str]) -> bool:
    """Is this a file for HfArgumentParser (TrlParser) at all? The parser maps each top-level key
    onto a field of its dataclasses: HfArgumentParser.parse_dict / parse_yaml_file /
    parse_json_file refuse a key no field takes (transformers/hf_argparser.py,
    allow_extra_keys=False), and TrlParser.set_defaults_with_config hands such a key on as a
    command-line string (trl/scripts/utils.py). So a file of these parsers may hold a few stale
    or misspelt keys (SCH001 reports them), but at least half its keys are fields of
    TrainingArguments, TRL's argument classes (the trl schema, written from both) or the
    repository's own argument classes (project_args). A file whose keys are mostly unknown to
    all of them, even if it shares a few names with ModelConfig (lora_r, lora_alpha,
    lora_dropout), is read by another program's parser. Nor does a dataclass field of these
    parsers take a `class_path` mapping: that is jsonargparse's syntax for a class argument
    (`optimizer: {class_path: torch.optim.AdamW, init_args: ...}`)."""
    root = document.root
    for pair in root.pairs:
        if isinstance(pair.value, Mapping) and pair.value.get("class_path") is not None:
            return False
    if _value_wrapped(root):
        return False
    known = len(keys & _framework_fields())
    if 2 * known >= len(keys):
        return True
    from ..project_args import project_fields  # only for a file the frameworks' fields do not settle

    return 2 * len(keys & (_framework_fields() | project_fields(document.source.path))) >= len(keys)


# wandb's own entries of a run config: the client's telemetry (`_wandb`) and the legacy file version.
_WANDB_OWN = {"_wandb", "wandb_version"}


def _value_wrapped(root: Mapping) -> bool:
    """wandb's run config (files/config.yaml of a run folder, or a config-defaults.yaml): every key
    wrapped as `{desc: ..., value: ...}` (wandb/sdk/lib/config_util.py dict_add_value_dict, saved
    after `wandb_version: 1` by save_config_file_from_dict; newer clients write `{value: ...}` and
    their `_wandb` entry), which wandb reads back as v["value"] (dict_from_config_file). A Trainer
    logging to wandb dumps all of TrainingArguments there, but HfArgumentParser would hand each
    wrapper to its field as the value: no argument file is written that way."""
    pairs = [pair for pair in root.pairs if pair.key.value not in _WANDB_OWN]
    return bool(pairs) and all(
        isinstance(pair.value, Mapping) and pair.value.get("value") is not None
        and all(inner.key.value in ("value", "desc") for inner in pair.value.pairs) for pair in pairs)


@lru_cache(maxsize=1)
def _framework_fields() -> frozenset[str]:
    """The top-level keys of the trl schema: TrainingArguments' fields (transformers 4.56.2 to
    5.23.0), TRL's ScriptArguments, ModelConfig and trainer configs, and the launcher options
    the trl CLI forwards (see schemas/trl.schema.json `description`)."""
    from ..schema import load

    schema = load("trl")
    return frozenset(schema.root.get("properties", ())) if schema is not None else frozenset()


def upstream_argument_fields() -> frozenset[str]:
    """Every key transformers' TrainingArguments or TRL's argument classes take (the trl schema's
    fields and the TrainingArguments names this module knows, evaluation_strategy included)."""
    return _framework_fields() | TRAINING_ARGUMENTS_KEYS


def distributed_type_of(document: Document) -> str | None:
    value = written(document, "distributed_type")
    if value is False:
        return "NO"  # YAML 1.1 reads an unquoted NO as a boolean
    return value.upper() if isinstance(value, str) else None


def record_project_arguments(read) -> bool:
    """Record the keys this repository's own argument dataclasses define (project_args: the
    classes an HfArgumentParser of the project reads), and the classes its parser calls import
    from another installed package (argument_imports); True when one of them, extending no
    upstream argument class, defines a key that neither TRL nor TrainingArguments has, so
    that the project's parser, not the framework's, reads the file."""
    from ..project_args import project_arguments

    config, root = read.config, read.document.root
    keys = [pair.key.value for pair in root.pairs if isinstance(pair.key.value, str)]
    project = project_arguments(config.path)
    if project.imported:  # e.g. `from alignment import DataArguments` handed to H4ArgumentParser
        scripts: dict[str, set[str]] = {}
        for cls in project.imported:
            scripts.setdefault(cls.module, set()).add(cls.script.relative_to(project.root).as_posix())
        named = "; ".join(f"{module} ({', '.join(sorted(paths)[:3])})" for module, paths in sorted(scripts.items()))
        config.set("arguments.imported_classes", Field(named, Origin(config.file_span, "argument classes of another package")))
    owners = {key: project.defines(key) for key in keys}
    own = sorted(key for key, owner in owners.items() if owner is not None)
    # parse_dict(..., allow_extra_keys=True) ignores keys no field takes: the classes that read this
    # file (or, where it names none of the project's fields, every class the repository parses) do so
    parsed = {cls.name for cls in project.classes if cls.parsed}
    readers = sorted({owners[key].name for key in own}) or sorted(parsed)
    if readers and set(readers) <= project.lenient:
        config.set("arguments.extra_keys_allowed", Field(", ".join(readers), Origin(
            config.file_span, "parsed with allow_extra_keys=True: " + ", ".join(readers))))
    if not own:
        return False
    classes = sorted({owners[key].name for key in own})
    origin = Origin(config.file_span, f"argument classes of this repository: {', '.join(classes)}")
    config.set("arguments.project_keys", Field(own, origin))
    framework_keys = TRAINING_ARGUMENTS_KEYS | TRL_KEYS | SHARED_KEYS
    own_parser = any(not owners[key].upstream_bases for key in own if key not in framework_keys)
    config.set("arguments.project_parser", Field(own_parser, origin))
    return own_parser


def project_loader(document: Document):
    """The project script that loads this YAML itself (project_loaders, decided by the loader)."""
    from ..project_loaders import decided

    return decided(document.source.path) if document.format == "yaml" else None


def record_passed_on(read, site, bindings, written_only, learning_rate):
    """A YAML the project's own script loads (yaml.safe_load) and copies into TrainingArguments /
    a TRL config keyword by keyword (project_loaders.LoaderSite): only the keys it passes on
    reach the framework (the loader's view holds no others), and the framework's defaults are not
    what runs (the code sets the rest), so none are recorded, nor is the file checked against the
    frameworks' key schema. A constant dtype the script's from_pretrained loads in is recorded."""
    from ..ir import Field, Origin
    from . import as_float

    config = read.config
    config.schema = None
    origin = Origin(config.file_span, f"read by the project's own {site.where} (a plain YAML loader)")
    config.set("arguments.project_parser", Field(True, origin))
    from . import _MISSING

    read.bind([binding if binding.default is _MISSING else _written_only(binding) for binding in bindings])
    for key, name in written_only:
        read.take(key, name)
    read.take(*learning_rate, convert=as_float)
    if site.dtype is not None and config.get("model.load_dtype") is None:
        config.set("model.load_dtype", Field(site.dtype, Origin(
            config.file_span, f"from_pretrained(dtype=...) in {site.script.name}:{site.dtype_line}")))
    if site.model is not None:  # the script loads its default model in a dtype it fixes, unquantized
        origin = Origin(config.file_span, f"from_pretrained in {site.script.name}:{site.dtype_line}")
        config.set("model.name", Field(site.model, origin))  # the file's own model key is not read
        config.set("arguments.model_load_in_code", Field(f"{site.script.name}:{site.dtype_line}", origin))
    return config


def _written_only(binding: Binding) -> Binding:
    """`binding` without its framework default: the written value, or nothing."""
    return Binding(binding.key, *(".".join(path) for path in binding.paths), convert=binding.convert,
                   anchor=".".join(binding.anchor), after=binding.after)


def record_repository_launchers(config) -> None:
    """`accelerate launch --config_file X` runs an HfArgumentParser file: where the checkout
    ships sharding launcher configs, one of them may shard this run, and the file cannot say."""
    from ..repository import root_of, sharding_launchers

    root = root_of(config.path)
    found = sharding_launchers(root) if root is not None else []
    if found:
        names = ", ".join(str(path.relative_to(root)) for path in found[:3])
        config.set("launch.repository_sharding", Field(names, Origin(config.file_span, str(root))))


def record_target_shorthand(read, key: str) -> None:
    """A target_modules string "all-linear" that PEFT's LoraConfig receives as written: PEFT
    expands it itself (tuners/tuners_utils.py _maybe_include_all_linear_layers, PEFT >= 0.8.0)."""
    shorthand = written(read.document, key)
    if isinstance(shorthand, str) and shorthand.strip().lower() == "all-linear":
        read.take("adapter.target_shorthand", key)
    elif isinstance(shorthand, str) and key == "lora_target_modules":
        # TRL's ModelConfig: a YAML string reaches LoraConfig unchanged, where PEFT reads it as one
        # regular expression (tuners_utils.py check_target_module_exists, re.fullmatch)
        read.take("adapter.target_string", key)


def exported(value: Any) -> str | None:
    """A config value as the launcher hands it on, `str(value)` (YAML's 0 is "0", true "True");
    null: None (the launch option's default)."""
    return None if value is None or isinstance(value, (dict, list)) else str(value)


# accelerate config fsdp_config (commands/config/config_args.py; launch.py copies each key onto the
# launcher's arguments): written values only.
ACCELERATE_FSDP_BINDINGS = (
    Binding("parallel.fsdp_ram_efficient_loading", "fsdp_config.fsdp_cpu_ram_efficient_loading"),
    Binding("parallel.fsdp_sync_module_states", "fsdp_config.fsdp_sync_module_states"),
    # accelerate commands/config/config_args.py -> launch.py FSDP_USE_ORIG_PARAMS / FSDP_STATE_DICT_TYPE
    # (FullyShardedDataParallelPlugin: FULL_STATE_DICT when unset for FSDP1).
    Binding("parallel.fsdp_use_orig_params", "fsdp_config.fsdp_use_orig_params"),
    Binding("parallel.fsdp_state_dict_type", "fsdp_config.fsdp_state_dict_type", convert=upper_name),
    # the option strings utils/launch.py prepare_multi_gpu_env exports (FSDP_SHARDING_STRATEGY and the
    # others: `str(args.fsdp_x)`) for FullyShardedDataParallelPlugin.__post_init__ to parse
    Binding("parallel.accelerate_fsdp_sharding_strategy", "fsdp_config.fsdp_sharding_strategy", convert=exported),
    Binding("parallel.accelerate_fsdp_reshard", "fsdp_config.fsdp_reshard_after_forward", convert=exported),
    Binding("parallel.accelerate_fsdp_wrap_policy", "fsdp_config.fsdp_auto_wrap_policy", convert=exported),
    Binding("parallel.accelerate_fsdp_backward_prefetch", "fsdp_config.fsdp_backward_prefetch", convert=exported),
    Binding("parallel.accelerate_fsdp_min_num_params", "fsdp_config.fsdp_min_num_params", convert=exported),
)



def fsdp_sharding(value: Any) -> str | None:
    """The sharding strategy named by an FSDP option string or list, or an accelerate strategy
    (a name or its number: torch ShardingStrategy FULL_SHARD=1 ... _HYBRID_SHARD_ZERO2=5)."""
    words = value if isinstance(value, list) else str(value).replace(",", " ").split()
    names = {"1": "FULL_SHARD", "2": "SHARD_GRAD_OP", "3": "NO_SHARD", "4": "HYBRID_SHARD", "5": "HYBRID_SHARD"}
    for word in (str(w).strip().upper() for w in words):
        if word in names:
            return names[word]
        if word in ("FULL_SHARD", "SHARD_GRAD_OP", "NO_SHARD", "HYBRID_SHARD", "HYBRID_SHARD_ZERO2"):
            return "HYBRID_SHARD" if word.startswith("HYBRID") else word
    return None


# trl/trainer/utils.py get_quantization_config: `bnb_4bit_quant_storage=model_config.torch_dtype`
# from 1dae55f90 (huggingface/trl#1863, first in v0.10; `model_args.dtype` from 0.23), until
# ModelConfig.bnb_4bit_quant_storage (default None: transformers' uint8) replaced it in v0.26.0.
_TRL_STORAGE_IS_DTYPE = ("0.10.0", "0.26.0")
_TRL_STORAGE = "trl/trainer/utils.py (get_quantization_config: bnb_4bit_quant_storage = dtype, TRL 0.10 to 0.25)"


def trl_quant_storage(config: Any, load_dtype: Field | None) -> None:
    """The 4-bit storage dtype TRL itself passes where the file writes none: the model dtype on TRL
    0.10 to 0.25, uint8 (transformers' default, nothing recorded) before and after; where TRL's
    version is unknown, a str saying so."""
    if config.get("quantization.quant_storage") is not None or load_dtype is None \
            or load_dtype.value not in ("float16", "bfloat16", "float32"):
        return
    trl = config.version("trl")
    if trl is None:
        value = "unknown (the TRL version decides: 0.10 to 0.25 store 4-bit weights in the model dtype)"
    elif older_than(trl[0], _TRL_STORAGE_IS_DTYPE[0]) or not older_than(trl[0], _TRL_STORAGE_IS_DTYPE[1]):
        return
    else:
        value = load_dtype.value
    config.set("quantization.quant_storage", Field(value, Origin(load_dtype.span, _TRL_STORAGE)))


# accelerate config `parallelism_config` block (commands/config/config_args.py; launch.py exports each
# key as PARALLELISM_CONFIG_*, which ParallelismConfig.__post_init__ reads, accelerate >= 1.10.0, #3682)
# and distributed_type: written values only (every size defaults to 1).
ACCELERATE_PARALLELISM_BINDINGS = (
    Binding("parallel.accelerate_distributed_type", "distributed_type", convert=lambda value: str(value).upper()),
    Binding("parallel.pc_dp_replicate_size", "parallelism_config.parallelism_config_dp_replicate_size"),
    Binding("parallel.pc_dp_shard_size", "parallelism_config.parallelism_config_dp_shard_size"),
    Binding("parallel.pc_tp_size", "parallelism_config.parallelism_config_tp_size"),
    Binding("parallel.pc_cp_size", "parallelism_config.parallelism_config_cp_size"),
    Binding("parallel.pc_sp_size", "parallelism_config.parallelism_config_sp_size"),
    # the process layout utils/launch.py and commands/launch.py _validate_launch_command read
    Binding("parallel.accelerate_num_machines", "num_machines",
            convert=lambda value: value if isinstance(value, int) and not isinstance(value, bool) else None),
    Binding("parallel.accelerate_gpu_ids", "gpu_ids", convert=lambda value: value if isinstance(value, str) else None),
    Binding("parallel.pc_sp_backend", "parallelism_config.parallelism_config_sp_backend"),
    Binding("parallel.pc_cp_backend", "parallelism_config.parallelism_config_cp_backend"),
    Binding("parallel.pc_cp_comm_strategy", "parallelism_config.parallelism_config_cp_comm_strategy"),
    Binding("parallel.pc_sp_attn", "parallelism_config.parallelism_config_sp_attn_implementation"),
)
