"""Axolotl YAML configs (`axolotl train config.yml`).

Key names, defaults and derivations from axolotl's own source (axolotl-ai-cloud/axolotl at
commit 067b021c8b87a9e5e380b9173c704cf7340e30f5, the commit the shared corpus comes from):
- src/axolotl/utils/schemas/config.py (AxolotlInputConfig): `bf16` default "auto", `fp16`
  default None, `tf32` default "auto", `bfloat16` / `float16` (half precision without AMP),
  `gradient_checkpointing` default False (or "offload"/"offload_disk"), `sequence_len` default
  512, `attn_implementation`; `normalize_attn_implementation` maps the deprecated boolean flags
  to `attn_implementation`, the first true one in the order of LEGACY_ATTN_FLAG_TO_IMPL
  (utils/schemas/enums.py): xformers, sage, flex, flash (flash_attention_2), sdp (sdpa), eager.
- src/axolotl/utils/schemas/peft.py (LoraConfig): `adapter` None means "train all parameters";
  `load_in_8bit` / `load_in_4bit` default False and are refused without an adapter;
  `lora_r`, `lora_alpha`, `lora_target_modules` (str or list), `lora_modules_to_save`,
  `bnb_config_kwargs`.
- src/axolotl/utils/schemas/training.py: `micro_batch_size`, `gradient_accumulation_steps`,
  `learning_rate` (a string such as YAML 1.1's "2e-5" is converted to float), `optimizer`
  default "adamw_torch_fused", `weight_decay`, `max_grad_norm`.
- src/axolotl/utils/config/__init__.py, resolve_dtype: `bf16: auto` becomes
  is_torch_bf16_gpu_available() unless fp16 is on (then False); where it resolves False and
  `fp16` is unset (and `float16` is not set), fp16 becomes True; bf16 on turns fp16 off. The
  model dtype (torch_dtype) is bfloat16 with bf16 or bfloat16, else float16 with load_in_8bit,
  fp16 or float16, else float32.
- src/axolotl/loaders/model.py: a 4-bit BitsAndBytesConfig is built only for `adapter: qlora`
  with `load_in_4bit`: compute dtype = torch_dtype, double quant on, nf4, quant storage
  bfloat16 (float32 for jamba / qwen2_moe / nemotron_h without DeepSpeed or FSDP: the model
  type is not in the file, so the storage is recorded only where DeepSpeed or FSDP is set);
  `bnb_config_kwargs` overrides any of them. FSDP is on when `fsdp_config` or `fsdp` is set.
- `deepspeed:` path: normalize_config opens it with os.path.exists(cfg.deepspeed), i.e.
  relative to the working directory; axolotl's package ships no DeepSpeed JSON (pyproject
  package-data: yaml and jinja only) — `axolotl fetch deepspeed_configs` downloads them into
  ./deepspeed_configs (cli/utils/fetch.py). The working directory is not in the file, so a link
  tries the config's folder, then each folder above it; those names are known (adapters/shipped.py).
Values written as `${VAR}` (launcher templates, e.g. axolotl's .runpod config) are absent here.
"""

from __future__ import annotations

import re
from typing import Any

from ..changes import PRECISION_MODES
from ..document import Document, Mapping, Node, RenderError, Scalar, Sequence
from ..fixes import Edit
from ..ir import ConfigIR, Field, Origin, canonical_dtype
from ..versions import older_than
from . import (Adapter, Binding, Reader, as_bool_or_auto, as_float, deepspeed_link, new_config, set_path, strategy,
               templated, written)
from .axolotl_checks import record_checked, record_lora_config, record_step_cap
from .axolotl_tokenizer import record_tokenizer
from .shipped import AXOLOTL_DEEPSPEED
from .fsdp_facts import own_classes, wrap_classes

_CONFIG = "axolotl/utils/schemas/config.py"
_PEFT = "axolotl/utils/schemas/peft.py"
_TRAINING = "axolotl/utils/schemas/training.py"
_RESOLVE_DTYPE = "axolotl/utils/config/__init__.py (resolve_dtype)"
_LOADER = "axolotl/loaders/model.py"
_TRAINER_BUILDER = "axolotl/core/trainer_builder.py (no rl: AxolotlTrainer, the HF Trainer's compute_loss)"

# Keys that an Axolotl config has next to `base_model`; Ludwig's LLM configs also have
# base_model (and `adapter`), but with a Ludwig model_type.
# Keys of an Axolotl config next to `base_model` (AxolotlInputConfig); the ones no other
# supported format has count as evidence.
_CLAIM_KEYS = ("datasets", "micro_batch_size", "adapter", "sequence_len", "val_set_size", "num_epochs",
               "load_in_4bit", "load_in_8bit", "sample_packing", "pretraining_dataset", "rl", "lora_r")
_EXCLUSIVE_KEYS = ("base_model", "micro_batch_size", "sequence_len", "val_set_size", "num_epochs", "sample_packing",
                   "pretraining_dataset", "lora_r", "lora_target_linear", "lora_target_modules", "wandb_project",
                   "dataset_prepared_path", "eval_sample_packing", "pad_to_sequence_len", "special_tokens")
_LUDWIG_MODEL_TYPES = ("llm", "ecd", "gbm")
# For a file that does not parse: both lines at the start of a line, in any order.
_SNIFF = (re.compile(r"^base_model:", re.M),
          re.compile(r"^(?:micro_batch_size|sequence_len|load_in_4bit|datasets):", re.M))
# Deprecated boolean attention flags, in the priority order of LEGACY_ATTN_FLAG_TO_IMPL.
_LEGACY_ATTENTION = (("xformers_attention", "xformers"), ("sage_attention", "sage"),
                     ("flex_attention", "flex_attention"), ("flash_attention", "flash_attention_2"),
                     ("sdp_attention", "sdpa"), ("eager_attention", "eager"))


def _present(node: Node | None) -> bool:
    """Set to something: not absent, not left empty, not a placeholder."""
    return node is not None and not templated(node) and not (isinstance(node, Scalar) and node.value is None)


def _as_list(value: Any) -> Any:
    return [value] if isinstance(value, str) else value


def _checkpointing(value: Any) -> bool:
    return value in (True, "offload", "offload_disk")


# Read only for `adapter: qlora` with `load_in_4bit` (the only case axolotl builds a 4-bit
# BitsAndBytesConfig for); `bnb_config_kwargs` overrides axolotl's own choices.
_QLORA_BINDINGS = (
    Binding("quantization.compute_dtype", "bnb_config_kwargs.bnb_4bit_compute_dtype", convert=canonical_dtype),
    Binding("quantization.quant_type", "bnb_config_kwargs.bnb_4bit_quant_type", default="nf4", source=_LOADER,
            anchor="load_in_4bit"),
    Binding("quantization.double_quant", "bnb_config_kwargs.bnb_4bit_use_double_quant", default=True,
            source=_LOADER, anchor="load_in_4bit"),
    Binding("quantization.quant_storage", "bnb_config_kwargs.bnb_4bit_quant_storage", convert=canonical_dtype),
)
_LORA_BINDINGS = (
    Binding("adapter.r", "lora_r"), Binding("adapter.alpha", "lora_alpha"),
    Binding("adapter.target_modules", "lora_target_modules", convert=_as_list),
    Binding("adapter.modules_to_save", "lora_modules_to_save", convert=_as_list),
    Binding("adapter.exclude_modules", "lora_exclude_modules"),  # loaders/adapter.py LoraConfig(exclude_modules=)
    # utils/schemas/peft.py peft_ensure_weight_tying -> LoraConfig(ensure_weight_tying=...) (loaders/adapter.py)
    Binding("adapter.ensure_weight_tying", "peft_ensure_weight_tying", default=False, source=_PEFT),
    # utils/schemas/config.py tokens: added to the tokenizer (loaders/tokenizer.py add_tokens)
    Binding("tokenizer.added_tokens", "tokens", convert=_as_list),
    Binding("adapter.dora", "peft_use_dora"), Binding("adapter.pretrained_weights", "lora_model_dir"),  # load_lora
)
_TRAINING_BINDINGS = (
    Binding("model.name", "base_model"),
    Binding("precision.tf32", "tf32", convert=as_bool_or_auto, default="auto", source=_CONFIG),
    Binding("precision.fp8", "fp8"),
    Binding("batch.micro", "micro_batch_size"),
    Binding("batch.grad_accum", "gradient_accumulation_steps"),
    Binding("training.max_steps", "max_steps"), Binding("training.epochs", "num_epochs", convert=as_float),  # core/builders/base.py
    Binding("optimizer.lr", "learning_rate", convert=as_float),
    Binding("optimizer.name", "optimizer", default="adamw_torch_fused", source=_TRAINING),
    # Passed to TrainingArguments as written (core/builders: save_strategy, save_only_model).
    Binding("checkpoint.save_strategy", "save_strategy", convert=strategy),
    Binding("checkpoint.save_only_model", "save_only_model"),
    Binding("optimizer.weight_decay", "weight_decay", convert=as_float),
    Binding("optimizer.grad_clip", "max_grad_norm", convert=as_float),
    Binding("sequence.max_length", "sequence_len", default=512, source=_CONFIG),
    Binding("sequence.packing", "sample_packing"),
    Binding("memory.gradient_checkpointing", "gradient_checkpointing", convert=_checkpointing, default=False,
            source=_CONFIG),
)


class AxolotlAdapter(Adapter):
    name = "axolotl"
    bindings = (
        *_TRAINING_BINDINGS,
        Binding("precision.fp16", "fp16", after="bf16"),
        Binding("precision.bf16", "bf16", after="fp16"),
        Binding("attention.implementation", "attn_implementation"),
        *_LORA_BINDINGS,
        *_QLORA_BINDINGS,
    )

    def evidence(self, document: Document) -> int:
        root = document.root
        if not isinstance(root, Mapping) or root.get("base_model") is None:
            return 0
        if written(document, "model_type") in _LUDWIG_MODEL_TYPES:
            return 0  # axolotl's model_type is a transformers class name
        if not any(root.get(key) is not None for key in _CLAIM_KEYS):
            return 0
        return sum(root.get(key) is not None for key in _EXCLUSIVE_KEYS)

    def sniffs(self, text: str) -> bool:
        return all(pattern.search(text) for pattern in _SNIFF)

    def parse(self, document: Document) -> ConfigIR:
        config = new_config(self, document)
        config.set("trainer.fills_deepspeed_auto", Field(True, Origin(config.file_span)))
        read = Reader(config, document, templates_unknown=True)
        read.bind(_TRAINING_BINDINGS)
        self._precision(read)
        self._adapter(read)
        self._quantization(read)
        self._attention(read)
        self._memory_savers(read)
        for key in ("fsdp_config", "fsdp"):  # the trainer builder: `if cfg.fsdp_config or cfg.fsdp:`
            if _present(read.node(key)) and read.node(key).plain():  # an empty `fsdp: []` is off
                read.set("parallel.fsdp", True, key)
                break
        # Memory facts for the estimator (utils/schemas/config.py, utils/schemas/fsdp.py):
        # lora_target_linear adapts every linear layer (find_all_linear_names); FSDP's
        # sharding (fsdp: [full_shard|shard_grad_op|hybrid_shard, offload], fsdp_config
        # fsdp_sharding_strategy / reshard_after_forward for FSDP2) and CPU offload
        # (fsdp_config offload_params, older fsdp_offload_params); activation_offloading;
        # chunked_cross_entropy(_num_chunks); the hatchery plugin's remote backend (tinker).
        read.take("adapter.target_linear", "lora_target_linear")
        self._trainer(read)
        read.take("parallel.fsdp_sharding", "fsdp_config", "fsdp_sharding_strategy")
        if read.config.get("parallel.fsdp_sharding") is None:
            read.take("parallel.fsdp_sharding", "fsdp_config", "reshard_after_forward",
                      convert=lambda on: "FULL_SHARD" if on is not False else "SHARD_GRAD_OP")
        fsdp_list = read.node("fsdp")
        if isinstance(fsdp_list, Sequence):
            options = [str(option).lower() for option in fsdp_list.plain()]
            sharding = next((o.upper() for o in options if o in ("full_shard", "shard_grad_op", "hybrid_shard", "no_shard")), None)
            if sharding and read.config.get("parallel.fsdp_sharding") is None:
                read.set("parallel.fsdp_sharding", sharding, "fsdp")
            if "offload" in options:
                read.set("parallel.offload_param", True, "fsdp")
        # FSDP's layer classes (utils/trainer.py setup_fsdp_envs: fsdp_config auto_wrap_policy and
        # transformer_layer_cls_to_wrap become accelerate's FSDP_AUTO_WRAP_POLICY and
        # FSDP_TRANSFORMER_CLS_TO_WRAP; schemas/fsdp.py accepts the older fsdp_-prefixed names):
        # recorded under TRANSFORMER_BASED_WRAP, with an `fsdp` option list (older releases pass it to
        # TrainingArguments, which wraps only with `auto_wrap`) naming auto_wrap if written.
        own_classes(read, read.config.value("parallel.fsdp") is True,
                    (("fsdp_config", "transformer_layer_cls_to_wrap"), ("fsdp_config", "fsdp_transformer_layer_cls_to_wrap")))
        policy = written(read.document, "fsdp_config", "auto_wrap_policy") or \
            written(read.document, "fsdp_config", "fsdp_auto_wrap_policy")
        if policy == "TRANSFORMER_BASED_WRAP" and (not isinstance(fsdp_list, Sequence) or "auto_wrap" in options):
            for name in ("transformer_layer_cls_to_wrap", "fsdp_transformer_layer_cls_to_wrap"):
                if read.take("parallel.fsdp_wrap_classes", "fsdp_config", name, convert=wrap_classes) is not None:
                    break
        for name in ("offload_params", "fsdp_offload_params"):
            read.take("parallel.offload_param", "fsdp_config", name)
        read.take("memory.activation_offload", "activation_offloading", convert=lambda value: value not in (False, None))
        if written(read.document, "gradient_checkpointing") in ("offload", "offload_disk"):
            read.set("memory.activation_offload", True, "gradient_checkpointing")  # checkpoints kept in CPU RAM / on disk
        if written(read.document, "chunked_cross_entropy") is True:
            read.take("memory.chunked_loss", "chunked_cross_entropy_num_chunks")
            if read.config.get("memory.chunked_loss") is None:
                # monkeypatch/loss/chunked.py patch_chunked_ce_loss_fn(num_output_chunks=8)
                read.set("memory.chunked_loss", 8, "chunked_cross_entropy")
        read.take("training.remote_backend", "hatchery", "backend")
        # chat_template (schemas/config.py) formats the datasets of type chat_template.
        datasets = read.node("datasets")
        if isinstance(datasets, Sequence) and any(isinstance(d, dict) and d.get("type") == "chat_template"
                                                  for d in datasets.plain()):
            read.take("data.chat_template", "chat_template")
        record_tokenizer(read)  # tokenizer_type and its transformers, fix_untrained_tokens
        # Expert, tensor and context parallelism split experts, weights or sequences across GPUs
        # (utils/schemas/config.py expert_parallel_size, tensor_parallel_size, context_parallel_size).
        for key, what in (("expert_parallel_size", "expert parallelism"), ("tensor_parallel_size", "tensor parallelism"),
                          ("context_parallel_size", "context parallelism")):
            size = written(read.document, key)
            if isinstance(size, int) and not isinstance(size, bool) and size > 1:
                read.set("parallel.unmodeled", what, key)
                break
        # FSDP version (schemas/config.py fsdp_version, schemas/fsdp.py FSDPConfig fsdp_version alias
        # "version"; None means accelerate's FSDP1): FSDP1 flattens parameters, FSDP2 shards each one.
        for path in (("fsdp_version",), ("fsdp_config", "fsdp_version"), ("fsdp_config", "version")):
            if read.take("parallel.fsdp_version", *path) is not None:
                break
        record_checked(read)  # the settings Axolotl's own validation checks together
        deepspeed_link(config, document, read.node("deepspeed"), AXOLOTL_DEEPSPEED)
        return config

    # ---- reading -----------------------------------------------------------------------------

    def _memory_savers(self, read: Reader) -> None:
        """LISA (schemas/integrations.py lisa_n_layers) and the plugins that never materialise the
        logits: cut_cross_entropy (integrations/cut_cross_entropy/args.py, on by default once the
        plugin is listed) and liger's fused linear cross entropy (integrations/liger/args.py)."""
        document = read.document
        if _present(read.node("lisa_n_layers")):
            read.set("optimizer.memory_efficient", "LISA", "lisa_n_layers")
        plugins = read.node("plugins")
        listed = " ".join(str(p) for p in plugins.plain()) if isinstance(plugins, Sequence) else ""
        if "cut_cross_entropy" in listed and written(document, "cut_cross_entropy") is not False:
            read.set("memory.fused_cross_entropy", True, "plugins")
        elif "liger" in listed and written(document, "liger_fused_linear_cross_entropy") is True:
            read.set("memory.fused_cross_entropy", True, "liger_fused_linear_cross_entropy")

    def _precision(self, read: Reader) -> None:
        document, config = read.document, read.config
        if any(templated(read.node(key)) for key in ("bf16", "fp16", "bfloat16", "float16", "load_in_8bit")):
            return  # a template: the precision is decided when the launcher fills it in
        bf16_written = written(document, "bf16") is not None
        bf16 = as_bool_or_auto(written(document, "bf16")) if bf16_written else "auto"
        fp16 = written(document, "fp16")
        no_amp_bf16, no_amp_fp16 = written(document, "bfloat16") is True, written(document, "float16") is True
        here = read.key_span("bf16") or read.key_span("fp16") or config.file_span

        if bf16 == "auto" and fp16 is True:
            config.set("precision.bf16", Field(False, Origin(here, _RESOLVE_DTYPE, "bf16")))
        elif bf16_written:
            read.take("precision.bf16", "bf16", convert=as_bool_or_auto)
        else:
            config.set("precision.bf16", Field("auto", Origin(config.file_span, _CONFIG, "bf16")))
        if isinstance(fp16, bool):
            read.take("precision.fp16", "fp16")
        elif bf16 in (True, False) or (bf16 == "auto" and no_amp_fp16):
            # bf16 decided (or pure float16 asked for): fp16 AMP stays off.
            config.set("precision.fp16", Field(False, Origin(here, _RESOLVE_DTYPE, "fp16")))
        elif bf16 == "auto":
            # fp16 turns on exactly where bf16 resolves off: hardware-dependent.
            config.set("precision.fp16", Field("auto", Origin(here, _RESOLVE_DTYPE, "fp16")))

        # The dtype the model is loaded in (torch_dtype), and the key that decides it.
        if bf16 is True or no_amp_bf16:
            dtype, decider = "bfloat16", "bf16" if bf16 is True else "bfloat16"
        elif bf16 == "auto" and fp16 is not True:
            dtype, decider = "auto", "bf16"
        elif written(document, "load_in_8bit") is True or fp16 is True or no_amp_fp16:
            dtype = "float16"
            decider = next(key for key, on in (("fp16", fp16 is True), ("float16", no_amp_fp16),
                                               ("load_in_8bit", True)) if on)
        elif bf16 is False:
            dtype, decider = "float32", "bf16"
        else:
            return  # bf16 holds a value axolotl's schema refuses: nothing to derive
        config.set("model.load_dtype", Field(dtype, Origin(read.key_span(decider) or here, _RESOLVE_DTYPE, decider)))

    def _adapter(self, read: Reader) -> None:
        node = read.node("adapter")
        if templated(node):
            return
        if node is None:
            read.config.set("adapter.kind", Field(None, Origin(read.config.file_span, _PEFT, "adapter")))
        elif isinstance(node, Scalar) and node.value is None:
            read.set("adapter.kind", None, "adapter")  # `adapter:` left blank: all parameters train
        else:
            read.take("adapter.kind", "adapter")
        read.bind(_LORA_BINDINGS)
        record_lora_config(read)

    def _quantization(self, read: Reader) -> None:
        document, config = read.document, read.config
        if written(document, "load_in_4bit") is True:
            read.take("quantization.bits", "load_in_4bit", convert=lambda _: 4)
        elif written(document, "load_in_8bit") is True:
            read.take("quantization.bits", "load_in_8bit", convert=lambda _: 8)
            return
        else:
            return
        if written(document, "adapter") != "qlora":
            return  # axolotl builds its 4-bit BitsAndBytesConfig for qlora only (loaders/model.py)
        read.bind(_QLORA_BINDINGS)
        load_dtype = config.get("model.load_dtype")
        if config.get("quantization.compute_dtype") is None and load_dtype is not None:
            config.set("quantization.compute_dtype", Field(load_dtype.value, Origin(load_dtype.span, _LOADER)))
        sharded = any(_present(read.node(key)) for key in ("deepspeed", "fsdp_config", "fsdp"))
        # axolotl sets bnb_4bit_quant_storage itself from 2a1589f6f (#1428, 2024-03-21), first
        # released in v0.5.0; a pinned older axolotl leaves transformers' uint8.
        pinned = config.version("axolotl")
        if config.get("quantization.quant_storage") is None and sharded \
                and not (pinned and older_than(pinned[0], "0.5.0")):
            config.set("quantization.quant_storage", Field("bfloat16", Origin(read.key_span("load_in_4bit"), _LOADER)))

    def _trainer(self, read: Reader) -> None:
        """core/trainer_builder.py: `rl` (dpo, kto, orpo, grpo, ...) builds a TRL trainer (HFRLTrainerBuilder),
        `reward_model` / `process_reward_model` a reward trainer; else AxolotlTrainer (HF Trainer's loss): "sft"."""
        record_step_cap(read)  # what max_steps does beside num_epochs
        rl = written(read.document, "rl")
        if isinstance(rl, str) and rl and not templated(read.node("rl")):
            read.take("training.trainer", "rl", convert=lambda value: str(value).lower())
        elif rl is None or rl is False:
            if not any(written(read.document, key) for key in ("reward_model", "process_reward_model")):
                read.config.set("training.trainer", Field("sft", Origin(read.config.file_span, _TRAINER_BUILDER)))

    def _attention(self, read: Reader) -> None:
        if read.take("attention.implementation", "attn_implementation") is not None:
            return
        for flag, implementation in _LEGACY_ATTENTION:
            if written(read.document, flag):
                read.take("attention.implementation", flag, convert=lambda _, chosen=implementation: chosen)
                return

    # ---- rendering ---------------------------------------------------------------------------

    def render_value(self, document: Document, config: ConfigIR, key: str, value: Any) -> list[Edit]:
        if key == "attention.implementation":
            return self._render_attention(document, value)
        if key == "model.load_dtype":
            if written(document, "bfloat16") is True or written(document, "float16") is True:
                raise RenderError("the model dtype follows `bfloat16`/`float16` (no mixed precision); edit it by hand")
            # torch_dtype has no key: it follows the precision flags (resolve_dtype), which the
            # precision change asked for in the same fix sets.
            return []
        if key == "adapter.modules_to_save" and isinstance(value, list):
            return [self.write(document, config, key, value)]  # a YAML list reads back as written (_as_list)
        if key == "quantization.compute_dtype":
            compute = config.get("quantization.compute_dtype")
            if compute is not None and compute.origin.is_default:
                return []  # derived from the precision flags, like the model dtype
        return super().render_value(document, config, key, value)

    def render_precision(self, document: Document, config: ConfigIR, mode: str) -> list[Edit]:
        return self._render_mode(document, config, mode)

    def _render_mode(self, document: Document, config: ConfigIR, mode: str) -> list[Edit]:
        """fp16/bf16 in axolotl's keys, touching only what does not already read right:
        `bf16: auto` reads False next to `fp16: true`, and an unset fp16 reads False once bf16
        is decided (resolve_dtype)."""
        fp16_on, bf16_on = PRECISION_MODES[mode]
        bf16, fp16 = config.value("precision.bf16"), config.value("precision.fp16")
        edits = []
        if bf16_on and bf16 is not True:
            edits.append(self.write(document, config, "precision.bf16", True))
        elif not bf16_on and (bf16 is True or (bf16 == "auto" and not fp16_on)):
            edits.append(self.write(document, config, "precision.bf16", False))
        if fp16_on and fp16 is not True:
            edits.append(self.write(document, config, "precision.fp16", True))
        elif not fp16_on and fp16 is True:
            edits.append(self.write(document, config, "precision.fp16", False))
        return edits

    def _render_attention(self, document: Document, implementation: str) -> list[Edit]:
        if document.find("attn_implementation") is not None:
            return [set_path(document, ("attn_implementation",), implementation)]
        if implementation != "sdpa":
            raise RenderError(f"axolotl's boolean attention flags cannot express {implementation}")
        # Older axolotl knows only the boolean flags: switch off those that win over sdp_attention.
        flags = [flag for flag, _ in _LEGACY_ATTENTION]
        edits = [set_path(document, (flag,), False) for flag in flags[: flags.index("sdp_attention")]
                 if written(document, flag)]
        if written(document, "sdp_attention") is not True:
            edits.append(set_path(document, ("sdp_attention",), True, after="flash_attention"))
        return edits
