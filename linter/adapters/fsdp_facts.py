"""Facts about FSDP's auto-wrap policy that several adapters record: the layer classes it wraps."""

from __future__ import annotations

from typing import Any

from ..document import Scalar
from . import Reader, written


def wrap_classes(value: Any) -> Any:
    """transformer_layer_cls_to_wrap: a list, or one string of comma-separated class names
    (accelerate's FullyShardedDataParallelPlugin splits FSDP_TRANSFORMER_CLS_TO_WRAP on ",")."""
    if isinstance(value, str):
        return [item.strip() for item in value.split(",") if item.strip()]
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return [item.strip() for item in value]
    raise TypeError(value)


_TRAINER_CLASS_PATHS = (("fsdp_config", "transformer_layer_cls_to_wrap"),
                        ("fsdp_config", "fsdp_transformer_layer_cls_to_wrap"), ("fsdp_transformer_layer_cls_to_wrap",))


def _fsdp_on(options: Any) -> bool:
    return bool(options) and str(options).strip().lower() != "false"


def own_classes(read: Reader, fsdp_on: bool, paths) -> None:
    """A training config with FSDP on that names wrap classes: an accelerate launcher config's
    FSDP_TRANSFORMER_CLS_TO_WRAP no longer reaches the plugin. transformers training_args.py
    TrainingArguments.__post_init__ overwrites os.environ["FSDP_TRANSFORMER_CLS_TO_WRAP"] with its
    own fsdp_config.transformer_layer_cls_to_wrap (4.44.2, 4.57.6: with the `auto_wrap` option and no
    min_num_params) or passes transformer_cls_names_to_wrap to FullyShardedDataParallelPlugin
    (5.0.0-5.23.0); Axolotl's setup_fsdp_envs writes the same variable. Recorded wherever the names
    are written, even where a release would not use them: the launcher's names are then not certain."""
    if fsdp_on and any(read.document.find(*path) is not None for path in paths):
        read.set("parallel.fsdp_wrap_classes_own", True, *next(
            path for path in paths if read.document.find(*path) is not None))


def trainer_wrap_classes(read: Reader) -> None:
    """The layer classes the FSDP auto-wrap policy receives (transformers training_args.py
    __post_init__: fsdp_config keys lose "fsdp_"; a string becomes a one-item list; the deprecated
    --fsdp_transformer_layer_cls_to_wrap is appended. 4.x passes them to accelerate only with the
    `auto_wrap` option and no min_num_params; 5.x when auto_wrap_policy is TRANSFORMER_BASED_WRAP,
    its default). Recorded only where every release uses them; a fsdp_config path is not read."""
    document = read.document
    options = document.find("fsdp")
    written_options = options.plain() if options is not None and not isinstance(options, Scalar) else \
        written(document, "fsdp")
    own_classes(read, _fsdp_on(written_options), _TRAINER_CLASS_PATHS)
    if "auto_wrap" not in str(written_options or "").lower() or document.find("fsdp_config") is not None \
            and not isinstance(document.find("fsdp_config").plain(), dict):
        return
    policy = written(document, "fsdp_config", "auto_wrap_policy") or \
        written(document, "fsdp_config", "fsdp_auto_wrap_policy")
    if policy not in (None, "TRANSFORMER_BASED_WRAP") or any(
            written(document, *path) not in (None, 0)
            for path in (("fsdp_config", "min_num_params"), ("fsdp_config", "fsdp_min_num_params"),
                         ("fsdp_min_num_params",))):
        return
    for path in _TRAINER_CLASS_PATHS:
        if read.take("parallel.fsdp_wrap_classes", *path, convert=wrap_classes) is not None:
            return


def accelerate_wrap_classes(read: Reader) -> None:
    """accelerate/utils/dataclasses.py FullyShardedDataParallelPlugin.__post_init__: the names reach
    set_auto_wrap_policy only under TRANSFORMER_BASED_WRAP (the default is NO_WRAP)."""
    if written(read.document, "fsdp_config", "fsdp_auto_wrap_policy") == "TRANSFORMER_BASED_WRAP":
        read.take("parallel.fsdp_wrap_classes", "fsdp_config", "fsdp_transformer_layer_cls_to_wrap",
                  convert=wrap_classes)
