"""Hugging Face family: TrainingArguments / TRL `trl sft --config` YAML, accelerate config YAML,
and PEFT `adapter_config.json`.

Key names and defaults from the frameworks' own source:
- transformers/training_args.py (TrainingArguments): fp16 False, bf16 False, tf32 None,
  per_device_train_batch_size 8, gradient_accumulation_steps 1, learning_rate 5e-5,
  weight_decay 0.0, adam_beta1 0.9, adam_beta2 0.999, adam_epsilon 1e-8, max_grad_norm 1.0;
  `deepspeed` is a path (or dict) opened relative to the process's working directory
  (transformers/integrations/deepspeed.py, HfDeepSpeedConfig: json.load of the path).
- trl/trainer/sft_config.py (SFTConfig docstring): "bf16: Defaults to True if fp16 is not set,
  instead of False"; learning_rate 2e-5. trl/trainer/model_config.py (ModelConfig): dtype
  (formerly torch_dtype), load_in_4bit/8bit, bnb_4bit_quant_type "nf4", use_bnb_nested_quant,
  use_peft False, lora_r 16, lora_alpha 32, lora_target_modules, lora_modules_to_save.
- trl/trainer/utils.py (get_quantization_config): bnb_4bit_compute_dtype = model_args.dtype; with
  no dtype, transformers' BitsAndBytesConfig computes in float32
  (transformers/utils/quantization_config.py).
- accelerate/commands/config/config_args.py and utils/dataclasses.py: mixed_precision
  no|fp16|bf16|fp8, distributed_type, num_processes, use_cpu, deepspeed_config
  {deepspeed_config_file, zero_stage, offload_param_device, offload_optimizer_device}.
- peft/tuners/lora/config.py (LoraConfig): peft_type, r, lora_alpha, target_modules, modules_to_save.

A YAML is read as TRL's when it holds a key only TRL's SFTConfig/ModelConfig/ScriptArguments
define (`_TRL_KEYS`); otherwise as plain TrainingArguments, whose bf16 default is False.
"""

from __future__ import annotations

from typing import Any

from ..document import Document, Mapping, RenderError, Scalar
from ..fixes import Change, Edit
from ..ir import ConfigIR, Field, Link, Origin, canonical_dtype
from . import Adapter, Reader, as_float, new_config, set_path, span_of, working_directory_candidates

_TRAINING_ARGS = "transformers/training_args.py (TrainingArguments)"
_SFT_CONFIG = "trl/trainer/sft_config.py (SFTConfig: bf16 defaults to not fp16)"
_BNB = "transformers/utils/quantization_config.py (BitsAndBytesConfig: compute dtype float32)"
_TRL_MODEL = "trl/trainer/model_config.py (ModelConfig)"

_TRAINER_KEYS = {
    "per_device_train_batch_size", "gradient_accumulation_steps", "learning_rate", "num_train_epochs",
    "max_steps", "output_dir", "fp16", "bf16", "deepspeed", "gradient_checkpointing", "lr_scheduler_type",
}
_TRL_KEYS = {
    "dataset_name", "dataset_text_field", "packing", "max_length", "max_seq_length", "use_peft", "lora_r",
    "lora_alpha", "lora_target_modules", "load_in_4bit", "load_in_8bit", "completion_only_loss",
    "assistant_only_loss", "dataset_train_split", "use_bnb_nested_quant", "model_name_or_path",
}
_ACCELERATE_KEYS = {"compute_environment", "distributed_type"}
# TrainingArguments defaults for the values the HF Trainer compares with a DeepSpeed config.
_DEFAULTS = {
    "batch.micro": ("per_device_train_batch_size", 8),
    "batch.grad_accum": ("gradient_accumulation_steps", 1),
    "optimizer.grad_clip": ("max_grad_norm", 1.0),
    "optimizer.weight_decay": ("weight_decay", 0.0),
    "optimizer.eps": ("adam_epsilon", 1e-8),
}
_MIXED_PRECISION = {"fp16": (True, False, False), "bf16": (False, True, False), "fp8": (False, False, True),
                    "no": (False, False, False)}


def _kind(document: Document) -> str | None:
    root = document.root
    if document.format == "json":
        return "peft" if isinstance(root, Mapping) and root.get("peft_type") is not None else None
    if not isinstance(root, Mapping):
        return None
    keys = {pair.key.value for pair in root.pairs if isinstance(pair.key.value, str)}
    if keys & _ACCELERATE_KEYS and ("mixed_precision" in keys or "num_processes" in keys):
        return "accelerate"
    if keys & _TRL_KEYS and keys & (_TRAINER_KEYS | _TRL_KEYS) - {"model_name_or_path"}:
        return "trl"
    if len(keys & _TRAINER_KEYS) >= 2 and ("per_device_train_batch_size" in keys or "output_dir" in keys):
        return "trainer"
    return None


class HFAdapter(Adapter):
    name = "hf"
    formats = ("yaml", "json")
    paths = {
        "precision.fp16": ("fp16",),
        "precision.bf16": ("bf16",),
        "precision.tf32": ("tf32",),
        "attention.implementation": ("attn_implementation",),
        "batch.micro": ("per_device_train_batch_size",),
        "batch.grad_accum": ("gradient_accumulation_steps",),
        "optimizer.grad_clip": ("max_grad_norm",),
        "optimizer.lr": ("learning_rate",),
    }

    def claims(self, document: Document) -> bool:
        return _kind(document) is not None

    def parse(self, document: Document) -> ConfigIR:
        config = new_config(self, document)
        read = Reader(config)
        kind = _kind(document)
        if kind == "peft":
            self._peft(read)
        elif kind == "accelerate":
            self._accelerate(read)
        else:
            self._trainer(read, is_trl=kind == "trl")
        return config

    # ---- parsing -----------------------------------------------------------------------------

    def _trainer(self, read: Reader, is_trl: bool) -> None:
        config, document = read.config, read.document
        read.take("model.name", "model_name_or_path")
        dtype_key = "dtype" if document.find("dtype") is not None else "torch_dtype"
        load_dtype = read.take("model.load_dtype", dtype_key, convert=canonical_dtype)
        fp16 = read.take("precision.fp16", "fp16", default=False, default_source=_TRAINING_ARGS)
        if is_trl:
            read.take("precision.bf16", "bf16", default=fp16.value is not True, default_source=_SFT_CONFIG)
        else:
            read.take("precision.bf16", "bf16", default=False, default_source=_TRAINING_ARGS)
        read.take("precision.tf32", "tf32")
        read.take("attention.implementation", "attn_implementation")
        read.take("memory.gradient_checkpointing", "gradient_checkpointing",
                  default=is_trl, default_source=_SFT_CONFIG if is_trl else _TRAINING_ARGS)
        for key, (name, default) in _DEFAULTS.items():
            read.take(key, name, convert=as_float if isinstance(default, float) else None,
                      default=default, default_source=_TRAINING_ARGS)
        read.take("optimizer.lr", "learning_rate", convert=as_float,
                  default=2e-5 if is_trl else 5e-5, default_source=_SFT_CONFIG if is_trl else _TRAINING_ARGS)
        read.take("optimizer.name", "optim")
        self._betas(read)
        read.take("sequence.packing", "packing")
        read.take("sequence.max_length", "max_length" if document.find("max_length") is not None else "max_seq_length")
        if is_trl:
            self._trl_model(read, load_dtype)
        deepspeed = document.find("deepspeed")
        if isinstance(deepspeed, Scalar) and isinstance(deepspeed.value, str) and deepspeed.value.strip():
            # A path; an inline mapping is the DeepSpeed config itself and links nothing.
            config.links.append(Link("deepspeed", deepspeed.value, span_of(document, deepspeed.start, deepspeed.end),
                                     working_directory_candidates(config.path, deepspeed.value.strip())))

    def _betas(self, read: Reader) -> None:
        document = read.document
        written = [document.find(name) for name in ("adam_beta1", "adam_beta2")]
        values = [node.value if isinstance(node, Scalar) else default
                  for node, default in zip(written, (0.9, 0.999))]
        spans = [span_of(document, node.start, node.end) for node in written if isinstance(node, Scalar)]
        origin = Origin(spans[0]) if spans else Origin(read.config.file_span, _TRAINING_ARGS)
        read.config.fields["optimizer.betas"] = Field([as_float(value) for value in values], origin)

    def _trl_model(self, read: Reader, load_dtype: Field | None) -> None:
        config = read.config
        bits = 4 if _true(read.node("load_in_4bit")) else 8 if _true(read.node("load_in_8bit")) else None
        if bits is not None:
            config.fields["quantization.bits"] = Field(
                bits, Origin(read.key_span("load_in_4bit" if bits == 4 else "load_in_8bit")))
        if bits == 4:
            if load_dtype is not None and load_dtype.value in ("float16", "bfloat16", "float32"):
                config.fields["quantization.compute_dtype"] = Field(load_dtype.value, load_dtype.origin)
            elif load_dtype is None:
                config.fields["quantization.compute_dtype"] = Field(
                    "float32", Origin(read.key_span("load_in_4bit"), _BNB))
            read.take("quantization.quant_type", "bnb_4bit_quant_type", default="nf4", default_source=_TRL_MODEL,
                      anchor=("load_in_4bit",))
            read.take("quantization.double_quant", "use_bnb_nested_quant", default=False,
                      default_source=_TRL_MODEL, anchor=("load_in_4bit",))
            read.take("quantization.quant_storage", "bnb_4bit_quant_storage", convert=canonical_dtype)
        use_peft = read.take("adapter.kind", "use_peft", convert=lambda on: "lora" if on is True else None,
                             default=None, default_source=_TRL_MODEL)
        if use_peft is not None and use_peft.value == "lora":
            read.take("adapter.r", "lora_r", default=16, default_source=_TRL_MODEL)
            read.take("adapter.alpha", "lora_alpha", default=32, default_source=_TRL_MODEL)
            read.take("adapter.target_modules", "lora_target_modules", convert=_as_list)
            read.take("adapter.modules_to_save", "lora_modules_to_save", convert=_as_list)

    def _accelerate(self, read: Reader) -> None:
        config, document = read.config, read.document
        if _true(read.node("use_cpu")):
            return  # a CPU job: no GPU precision to check
        mixed = read.node("mixed_precision")
        if isinstance(mixed, Scalar):
            value = "no" if mixed.value is False or mixed.value is None else str(mixed.value).lower()
            if value in _MIXED_PRECISION:
                origin = Origin(span_of(document, mixed.start, mixed.end))
                for key, on in zip(("precision.fp16", "precision.bf16", "precision.fp8"), _MIXED_PRECISION[value]):
                    config.fields[key] = Field(on, origin)
        distributed = read.node("distributed_type")
        distributed_type = str(distributed.value).upper() if isinstance(distributed, Scalar) else ""
        if distributed_type == "FSDP":
            read.set("parallel.fsdp", True, "distributed_type")
        read.take("batch.world_size", "num_processes")
        if distributed_type != "DEEPSPEED":
            return
        read.take("parallel.zero_stage", "deepspeed_config", "zero_stage")
        for key, name in (("parallel.offload_param", "offload_param_device"),
                          ("parallel.offload_optimizer", "offload_optimizer_device")):
            read.take(key, "deepspeed_config", name, convert=lambda device: str(device).lower() not in ("none", "false"))
        read.take("batch.grad_accum", "deepspeed_config", "gradient_accumulation_steps")
        config_file = document.find("deepspeed_config", "deepspeed_config_file")
        if isinstance(config_file, Scalar) and isinstance(config_file.value, str) and config_file.value.strip():
            config.links.append(Link("deepspeed", config_file.value,
                                     span_of(document, config_file.start, config_file.end),
                                     working_directory_candidates(config.path, config_file.value.strip())))

    def _peft(self, read: Reader) -> None:
        read.take("model.name", "base_model_name_or_path")
        read.take("adapter.kind", "peft_type", convert=lambda kind: str(kind).lower())
        read.take("adapter.r", "r")
        read.take("adapter.alpha", "lora_alpha")
        read.take("adapter.target_modules", "target_modules", convert=_as_list)
        read.take("adapter.modules_to_save", "modules_to_save", convert=_as_list)

    # ---- rendering ---------------------------------------------------------------------------

    def render(self, config: ConfigIR, change: Change) -> list[Edit]:
        document = config.document
        kind = _kind(document)
        if kind == "peft":
            raise RenderError("adapter_config.json is written by PEFT; change the training config instead")
        if kind == "accelerate":
            return self._render_accelerate(document, change)
        if change.key == "precision.mode":
            wanted = dict(zip(("fp16", "bf16"), {"bf16": (False, True), "fp16": (True, False),
                                                  "fp32": (False, False)}[change.value]))
            edits = [set_path(document, (key,), value, after="bf16" if key == "fp16" else "fp16")
                     for key, value in wanted.items() if config.value(f"precision.{key}") != value
                     or document.find(key) is None and key == "bf16" and value]
            return _merge_insertions(edits)
        if change.key in ("model.load_dtype", "quantization.compute_dtype"):
            # TRL computes 4-bit layers in the model dtype: both live in one key.
            key = "dtype" if document.find("dtype") is not None else "torch_dtype"
            if document.find(key) is None:
                raise RenderError("no dtype key to change; add `dtype:` by hand")
            return [set_path(document, (key,), change.value)]
        return super().render(config, change)

    def _render_accelerate(self, document: Document, change: Change) -> list[Edit]:
        if change.key == "precision.mode":
            return [set_path(document, ("mixed_precision",), {"fp32": "no"}.get(change.value, change.value))]
        if change.key == "parallel.zero_stage":
            return [set_path(document, ("deepspeed_config", "zero_stage"), change.value)]
        raise RenderError(f"accelerate configs have no key for {change.key}")


def _merge_insertions(edits: list[Edit]) -> list[Edit]:
    """Two keys inserted at one point become one edit, in order: the engine rejects a fix
    whose own edits overlap."""
    merged: list[Edit] = []
    for edit in edits:
        if merged and edit.start == edit.end == merged[-1].start == merged[-1].end:
            merged[-1] = Edit(edit.path, edit.start, edit.end, merged[-1].content + edit.content)
        else:
            merged.append(edit)
    return merged


def _true(node) -> bool:
    return isinstance(node, Scalar) and node.value is True


def _as_list(value: Any) -> Any:
    if isinstance(value, str):
        return [part.strip() for part in value.split(",")] if "," in value else [value]
    return value
