"""TrainingArguments fields whose combinations the HF Trainer refuses at launch, read alike from
TrainingArguments / TRL argument files and LLaMA-Factory's YAML (whose training keys reach
transformers' Seq2SeqTrainingArguments unchanged: llamafactory/hparams/training_args.py,
parser.py get_train_args through HfArgumentParser).

Names and defaults from transformers/training_args.py (TrainingArguments), checked in the release
wheels 4.28.1 to 5.23.0: save_steps 500, logging_steps 500, dataloader_num_workers 0; the other fields are
recorded as written only (eval_steps None falls back to logging_steps; lr_scheduler_type,
warmup_ratio, half_precision_backend "auto", fp16_full_eval / bf16_full_eval False,
dataloader_prefetch_factor None, torch_empty_cache_steps None, auto_find_batch_size False,
optim_target_modules None).
"""

from __future__ import annotations

from ..versions import older_than
from . import Binding, as_float, comma_list, strategy, written


# TrainingArguments' checkpoint selection (transformers/training_args.py), read by the HF-family and
# LLaMA-Factory adapters alike; written values only but eval_strategy (evaluation_strategy before 4.41,
# an alias to 4.50.x), "no" in every wheel read (3.5.1 to 5.24.0): no __post_init__ sets it from
# eval_steps or do_eval, nor do TRL's configs or LLaMA-Factory's parser (every tag to v0.9.5).
EVAL_STRATEGY_DEFAULT = "transformers/training_args.py (TrainingArguments eval_strategy \"no\")"
CHECKPOINT_BINDINGS = (
    Binding("checkpoint.load_best", "load_best_model_at_end"),
    Binding("checkpoint.save_strategy", "save_strategy", convert=strategy),
    Binding("checkpoint.save_only_model", "save_only_model"),
    Binding("checkpoint.eval_strategy", "eval_strategy", "evaluation_strategy", convert=strategy, default="no",
            source=EVAL_STRATEGY_DEFAULT),
)

_TRAINING_ARGS = "transformers/training_args.py (TrainingArguments)"


def _lower(value):
    return value.lower() if isinstance(value, str) else value


def _as_written(value):
    """A list is read too (a binding without a conversion reads scalars only)."""
    return value


def _keyword_arguments(value):
    """A mapping as its entries, "name=value" (a scalar) or "name" (anything else); a string (JSON,
    which some releases parse) or another value is not read."""
    if not isinstance(value, dict):
        return None
    return [f"{name}={item}" if isinstance(item, (str, int, float)) and not isinstance(item, bool) else str(name)
            for name, item in value.items()]


def _truth(value):
    """fsdp_config flags as transformers reads them: `str(value).lower()` against "true" / "false"."""
    return {"true": True, "false": False}.get(str(value).lower())


def _written(value):
    return value is not None


# TrainingArguments fsdp_config (keys lose a leading "fsdp_"; the top-level fsdp_min_num_params /
# fsdp_transformer_layer_cls_to_wrap are merged in, 4.32.0-5.9.x __post_init__ / _process_fsdp_args).
_FSDP_CONFIG_BINDINGS = (
    Binding("parallel.trainer_fsdp_ram_efficient", "fsdp_config.cpu_ram_efficient_loading",
            "fsdp_config.fsdp_cpu_ram_efficient_loading", convert=_truth),
    Binding("parallel.trainer_fsdp_sync_states", "fsdp_config.sync_module_states",
            "fsdp_config.fsdp_sync_module_states", convert=_truth),
    Binding("parallel.trainer_fsdp_min_params", "fsdp_config.min_num_params", "fsdp_config.fsdp_min_num_params",
            "fsdp_min_num_params", convert=as_float),
    Binding("parallel.trainer_fsdp_wrap_policy", "fsdp_config.auto_wrap_policy", "fsdp_config.fsdp_auto_wrap_policy"),
    Binding("parallel.trainer_fsdp_layer_classes", "fsdp_config.transformer_layer_cls_to_wrap",
            "fsdp_config.fsdp_transformer_layer_cls_to_wrap", "fsdp_transformer_layer_cls_to_wrap", convert=_written),
    # as _process_fsdp_args hands it to str_to_bool under FSDP2 (5.0.0 on): `str(value).lower()`
    Binding("parallel.trainer_fsdp_reshard", "fsdp_config.reshard_after_forward",
            "fsdp_config.fsdp_reshard_after_forward", convert=lambda value: str(value).lower()),
)


TRAINER_ARGUMENT_BINDINGS = (
    *_FSDP_CONFIG_BINDINGS,
    Binding("scheduler.kwargs", "lr_scheduler_kwargs", convert=_keyword_arguments),
    Binding("scheduler.type", "lr_scheduler_type", convert=_lower),
    Binding("scheduler.warmup_ratio", "warmup_ratio", convert=as_float),
    Binding("checkpoint.save_steps", "save_steps", convert=as_float, default=500, source=_TRAINING_ARGS),
    Binding("checkpoint.eval_steps", "eval_steps", convert=as_float),
    Binding("logging.steps", "logging_steps", convert=as_float, default=500, source=_TRAINING_ARGS),
    Binding("logging.strategy", "logging_strategy", convert=_lower),
    Binding("scheduler.warmup_steps_number", "warmup_steps"),  # default 0; written value only
    Binding("data.data_seed", "data_seed"),  # default None
    Binding("eval.gather_object", "eval_use_gather_object"),  # default False
    Binding("precision.fp16_full_eval", "fp16_full_eval"),
    Binding("precision.bf16_full_eval", "bf16_full_eval"),
    Binding("precision.amp_backend", "half_precision_backend", convert=_lower),
    Binding("data.num_workers", "dataloader_num_workers", default=0, source=_TRAINING_ARGS),
    Binding("data.prefetch_factor", "dataloader_prefetch_factor"),
    Binding("memory.empty_cache_steps", "torch_empty_cache_steps"),
    Binding("parallel.fsdp_options", "fsdp", convert=_as_written),
    Binding("batch.auto_find", "auto_find_batch_size"),
    Binding("training.torch_compile", "torch_compile"),  # default False; written value only
    Binding("optimizer.target_modules", "optim_target_modules", convert=comma_list),
    Binding("checkpoint.best_metric_name", "metric_for_best_model"),
    Binding("checkpoint.label_names", "label_names", convert=_as_written),  # default None: from the model forward
    Binding("batch.accelerator_num_steps", "accelerator_config.gradient_accumulation_kwargs.num_steps"),
    Binding("parallel.sharded_ddp", "sharded_ddp", convert=_as_written),  # fairscale options, up to 4.34.x
    Binding("device.cpu_only", "use_cpu", "no_cuda"),  # default False: the device is the CPU (_setup_devices)
    Binding("checkpoint.greater_is_better", "greater_is_better"),  # default None: inferred from the metric name
    Binding("training.label_smoothing", "label_smoothing_factor", convert=as_float),
)

# report_to for the HF-family files (LLaMA-Factory's adapter reads it as a comma list of names):
# a name or a list of names as written (TrainingArguments wraps a string in a list, comma or not).
def _tracker_list(value):
    return [value] if isinstance(value, str) else value


REPORT_TO_BINDINGS = (Binding("logging.report_to", "report_to", convert=_tracker_list),)


# transformers 5.23.0 renamed TrainingArguments.gradient_checkpointing(_kwargs) to
# activation_checkpointing(_kwargs): the old names stay as deprecated aliases (FutureWarning, "will be
# removed in v6"), read only where the new name is None (training_args.py __post_init__; the Trainer
# reads args.activation_checkpointing). Checked in the PyPI wheels: absent from 5.22.0, present in
# 5.23.0 and 5.24.0. An older release's parser refuses the new names, so they are not read there.
CHECKPOINTING_RENAMED = "5.23.0"
CHECKPOINTING_KEY = "memory.gradient_checkpointing"
_CHECKPOINTING_NAMES = ("activation_checkpointing", "gradient_checkpointing")
# For a fix that adds the key where none is written: the old name, which every release reads.
CHECKPOINTING_BINDING = Binding(CHECKPOINTING_KEY, *reversed(_CHECKPOINTING_NAMES))
# Written value only: transformers' gradient_checkpointing_enable uses {"use_reentrant": True}
# when unset (modeling_utils.py); 5.23.0 forwards activation_checkpointing_kwargs' other keys to
# torch.utils.checkpoint.checkpoint.
REENTRANT_BINDING = Binding("memory.checkpointing_reentrant", *(f"{name}_kwargs.use_reentrant"
                                                                for name in _CHECKPOINTING_NAMES))


def checkpointing(read) -> tuple[str, str]:
    """The IR key of gradient checkpointing and the name that sets it in the file `read` reads, for
    the transformers pinned there: the new name where written (and read by that release), else the
    old one. A null counts as unset, as __post_init__ reads it."""
    transformers = read.config.version("transformers")
    names = _CHECKPOINTING_NAMES
    if transformers is not None and older_than(transformers[0], CHECKPOINTING_RENAMED):
        names = names[1:]
    return CHECKPOINTING_KEY, next((name for name in names if written(read.document, name) is not None), names[-1])
