"""Ludwig YAML configs (model_type: llm, and ECD configs with input/output features).

Key names and defaults from Ludwig's own schema (ludwig-ai/ludwig):
- ludwig/schema/llms/quantization.py: QuantizationConfig — bits 4, bnb_4bit_compute_dtype
  "float16", bnb_4bit_use_double_quant True, bnb_4bit_quant_type "nf4".
- ludwig/utils/llm_utils.py (load_pretrained_from_config): a quantized model is loaded with
  torch_dtype = the compute dtype, so the float16 default also sets the weights' dtype.
- ludwig/schema/trainer.py (FineTuneTrainerConfig): batch_size, gradient_accumulation_steps,
  learning_rate, enable_gradient_checkpointing.
- ludwig/schema/llms/peft.py: adapter.type (lora, adalora, ia3, ...).
"""

from __future__ import annotations

from ..document import Document, Mapping
from ..fixes import Change, Edit
from ..ir import ConfigIR, Field, Origin, canonical_dtype
from . import Adapter, Reader, new_config, set_path

_QUANTIZATION = "ludwig/schema/llms/quantization.py"
_LLM_UTILS = "ludwig/utils/llm_utils.py"


class LudwigAdapter(Adapter):
    name = "ludwig"
    formats = ("yaml",)
    paths = {
        "quantization.compute_dtype": ("quantization", "bnb_4bit_compute_dtype"),
        "quantization.bits": ("quantization", "bits"),
        "batch.micro": ("trainer", "batch_size"),
        "batch.grad_accum": ("trainer", "gradient_accumulation_steps"),
    }

    def claims(self, document: Document) -> bool:
        root = document.root
        if not isinstance(root, Mapping):
            return False
        model_type = root.value("model_type")
        if model_type is not None and getattr(model_type, "value", None) in ("llm", "ecd", "gbm"):
            return root.get("input_features") is not None or root.get("base_model") is not None
        return root.get("input_features") is not None and root.get("output_features") is not None

    def parse(self, document: Document) -> ConfigIR:
        config = new_config(self, document)
        read = Reader(config)
        read.take("model.name", "base_model")
        is_llm = read.node("model_type") is not None and getattr(read.node("model_type"), "value", None) == "llm"
        if isinstance(read.node("quantization"), Mapping):
            read.take("quantization.bits", "quantization", "bits",
                      default=4, default_source=_QUANTIZATION, anchor=("quantization",))
            compute = read.take("quantization.compute_dtype", "quantization", "bnb_4bit_compute_dtype",
                                convert=canonical_dtype, default="float16", default_source=_QUANTIZATION,
                                anchor=("quantization",))
            read.take("quantization.quant_type", "quantization", "bnb_4bit_quant_type",
                      default="nf4", default_source=_QUANTIZATION, anchor=("quantization",))
            read.take("quantization.double_quant", "quantization", "bnb_4bit_use_double_quant",
                      default=True, default_source=_QUANTIZATION, anchor=("quantization",))
            if compute is not None:
                # The model is loaded in the compute dtype: same place, derived (llm_utils.py).
                config.fields["model.load_dtype"] = Field(compute.value, Origin(compute.span, _LLM_UTILS))
        if is_llm:
            adapter = read.take("adapter.kind", "adapter", "type")
            if adapter is None:
                read.set("adapter.kind", None, "adapter")
            read.take("adapter.r", "adapter", "r")
            read.take("adapter.alpha", "adapter", "alpha")
            read.take("adapter.target_modules", "adapter", "target_modules", convert=list)
        read.take("batch.micro", "trainer", "batch_size")
        read.take("batch.grad_accum", "trainer", "gradient_accumulation_steps")
        read.take("optimizer.lr", "trainer", "learning_rate")
        read.take("optimizer.name", "trainer", "optimizer", "type")
        read.take("memory.gradient_checkpointing", "trainer", "enable_gradient_checkpointing")
        read.take("sequence.max_length", "preprocessing", "global_max_sequence_length")
        return config

    def render(self, config: ConfigIR, change: Change) -> list[Edit]:
        if change.key == "model.load_dtype":
            # Ludwig has no key of its own for it: the compute dtype decides (llm_utils.py).
            return [set_path(config.document, self.paths["quantization.compute_dtype"], change.value)]
        return super().render(config, change)
