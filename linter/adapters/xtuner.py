"""XTuner python configs (mmengine style: module-level assignments and `dict(type=..., ...)`),
read with `ast` only — a config is never executed or imported.

Names and defaults from XTuner's and mmengine's own source:
- xtuner/configs/llama/llama3_8b_instruct/llama3_8b_instruct_qlora_alpaca_e3.py: `model =
  dict(type=SupervisedFinetune, llm=dict(..., torch_dtype=..., quantization_config=dict(type=
  BitsAndBytesConfig, load_in_4bit=..., bnb_4bit_compute_dtype=..., ...)), lora=dict(type=
  LoraConfig, r=..., lora_alpha=...))`, `optim_wrapper = dict(type=AmpOptimWrapper, optimizer=
  dict(lr=...), clip_grad=dict(max_norm=...), accumulative_counts=..., dtype='float16')`,
  `train_dataloader = dict(batch_size=...)`, `max_length`, `pack_to_max_length`.
- mmengine/optim/optimizer/amp_optimizer_wrapper.py: AmpOptimWrapper(dtype=None) autocasts in
  torch's default CUDA autocast dtype, float16.
- xtuner/tools/train.py: with `--deepspeed NAME`, NAME is one of XTuner's shipped configs
  (xtuner/configs/deepspeed/deepspeed_zero{1,2,2_offload,3,3_offload}.json, fp16/bf16 "auto")
  and the AmpOptimWrapper is replaced by DeepSpeed's optimizer wrapper: its `dtype` then only
  feeds the "auto" resolution of those configs.
"""

from __future__ import annotations

import ast

from ..document import RenderError
from ..fixes import Change, Edit
from ..ir import ConfigIR, Field, Link, Origin, canonical_dtype
from ..python_reader import UNKNOWN, PythonDocument, call_name
from . import Adapter, new_config, record_literal, span_of

_SFT = "xtuner/model/sft.py (SupervisedFinetune use_activation_checkpointing=True)"
_AMP = "mmengine/optim/optimizer/amp_optimizer_wrapper.py (AmpOptimWrapper dtype=None: float16 autocast)"
# XTuner's shipped DeepSpeed configs (xtuner/configs/deepspeed/*.json at b934f46): stage and offload;
# fp16/bf16 are "auto" in every one of them.
_SHIPPED = {
    "deepspeed_zero1": (1, False), "deepspeed_zero2": (2, False), "deepspeed_zero2_offload": (2, True),
    "deepspeed_zero3": (3, False), "deepspeed_zero3_offload": (3, True),
}


def _dict_kwargs(node: ast.expr | None) -> dict[str, ast.expr]:
    """The keywords of a `dict(...)` call (or the items of a `{...}` literal)."""
    if isinstance(node, ast.Call) and call_name(node) == "dict":
        return {item.arg: item.value for item in node.keywords if item.arg}
    if isinstance(node, ast.Dict):
        return {key.value: value for key, value in zip(node.keys, node.values)
                if isinstance(key, ast.Constant) and isinstance(key.value, str)}
    return {}


class XTunerAdapter(Adapter):
    name = "xtuner"
    formats = ("python",)

    def claims(self, document) -> bool:
        if not isinstance(document, PythonDocument):
            return False
        imports = document.imports()
        return bool(imports & {"xtuner", "mmengine"}) and ("model" in document.constants
                                                             or "optim_wrapper" in document.constants)

    def sniffs(self, text: str) -> bool:
        return ("xtuner" in text or "mmengine" in text) and "optim_wrapper" in text

    def named_link(self, config: ConfigIR, name: str) -> Link | None:
        shipped = _SHIPPED.get(name)
        if shipped is None:
            return None
        stage, offload = shipped
        return Link("deepspeed", name, config.file_span, builtin={
            "parallel.zero_stage": stage, "parallel.offload_optimizer": offload,
            "precision.fp16": "auto", "precision.bf16": "auto"},
            builtin_source=f"xtuner/configs/deepspeed/{name}.json")

    # Where each IR value lives: (module-level variable, nested dict keys...).
    _LOCATIONS = {
        "model.load_dtype": ("model", "llm", "torch_dtype"),
        "quantization.compute_dtype": ("model", "llm", "quantization_config", "bnb_4bit_compute_dtype"),
        "precision.dtype": ("optim_wrapper", "dtype"),
    }

    def _find(self, document: PythonDocument, *path: str) -> ast.expr | None:
        node = document.resolve(document.constants.get(path[0]))
        for key in path[1:]:
            node = document.resolve(_dict_kwargs(node).get(key))
            if node is None:
                return None
        return node

    def parse(self, document: PythonDocument) -> ConfigIR:
        config = new_config(self, document)

        def record(key, node, convert=None):
            return record_literal(config, key, node, convert)

        llm = self._find(document, "model", "llm")
        record("model.name", _dict_kwargs(llm).get("pretrained_model_name_or_path")
               or document.constants.get("pretrained_model_name_or_path"))
        record("model.load_dtype", _dict_kwargs(llm).get("torch_dtype"), canonical_dtype)
        quantization = _dict_kwargs(self._find(document, "model", "llm", "quantization_config"))
        if document.literal(quantization.get("load_in_4bit")) is True:
            record("quantization.bits", quantization["load_in_4bit"], lambda _: 4)
        elif document.literal(quantization.get("load_in_8bit")) is True:
            record("quantization.bits", quantization["load_in_8bit"], lambda _: 8)
        record("quantization.compute_dtype", quantization.get("bnb_4bit_compute_dtype"), canonical_dtype)
        record("quantization.quant_type", quantization.get("bnb_4bit_quant_type"))
        record("quantization.double_quant", quantization.get("bnb_4bit_use_double_quant"))
        record("quantization.quant_storage", quantization.get("bnb_4bit_quant_storage"), canonical_dtype)
        lora = self._find(document, "model", "lora")
        model = _dict_kwargs(self._find(document, "model"))
        if lora is not None:
            config.fields["adapter.kind"] = Field("lora", Origin(span_of(document, *document.span(lora))))
            record("adapter.r", _dict_kwargs(lora).get("r"))
            record("adapter.alpha", _dict_kwargs(lora).get("lora_alpha"))
            record("adapter.target_modules", _dict_kwargs(lora).get("target_modules"))
        elif model:
            # SupervisedFinetune without `lora` trains the full model.
            config.fields["adapter.kind"] = Field(None, Origin(config.file_span))
        if model:
            checkpointing = model.get("use_activation_checkpointing")
            if checkpointing is None:
                # SupervisedFinetune(use_activation_checkpointing=True) by default (xtuner/model/sft.py).
                config.fields["memory.gradient_checkpointing"] = Field(True, Origin(config.file_span, _SFT))
            else:
                record("memory.gradient_checkpointing", checkpointing)
        self._precision(document, config, record)
        optim = _dict_kwargs(self._find(document, "optim_wrapper"))
        record("optimizer.lr", _dict_kwargs(document.resolve(optim.get("optimizer"))).get("lr"))
        record("optimizer.grad_clip", _dict_kwargs(document.resolve(optim.get("clip_grad"))).get("max_norm"))
        record("batch.grad_accum", optim.get("accumulative_counts"))
        record("batch.micro", _dict_kwargs(self._find(document, "train_dataloader")).get("batch_size"))
        record("sequence.max_length", document.constants.get("max_length"))
        record("sequence.packing", document.constants.get("pack_to_max_length"))
        return config

    def _precision(self, document: PythonDocument, config: ConfigIR, record) -> None:
        wrapper = self._find(document, "optim_wrapper")
        kwargs = _dict_kwargs(wrapper)
        wrapper_type = kwargs.get("type")
        if wrapper_type is None:
            return
        if call_name(wrapper_type) != "AmpOptimWrapper":
            span = span_of(document, *document.span(wrapper_type))
            config.fields["precision.fp16"] = Field(False, Origin(span))
            config.fields["precision.bf16"] = Field(False, Origin(span))
            return
        dtype_node = kwargs.get("dtype")
        dtype = canonical_dtype(document.literal(dtype_node)) if dtype_node is not None else "float16"
        if dtype is UNKNOWN or dtype not in ("float16", "bfloat16"):
            return
        if dtype_node is not None:
            span, source = span_of(document, *document.span(document.resolve(dtype_node))), None
        else:
            span, source = span_of(document, *document.span(wrapper_type)), _AMP
        config.fields["precision.fp16"] = Field(dtype == "float16", Origin(span, source))
        config.fields["precision.bf16"] = Field(dtype == "bfloat16", Origin(span, source))

    def render(self, config: ConfigIR, change: Change) -> list[Edit]:
        document: PythonDocument = config.document
        if change.key == "precision.mode":
            if change.value not in ("bf16", "fp16"):
                raise RenderError("XTuner's AmpOptimWrapper has no fp32 mode; use OptimWrapper by hand")
            node = self._find(document, *self._LOCATIONS["precision.dtype"])
            dtype = "bfloat16" if change.value == "bf16" else "float16"
            if node is None:
                wrapper = self._find(document, "optim_wrapper")
                return [document.insert_keyword(wrapper, "dtype", dtype)]
            return [document.replace(node, dtype)]
        location = self._LOCATIONS.get(change.key)
        node = self._find(document, *location) if location else None
        if node is None:
            raise RenderError(f"no value for {change.key} in this XTuner config")
        return [document.replace(node, change.value)]

