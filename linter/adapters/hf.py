"""Hugging Face family: TrainingArguments / TRL `trl sft --config` YAML, accelerate config YAML,
and PEFT `adapter_config.json`.

Key names and defaults from the frameworks' own source (huggingface/trl v1.9.0-26, commit
f2cd57710ae345ea6428ae95363267fcf38a3dc8; huggingface/accelerate after v1.14.0, commit
16cb6eb80dd9aa8b4df1a63ef57863e455d53b83; huggingface/peft after v0.20.0, commit
5d602fdbff04c33c1c4de55cda9d4ae1d7cb7e40; huggingface/transformers: training_args.py at
00349ae87eddc872ffa21a8a54f264375a0056a8, integrations/deepspeed.py at 02348331baea70aa,
utils/quantization_config.py at 000e2231167497a6):
- transformers/training_args.py (TrainingArguments): fp16 False, bf16 False, tf32 None,
  per_device_train_batch_size 8, gradient_accumulation_steps 1, learning_rate 5e-5,
  weight_decay 0.0, adam_beta1 0.9, adam_beta2 0.999, adam_epsilon 1e-8, max_grad_norm 1.0,
  gradient_checkpointing False, fsdp None / "" (off). `deepspeed` is a path, a dict or a JSON
  string starting with "{"; accelerate/utils/deepspeed.py (HfDeepSpeedConfig, which
  transformers/integrations/deepspeed.py subclasses) opens a path with os.path.exists / open(),
  i.e. relative to the process's working directory.
- trl/trainer/base_config.py (_BaseConfig, the base of SFTConfig and the other trainer
  configs since TRL 0.29; in trl/trainer/sft_config.py from 0.19 to 0.28): `bf16` defaults to
  None and __post_init__ sets `bf16 = not fp16` — so bf16 is on unless fp16 is (TRL >= 0.19,
  commits 32ffa1170 and 4c92de000; before 0.19 TrainingArguments' False). gradient_checkpointing
  defaults to True (TRL >= 0.22). SFTConfig: learning_rate 2e-5; `max_length` (`max_seq_length`
  before 0.16, removed in 0.20), `packing`, `dataset_text_field`, ...
- trl/trainer/model_config.py (ModelConfig): `dtype` (`torch_dtype` before 0.23, removed in
  0.27; dtype's default is "float32" since 0.27, None before), load_in_4bit / load_in_8bit,
  bnb_4bit_quant_type "nf4", use_bnb_nested_quant False, bnb_4bit_quant_storage (TRL >= 0.26),
  use_peft False, lora_r 16, lora_alpha 32, lora_target_modules, lora_modules_to_save.
- trl/trainer/utils.py (get_quantization_config, used by trl/scripts/sft.py): a 4-bit
  BitsAndBytesConfig with bnb_4bit_compute_dtype = model_args.dtype ("for consistency with
  model weights"). Without a dtype the compute dtype is float32 in every version: TRL's
  "float32" default, or before 0.27 None, which transformers/utils/quantization_config.py
  (BitsAndBytesConfig) turns into torch.float32.
- accelerate/commands/config/config_args.py (ClusterConfig, process_config): a config needs
  `distributed_type`; compute_environment defaults to LOCAL_MACHINE; mixed_precision
  no|fp16|bf16|fp8 (unset: "no" unless `accelerate launch --mixed_precision` says otherwise,
  commands/launch.py); num_processes is the total number of processes (utils/launch.py:
  nproc_per_node = num_processes // num_machines), i.e. the world size; use_cpu.
  utils/dataclasses.py (DistributedType; DeepSpeedPlugin): deepspeed_config {deepspeed_config_file,
  zero_stage (default 2), offload_param_device / offload_optimizer_device (default "none"),
  gradient_accumulation_steps}. With a deepspeed_config_file, the JSON is the whole DeepSpeed
  config: accelerate refuses a config that also sets zero_stage, the offload devices,
  gradient_accumulation_steps or mixed_precision (DeepSpeedPlugin._deepspeed_config_checks),
  so those keys are not read from the YAML then.
- peft/config.py and peft/tuners/lora/config.py (LoraConfig): peft_type, base_model_name_or_path,
  r, lora_alpha, target_modules, modules_to_save.

How a YAML is told apart: an accelerate config by `distributed_type` (accelerate requires it)
holding one of accelerate's DistributedType names, or by `compute_environment`. A YAML is
TRL's when it holds a key only TRL's SFTConfig / ModelConfig / ScriptArguments define
(`_TRL_KEYS`; `max_length` counts only beside a TrainingArguments key, as it is a common word)
and one more key of the family; then TRL's bf16 default applies. Otherwise it is a plain
TrainingArguments YAML (bf16 default False) when it holds two keys only TrainingArguments
defines (`_TRAINING_ARGUMENTS_KEYS`: `output_dir` or `learning_rate` alone say nothing).

Where a relative `deepspeed:` / `deepspeed_config_file:` path points depends on the directory
the run is launched from, which no file records: the link tries the config's folder, then each
folder above it (`working_directory_candidates`).

Not claimed: PEFT's method_comparison `training_params.json` files (inputs of PEFT's own
benchmark harness, method_comparison/MetaMathQA/utils.py get_train_config, each a partial
override merged onto default_training_params.json) and TRL's tests/invariant/references/*.json
(recorded loss curves, with the arguments of the run as strings).
"""

from __future__ import annotations

import re
from typing import Any

from ..document import Document, Mapping, RenderError, Scalar
from ..fixes import Change, Edit
from ..ir import ConfigIR, Field, Origin, canonical_dtype
from ..versions import older_than, version_of
from . import (Adapter, Reader, as_float, comma_list, deepspeed_link, new_config, set_path, span_of, templated,
               written)

_TRAINING_ARGS = "transformers/training_args.py (TrainingArguments)"
_TRL_CONFIG = "trl/trainer/base_config.py (bf16 = not fp16 when unset, TRL >= 0.19; gradient_checkpointing True)"
_SFT_CONFIG = "trl/trainer/sft_config.py (SFTConfig)"
_TRL_MODEL = "trl/trainer/model_config.py (ModelConfig)"
_TRL_QUANTIZATION = ("trl/trainer/utils.py (get_quantization_config: compute dtype = dtype; without one "
                     "float32, transformers/utils/quantization_config.py BitsAndBytesConfig)")
_DEEPSPEED_PLUGIN = "accelerate/utils/dataclasses.py (DeepSpeedPlugin: zero_stage 2)"

# Field names only TrainingArguments defines (common words such as output_dir, learning_rate,
# max_steps or seed are left out: other formats use them too).
_TRAINING_ARGUMENTS_KEYS = {
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
_TRL_KEYS = {
    "dataset_name", "dataset_config", "dataset_train_split", "dataset_test_split", "dataset_streaming",
    "dataset_text_field", "dataset_num_proc", "dataset_kwargs", "packing", "packing_strategy", "padding_free",
    "eval_packing", "completion_only_loss", "assistant_only_loss", "chat_template_path", "model_init_kwargs",
    "max_seq_length", "use_peft", "lora_r", "lora_target_modules", "lora_target_parameters",
    "lora_modules_to_save", "lora_task_type", "use_rslora", "use_bnb_nested_quant",
}
# Keys of the family that other formats use too (ModelConfig's, and common training words):
# they count toward a TRL file, but do not mark one.
_SHARED_KEYS = {
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
# Jobs on other accelerators (Intel XPU, Ascend NPU, TPU, ...) or CPUs: NVIDIA compute
# capability does not apply to them.
_NOT_CUDA = {"MULTI_CPU", "MULTI_NPU", "MULTI_MLU", "MULTI_SDAA", "MULTI_MUSA", "MULTI_XPU", "XLA",
             "MULTI_HPU", "MULTI_NEURON"}
# For a file that does not parse: a top-level key only these formats have.
_SNIFF = re.compile(r"^(?:distributed_type|compute_environment|dataset_text_field|use_peft|"
                    r"per_device_train_batch_size):", re.M)
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
_MODES = {"bf16": (False, True), "fp16": (True, False), "fp32": (False, False)}


def _kind(document: Document) -> str | None:
    root = document.root
    if not isinstance(root, Mapping):
        return None
    if document.format == "json":
        peft_type = root.value("peft_type")
        return "peft" if isinstance(peft_type, Scalar) and isinstance(peft_type.value, str) else None
    if (_distributed_type(document) in _DISTRIBUTED_TYPES
            or written(document, "compute_environment") in _COMPUTE_ENVIRONMENTS):
        return "accelerate"
    keys = {pair.key.value for pair in root.pairs if isinstance(pair.key.value, str)}
    trainer_keys = keys & _TRAINING_ARGUMENTS_KEYS
    trl_marks = keys & _TRL_KEYS | (keys & {"max_length"} if trainer_keys else set())
    if trl_marks and len(keys & (_TRL_KEYS | _SHARED_KEYS | _TRAINING_ARGUMENTS_KEYS)) >= 2:
        return "trl"
    if len(trainer_keys) >= 2:
        return "trainer"
    return None


def _distributed_type(document: Document) -> str | None:
    value = written(document, "distributed_type")
    if value is False:
        return "NO"  # YAML 1.1 reads an unquoted NO as a boolean
    return value.upper() if isinstance(value, str) else None


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
        "quantization.quant_storage": ("bnb_4bit_quant_storage",),
    }

    def claims(self, document: Document) -> bool:
        return _kind(document) is not None

    def sniffs(self, text: str) -> bool:
        return bool(_SNIFF.search(text))

    def parse(self, document: Document) -> ConfigIR:
        config = new_config(self, document)
        read = Reader(config)
        kind = _kind(document)
        config.schema = "trl" if kind == "trainer" else kind  # TrainingArguments' keys are TRL's too
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
        load_dtype = read.take("model.load_dtype", self._dtype_key(document), convert=canonical_dtype)
        fp16 = read.take("precision.fp16", "fp16", default=False, default_source=_TRAINING_ARGS)
        # TRL's own defaults arrived in v0.19.0 (bf16, PR #3515) and v0.22.0 (gradient
        # checkpointing, PR #3510); a pinned older TRL keeps TrainingArguments' False. An unknown
        # version is taken to be a current one.
        trl_version = version_of("trl", config.path) if is_trl else None
        new_bf16 = is_trl and not (trl_version and older_than(trl_version[0], "0.19.0"))
        new_checkpointing = is_trl and not (trl_version and older_than(trl_version[0], "0.22.0"))
        read.take("precision.bf16", "bf16", default=fp16.value is not True if new_bf16 else False,
                  default_source=_TRL_CONFIG if new_bf16 else _TRAINING_ARGS)
        read.take("precision.tf32", "tf32")
        read.take("attention.implementation", "attn_implementation")
        read.take("memory.gradient_checkpointing", "gradient_checkpointing", default=new_checkpointing,
                  default_source=_TRL_CONFIG if new_checkpointing else _TRAINING_ARGS)
        for key, (name, default) in _DEFAULTS.items():
            read.take(key, name, convert=as_float if isinstance(default, float) else None,
                      default=default, default_source=_TRAINING_ARGS)
        read.take("optimizer.lr", "learning_rate", convert=as_float,
                  default=2e-5 if is_trl else 5e-5, default_source=_SFT_CONFIG if is_trl else _TRAINING_ARGS)
        read.take("optimizer.name", "optim")
        read.take("memory.fused_cross_entropy", "use_liger_kernel")  # liger's fused linear cross entropy
        read.take("scheduler.warmup_steps", "warmup_steps")
        self._betas(read)
        read.take("sequence.packing", "packing")
        read.take("sequence.max_length", "max_length" if document.find("max_length") is not None else "max_seq_length")
        # TrainingArguments.fsdp: "" (off), a string of options ("full_shard auto_wrap"), a list,
        # or a boolean in recent transformers.
        read.take("parallel.fsdp", "fsdp", convert=lambda value: bool(value) and str(value).strip().lower() != "false")
        # The FSDP version (accelerate's FullyShardedDataParallelPlugin: 1 unless fsdp_config says
        # "fsdp_version"/"version" 2); a fsdp_config path is recorded as written: a version not known here.
        for path in (("fsdp_config", "fsdp_version"), ("fsdp_config", "version"), ("fsdp_config",)):
            if read.take("parallel.fsdp_version", *path) is not None:
                break
        if is_trl:
            self._trl_model(read, load_dtype)
        # An inline mapping or JSON string is the DeepSpeed config itself: no file to link.
        deepspeed_link(config, document.find("deepspeed"))

    @staticmethod
    def _dtype_key(document: Document) -> str:
        """ModelConfig's `dtype`, or `torch_dtype` where only that older name is written."""
        return "torch_dtype" if document.find("dtype") is None and document.find("torch_dtype") is not None else "dtype"

    def _betas(self, read: Reader) -> None:
        document = read.document
        nodes = [document.find(name) for name in ("adam_beta1", "adam_beta2")]
        values = [node.value if isinstance(node, Scalar) else default
                  for node, default in zip(nodes, (0.9, 0.999))]
        spans = [span_of(document, node.start, node.end) for node in nodes if isinstance(node, Scalar)]
        origin = Origin(spans[0]) if spans else Origin(read.config.file_span, _TRAINING_ARGS)
        read.config.fields["optimizer.betas"] = Field([as_float(value) for value in values], origin)

    def _trl_model(self, read: Reader, load_dtype: Field | None) -> None:
        config = read.config
        bits = 4 if _true(read.node("load_in_4bit")) else 8 if _true(read.node("load_in_8bit")) else None
        if bits is not None:
            config.fields["quantization.bits"] = Field(
                bits, Origin(read.key_span("load_in_4bit" if bits == 4 else "load_in_8bit")))
        if bits == 4:
            # get_quantization_config computes in the model dtype. "auto" reaches
            # BitsAndBytesConfig as a string it cannot resolve: left absent.
            if load_dtype is not None and load_dtype.value in ("float16", "bfloat16", "float32"):
                config.fields["quantization.compute_dtype"] = Field(load_dtype.value, load_dtype.origin)
            elif load_dtype is None:
                config.fields["quantization.compute_dtype"] = Field(
                    "float32", Origin(read.key_span("load_in_4bit"), _TRL_QUANTIZATION))
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
            read.take("adapter.target_modules", "lora_target_modules", convert=comma_list)
            read.take("adapter.modules_to_save", "lora_modules_to_save", convert=comma_list)

    def _accelerate(self, read: Reader) -> None:
        config, document = read.config, read.document
        distributed_type = _distributed_type(document) or ""
        if _true(read.node("use_cpu")) or distributed_type in _NOT_CUDA:
            return  # not a CUDA job: no GPU precision or GPU count to check
        mixed = read.node("mixed_precision")
        if isinstance(mixed, Scalar) and not templated(mixed):
            # None (and YAML 1.1's unquoted `no`, read as False) mean no mixed precision.
            value = "no" if mixed.value is False or mixed.value is None else str(mixed.value).lower()
            if value in _MIXED_PRECISION:
                origin = Origin(span_of(document, mixed.start, mixed.end))
                for key, on in zip(("precision.fp16", "precision.bf16", "precision.fp8"), _MIXED_PRECISION[value]):
                    config.fields[key] = Field(on, origin)
        read.take("batch.world_size", "num_processes")
        if distributed_type == "FSDP":
            read.set("parallel.fsdp", True, "distributed_type")
            read.take("parallel.fsdp_version", "fsdp_config", "fsdp_version")  # accelerate config_args.py
            read.take("parallel.offload_param", "fsdp_config", "fsdp_offload_params")
        if distributed_type != "DEEPSPEED":
            return
        config_file = document.find("deepspeed_config", "deepspeed_config_file")
        if written(document, "deepspeed_config", "deepspeed_config_file") not in (None, "", "none"):
            deepspeed_link(config, config_file)
            return  # the JSON holds the ZeRO settings; accelerate refuses them in the YAML too
        read.take("parallel.zero_stage", "deepspeed_config", "zero_stage", default=2,
                  default_source=_DEEPSPEED_PLUGIN,
                  anchor=("deepspeed_config",) if document.find("deepspeed_config") else ("distributed_type",))
        for key, name in (("parallel.offload_param", "offload_param_device"),
                          ("parallel.offload_optimizer", "offload_optimizer_device")):
            read.take(key, "deepspeed_config", name, convert=_offloaded)
        read.take("batch.grad_accum", "deepspeed_config", "gradient_accumulation_steps")

    def _peft(self, read: Reader) -> None:
        read.take("model.name", "base_model_name_or_path")
        read.take("adapter.kind", "peft_type", convert=lambda kind: str(kind).lower())
        read.take("adapter.r", "r")
        read.take("adapter.alpha", "lora_alpha")
        read.take("adapter.target_modules", "target_modules", convert=comma_list)
        read.take("adapter.modules_to_save", "modules_to_save", convert=comma_list)

    # ---- rendering ---------------------------------------------------------------------------

    def render(self, config: ConfigIR, change: Change) -> list[Edit]:
        document = config.document
        kind = _kind(document)
        config.schema = "trl" if kind == "trainer" else kind  # TrainingArguments' keys are TRL's too
        if kind == "peft":
            raise RenderError("adapter_config.json is written by PEFT; change the training config instead")
        if kind == "accelerate":
            return self._render_accelerate(document, change)
        if change.key == "precision.mode":
            wanted = dict(zip(("fp16", "bf16"), _MODES[change.value]))
            # A key is written where its value must change, and bf16 is also written out when
            # it is to be on: TRL's default would turn it on, TrainingArguments' would not.
            edits = [set_path(document, (key,), value, after="bf16" if key == "fp16" else "fp16")
                     for key, value in wanted.items() if config.value(f"precision.{key}") != value
                     or document.find(key) is None and key == "bf16" and value]
            return _merge_insertions(edits)
        if change.key in ("model.load_dtype", "quantization.compute_dtype"):
            # TRL computes 4-bit layers in the model dtype: both live in one key. A plain
            # TrainingArguments file has no model dtype to add.
            key = self._dtype_key(document)
            if kind != "trl" and document.find(key) is None:
                raise RenderError("TrainingArguments has no model dtype; set it where the script loads the model")
            return [set_path(document, (key,), change.value)]
        return super().render(config, change)

    def _render_accelerate(self, document: Document, change: Change) -> list[Edit]:
        if change.key == "precision.mode":
            return [set_path(document, ("mixed_precision",), {"fp32": "no"}.get(change.value, change.value))]
        if change.key == "parallel.zero_stage" and document.find("deepspeed_config", "deepspeed_config_file") is None:
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


def _offloaded(device: Any) -> bool:
    """An offload device other than "none" moves data off the GPU (YAML 1.1 may read `none` as text,
    an unquoted `no`/`off` as False)."""
    return device is not False and str(device).lower() != "none"


def _true(node) -> bool:
    return isinstance(node, Scalar) and node.value is True
