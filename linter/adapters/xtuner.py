"""XTuner python configs (mmengine style: module-level assignments and `dict(type=..., ...)`),
read with `ast` only — a config is never executed or imported.

Names and defaults from XTuner's and mmengine's own source (InternLM/xtuner at b934f46, after
v1.0.1; open-mmlab/mmengine at 2543429, after v0.10.7):
- xtuner/configs/llama/llama3_8b_instruct/llama3_8b_instruct_qlora_alpaca_e3.py: `model =
  dict(type=SupervisedFinetune, llm=dict(type=AutoModelForCausalLM.from_pretrained,
  pretrained_model_name_or_path=..., torch_dtype=..., quantization_config=dict(type=
  BitsAndBytesConfig, load_in_4bit=..., bnb_4bit_compute_dtype=..., ...)), lora=dict(type=
  LoraConfig, r=..., lora_alpha=...))`, `optim_wrapper = dict(type=AmpOptimWrapper, optimizer=
  dict(lr=...), clip_grad=dict(max_norm=...), accumulative_counts=..., dtype="float16")`,
  `train_dataloader = dict(batch_size=...)`, module-level `max_length`, `pack_to_max_length`.
- xtuner/model/sft.py: SupervisedFinetune(llm, lora=None, use_activation_checkpointing=True):
  without `lora` the whole model trains; DPO and ORPO (dpo.py, orpo.py) subclass it.
- mmengine/optim/optimizer/amp_optimizer_wrapper.py: AmpOptimWrapper(dtype=None) with dtype one
  of 'float16', 'bfloat16', 'float32', 'float64' or a torch.dtype; mmengine/runner/amp.py: None
  means torch.get_autocast_gpu_dtype(), float16. optimizer_wrapper.py: OptimWrapper (no
  autocast: fp32), accumulative_counts=1, clip_grad=None.
- xtuner/tools/train.py: `framework = "huggingface"` (default "mmengine") selects HF's Trainer
  with `training_args = dict(type=TrainingArguments, ...)`, `model` the from_pretrained dict
  itself and a top-level `lora` (e.g. configs/internlm/internlm_7b/internlm_7b_qlora_oasst1_e3_hf.py).
  `--deepspeed NAME` resolves NAME through xtuner/configs/__init__.py (cfgs_name_path: every
  .json/.py under xtuner/configs by file name without extension) when no such file exists.

What `--deepspeed` does to an mmengine config (xtuner/tools/train.py, main): the optim_wrapper
is replaced by `dict(type="DeepSpeedOptimWrapper", optimizer=cfg.optim_wrapper.optimizer)` — the
AmpOptimWrapper, its `dtype` and `loss_scale` are silently dropped; accumulative_counts,
train_dataloader.batch_size and clip_grad.max_norm (1.0 when clip_grad is absent) become
DeepSpeed's gradient_accumulation_steps, train_micro_batch_size_per_gpu and gradient_clipping;
and the JSON's `"auto"` fp16/bf16 are decided by xtuner/tools/utils.py
auto_dtype_of_deepspeed_config from the *hardware*, not from the config: fp16 = CUDA available,
bf16 = torch.cuda.is_bf16_supported(), and bf16 wins when both are true. So on an A100 such a
run trains in bf16 whatever AmpOptimWrapper's dtype says, and on pre-Ampere GPUs the answer
depends on torch (is_bf16_supported() says no below compute capability 8 from torch 1.10 to 2.2,
yes on a V100 from torch 2.3, PR #115924, where an emulated bf16 tensor counts: recorded as
`launch.auto_precision_by_device`, read by rules/facts.py device_resolved_fp16). DeepSpeed then
casts the parameters to it (runtime/engine.py _configure_distributed_model) and bitsandbytes'
Linear4bit computes in a bf16 input's dtype from 0.41 to 0.46 (set_compute_type; see
xtuner_deepspeed.py): the config's dtypes are recorded as `launch.deepspeed_replaces`, for the
launch to decide. With
`framework = "huggingface"` the HF Trainer fills the "auto"s from training_args (transformers/integrations/deepspeed.py).
"""

from __future__ import annotations

import ast
import re

from ..document import RenderError
from ..fixes import Edit
from ..ir import ConfigIR, Field, Link, Origin, canonical_dtype
from ..python_reader import PythonDocument, call_name, is_open
from ..versions import older_than
from . import Adapter, new_config, record_literal, span_of
from .xtuner_deepspeed import record_optimizer, record_strategy, runs_strategy, shipped_values

_SFT = "xtuner/model/sft.py (SupervisedFinetune)"
_AMP = "mmengine/runner/amp.py (AmpOptimWrapper dtype=None: torch's default CUDA autocast dtype, float16)"
_OPTIM_WRAPPER = "mmengine/optim/optimizer/optimizer_wrapper.py (OptimWrapper: no autocast)"
_DEEPSPEED_REPLACES = ("precision.fp16", "precision.bf16", "model.load_dtype", "quantization.compute_dtype")
_TRAINING_ARGUMENTS = "transformers/training_args.py (TrainingArguments: fp16 False, bf16 False)"
_TRAIN_HF = "xtuner/tools/train.py (framework \"huggingface\": PEFT only `if cfg.get(\"lora\")`)"
_BNB = "transformers/utils/quantization_config.py (BitsAndBytesConfig: bnb_4bit_compute_dtype None is float32)"
_SFT_FAMILY = {"SupervisedFinetune", "DPO", "ORPO"}
# Whom each sampler deals samples to: every rank (mmengine/dataset/sampler.py DefaultSampler and InfiniteSampler,
# xtuner/dataset/samplers/length_grouped.py LengthGroupedSampler: get_dist_info) or the data-parallel groups
# (xtuner/parallel/sequence/sampler.py SequenceParallelSampler, dataset/samplers/intern_repo.py InternRepoSampler,
# InternlmRepoSampler: get_data_parallel_rank and get_data_parallel_world_size); the same from v0.1.16 to b934f46.
_SAMPLER_RANKS = {"DefaultSampler": True, "InfiniteSampler": True, "LengthGroupedSampler": True,
                  "SequenceParallelSampler": False, "InternRepoSampler": False, "InternlmRepoSampler": False}
_TORCH_KEYWORDS = {"torch_dtype", "bnb_4bit_compute_dtype", "bnb_4bit_quant_storage"}
_SNIFF = re.compile(r"^(?:model|optim_wrapper|training_args)\s*=\s*dict\s*\(", re.MULTILINE)
# HF TrainingArguments keywords of framework="huggingface" configs, by IR key.
_TRAINING_ARGS = {
    "precision.fp16": "fp16", "precision.bf16": "bf16", "precision.tf32": "tf32",
    "batch.micro": "per_device_train_batch_size", "batch.grad_accum": "gradient_accumulation_steps",
    "optimizer.lr": "learning_rate", "optimizer.weight_decay": "weight_decay", "optimizer.grad_clip": "max_grad_norm",
    "optimizer.name": "optim", "memory.gradient_checkpointing": "gradient_checkpointing",
}


def _arguments(document: PythonDocument, node: ast.expr | None) -> tuple[dict[str, ast.expr], bool]:
    """The keywords of a `dict(...)` call (or the items of a `{...}` literal), following names,
    and whether they are all there is (no `**other` that could add keys)."""
    node = document.resolve(node)
    if isinstance(node, ast.Call) and call_name(node) == "dict" and not node.args:
        return {item.arg: item.value for item in node.keywords if item.arg}, not is_open(node)
    if isinstance(node, ast.Dict):
        items = {key.value: value for key, value in zip(node.keys, node.values)
                 if isinstance(key, ast.Constant) and isinstance(key.value, str)}
        return items, len(items) == len(node.keys)
    return {}, False


class _Config:
    """Where an XTuner config keeps each part, for one document."""

    def __init__(self, document: PythonDocument):
        self.document = document
        framework = document.literal(document.constants.get("framework"))
        if "framework" not in document.bound and not document.star_import:
            self.framework = "mmengine"  # train.py: cfg.get("framework", "mmengine")
        else:
            self.framework = framework.lower() if isinstance(framework, str) else None
        # mmengine merges a config into its `_base_` configs (and read_base() star-imports
        # them): a key this file does not write may come from there, so no default is assumed.
        self.inherits = document.star_import or "_base_" in document.bound
        self.model, self.model_closed = self.arguments("model")
        self.model_type = call_name(self.model["type"]) if "type" in self.model else ""
        hf = self.framework == "huggingface"
        self.llm_node = document.resolve(document.constants.get("model") if hf else self.model.get("llm"))
        self.llm, _ = _arguments(document, self.llm_node)
        self.quantization_node = document.resolve(self.llm.get("quantization_config"))
        self.quantization, self.quantization_closed = _arguments(document, self.quantization_node)
        self.lora_node = document.resolve(document.constants.get("lora") if hf else self.model.get(
            "llm_lora" if self.model_type == "LLaVAModel" else "lora"))
        self.optim_wrapper, self.optim_wrapper_closed = self.arguments("optim_wrapper")
        self.training_args, self.training_args_closed = self.arguments("training_args")

    def arguments(self, name: str) -> tuple[dict[str, ast.expr], bool]:
        return _arguments(self.document, self.document.constants.get(name))

    def call(self, name: str) -> ast.Call | None:
        node = self.document.resolve(self.document.constants.get(name))
        return node if isinstance(node, ast.Call) else None

    def anchor(self, name: str) -> ast.expr:
        """Where a default of the module-level `name` points."""
        return _head(self.document.resolve(self.document.constants[name]))


def _typed_packages(document: PythonDocument) -> set[str]:
    """The packages named by the dotted `type='package.module.Name'` strings of dict(...) calls. A
    config as mmengine dumps it (Config.dump, e.g. the copy `xtuner train` writes to its work_dir)
    imports nothing: each `type` is the object's dotted path, which Registry.get imports
    (mmengine/registry/registry.py get_object_from_string, mmengine >= 0.8.0, PR #1071); one
    naming an xtuner object is as sure a sign as importing xtuner (mmdet's and mmengine's don't)."""
    return {item.value.value.partition(".")[0] for call in document.calls("dict") for item in call.keywords
            if item.arg == "type" and isinstance(item.value, ast.Constant) and isinstance(item.value.value, str)
            and "." in item.value.value}


def _head(node: ast.expr) -> ast.expr:
    """The part of a value a default points at: a call's function (`dict`), else the value."""
    return node.func if isinstance(node, ast.Call) else node


class XTunerAdapter(Adapter):
    name = "xtuner"

    def evidence(self, document) -> int:
        return int(isinstance(document, PythonDocument) and any(
            name in document.constants for name in ("model", "optim_wrapper", "training_args"))
            and ("xtuner" in document.imports() or "xtuner" in _typed_packages(document)))

    def sniffs(self, text: str) -> bool:
        return "xtuner" in text and bool(_SNIFF.search(text))

    # ---- reading -----------------------------------------------------------------------------

    def parse(self, document: PythonDocument) -> ConfigIR:
        config = new_config(self, document)
        parts = _Config(document)

        def record(key, node, convert=None):
            return record_literal(config, document, key, node, convert)

        def default(key, value, node, source):
            config.set(key, Field(value, Origin(span_of(document, *document.span(node)), source)))

        llm = parts.llm
        record("model.name", llm.get("pretrained_model_name_or_path")
               or document.constants.get("pretrained_model_name_or_path"))
        record("model.load_dtype", llm.get("torch_dtype"), canonical_dtype)
        record("attention.implementation", llm.get("attn_implementation"))
        quantization = parts.quantization
        if document.literal(quantization.get("load_in_4bit")) is True:
            record("quantization.bits", quantization["load_in_4bit"], lambda _: 4)
            compute_dtype = quantization.get("bnb_4bit_compute_dtype")
            if compute_dtype is not None:
                record("quantization.compute_dtype", compute_dtype, canonical_dtype)
            elif parts.quantization_closed and call_name(quantization.get("type", ast.Constant(""))) \
                    == "BitsAndBytesConfig":
                default("quantization.compute_dtype", "float32", _head(parts.quantization_node), _BNB)
        elif document.literal(quantization.get("load_in_8bit")) is True:
            record("quantization.bits", quantization["load_in_8bit"], lambda _: 8)
        record("quantization.quant_type", quantization.get("bnb_4bit_quant_type"))
        record("quantization.double_quant", quantization.get("bnb_4bit_use_double_quant"))
        record("quantization.quant_storage", quantization.get("bnb_4bit_quant_storage"), canonical_dtype)
        self._adapter(document, parts, config, record)
        if parts.framework == "huggingface":
            self._training_args(document, parts, config, record, default)
        elif parts.framework == "mmengine":
            self._mmengine(document, parts, config, record, default)
        record("sequence.max_length", document.constants.get("max_length"))
        record("sequence.packing", document.constants.get("pack_to_max_length"))
        return config

    def _adapter(self, document, parts: _Config, config: ConfigIR, record) -> None:
        lora = parts.lora_node
        lora_arguments, _ = _arguments(document, lora)
        if isinstance(lora, ast.Call):
            config.set("adapter.kind", Field("lora", Origin(span_of(document, *document.span(lora)))))
            for key, keyword in (("r", "r"), ("alpha", "lora_alpha"), ("target_modules", "target_modules"),
                                 ("modules_to_save", "modules_to_save"), ("exclude_modules", "exclude_modules")):
                record(f"adapter.{key}", lora_arguments.get(keyword))
            # sft.py _prepare_for_lora hands the built LoraConfig to get_peft_model: PEFT expands "all-linear".
            if str(document.literal(lora_arguments.get("target_modules"))).strip().lower() == "all-linear":
                record("adapter.target_shorthand", lora_arguments.get("target_modules"))
            return
        hf = parts.framework == "huggingface"
        if not (hf or parts.model_type in _SFT_FAMILY):
            return
        if isinstance(lora, ast.Constant) and lora.value is None:
            config.set("adapter.kind", Field(None, Origin(span_of(document, *document.span(lora)))))
        elif lora is None and not parts.inherits and "model" in document.constants and (
                "lora" not in document.bound if hf else parts.model_closed):
            # No `lora`: SupervisedFinetune(lora=None) trains the whole model (sft.py); so does
            # train.py's HF branch (`if cfg.get("lora", None)`).
            config.set("adapter.kind", Field(None, Origin(
                span_of(document, *document.span(parts.anchor("model"))), _TRAIN_HF if hf else _SFT)))

    def _mmengine(self, document, parts: _Config, config: ConfigIR, record, default) -> None:
        model = parts.model
        if parts.model_type in _SFT_FAMILY:
            checkpointing = model.get("use_activation_checkpointing")
            if checkpointing is not None:
                record("memory.gradient_checkpointing", checkpointing)
            elif parts.model_closed and not parts.inherits:
                default("memory.gradient_checkpointing", True, parts.anchor("model"),
                        f"{_SFT}: use_activation_checkpointing=True")
            # SupervisedFinetune(use_varlen_attn=False) passes it to dispatch_modules (model/modules/dispatch).
            varlen = model.get("use_varlen_attn")
            if varlen is not None:
                record("attention.varlen", varlen)
            elif parts.model_closed and not parts.inherits:
                default("attention.varlen", False, parts.anchor("model"), f"{_SFT}: use_varlen_attn=False")
        wrapper = parts.optim_wrapper
        optimizer, _ = _arguments(document, wrapper.get("optimizer"))
        record_optimizer(document, config, wrapper)
        record("optimizer.lr", optimizer.get("lr"))
        record("optimizer.weight_decay", optimizer.get("weight_decay"))
        record("optimizer.betas", optimizer.get("betas"))
        clip, _ = _arguments(document, wrapper.get("clip_grad"))
        record("optimizer.grad_clip", clip.get("max_norm"))
        record("batch.grad_accum", wrapper.get("accumulative_counts"))
        dataloader, _ = parts.arguments("train_dataloader")
        record("batch.micro", dataloader.get("batch_size"))
        # dataset/collate_fns/default_collate_fn.py: use_varlen_attn picks the path without the
        # pad_for_sequence_parallel padding (its assert wants a length divisible by the SP size).
        collate, _ = _arguments(document, dataloader.get("collate_fn"))
        record("data.collate_varlen", collate.get("use_varlen_attn"))
        self._sequence_parallel(document, config, dataloader, record)
        self._amp_precision(document, parts, config, default)

    def _sequence_parallel(self, document, config: ConfigIR, dataloader, record) -> None:
        """tools/train.py reads the module-level `sequence_parallel_size` (from v0.1.16, 59834032c)
        and DeepSpeedStrategy splits the ranks into groups of that size (parallel/sequence/
        setup_distributed.py init_sequence_parallel); mmengine's Runner.build_dataloader builds
        train_dataloader's `sampler` as written, and no XTuner code replaces it. The sampler's
        class decides whom it deals samples to: a class by name only; a computed one (the shipped
        `SequenceParallelSampler if sequence_parallel_size > 1 else DefaultSampler`) stays unknown."""
        version = config.version("xtuner") if "sequence_parallel_size" in document.constants else None
        if version is not None and older_than(version[0], "0.1.16"):
            return  # no sequence parallelism yet: the name is an unused variable
        record("parallel.sequence_parallel", document.constants.get("sequence_parallel_size"),
               lambda value: value if isinstance(value, int) and not isinstance(value, bool) else None)
        sampler, _ = _arguments(document, dataloader.get("sampler"))
        kind = document.resolve(sampler.get("type"))
        name = (kind.id if isinstance(kind, ast.Name) else kind.attr if isinstance(kind, ast.Attribute)
                else kind.value.rsplit(".", 1)[-1] if isinstance(kind, ast.Constant) and isinstance(kind.value, str)
                else None)
        if name is None:
            return
        origin = Origin(span_of(document, *document.span(kind)))
        config.set("data.sampler", Field(name, origin))
        if name in _SAMPLER_RANKS:
            config.set("data.sampler_shards_all_ranks", Field(_SAMPLER_RANKS[name], origin))

    def _amp_precision(self, document, parts: _Config, config: ConfigIR, default) -> None:
        wrapper = parts.optim_wrapper
        kind = call_name(wrapper["type"]) if "type" in wrapper else ""
        if kind in ("OptimWrapper", "AmpOptimWrapper"):  # what `--deepspeed` replaces: the module docstring
            origin = Origin(span_of(document, *document.span(wrapper["type"])),
                            "xtuner/tools/train.py main (--deepspeed)")
            config.set("launch.deepspeed_replaces", Field(list(_DEEPSPEED_REPLACES), origin))
            # auto_dtype_of_deepspeed_config came with v0.1.7 (54467bea2, PR #195), with the "auto" shipped configs.
            version = config.version("xtuner")
            if version is None or not older_than(version[0], "0.1.7"):
                config.set("launch.auto_precision_by_device", Field(True, origin))
        if kind == "OptimWrapper":
            for key in ("precision.fp16", "precision.bf16"):
                default(key, False, wrapper["type"], _OPTIM_WRAPPER)
            return
        if kind != "AmpOptimWrapper":
            strategy = runs_strategy(document, wrapper)  # a dumped DeepSpeed run: xtuner_deepspeed.py
            if strategy is not None:
                record_strategy(document, config, strategy)
            return  # DeepSpeedOptimWrapper or a custom one: its precision lives elsewhere
        dtype_node = wrapper.get("dtype")
        if dtype_node is None:
            if not parts.optim_wrapper_closed or parts.inherits:
                return
            value = "float16"
        else:
            written = document.literal(dtype_node)
            value = "float16" if written is None else canonical_dtype(written)  # None: the same default
        if value not in ("float16", "bfloat16"):
            return  # computed, or float32/float64: no 16-bit autocast, left unknown
        node, source = (wrapper["type"], _AMP) if dtype_node is None else (document.resolve(dtype_node), None)
        for key, on in (("precision.fp16", value == "float16"), ("precision.bf16", value == "bfloat16")):
            config.set(key, Field(on, Origin(span_of(document, *document.span(node)), source)))

    def _training_args(self, document, parts: _Config, config: ConfigIR, record, default) -> None:
        arguments = parts.training_args
        for key, name in _TRAINING_ARGS.items():
            record(key, arguments.get(name))
        if not parts.training_args_closed or parts.inherits:
            return
        for key in ("precision.fp16", "precision.bf16"):
            if _TRAINING_ARGS[key] not in arguments:
                default(key, False, parts.anchor("training_args"), _TRAINING_ARGUMENTS)

    # ---- DeepSpeed names ---------------------------------------------------------------------

    def named_link(self, document: PythonDocument, config: ConfigIR, name: str) -> Link | None:
        values = shipped_values(name)
        if values is None:
            return None
        parts = _Config(document)
        if parts.framework == "mmengine":
            # train.py hands DeepSpeed clip_grad.max_norm as gradient_clipping, 1.0 without clip_grad.
            if config.get("optimizer.grad_clip") is not None:
                values["optimizer.grad_clip"] = config.value("optimizer.grad_clip")
            elif "clip_grad" not in parts.optim_wrapper and parts.optim_wrapper_closed and not parts.inherits:
                values["optimizer.grad_clip"] = 1.0
        source = f"xtuner/configs/deepspeed/{name}.json"
        return Link("deepspeed", name, config.file_span, builtin=values, builtin_source=source)

    # ---- writing -----------------------------------------------------------------------------

    def render_precision(self, document: PythonDocument, config: ConfigIR, mode: str) -> list[Edit]:
        parts = _Config(document)
        if parts.framework == "huggingface":
            edits = []
            for flag, on in (("precision.fp16", mode == "fp16"), ("precision.bf16", mode == "bf16")):
                if config.value(flag) is not on:
                    edits += self._render_training_args(parts, flag, on)
            return edits
        return self._render_amp(parts, mode)

    def render_value(self, document: PythonDocument, config: ConfigIR, key: str, value) -> list[Edit]:
        parts = _Config(document)
        if parts.framework == "huggingface" and key in _TRAINING_ARGS:
            return self._render_training_args(parts, key, value)
        if key == "model.load_dtype":
            return _set_keyword(document, parts.llm_node, parts.llm, "torch_dtype", value, insert=False)
        if key == "quantization.compute_dtype":
            return _set_keyword(document, parts.quantization_node, parts.quantization, "bnb_4bit_compute_dtype",
                                value, after="load_in_4bit")
        if key == "quantization.quant_storage":
            return _set_keyword(document, parts.quantization_node, parts.quantization, "bnb_4bit_quant_storage",
                                value, after="bnb_4bit_compute_dtype")
        if key == "attention.implementation":
            return _set_keyword(document, parts.llm_node, parts.llm, "attn_implementation", value, insert=False)
        if key == "optimizer.grad_clip" and parts.framework == "mmengine":
            clip, _ = _arguments(document, parts.optim_wrapper.get("clip_grad"))
            return _set_keyword(document, None, clip, "max_norm", value, insert=False)
        if key == "batch.micro" and parts.framework == "mmengine":
            dataloader, _ = parts.arguments("train_dataloader")
            return _set_keyword(document, None, dataloader, "batch_size", value, insert=False)
        raise RenderError(f"XTuner configs have no place for {key} that trainlint can edit")

    def _render_amp(self, parts: _Config, mode: str) -> list[Edit]:
        wrapper = parts.optim_wrapper
        if parts.framework != "mmengine" or "type" not in wrapper or call_name(wrapper["type"]) != "AmpOptimWrapper":
            raise RenderError("precision is set by an AmpOptimWrapper's dtype; this config has none to edit")
        if mode not in ("bf16", "fp16"):
            raise RenderError("XTuner's AmpOptimWrapper has no fp32 mode; use OptimWrapper by hand")
        dtype = "bfloat16" if mode == "bf16" else "float16"
        return _set_keyword(parts.document, parts.call("optim_wrapper"), wrapper, "dtype", dtype)

    def _render_training_args(self, parts: _Config, key: str, value) -> list[Edit]:
        return _set_keyword(parts.document, parts.call("training_args"), parts.training_args, _TRAINING_ARGS[key],
                            value, after="fp16" if key == "precision.bf16" else None, insert=isinstance(value, bool))


def _set_keyword(document: PythonDocument, call: ast.expr | None, arguments: dict[str, ast.expr], name: str,
                 value, after: str | None = None, insert: bool = True) -> list[Edit]:
    """Replace the value of keyword `name` (where a module-level constant holds it, there), or
    add it to `call`."""
    node = arguments.get(name)
    if node is not None:
        return [document.replace(node, value)]
    if not insert or not isinstance(call, ast.Call) or call_name(call) != "dict":
        raise RenderError(f"no `{name}` in this XTuner config to change")
    # A torch keyword gets a torch dtype where the name `torch` is bound (`import torch`; `from
    # torch.optim import AdamW` binds only AdamW); mmengine's dtype, and the rest, a string.
    spelled = f"torch.{value}" if name in _TORCH_KEYWORDS and "torch" in document.bound else None
    return document.insert_keyword(call, name, value, after=after if after in arguments else None, spelled=spelled)
