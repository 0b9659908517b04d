"""Unsloth training scripts, read with `ast` only — a script is never executed or imported.

Names and defaults from Unsloth's own source (unslothai/unsloth):
- unsloth/models/loader.py, FastLanguageModel.from_pretrained(model_name, max_seq_length,
  dtype=None, load_in_4bit=True, ...): dtype None means bfloat16 where the GPU supports it,
  else float16 (`dtype = torch.float16 if not SUPPORTS_BFLOAT16 else torch.bfloat16`), and the
  4-bit compute dtype is that dtype (unsloth/models/llama.py: bnb_4bit_compute_dtype = dtype).
- unsloth's notebooks pass `fp16 = not is_bfloat16_supported(), bf16 = is_bfloat16_supported()`
  to TrainingArguments/SFTConfig: decided at launch, read here as "auto".
- TrainingArguments / SFTConfig / SFTTrainer keywords as in transformers and TRL (see hf.py).
"""

from __future__ import annotations

import ast

from ..document import RenderError
from ..fixes import Change, Edit
from ..ir import ConfigIR, Field, Origin, canonical_dtype
from ..python_reader import AUTO, PythonDocument, keyword
from . import Adapter, new_config, record_literal, span_of

_LOADER = "unsloth/models/loader.py (FastLanguageModel.from_pretrained)"
_LOADERS = ("from_pretrained",)
_LOADER_OWNERS = {"FastLanguageModel", "FastModel", "FastVisionModel"}
_TRAINING_CALLS = ("SFTConfig", "TrainingArguments", "SFTTrainer", "UnslothTrainingArguments")


def _loader_call(document: PythonDocument) -> ast.Call | None:
    for call in document.calls(*_LOADERS):
        owner = call.func.value if isinstance(call.func, ast.Attribute) else None
        if isinstance(owner, ast.Name) and owner.id in _LOADER_OWNERS:
            return call
    return None


class UnslothAdapter(Adapter):
    name = "unsloth"
    formats = ("python",)

    def claims(self, document) -> bool:
        return isinstance(document, PythonDocument) and "unsloth" in document.imports() \
            and _loader_call(document) is not None

    def sniffs(self, text: str) -> bool:
        return "unsloth" in text and any(owner in text for owner in _LOADER_OWNERS)

    def parse(self, document: PythonDocument) -> ConfigIR:
        config = new_config(self, document)
        loader = _loader_call(document)

        def record(key, node, convert=None):
            return record_literal(config, key, node, convert)

        def argument(call, name, position=None):
            found = keyword(call, name)
            if found is not None:
                return found.value
            return call.args[position] if position is not None and len(call.args) > position else None

        loader_span = span_of(document, *document.span(loader.func))
        record("model.name", argument(loader, "model_name", 0))
        record("sequence.max_length", argument(loader, "max_seq_length", 1))
        dtype = record("model.load_dtype", argument(loader, "dtype", 2),
                       lambda value: AUTO if value is None else canonical_dtype(value))
        if dtype is None and argument(loader, "dtype", 2) is None:
            dtype = config.fields["model.load_dtype"] = Field(AUTO, Origin(loader_span, _LOADER))
        four_bit = argument(loader, "load_in_4bit", 3)
        if four_bit is None:
            config.fields["quantization.bits"] = Field(4, Origin(loader_span, _LOADER))
        elif document.literal(four_bit) is True:
            record("quantization.bits", four_bit, lambda _: 4)
        elif document.literal(argument(loader, "load_in_8bit")) is True:
            record("quantization.bits", argument(loader, "load_in_8bit"), lambda _: 8)
        if config.value("quantization.bits") == 4 and dtype is not None:
            config.fields["quantization.compute_dtype"] = Field(dtype.value, dtype.origin)
        peft = next(document.calls("get_peft_model"), None)
        if peft is not None:
            config.fields["adapter.kind"] = Field("lora", Origin(span_of(document, *document.span(peft.func))))
            record("adapter.r", keyword(peft, "r") and keyword(peft, "r").value)
            record("adapter.alpha", keyword(peft, "lora_alpha") and keyword(peft, "lora_alpha").value)
            record("adapter.target_modules", keyword(peft, "target_modules") and keyword(peft, "target_modules").value)
        for call in document.calls(*_TRAINING_CALLS):
            for key, name in (("precision.fp16", "fp16"), ("precision.bf16", "bf16"), ("precision.tf32", "tf32"),
                              ("batch.micro", "per_device_train_batch_size"),
                              ("batch.grad_accum", "gradient_accumulation_steps"), ("optimizer.lr", "learning_rate"),
                              ("optimizer.grad_clip", "max_grad_norm"), ("optimizer.name", "optim"),
                              ("sequence.packing", "packing")):
                found = keyword(call, name)
                if found is not None and key not in config.fields:
                    record(key, found.value)
        return config

    def _keyword(self, document: PythonDocument, name: str) -> tuple[ast.Call, ast.keyword | None] | None:
        calls = [call for call in document.calls(*_TRAINING_CALLS[:2], "UnslothTrainingArguments")]
        for call in calls:
            found = keyword(call, name)
            if found is not None:
                return call, found
        return (calls[0], None) if calls else None

    def render(self, config: ConfigIR, change: Change) -> list[Edit]:
        document: PythonDocument = config.document
        if change.key == "precision.mode":
            wanted = {"bf16": (False, True), "fp16": (True, False), "fp32": (False, False)}[change.value]
            edits = []
            for name, value in zip(("fp16", "bf16"), wanted):
                located = self._keyword(document, name)
                if located is None:
                    raise RenderError("no TrainingArguments/SFTConfig call to set precision in")
                call, found = located
                if found is not None:
                    if config.value(f"precision.{name}") != value:
                        edits.append(document.replace(found.value, value))
                elif value:
                    edits.append(document.insert_keyword(call, name, value, after="fp16" if name == "bf16" else None))
            return edits
        if change.key in ("model.load_dtype", "quantization.compute_dtype"):
            loader = _loader_call(document)
            found = keyword(loader, "dtype")
            if found is None or document.literal(found.value) is None:
                raise RenderError("dtype is automatic here (None); set dtype= by hand to force one")
            return [document.replace(found.value, change.value)]
        names = {"precision.tf32": "tf32", "batch.micro": "per_device_train_batch_size",
                 "optimizer.grad_clip": "max_grad_norm"}
        located = self._keyword(document, names[change.key]) if change.key in names else None
        if located is None or located[1] is None:
            raise RenderError(f"no keyword for {change.key} in this script")
        return [document.replace(located[1].value, change.value)]
