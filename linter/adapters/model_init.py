"""TRL trainer configs' `model_init_kwargs`: the keyword arguments the trainer passes to
`from_pretrained` when it receives the model as a name (SFTConfig and DPOConfig from TRL 0.9,
GRPOConfig from 0.14, KTO / ORPO / CPO earlier; trl/trainer/sft_trainer.py
`AutoModelForCausalLM.from_pretrained(model_id, **model_init_kwargs)`).

Read where the file writes them (as a mapping), beside ModelConfig's own keys, which win where
both are written (they are what TRL's command-line scripts load the model with):
- `device_map` (transformers modeling_utils.py / integrations/accelerate.py
  check_and_set_device_map: a device name or index, "auto", "balanced", "balanced_low_0",
  "sequential", or a module-to-device mapping) -> model.device_map;
- `dtype` / `torch_dtype` -> model.load_dtype;
- `quantization_config` as a mapping with `load_in_4bit` / `load_in_8bit`
  (transformers quantizers/auto.py AutoQuantizationConfig.from_dict makes a bitsandbytes config
  of it) -> quantization.bits, and its written `bnb_4bit_quant_type` / `bnb_4bit_compute_dtype`.
"""

from __future__ import annotations

from typing import Any

from ..document import Mapping, Scalar
from ..ir import canonical_dtype

_KWARGS = "model_init_kwargs"


def _device_map(value: Any) -> str:
    if isinstance(value, dict):
        return "map"
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise TypeError(value)
    return str(value).strip().lower()


def _flag(read, *path: str) -> bool:
    node = read.node(*path)
    return isinstance(node, Scalar) and node.value is True


def record_model_init_kwargs(read) -> None:
    """Record the facts of a `model_init_kwargs` mapping (see the module docstring)."""
    config = read.config
    if not isinstance(read.node(_KWARGS), Mapping):
        return
    if read.node(_KWARGS, "device_map") is not None:
        read.take("model.device_map", _KWARGS, "device_map", convert=_device_map)
    if config.get("model.load_dtype") is None:
        name = "dtype" if read.node(_KWARGS, "dtype") is not None else "torch_dtype"
        read.take("model.load_dtype", _KWARGS, name, convert=canonical_dtype)
    quantization = (_KWARGS, "quantization_config")
    if _flag(read, "load_in_4bit") or _flag(read, "load_in_8bit") or not isinstance(read.node(*quantization), Mapping):
        return
    for bits, flag in ((4, "load_in_4bit"), (8, "load_in_8bit")):
        if _flag(read, *quantization, flag):
            read.take("quantization.bits", *quantization, flag, convert=lambda _, bits=bits: bits)
            break
    if config.value("quantization.bits") == 4:
        read.take("quantization.quant_type", *quantization, "bnb_4bit_quant_type")
        read.take("quantization.compute_dtype", *quantization, "bnb_4bit_compute_dtype", convert=canonical_dtype)


def model_init_path(document, key: str) -> tuple[str, ...] | None:
    """Where a fix writes `key` when this module read it from `model_init_kwargs` (ModelConfig's
    own keys absent): the dtype, or a written bitsandbytes config's compute dtype."""
    if not isinstance(document.find(_KWARGS), Mapping) or document.find("load_in_4bit") is not None:
        return None
    if key == "model.load_dtype" and document.find("dtype") is None and document.find("torch_dtype") is None:
        name = "dtype" if document.find(_KWARGS, "dtype") is not None else "torch_dtype"
        return (_KWARGS, name) if document.find(_KWARGS, name) is not None else None
    if key == "quantization.compute_dtype" and isinstance(document.find(_KWARGS, "quantization_config"), Mapping):
        return (_KWARGS, "quantization_config", "bnb_4bit_compute_dtype")
    return None
