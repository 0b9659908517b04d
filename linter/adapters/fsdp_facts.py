"""Facts about FSDP that several adapters record: the layer classes its auto-wrap policy wraps, and
the FSDP version a TrainingArguments `fsdp:` config runs."""

from __future__ import annotations

from typing import Any

from ..document import Scalar
from ..versions import older_than
from . import Reader, written

# transformers training_args.py TrainingArguments.__post_init__: 4.x leaves the FSDP version to
# accelerate (FullyShardedDataParallelPlugin reads FSDP_VERSION, which `accelerate launch` sets
# from its config; default 1) and ignores fsdp_config "version" (4.44.2, 4.57.6); 5.0.0 passes
# fsdp_version = fsdp_config.get("version", 1) to the plugin (5.0.0, 5.9.0); 5.10.0 defaults it
# to 2 (`int(self.fsdp_config.get("version", 2))`, 5.10.0 and 5.23.0).
_READS_VERSION, _DEFAULTS_TO_FSDP2 = "5.0.0", "5.10.0"
UNKNOWN_VERSION = "unknown (the transformers version decides)"


def wrap_classes(value: Any) -> Any:
    """transformer_layer_cls_to_wrap: a list, or one string of comma-separated class names
    (accelerate's FullyShardedDataParallelPlugin splits FSDP_TRANSFORMER_CLS_TO_WRAP on ",")."""
    if isinstance(value, str):
        return [item.strip() for item in value.split(",") if item.strip()]
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return [item.strip() for item in value]
    raise TypeError(value)


TRAINER_CLASS_PATHS = (("fsdp_config", "transformer_layer_cls_to_wrap"),
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
    own_classes(read, _fsdp_on(written_options), TRAINER_CLASS_PATHS)
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
    for path in TRAINER_CLASS_PATHS:
        if read.take("parallel.fsdp_wrap_classes", *path, convert=wrap_classes) is not None:
            return


def accelerate_wrap_classes(read: Reader) -> None:
    """accelerate/utils/dataclasses.py FullyShardedDataParallelPlugin.__post_init__: the names reach
    set_auto_wrap_policy only under TRANSFORMER_BASED_WRAP (the default is NO_WRAP)."""
    if written(read.document, "fsdp_config", "fsdp_auto_wrap_policy") == "TRANSFORMER_BASED_WRAP":
        read.take("parallel.fsdp_wrap_classes", "fsdp_config", "fsdp_transformer_layer_cls_to_wrap",
                  convert=wrap_classes)


def trainer_fsdp_version(read: Reader, fsdp_on: bool) -> None:
    """parallel.fsdp_version of a TrainingArguments file with FSDP on: its fsdp_config's version
    (an "fsdp_" prefix is stripped), else the default of the pinned transformers. Before 5.0.0 the
    file does not choose it (accelerate's launcher setting, default 1): nothing recorded, or a str
    where the file writes one it does not use. With
    transformers unknown, a str that no rule reads as a version; a fsdp_config path as written."""
    if not fsdp_on:
        return
    if read.document.find("fsdp_config") is not None and not isinstance(read.document.find("fsdp_config").plain(), dict):
        read.take("parallel.fsdp_version", "fsdp_config")  # a JSON file: the version is not known here
        return
    transformers = read.config.version("transformers")
    path = next((path for path in (("fsdp_config", "fsdp_version"), ("fsdp_config", "version"))
                 if read.document.find(*path) is not None), None)
    if transformers is None:
        read.set("parallel.fsdp_version", UNKNOWN_VERSION, *(path or ("fsdp",)))
    elif older_than(transformers[0], _READS_VERSION):
        if path is not None:  # ignored: the launcher's setting decides, which may be the same
            read.set("parallel.fsdp_version", "unknown (transformers before 5.0.0 ignores it)", *path)
    elif path is None or read.take("parallel.fsdp_version", *path) is None:
        read.set("parallel.fsdp_version", 1 if older_than(transformers[0], _DEFAULTS_TO_FSDP2) else 2, "fsdp")
