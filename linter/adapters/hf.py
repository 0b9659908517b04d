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
(`TRL_KEYS`; `max_length` counts only beside a TrainingArguments key, as it is a common word)
and one more key of the family; then TRL's bf16 default applies. Otherwise it is a plain
TrainingArguments YAML (bf16 default False) when it holds two keys only TrainingArguments
defines (`TRAINING_ARGUMENTS_KEYS`: `output_dir` or `learning_rate` alone say nothing). Either
only where at least half its keys are fields of those classes or of the repository's own
argument classes, and no value is a jsonargparse `class_path` block (hf_kinds.argument_file).

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

from ..changes import PRECISION_MODES
from ..document import Document, RenderError, Scalar
from ..fixes import Edit
from ..lazy_pattern import LazyPattern
from ..ir import ConfigIR, Field, Origin, canonical_dtype
from ..versions import older_than
from . import (_MISSING as _NO_DEFAULT, Adapter, Binding, Reader, as_float, comma_list, deepspeed_link,
               new_config, set_path, span_of, templated, written)
from .model_init import model_init_path, record_model_init_kwargs
from .fsdp_facts import accelerate_wrap_classes, trainer_fsdp_version, trainer_wrap_classes
from .peft_facts import PEFT_BINDINGS as _PEFT_BINDINGS, null_or_absent, record_peft_facts
from .shipped import ACCELERATE_DEEPSPEED_FILE
from .trainer_arguments import (CHECKPOINT_BINDINGS, CHECKPOINTING_BINDING, REENTRANT_BINDING, REPORT_TO_BINDINGS, TRAINER_ARGUMENT_BINDINGS,
                                checkpointing)
from .trl_bindings import TRL_TRAINER_BINDINGS, true_flag, trl_bits
from .hf_kinds import (ACCELERATE_FSDP_BINDINGS, ACCELERATE_PARALLELISM_BINDINGS, classify, distributed_type_of,
                       fsdp_sharding, project_loader, record_passed_on, record_project_arguments,
                       record_repository_launchers, record_target_shorthand, trl_quant_storage)
from .trl_trainers import record_trainer

_TRAINING_ARGS = "transformers/training_args.py (TrainingArguments)"
_TRL_CONFIG = "trl/trainer/base_config.py (bf16 = not fp16 when unset, TRL >= 0.19; gradient_checkpointing True)"
_SFT_CONFIG = "trl/trainer/sft_config.py (SFTConfig)"
_TRL_MODEL = "trl/trainer/model_config.py (ModelConfig)"
_TRL_QUANTIZATION = ("trl/trainer/utils.py (get_quantization_config: compute dtype = dtype; without one "
                     "float32, transformers/utils/quantization_config.py BitsAndBytesConfig)")
_DEEPSPEED_PLUGIN = "accelerate/utils/dataclasses.py (DeepSpeedPlugin: zero_stage 2)"

# The accelerator of jobs on other devices (Intel XPU, Ascend NPU, TPU, ...) or CPUs.
_DEVICES = {"MULTI_CPU": "cpu", "MULTI_NPU": "npu", "MULTI_MLU": "mlu", "MULTI_SDAA": "sdaa", "MULTI_MUSA": "musa",
            "MULTI_XPU": "xpu", "XLA": "tpu", "MULTI_HPU": "hpu", "MULTI_NEURON": "neuron"}
# For a file that does not parse: a top-level key only these formats have.
_SNIFF = LazyPattern(r"^(?:distributed_type|compute_environment|dataset_text_field|dataset_name|use_peft|"
                    r"model_name_or_path|per_device_train_batch_size):"
                    r'|"(?:peft_type|distributed_type|per_device_train_batch_size)"\s*:', re.M)
_MIXED_PRECISION = {"fp16": (True, False, False), "bf16": (False, True, False), "fp8": (False, False, True), "no": (False,) * 3}


def _fsdp_on(value: Any) -> bool:
    # TrainingArguments.fsdp: "" (off), a string of options ("full_shard auto_wrap"), a list, or a
    # boolean in recent transformers.
    return bool(value) and str(value).strip().lower() != "false"


def _offloaded(device: Any) -> bool:
    """An offload device other than "none" moves data off the GPU (YAML 1.1 may read `none` as text,
    an unquoted `no`/`off` as False)."""
    return device is not False and str(device).lower() != "none"


# TrainingArguments / TRL YAML and JSON (HfArgumentParser files).
_TRAINER_BINDINGS = (
    Binding("model.name", "model_name_or_path"),
    # ModelConfig's `dtype`, or `torch_dtype` where only that older name is written.
    Binding("model.load_dtype", "dtype", "torch_dtype", convert=canonical_dtype),
    Binding("precision.fp16", "fp16", default=False, source=_TRAINING_ARGS, after="bf16"),
    Binding("precision.tf32", "tf32"),
    Binding("attention.implementation", "attn_implementation"),
    Binding("batch.micro", "per_device_train_batch_size", default=8, source=_TRAINING_ARGS),
    Binding("batch.grad_accum", "gradient_accumulation_steps", default=1, source=_TRAINING_ARGS),
    Binding("batch.eval_micro", "per_device_eval_batch_size", default=8, source=_TRAINING_ARGS),
    Binding("optimizer.grad_clip", "max_grad_norm", convert=as_float, default=1.0, source=_TRAINING_ARGS),
    Binding("optimizer.weight_decay", "weight_decay", convert=as_float, default=0.0, source=_TRAINING_ARGS),
    Binding("optimizer.eps", "adam_epsilon", convert=as_float, default=1e-8, source=_TRAINING_ARGS),
    Binding("optimizer.name", "optim"),
    Binding("memory.fused_cross_entropy", "use_liger_kernel"),  # liger's fused linear cross entropy
    Binding("scheduler.warmup_steps", "warmup_steps"),
    Binding("training.max_steps", "max_steps", default=-1, source=_TRAINING_ARGS),
    Binding("training.epochs", "num_train_epochs", convert=as_float, default=3.0, source=_TRAINING_ARGS),
    Binding("sequence.packing", "packing"),
    Binding("sequence.max_length", "max_length", "max_seq_length"),
    Binding("parallel.fsdp", "fsdp", convert=_fsdp_on),
    # TRL SFTConfig (trl/trainer/sft_config.py): padding_free (TRL >= 0.16) and packing_strategy
    # (TRL >= 0.19; "bfd"/"ffd" packing is padding-free, sft_trainer.py self.padding_free).
    Binding("sequence.padding_free", "padding_free"),
    Binding("sequence.packing_strategy", "packing_strategy"),
    REENTRANT_BINDING,
    # Written value only: unset, Trainer._wrap_model passes `not model.is_gradient_checkpointing`.
    Binding("parallel.ddp_find_unused", "ddp_find_unused_parameters"),
    # fsdp_config keys lose a leading "fsdp_" (training_args.py __post_init__); written value only.
    Binding("parallel.fsdp_use_orig_params", "fsdp_config.use_orig_params", "fsdp_config.fsdp_use_orig_params"),
    Binding("memory.fsdp_activation_checkpointing", "fsdp_config.activation_checkpointing",
            "fsdp_config.fsdp_activation_checkpointing", convert=lambda on: on if isinstance(on, bool) else str(on).lower() == "true" or None),
    *CHECKPOINT_BINDINGS, *TRL_TRAINER_BINDINGS, *TRAINER_ARGUMENT_BINDINGS, *REPORT_TO_BINDINGS,
)
# Their defaults depend on the TRL version (see _trainer): stated once here, defaults added there.
_BF16 = ("precision.bf16", "bf16")
_LEARNING_RATE = ("optimizer.lr", "learning_rate")
_QLORA_BINDINGS = (
    Binding("quantization.quant_type", "bnb_4bit_quant_type", default="nf4", source=_TRL_MODEL,
            anchor="load_in_4bit"),
    Binding("quantization.double_quant", "use_bnb_nested_quant", default=False, source=_TRL_MODEL,
            anchor="load_in_4bit"),
    Binding("quantization.quant_storage", "bnb_4bit_quant_storage", convert=canonical_dtype),
)
_LORA_BINDINGS = (
    Binding("adapter.r", "lora_r", default=16, source=_TRL_MODEL),
    Binding("adapter.alpha", "lora_alpha", default=32, source=_TRL_MODEL),
    Binding("adapter.target_modules", "lora_target_modules", convert=comma_list),
    Binding("adapter.modules_to_save", "lora_modules_to_save", convert=comma_list),
    Binding("adapter.dora", "use_dora"),
)
# accelerate config YAML (read for CUDA jobs that neither link a DeepSpeed JSON nor run FSDP).
_ACCELERATE_BINDINGS = (
    Binding("batch.world_size", "num_processes"), *ACCELERATE_PARALLELISM_BINDINGS)
_ACCELERATE_DEEPSPEED_BINDINGS = (
    Binding("parallel.zero_stage", "deepspeed_config.zero_stage", default=2, source=_DEEPSPEED_PLUGIN),
    Binding("parallel.offload_param", "deepspeed_config.offload_param_device", convert=_offloaded),
    Binding("parallel.offload_optimizer", "deepspeed_config.offload_optimizer_device", convert=_offloaded),
    Binding("batch.grad_accum", "deepspeed_config.gradient_accumulation_steps"),
    Binding("optimizer.grad_clip", "deepspeed_config.gradient_clipping", convert=as_float),  # written only
)
class HFAdapter(Adapter):
    name = "hf"
    bindings = (*_TRAINER_BINDINGS, Binding(*_BF16, after="fp16"), CHECKPOINTING_BINDING, Binding(*_LEARNING_RATE, convert=as_float),
                *_QLORA_BINDINGS, *_LORA_BINDINGS)

    def bindings_for(self, config: ConfigIR) -> tuple[Binding, ...]:
        kind = config.value("file.kind")
        if kind == "peft":
            return _PEFT_BINDINGS
        if kind == "accelerate":
            return (*_ACCELERATE_BINDINGS, *_ACCELERATE_DEEPSPEED_BINDINGS, *ACCELERATE_FSDP_BINDINGS)
        return self.bindings

    def evidence(self, document: Document) -> int:
        return classify(document)[1]

    def sniffs(self, text: str) -> bool:
        return bool(_SNIFF.search(text))

    def parse(self, document: Document) -> ConfigIR:
        site = project_loader(document)  # the project's own script loads it (loading.py _project_view)
        kind = ("trl" if site.trl else "trainer") if site is not None else classify(document)[0]
        config = new_config(self, document, kind)
        config.schema = "trl" if kind == "trainer" else kind  # TrainingArguments' keys are TRL's too
        read = Reader(config, document)
        if site is not None:
            return record_passed_on(read, site, _TRAINER_BINDINGS, (_BF16, checkpointing(read)), _LEARNING_RATE)
        if kind == "peft":
            read.bind(_PEFT_BINDINGS)
            record_target_shorthand(read, "target_modules")  # LoraConfig.from_pretrained keeps it as written
            record_peft_facts(read)
        elif kind == "accelerate":
            self._accelerate(read)
        else:
            self._trainer(read, is_trl=kind == "trl")
        return config

    # ---- parsing -----------------------------------------------------------------------------

    def _trainer(self, read: Reader, is_trl: bool, script: bool = False) -> None:
        """`script`: a training script's argument call (hf_script.py), not a file a parser reads."""
        config, document = read.config, read.document
        config.set("trainer.fills_deepspeed_auto", Field(True, Origin(config.file_span)))
        own_parser = not script and record_project_arguments(read)
        read.bind(_TRAINER_BINDINGS if not own_parser else
                  [binding for binding in _TRAINER_BINDINGS if binding.default is _NO_DEFAULT])
        fp16 = config.get("precision.fp16")
        # TRL's own defaults arrived in v0.19.0 (bf16, PR #3515) and v0.22.0 (gradient
        # checkpointing, PR #3510); a pinned older TRL keeps TrainingArguments' False. With the TRL
        # version unknown the default is not known either: not recorded (None below).
        trl_version = config.version("trl") if is_trl else None
        new_bf16 = is_trl and (None if trl_version is None else not older_than(trl_version[0], "0.19.0"))
        new_checkpointing = is_trl and (None if trl_version is None else not older_than(trl_version[0], "0.22.0"))
        if own_parser:
            # The repository's own argument classes read this file: their defaults are not TRL's
            # or TrainingArguments', and are not known here.
            for key, name in (_BF16, checkpointing(read)):
                read.take(key, name)
            read.take(*_LEARNING_RATE, convert=as_float)
        else:
            fp16_on = fp16 is not None and fp16.value is True  # then bf16 is False in every TRL
            bf16 = None if templated(document.find("fp16")) else (  # computed fp16: bf16's default unknown
                False if fp16_on and new_bf16 is None else new_bf16 and not fp16_on)
            for (key, name), value, new in ((_BF16, bf16, new_bf16), (checkpointing(read), *[new_checkpointing] * 2)):
                read.take(key, name, **{} if value is None else {
                    "default": value, "default_source": _TRL_CONFIG if new else _TRAINING_ARGS})
            read.take(*_LEARNING_RATE, convert=as_float,
                      default=2e-5 if is_trl else 5e-5, default_source=_SFT_CONFIG if is_trl else _TRAINING_ARGS)
        self._betas(read)
        if is_trl and not script:  # a script's trainer is the class it calls (hf_script.py)
            record_trainer(read)
        # training_args.py FSDPOption: full_shard, shard_grad_op, no_shard, hybrid_shard(_zero2), offload, auto_wrap.
        read.take("parallel.fsdp_sharding", "fsdp", convert=fsdp_sharding)
        if "offload" in str(written(document, "fsdp") or "").lower():
            read.take("parallel.offload_param", "fsdp", convert=lambda _: True)
        trainer_wrap_classes(read)
        # TRL SFTConfig.activation_offloading (trl/models/activation_offloading.py): activations to CPU RAM.
        read.take("memory.activation_offload", "activation_offloading")
        trainer_fsdp_version(read, config.value("parallel.fsdp") is True)
        if is_trl:
            record_model_init_kwargs(read)
        if is_trl and not script:  # ModelConfig: read by TRL's scripts, not by a trainer
            self._trl_model(read, config.get("model.load_dtype"))
        # An inline mapping or JSON string is the DeepSpeed config itself: no file to link.
        deepspeed_link(config, document, document.find("deepspeed"))
        if not config.links and document.find("deepspeed") is None and config.value("parallel.fsdp") is not True:
            record_repository_launchers(config)

    def _betas(self, read: Reader) -> None:
        document = read.document
        nodes = [document.find(name) for name in ("adam_beta1", "adam_beta2")]
        if any(map(templated, nodes)) or getattr(read, "open", False) and None in nodes:
            return  # computed, or (a call with **kwargs) perhaps passed unseen
        values = [node.value if isinstance(node, Scalar) else default for node, default in zip(nodes, (0.9, 0.999))]
        spans = [span_of(document, node.start, node.end) for node in nodes if isinstance(node, Scalar)]
        spelling = "[adam_beta1, adam_beta2]"
        origin = Origin(spans[0], written_as=spelling) if spans else Origin(read.config.file_span, _TRAINING_ARGS, spelling)
        read.config.set("optimizer.betas", Field([as_float(value) for value in values], origin))

    def _trl_model(self, read: Reader, load_dtype: Field | None) -> None:
        config = read.config
        bits = trl_bits(read)
        if bits is not None:
            flag = "load_in_4bit" if bits == 4 else "load_in_8bit"
            config.set("quantization.bits", Field(bits, Origin(read.key_span(flag), written_as=flag)))
            # trl get_quantization_config -> BitsAndBytesConfig, passed to from_pretrained by the trl scripts
            config.set("quantization.bnb_on_load", Field(True, Origin(read.key_span(flag), written_as=flag)))
        if bits == 4:
            # get_quantization_config computes in the model dtype. "auto" reaches
            # BitsAndBytesConfig as a string it cannot resolve: left absent.
            if load_dtype is not None and load_dtype.value in ("float16", "bfloat16", "float32"):
                config.set("quantization.compute_dtype", Field(load_dtype.value, load_dtype.origin))
            elif load_dtype is None:
                config.set("quantization.compute_dtype", Field(
                    "float32", Origin(read.key_span("load_in_4bit"), _TRL_QUANTIZATION, "dtype")))
            read.bind(_QLORA_BINDINGS)
            trl_quant_storage(config, load_dtype)
        if load_dtype is None:
            # trl/trainer/model_config.py ModelConfig.dtype: default "float32" (the weights the
            # `trl` CLI loads when the config names no dtype); for the memory estimate only.
            config.set("model.default_dtype", Field("float32", Origin(config.file_span, _TRL_MODEL, "dtype")))
        use_peft = read.take("adapter.kind", "use_peft", convert=lambda on: "lora" if on is True else None,
                             default=None, default_source=_TRL_MODEL)
        if use_peft is not None and use_peft.value == "lora":
            read.bind(_LORA_BINDINGS)
            # trl/trainer/utils.py get_peft_config: LoraConfig(target_modules=lora_target_modules); a
            # YAML string reaches it unchanged (a one-item list only from TRL 0.8.2, e4b20ecb #1488).
            record_target_shorthand(read, "lora_target_modules")
            # ModelConfig.lora_target_modules / lora_target_parameters default None (9a71e67be, v0.7.11)
            if null_or_absent(read, "lora_target_modules") and null_or_absent(read, "lora_target_parameters"):
                read.set("adapter.peft_default_targets", True, "use_peft")

    def _accelerate(self, read: Reader) -> None:
        config, document = read.config, read.document
        # accelerate's DeepSpeedPlugin.deepspeed_config_process fills "auto" and refuses mismatches.
        config.set("trainer.fills_deepspeed_auto", Field(True, Origin(config.file_span)))
        distributed_type = distributed_type_of(document) or ""
        device = "cpu" if true_flag(read.node("use_cpu")) else _DEVICES.get(distributed_type, "cuda")
        config.set("device.kind", Field(device, Origin(read.key_span("use_cpu" if device == "cpu" else
                                                                     "distributed_type") or config.file_span)))
        mixed = read.node("mixed_precision")
        if isinstance(mixed, Scalar) and not templated(mixed):
            # None (and YAML 1.1's unquoted `no`, read as False) mean no mixed precision.
            value = "no" if mixed.value is False or mixed.value is None else str(mixed.value).lower()
            if value in _MIXED_PRECISION:
                origin = Origin(span_of(document, mixed.start, mixed.end), written_as="mixed_precision")
                for key, on in zip(("precision.fp16", "precision.bf16", "precision.fp8"), _MIXED_PRECISION[value]):
                    config.set(key, Field(on, origin))
        read.bind(_ACCELERATE_BINDINGS)
        if distributed_type == "FSDP":
            read.set("parallel.fsdp", True, "distributed_type")
            read.take("parallel.fsdp_version", "fsdp_config", "fsdp_version")  # accelerate config_args.py
            read.take("parallel.offload_param", "fsdp_config", "fsdp_offload_params")
            accelerate_wrap_classes(read)
            # accelerate/utils/dataclasses.py FullyShardedDataParallelPlugin: fsdp_sharding_strategy (FSDP1;
            # FULL_SHARD default), fsdp_reshard_after_forward (FSDP2: True full shard, False shard grad op).
            read.take("parallel.fsdp_sharding", "fsdp_config", "fsdp_sharding_strategy", convert=fsdp_sharding)
            if config.get("parallel.fsdp_sharding") is None:
                read.take("parallel.fsdp_sharding", "fsdp_config", "fsdp_reshard_after_forward",
                          convert=lambda on: "SHARD_GRAD_OP" if on is False else "FULL_SHARD")
            read.bind(ACCELERATE_FSDP_BINDINGS)
        if distributed_type != "DEEPSPEED":
            return
        config_file = document.find("deepspeed_config", "deepspeed_config_file")
        if written(document, "deepspeed_config", "deepspeed_config_file") not in (None, "", "none"):
            deepspeed_link(config, document, config_file, ACCELERATE_DEEPSPEED_FILE)
            return  # the JSON holds the ZeRO settings; accelerate refuses them in the YAML too
        zero_stage, *others = _ACCELERATE_DEEPSPEED_BINDINGS
        read.take(zero_stage.key, *zero_stage.paths[0], default=zero_stage.default, default_source=zero_stage.source,
                  anchor=("deepspeed_config",) if document.find("deepspeed_config") else ("distributed_type",))
        read.bind(others)

    # ---- rendering ---------------------------------------------------------------------------

    def render_precision(self, document: Document, config: ConfigIR, mode: str) -> list[Edit]:
        kind = config.value("file.kind")
        if kind == "peft":
            raise RenderError("adapter_config.json is written by PEFT; change the training config instead")
        if kind == "accelerate":
            return [set_path(document, ("mixed_precision",), {"fp32": "no"}.get(mode, mode))]
        wanted = dict(zip(("fp16", "bf16"), PRECISION_MODES[mode]))
        # A key is written where its value must change, and bf16 is also written out when it is
        # to be on: TRL's default would turn it on, TrainingArguments' would not.
        edits = [self.write(document, config, f"precision.{key}", value)
                 for key, value in wanted.items() if config.value(f"precision.{key}") != value
                 or document.find(key) is None and key == "bf16" and value]
        return _merge_insertions(edits)

    def render_value(self, document: Document, config: ConfigIR, key: str, value: Any) -> list[Edit]:
        kind = config.value("file.kind")
        if kind == "peft":
            raise RenderError("adapter_config.json is written by PEFT; change the training config instead")
        if kind == "accelerate":
            if key == "parallel.zero_stage" and document.find("deepspeed_config", "deepspeed_config_file") is None:
                return super().render_value(document, config, key, value)
            if key in ("parallel.fsdp_sync_module_states", "parallel.fsdp_state_dict_type") and config.value("parallel.fsdp"):
                return super().render_value(document, config, key, value)
            raise RenderError(f"accelerate configs have no key for {key}")
        if key in ("model.load_dtype", "quantization.compute_dtype"):
            # TRL computes 4-bit layers in the model dtype: both live in one key. A plain
            # TrainingArguments file has no model dtype to add.
            path = (model_init_path(document, key)
                    or self.binding(config, "model.load_dtype").path_in(document))
            if kind != "trl" and document.find(*path) is None:
                raise RenderError("TrainingArguments has no model dtype; set it where the script loads the model")
            return [set_path(document, path, value)]
        return super().render_value(document, config, key, value)


def _merge_insertions(edits: list[Edit]) -> list[Edit]:
    """Two keys inserted at one point become one edit (the engine rejects overlapping edits)."""
    merged: list[Edit] = []
    for edit in edits:
        if merged and edit.start == edit.end == merged[-1].start == merged[-1].end:
            merged[-1] = Edit(edit.path, edit.start, edit.end, merged[-1].content + edit.content)
        else:
            merged.append(edit)
    return merged
