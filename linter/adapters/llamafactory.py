"""LLaMA-Factory YAML configs (`llamafactory-cli train config.yaml`).

Key names, defaults and derivations from LLaMA-Factory's own source (hiyouga/LLaMA-Factory at
commit ff6d4d12eeb035d6ce06805a5733dd7b29f2ac30, the commit the shared corpus comes from). The
YAML holds the fields of five dataclasses, parsed together by HfArgumentParser:
- src/llamafactory/hparams/model_args.py: `model_name_or_path`; QuantizationArguments
  `quantization_bit` (None), `quantization_method` (default bnb), `quantization_type` (default
  nf4), `double_quantization` (default True); `flash_attn` (AttentionFunction, default auto:
  auto leaves the choice to transformers, disabled -> eager, sdpa, fa2, fa3 —
  model/model_utils/attention.py); `disable_gradient_checkpointing` (default False: LLaMA-Factory
  enables checkpointing itself, model/model_utils/checkpointing.py).
- src/llamafactory/hparams/finetuning_args.py: `stage` (pt/sft/rm/ppo/dpo/kto — the training
  stage, not a ZeRO stage; default sft), `finetuning_type` (lora/oft/freeze/full, default lora),
  `pure_bf16` (bf16 without AMP), `lora_rank` (default 8), `lora_alpha` (default lora_rank * 2),
  `lora_target` (comma list, default "all"), `additional_target` (the modules_to_save).
- src/llamafactory/hparams/data_args.py: `cutoff_len` (default 2048), `packing` (None),
  `neat_packing` (implies packing).
- src/llamafactory/hparams/training_args.py: transformers' Seq2SeqTrainingArguments, whose
  defaults (transformers/training_args.py) are bf16 False, fp16 False, per_device_train_batch_size
  8, gradient_accumulation_steps 1, max_grad_norm 1.0; `deepspeed` and `fsdp` are its keys.
- src/llamafactory/hparams/parser.py (get_train_args): quantization is refused unless
  finetuning_type is lora or oft; compute dtype = bfloat16 with bf16 or pure_bf16, else float16
  with fp16; unset, model/patcher.py picks it at launch (infer_optim_dtype: bf16 where
  supported, else fp16); packing unset means stage == "pt".
- src/llamafactory/model/model_utils/quantization.py: the 4-bit BitsAndBytesConfig uses the
  compute dtype for bnb_4bit_compute_dtype and for bnb_4bit_quant_storage ("crucial for
  fsdp+qlora"), so LLaMA-Factory sets the storage itself.
- src/llamafactory/model/loader.py loads the checkpoint in its own dtype (torch_dtype "auto"),
  and model/adapter.py upcasts trainable parameters to float32 (not with pure_bf16): the load
  dtype is not in the file, except that pure_bf16 trains the weights in bfloat16.
- `deepspeed:` is TrainingArguments.deepspeed, opened by transformers' HfDeepSpeedConfig with
  os.path.exists(path): relative to the working directory (the examples write
  examples/deepspeed/ds_z3_config.json, relative to the repository root). The link tries the
  config's folder, then each folder above it.
The YAML is read with OmegaConf (parser.py read_args), whose float resolver reads `1e-4` as a
number: learning rates written that way are numbers here too.
"""

from __future__ import annotations

import re

from typing import Any

from ..changes import PRECISION_MODES
from ..document import Document, Mapping, RenderError, Scalar, Sequence
from ..fixes import Edit
from ..ir import ConfigIR, Field, KeyTree, Origin
from ..versions import older_than
from . import (Adapter, Binding, Reader, as_float, comma_list, deepspeed_link, new_config,
               set_path, written)
from .llamafactory_copy import record_copy_keys
from .llamafactory_datasets import record_dataset_ranking
from .shipped import LLAMAFACTORY_DEEPSPEED
from .llamafactory_keys import ARGUMENT_CHECK_BINDINGS as _ARGUMENT_CHECK_BINDINGS
from .trainer_arguments import CHECKPOINT_BINDINGS, TRAINER_ARGUMENT_BINDINGS
from ..lazy_pattern import LazyPattern

_MODEL_ARGS = "llamafactory/hparams/model_args.py"
_OMEGACONF_SINCE = "0.9.4"  # parser.py read_args: OmegaConf.load from commit a5a93597b (PR #8505)
_FINETUNING_ARGS = "llamafactory/hparams/finetuning_args.py"
_DATA_ARGS = "llamafactory/hparams/data_args.py"
_PARSER = "llamafactory/hparams/parser.py (get_train_args)"
_QUANTIZATION = "llamafactory/model/model_utils/quantization.py"
_PATCHER = "llamafactory/model/patcher.py (infer_optim_dtype)"
_CHECKPOINTING = "llamafactory/model/model_utils/checkpointing.py"
_TRAINING_ARGS = "transformers/training_args.py (TrainingArguments)"
# Keys of LLaMA-Factory's Megatron trainers' argument classes (examples/megatron, examples/megatron_bridge at
# ff6d4d12e), which HfArgumentParser over LLaMA-Factory's own classes refuses.
_MEGATRON_KEYS = ("tensor_model_parallel_size", "pipeline_model_parallel_size", "expert_model_parallel_size",
                  "context_parallel_size", "use_distributed_optimizer", "overlap_grad_reduce", "overlap_param_gather")

# Keys only LLaMA-Factory's argument dataclasses define (hparams/*.py): `do_train` and the other
# TrainingArguments fields are shared with every HfArgumentParser YAML, so they are no evidence.
_EXCLUSIVE_KEYS = ("stage", "finetuning_type", "template", "cutoff_len", "lora_target", "lora_rank",
                   "quantization_bit", "quantization_method", "dataset_dir", "pure_bf16", "flash_attn",
                   "freeze_trainable_layers", "additional_target", "val_size", "plot_loss", "use_unsloth",
                   "enable_liger_kernel", "neat_packing", "preprocessing_num_workers", "overwrite_cache",
                   "infer_backend", "export_dir", "eval_dataset", "mix_strategy", "tokenized_path")


def _project_parser_file(document: Document, root: Mapping) -> bool:
    """Is the file the repository's own HfArgumentParser's, not LLaMA-Factory's? Every release of
    LLaMA-Factory refuses a key its argument classes lack (hparams/parser.py _parse_args:
    parse_dict / parse_yaml_file with allow_extra_keys False, "Some keys are not used by the
    HfArgumentParser"; from v0.9.2, fec641ec8 #6831, only ALLOW_EXTRA_ARGS in the environment lets
    one through). So a file holding keys that no LLaMA-Factory release (key_releases.json, 0.0.9
    to 0.9.5) and no TrainingArguments / TRL field defines, which the repository's own argument
    classes do define, and all of whose keys one parser call of the repository takes
    (project_args: `HfArgumentParser([DataArguments, ModelArguments, FinetuneArguments])`, the
    last a TrainingArguments subclass), is that parser's file. Anything short of that stays as
    before (a tie with the hf adapter is skipped)."""
    from ..schema import load
    from .hf_kinds import upstream_argument_fields

    keys = frozenset(pair.key.value for pair in root.pairs if isinstance(pair.key.value, str))
    schema = load("llamafactory")  # (SCH001 reads it for the file in any case)
    foreign = keys - frozenset(schema.root.get("properties", ()) if schema is not None else ())
    if not foreign:
        return False  # LLaMA-Factory takes every key (its newest schema): the usual case, cheap
    from ..versions import key_releases

    upstream = upstream_argument_fields()
    foreign -= upstream | frozenset(key_releases().get("llamafactory", {}).get("keys", ()))
    if not foreign:
        return False
    from ..project_args import project_arguments

    project = project_arguments(document.source.path)
    call = project.call_reading(keys, upstream)
    return call is not None and any(foreign & cls.fields for cls in project.classes if cls.name in call)


# For a file that does not parse: both lines at the start of a line, in any order.
_SNIFF = (LazyPattern(r"^model_name_or_path:", re.M), LazyPattern(r"^(?:stage|finetuning_type):", re.M))
# Freeze tuning trains a slice of the original weights: no adapter, like full fine-tuning.
_ADAPTER_KINDS = {"lora": "lora", "oft": "oft", "freeze": None, "full": None}
_ATTENTION = {"disabled": "eager", "sdpa": "sdpa", "fa2": "flash_attention_2", "fa3": "flash_attention_3"}
# The float spellings OmegaConf's loader adds to PyYAML's (omegaconf/_utils.py get_yaml_loader):
# an exponent without a dot (`1e-4`) or without a sign (`1.0e5`). PyYAML reads these as strings.
_OMEGACONF_ONLY_FLOAT = LazyPattern(r"[-+]?[0-9][0-9_]*(?:\.[0-9_]*)?[eE][-+]?[0-9]+")


def _not(disabled: Any) -> bool:
    return not disabled


def _truthy(value: Any) -> Any:
    """do_train as read: parse_dict keeps 0/1, the workflows test `if training_args.do_train`."""
    return bool(value) if type(value) is int and value in (0, 1) else value


_TRAINING_BINDINGS = (
    Binding("model.name", "model_name_or_path"),
    Binding("precision.bf16", "bf16", default=False, source=_TRAINING_ARGS, after="fp16"),
    Binding("precision.fp16", "fp16", default=False, source=_TRAINING_ARGS, after="bf16"),
    Binding("precision.tf32", "tf32"),
    Binding("precision.fp8", "fp8"),
    Binding("batch.micro", "per_device_train_batch_size", default=8, source=_TRAINING_ARGS),
    Binding("batch.grad_accum", "gradient_accumulation_steps", default=1, source=_TRAINING_ARGS),
    Binding("training.max_steps", "max_steps", default=-1, source=_TRAINING_ARGS),
    Binding("training.epochs", "num_train_epochs", convert=as_float, default=3.0, source=_TRAINING_ARGS),
    Binding("optimizer.lr", "learning_rate", convert=as_float),
    Binding("optimizer.name", "optim"),
    Binding("optimizer.weight_decay", "weight_decay", convert=as_float),
    Binding("optimizer.grad_clip", "max_grad_norm", convert=as_float, default=1.0, source=_TRAINING_ARGS),
    Binding("sequence.max_length", "cutoff_len", default=2048, source=_DATA_ARGS),
    Binding("memory.gradient_checkpointing", "disable_gradient_checkpointing", convert=_not, default=True,
            source=_CHECKPOINTING),
    Binding("training.enabled", "do_train", convert=_truthy, default=False, source=_TRAINING_ARGS),
    # model_args.py ModelArguments.use_unsloth (default False): Unsloth loads and patches the model.
    Binding("model.unsloth", "use_unsloth"),
    Binding("generation.predict_with_generate", "predict_with_generate"),  # Seq2SeqTrainingArguments
    # data_args.py DataArguments.template: the chat template every training sample is formatted with.
    Binding("data.chat_template", "template"),
    # data_args.py DataArguments.enable_thinking (default True since ReasoningTemplate, 052ca871b):
    # a reasoning template puts an empty thought into each trained response without one.
    Binding("data.enable_thinking", "enable_thinking", default=True, source=_DATA_ARGS),
    *CHECKPOINT_BINDINGS, *TRAINER_ARGUMENT_BINDINGS,
)
_QUANTIZATION_BINDINGS = (
    Binding("quantization.quant_type", "quantization_type", default="nf4", source=_MODEL_ARGS,
            anchor="quantization_bit"),
    Binding("quantization.double_quant", "double_quantization", default=True, source=_MODEL_ARGS,
            anchor="quantization_bit"),
)
_LORA_BINDINGS = (
    Binding("adapter.target_modules", "lora_target", convert=comma_list, default=["all"], source=_FINETUNING_ARGS),
    Binding("adapter.modules_to_save", "additional_target", convert=comma_list),
)


class LlamaFactoryAdapter(Adapter):
    name = "llamafactory"
    bindings = (*_TRAINING_BINDINGS, *_QUANTIZATION_BINDINGS, *_LORA_BINDINGS, *_ARGUMENT_CHECK_BINDINGS,
                Binding("sequence.packing", "packing"))

    def key_tree(self, document: Document) -> KeyTree | None:
        """The keys as LLaMA-Factory >= 0.9.4 reads them (parser.py read_args: OmegaConf.load, since
        commit a5a93597b, PR #8505): unquoted `2e-5` is a float, a quoted "2e-5" stays a string."""
        if not isinstance(document, Document) or document.root is None:
            return None

        def plain():
            value = document.root.plain()
            _read_omegaconf_floats(document.root, value, set())
            return value

        tree = super().key_tree(document)
        return KeyTree(plain, document.format, tree.locate, tree.spell)

    def evidence(self, document: Document) -> int:
        root = document.root
        if not isinstance(root, Mapping) or root.get("model_name_or_path") is None:
            return 0
        if not any(root.get(key) is not None for key in ("stage", "finetuning_type", "do_train")):
            return 0  # inference and export configs: nothing is trained
        score = sum(root.get(key) is not None for key in _EXCLUSIVE_KEYS)
        return 0 if score and _project_parser_file(document, root) else score

    def sniffs(self, text: str) -> bool:
        return all(pattern.search(text) for pattern in _SNIFF)

    def parse(self, document: Document) -> ConfigIR:
        config = new_config(self, document)
        version = config.version("llamafactory")
        if version is not None and older_than(version[0], _OMEGACONF_SINCE):
            # Before 0.9.4 read_args used yaml.safe_load: an unquoted `2e-5` is the string '2e-5'.
            config.key_tree = Adapter.key_tree(self, document)
        config.set("trainer.fills_deepspeed_auto", Field(True, Origin(config.file_span)))
        record_copy_keys(config, config.key_tree.value if config.key_tree is not None else {})
        read = Reader(config, document)
        read.bind(_TRAINING_BINDINGS)
        read.bind(_ARGUMENT_CHECK_BINDINGS)
        record_dataset_ranking(config, read)  # dataset_info.json `ranking` of the named datasets
        self._training_keys(read)
        kind = read.take("adapter.kind", "finetuning_type", convert=lambda value: _ADAPTER_KINDS.get(value, value),
                         default="lora", default_source=_FINETUNING_ARGS)
        if read.node("finetuning_type") is not None and getattr(read.node("finetuning_type"), "value", None) == "freeze":
            # Freeze tuning trains the last N layers of the original weights (finetuning_args.py).
            read.take("adapter.trainable_layers", "freeze_trainable_layers", default=2, default_source=_FINETUNING_ARGS)
        if kind is not None and kind.value == "lora":
            rank = read.take("adapter.r", "lora_rank", default=8, default_source=_FINETUNING_ARGS)
            alpha_default = rank.value * 2 if rank is not None and isinstance(rank.value, int) else None
            read.take("adapter.alpha", "lora_alpha", default=alpha_default, default_source=_FINETUNING_ARGS,
                      anchor=("lora_rank",))
            read.bind(_LORA_BINDINGS)
        if kind is not None and kind.value == "oft":  # model/adapter.py: OFTConfig(r=oft_rank, oft_block_size=...)
            read.take("adapter.r", "oft_rank", default=0, default_source=_FINETUNING_ARGS,  # 003a2acb1 (#8623)
                      anchor=("finetuning_type",))
            read.take("adapter.oft_block_size", "oft_block_size", default=32, default_source=_FINETUNING_ARGS,
                      anchor=("finetuning_type",))
        if written(read.document, "pure_bf16") is True:
            read.take("model.load_dtype", "pure_bf16", convert=lambda _: "bfloat16")
        self._quantization(read)
        self._packing(read)
        self._memory_savers(read)
        flash_attn = read.node("flash_attn")
        if isinstance(flash_attn, Scalar) and flash_attn.value in _ATTENTION:  # auto: transformers decides
            read.take("attention.implementation", "flash_attn", convert=_ATTENTION.get)
        fsdp = read.node("fsdp")
        # TrainingArguments.fsdp: "", [] and False are off (the Trainer tests `if self.args.fsdp`).
        if fsdp is not None and fsdp.plain() and str(fsdp.plain()).strip().lower() != "false":
            read.set("parallel.fsdp", True, "fsdp")
            # `fsdp` is TrainingArguments' option string (transformers FSDPOption: full_shard,
            # shard_grad_op, hybrid_shard, no_shard, offload).
            from .hf_kinds import fsdp_sharding

            read.take("parallel.fsdp_sharding", "fsdp", convert=fsdp_sharding)
            if "offload" in str(fsdp.plain()).lower():
                read.take("parallel.offload_param", "fsdp", convert=lambda _: True)
            # TrainingArguments.fsdp_config (as hf.py): the version its transformers runs.
            from .fsdp_facts import TRAINER_CLASS_PATHS, own_classes, trainer_fsdp_version

            trainer_fsdp_version(read, True)
            own_classes(read, True, TRAINER_CLASS_PATHS)  # they replace an accelerate config's (MOD003)
        # Engines that place the model where the memory estimate cannot follow: KTransformers runs
        # MoE experts on the CPU (hparams/model_args.py use_kt), Megatron-Core splits layers and
        # experts across GPUs (examples/megatron: *_model_parallel_size, mcore_adapter).
        if written(read.document, "use_kt") is True:
            read.take("parallel.unmodeled", "use_kt", convert=lambda _: "KTransformers (experts on the CPU)")
        for key in ("tensor_model_parallel_size", "pipeline_model_parallel_size", "expert_model_parallel_size"):
            size = written(read.document, key)
            if isinstance(size, int) and not isinstance(size, bool) and size > 1:
                read.take("parallel.unmodeled", key, convert=lambda _: "Megatron model parallelism")
                break
        megatron = next((key for key in _MEGATRON_KEYS if read.node(key) is not None), None)
        if megatron is not None:  # (Megatron-Bridge, at HEAD, evaluates every eval_steps with no strategy)
            read.set("training.megatron_keys", True, megatron)
        deepspeed_link(config, document, read.node("deepspeed"), LLAMAFACTORY_DEEPSPEED)
        if not config.links and read.node("deepspeed") is None and config.value("parallel.fsdp") is not True:
            # `accelerate launch --config_file fsdp.yaml src/train.py x.yaml` shards a file that
            # says nothing of it (LLaMA-Factory ships examples/accelerate/fsdp_config.yaml).
            from .hf_kinds import record_repository_launchers

            record_repository_launchers(config)
        return config

    # ---- reading -----------------------------------------------------------------------------

    def _training_keys(self, read: Reader) -> None:
        """arguments.training_keys: the file's keys only the `train` command's parser reads."""
        root = read.document.root
        if not isinstance(root, Mapping):
            return
        from .llamafactory_keys import TRAINING_ONLY

        found = [pair.key.value for pair in root.pairs if isinstance(pair.key.value, str) and pair.key.value in TRAINING_ONLY]
        if found:
            read.config.set("arguments.training_keys", Field(found, Origin(read.key_span(found[0]))))

    def _quantization(self, read: Reader) -> None:
        config = read.config
        bits = read.take("quantization.bits", "quantization_bit")
        # QuantizationArguments.quantization_method (model_args.py, default "bnb"; hqq and eetq are not
        # bitsandbytes): the 8-bit rules apply to bitsandbytes only.
        if bits is not None:
            read.take("quantization.method", "quantization_method", default="bnb", default_source=_MODEL_ARGS,
                      anchor=("quantization_bit",))
        if bits is None or bits.value != 4 or written(read.document, "quantization_method") not in (None, "bnb"):
            return  # the BitsAndBytes 4-bit path only
        read.bind(_QUANTIZATION_BINDINGS)
        # compute dtype (parser.py): bf16 or pure_bf16 -> bfloat16, else fp16 -> float16, else
        # chosen at launch; the 4-bit storage dtype is the compute dtype (quantization.py).
        pure_bf16 = written(read.document, "pure_bf16") is True
        if config.value("precision.bf16") is True or pure_bf16:
            decider = "bf16" if config.value("precision.bf16") is True else "pure_bf16"
            compute = Field("bfloat16", Origin(read.key_span(decider), _PARSER))
        elif config.value("precision.fp16") is True:
            compute = Field("float16", Origin(read.key_span("fp16"), _PARSER))
        else:
            compute = Field("auto", Origin(read.key_span("quantization_bit"), _PATCHER))
        config.set("quantization.compute_dtype", compute)
        config.set("quantization.quant_storage", Field(compute.value, Origin(compute.span, _QUANTIZATION)))

    def _memory_savers(self, read: Reader) -> None:
        """Training at all (do_train), memory-efficient optimizers, and liger's fused cross entropy
        (model_utils/liger_kernel.py: fused for stages pt and sft, which never need the logits)."""
        document = read.document
        flags = (("use_galore", "GaLore"), ("use_apollo", "APOLLO"), ("use_badam", "BAdam"),
                 ("use_adam_mini", "Adam-mini"), ("use_muon", "Muon"))
        chosen = [(flag, optimizer) for flag, optimizer in flags if written(document, flag) is True]
        if len(chosen) > 1:  # finetuning_args.py refuses GaLore, APOLLO and BAdam together
            read.config.set("optimizer.memory_efficient_all", Field(
                [optimizer for _, optimizer in chosen], Origin(read.key_span(chosen[1][0]))))
        for flag, optimizer in flags:
            if written(document, flag) is True:
                read.take("optimizer.memory_efficient", flag, convert=lambda _, name=optimizer: name)
                # finetuning_args.py galore_layerwise / apollo_layerwise (default False).
                if flag in ("use_galore", "use_apollo"):
                    read.take("optimizer.layerwise", flag.replace("use_", "") + "_layerwise")
                break
        if written(document, "enable_liger_kernel") is True and (written(document, "stage") or "sft") in ("pt", "sft"):
            read.take("memory.fused_cross_entropy", "enable_liger_kernel")

    def _packing(self, read: Reader) -> None:
        document = read.document
        if isinstance(written(document, "packing"), bool):
            read.take("sequence.packing", "packing")
        elif written(document, "neat_packing") is True:  # neat packing is packing (data_args.py)
            read.take("sequence.packing", "neat_packing")
        else:
            stage = written(document, "stage") or "sft"  # unset packing means stage == "pt" (parser.py)
            where = read.key_span("stage") or read.config.file_span
            read.config.set("sequence.packing", Field(stage == "pt", Origin(where, _PARSER, "packing")))

    # ---- rendering ---------------------------------------------------------------------------

    def render_precision(self, document: Document, config: ConfigIR, mode: str) -> list[Edit]:
        fp16_on, bf16_on = PRECISION_MODES[mode]
        return [self.write(document, config, key, wanted)
                for key, wanted in (("precision.bf16", bf16_on), ("precision.fp16", fp16_on))
                if config.value(key) is not wanted]

    def render_value(self, document: Document, config: ConfigIR, key: str, value: Any) -> list[Edit]:
        if key == "attention.implementation":
            reverse = {implementation: name for name, implementation in _ATTENTION.items()}
            if value not in reverse:
                raise RenderError(f"flash_attn has no value for {value}")
            return [set_path(document, ("flash_attn",), reverse[value])]
        if key in ("quantization.compute_dtype", "quantization.quant_storage"):
            # No key of its own ("derived from fp/bf16, do not specify it", model_args.py): it
            # follows the precision flags, which the precision change in the same fix sets.
            return []
        if key == "model.load_dtype":
            raise RenderError("LLaMA-Factory loads the checkpoint's own dtype; pure_bf16 trains it in bfloat16: "
                              "switch pure_bf16 off by hand")
        return super().render_value(document, config, key, value)


def _read_omegaconf_floats(node, value, seen: set) -> None:
    """Turn the plain scalars under `node` that OmegaConf reads as floats into floats in `value`
    (the node's plain value, shared between aliases: `seen` visits each container once)."""
    if id(node) in seen:
        return
    seen.add(id(node))
    if isinstance(node, Mapping):
        children = []
        for pair in node.pairs:
            try:
                if node.get(pair.key.value) is pair:  # of duplicate keys, the last one is read
                    children.append((pair.key.value, pair.value))
            except TypeError:  # an unhashable complex key: plain() skipped it too
                continue
    elif isinstance(node, Sequence):
        children = list(enumerate(node.items))
    else:
        return
    for key, child in children:
        if isinstance(child, Scalar):
            if (not child.style and not child.decorated and isinstance(child.value, str)
                    and _OMEGACONF_ONLY_FLOAT.fullmatch(child.value)):
                value[key] = float(child.value.replace("_", ""))
        else:
            _read_omegaconf_floats(child, value[key], seen)
