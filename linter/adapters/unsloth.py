"""Unsloth training scripts, read with `ast` only — a script is never executed or imported.

Names and defaults from Unsloth's own source (unslothai/unsloth at 015bdef, after v0.1.801-beta):
- unsloth/models/loader.py, FastLanguageModel.from_pretrained(model_name, max_seq_length=2048,
  dtype=None, load_in_4bit=True, load_in_8bit=False, load_in_16bit=False, full_finetuning=False,
  ..., load_in_fp8=False, **kwargs) and FastModel.from_pretrained (same leading parameters):
  more than one of 4/8/16-bit/fp8 is a RuntimeError (so load_in_8bit=True needs
  load_in_4bit=False); full_finetuning switches 4- and 8-bit off; a `quantization_config`
  kwarg overrides the flags and, with dtype None, sets dtype from its compute dtype; a hub name
  ending in "-bf16" loads in 16 bits. dtype may be torch.float16/bfloat16/float32 or the
  strings "float16"/"bfloat16".
- unsloth/models/llama.py (FastLlamaModel.from_pretrained) and vision.py (FastModel): dtype
  None becomes `torch.float16 if not SUPPORTS_BFLOAT16 else torch.bfloat16`, i.e. bf16 where
  the GPU has it (unsloth/_gpu_init.py: compute capability >= 8), else fp16; and the 4-bit
  BitsAndBytesConfig takes `bnb_4bit_compute_dtype = dtype`, nf4, double quantization.
- llama.py get_peft_model(model, r=16, target_modules=[q,k,v,o,gate,up,down]_proj,
  lora_alpha=16, ..., use_gradient_checkpointing="unsloth", modules_to_save=None, ...).
- unsloth/models/rl.py, the trainer patch Unsloth applies to TRL's trainers (SFTTrainer, ...):
  its configs default fp16=False and bf16=False, and when both are off the trainer picks mixed
  precision itself: bf16 if the model is not float16 and the GPU supports bf16, else fp16. It
  raises TypeError for a float16 model with bf16=True or a bfloat16 model with fp16=True —
  which is why a dtype edit here needs the precision flags known.
- unsloth's notebooks pass `fp16 = not is_bfloat16_supported(), bf16 = is_bfloat16_supported()`:
  decided at launch, read here as "auto".
- TrainingArguments / SFTConfig keywords as in transformers and TRL (see hf.py).
"""

from __future__ import annotations

import ast
import re

from ..document import RenderError
from ..fixes import Edit
from ..ir import ConfigIR, Field, Origin, canonical_dtype
from ..python_reader import AUTO, UNKNOWN, PythonDocument, is_open, keyword
from . import Adapter, new_config, record_literal, span_of
from .unsloth_engine import (record_engine_and_saving, record_evaluation, record_patched_grpo_config,
                             record_patched_sft, record_plain_sft_arguments)
from .unsloth_loading import loads_only_to_generate, record_loading
from .unsloth_templates import record_chat_template, record_response_markers
from .script_padding import record_padding

_LOADER = "unsloth/models/loader.py (FastLanguageModel.from_pretrained)"
_PEFT, _PEFT_SAVE = ("unsloth/models/llama.py (get_peft_model use_gradient_checkpointing=\"unsloth\")",
                     "unsloth/models/llama.py (get_peft_model modules_to_save=None)")
_AMP_PICK = ("unsloth/models/rl.py (fp16 and bf16 both off: Unsloth's trainer picks fp16 for a float16 "
             "model, else bf16 where the GPU supports it)")
_LOADER_OWNERS = {"FastLanguageModel", "FastModel", "FastVisionModel"}
_NO_ADAPTER = ("no get_peft_model, peft_config or adapter load in the script: the trainer receives the loaded "
               "model itself (transformers trainer.py refuses a purely quantized one)")
# Hub organisations that publish base and instruct checkpoints (Unsloth's own -bnb-4bit copies
# among them), not LoRA adapter repositories.
_BASE_MODEL_ORGS = {"unsloth", "meta-llama", "mistralai", "Qwen", "google", "microsoft", "deepseek-ai", "tiiuae",
                    "TinyLlama", "HuggingFaceTB"}
# Training-argument classes whose keywords are read, and TRL trainers Unsloth patches.
_ARGUMENT_CALLS = ("SFTConfig", "TrainingArguments", "UnslothTrainingArguments", "GRPOConfig", "DPOConfig",
                   "ORPOConfig", "KTOConfig")
# Packages whose functions, imported by name, are known not to attach an adapter the script
# does not show (get_peft_model and adapter loads are looked for separately); builtins that only read.
_KNOWN_PACKAGES = {"unsloth", "trl", "transformers"}
_HARMLESS_BUILTINS = {"print", "len", "isinstance", "hasattr", "getattr", "type", "id", "repr", "str", "dir"}
_PATCHED_TRAINERS = ("SFTTrainer", "UnslothTrainer", "GRPOTrainer", "DPOTrainer", "ORPOTrainer", "KTOTrainer")
_KEYWORDS = {
    "precision.fp16": "fp16", "precision.bf16": "bf16", "precision.tf32": "tf32",
    "batch.micro": "per_device_train_batch_size", "batch.grad_accum": "gradient_accumulation_steps",
    "optimizer.lr": "learning_rate", "optimizer.grad_clip": "max_grad_norm", "optimizer.name": "optim",
    "optimizer.weight_decay": "weight_decay", "scheduler.warmup_steps": "warmup_steps",
    "sequence.packing": "packing", "training.max_steps": "max_steps", "training.epochs": "num_train_epochs",
}


def _loader_call(document: PythonDocument) -> ast.Call | None:
    for call in document.calls("from_pretrained"):
        owner = call.func.value if isinstance(call.func, ast.Attribute) else None
        if isinstance(owner, ast.Name) and owner.id in _LOADER_OWNERS:
            return call
    return None


def _no_adapter(document: PythonDocument, script: "_Script", model_name) -> bool:
    """Does the trainer get the loaded model with no adapter at all? Only where the script shows
    every way one could come: no get_peft_model (script.peft), no peft import (PeftModel,
    LoraConfig), no load_adapter/add_adapter, a trainer call without peft_config or **kwargs, and
    a base checkpoint of an organisation that publishes models, not LoRA adapters (loader.py
    loads an adapter repository as a trainable PeftModel)."""
    trainer = script.trainer
    if trainer is None or is_open(trainer) or keyword(trainer, "peft_config") is not None:
        return False
    if not _model_stays_own(document, script):
        return False
    if "peft" in document.imports() or next(document.calls("load_adapter", "add_adapter"), None) is not None:
        return False
    return isinstance(model_name, str) and model_name.split("/")[0] in _BASE_MODEL_ORGS and model_name.count("/") == 1


def _model_stays_own(document: PythonDocument, script: "_Script") -> bool:
    """Does the trainer get the loader's model, which no call but a known one receives? A project
    helper (`model = attach_lora(model)` from a local module) or any unknown function may wrap it
    in an adapter; so may a model the trainer gets under another name."""
    document.imports()  # the one walk that indexes the script
    assignment = document.call_assignments.get(id(script.loader))
    target = assignment.targets[0] if assignment is not None and len(assignment.targets) == 1 else None
    if isinstance(target, (ast.Tuple, ast.List)) and target.elts:
        target = target.elts[0]  # `model, tokenizer = FastLanguageModel.from_pretrained(...)`
    given = _argument(script.trainer, "model", 0)
    if not isinstance(target, ast.Name) or not isinstance(given, ast.Name) or given.id != target.id:
        return False
    known = {name for node in document.from_imports if node.module.split(".")[0] in _KNOWN_PACKAGES
             for name in (alias.asname or alias.name for alias in node.names)}
    # A mention of the name anywhere in an argument's text (a string too: then silent for nothing).
    mention, text = re.compile(rf"\b{re.escape(target.id)}\b"), document.source.text
    for call in document.calls(*document.call_names()):
        function = call.func
        if isinstance(function, ast.Name) and (function.id in known or function.id in _HARMLESS_BUILTINS) or \
                isinstance(function, ast.Attribute) and isinstance(function.value, ast.Name) and \
                function.value.id in _LOADER_OWNERS:
            continue
        for argument in (*call.args, *(item.value for item in call.keywords)):
            if mention.search(text, *document.span(argument)):
                return False
    return True


def _argument(call: ast.Call, name: str, position: int | None = None) -> ast.expr | None:
    found = keyword(call, name)
    if found is not None:
        return found.value
    if position is None or any(isinstance(item, ast.Starred) for item in call.args[: position + 1]):
        return None
    return call.args[position] if len(call.args) > position else None


def _flags(document: PythonDocument, loader: ast.Call) -> dict | None:
    """from_pretrained's mode flags as the loader reads them; None where one is unknown."""
    if is_open(loader) or _argument(loader, "quantization_config") is not None:
        return None  # the flags may come from elsewhere: unknown
    flags = {}
    for name, position, fallback in (("load_in_4bit", 3, True), ("load_in_8bit", None, False),
                                     ("load_in_16bit", None, False), ("full_finetuning", None, False),
                                     ("load_in_fp8", None, False)):
        node = _argument(loader, name, position)
        flags[name] = fallback if node is None else document.literal(node)
        if flags[name] is UNKNOWN:
            return None
    return flags


class _Script:
    """The calls of one script that hold its settings."""

    def __init__(self, document: PythonDocument):
        self.document = document
        self.loader = _loader_call(document)
        self.peft = next(document.calls("get_peft_model"), None)
        self.arguments = next(document.calls(*_ARGUMENT_CALLS), None)
        self.trainer = next(document.calls(*_PATCHED_TRAINERS), None)
        # Old scripts pass packing, max_seq_length and the like to SFTTrainer itself.
        self.keyword_calls = [call for call in (self.arguments, self.trainer) if call is not None]

    def keyword(self, name: str) -> ast.keyword | None:
        for call in self.keyword_calls:
            found = keyword(call, name)
            if found is not None:
                return found
        return None

    def flags_closed(self) -> bool:
        """Every place fp16/bf16 could be passed is spelled out (no **kwargs)."""
        return bool(self.keyword_calls) and not any(is_open(call) for call in self.keyword_calls)


class UnslothAdapter(Adapter):
    name = "unsloth"

    def evidence(self, document) -> int:
        return int(isinstance(document, PythonDocument) and "unsloth" in document.imports() \
            and _loader_call(document) is not None and not loads_only_to_generate(document))

    def sniffs(self, text: str) -> bool:
        return "unsloth" in text and "from_pretrained" in text and any(owner in text for owner in _LOADER_OWNERS)

    # ---- reading -----------------------------------------------------------------------------

    def parse(self, document: PythonDocument) -> ConfigIR:
        config = new_config(self, document)
        script = _Script(document)
        loader = script.loader

        def record(key, node, convert=None):
            return record_literal(config, document, key, node, convert)

        def default(key, value, node, source):
            return config.set(key, Field(value, Origin(span_of(document, *document.span(node)), source)))

        record("model.name", _argument(loader, "model_name", 0))
        record("sequence.max_length", _argument(loader, "max_seq_length", 1))
        dtype_node = _argument(loader, "dtype", 2)
        if dtype_node is not None:
            dtype = record("model.load_dtype", dtype_node, lambda value: AUTO if value is None else canonical_dtype(value))
        else:
            dtype = None if is_open(loader) else default("model.load_dtype", AUTO, loader.func, f"{_LOADER}: dtype=None")
        if dtype is not None and dtype.value == AUTO and _argument(loader, "quantization_config") is not None:
            del config.fields["model.load_dtype"]  # dtype None takes a quantization_config's compute dtype
            dtype = None
        if loader is not None:  # loader.py / llama.py since c3d6def64: "Device does not support bfloat16. Will change to float16."
            default("model.bf16_falls_back", True, loader.func, f"{_LOADER}: a bfloat16 dtype on a GPU without bf16 loads float16")
        full_finetuning = self._bits(document, config, loader, default, record)
        if config.value("quantization.bits") == 4:
            if dtype is not None:
                config.set("quantization.compute_dtype", Field(dtype.value, dtype.origin))
            config.set("quantization.quant_type", Field("nf4", Origin(config.span("quantization.bits"), _LOADER)))
            config.set("quantization.double_quant", Field(True, Origin(config.span("quantization.bits"), _LOADER)))
        self._adapter(document, config, script, full_finetuning, record, default)
        record_engine_and_saving(document, config, loader, script.peft, record, default)
        record_plain_sft_arguments(document, config, script.trainer, script.peft)
        record_patched_sft(document, config, script.trainer)
        record_patched_grpo_config(document, config, script.arguments, record)
        record_evaluation(document, config, script.arguments, record)
        record_loading(document, config, loader, script.peft, _flags(document, loader))
        for key, name in _KEYWORDS.items():
            found = script.keyword(name)
            if found is not None:
                record(key, found.value)
        self._automatic_precision(document, config, script)
        record_padding(document, config)
        record_chat_template(document, config, script.trainer)
        record_response_markers(document, config)
        return config

    def _bits(self, document, config: ConfigIR, loader: ast.Call, default, record) -> bool | None:
        """Record quantization.bits as Unsloth's loader decides it; whether it fine-tunes fully."""
        flags = _flags(document, loader)
        if flags is None:
            return None
        model_name = config.value("model.name")
        if flags["full_finetuning"]:
            return True  # loader.py: "full finetuning ... disabling LoRA / QLoRA"
        if isinstance(model_name, str) and model_name.lower().endswith("-bf16"):
            return False  # a -bf16 hub checkpoint loads in 16 bits (loader.py)
        chosen = [name for name in ("load_in_4bit", "load_in_8bit", "load_in_16bit", "load_in_fp8") if flags[name]]
        if chosen == ["load_in_4bit"]:
            written = _argument(loader, "load_in_4bit", 3)
            if written is None:
                default("quantization.bits", 4, loader.func, f"{_LOADER}: load_in_4bit=True")
            else:
                record("quantization.bits", written, lambda _: 4)
        elif chosen == ["load_in_8bit"]:
            record("quantization.bits", _argument(loader, "load_in_8bit"), lambda _: 8)
        return False

    def _adapter(self, document, config: ConfigIR, script: _Script, full_finetuning, record, default) -> None:
        peft = script.peft
        if peft is None:
            if full_finetuning:
                written = _argument(script.loader, "full_finetuning")
                config.set("adapter.kind", Field(None, Origin(span_of(document, *document.span(written)))))
            elif full_finetuning is False and _no_adapter(document, script, config.value("model.name")):
                config.set("adapter.kind", Field(None, Origin(
                    span_of(document, *document.span(script.trainer.func)), _NO_ADAPTER)))
            return
        config.set("adapter.kind", Field("lora", Origin(span_of(document, *document.span(peft.func)))))
        for key, name in (("adapter.r", "r"), ("adapter.alpha", "lora_alpha"),
                          ("adapter.target_modules", "target_modules"), ("adapter.modules_to_save", "modules_to_save"),
                          ("adapter.bias", "bias"), ("adapter.dropout", "lora_dropout")):
            if (found := keyword(peft, name)) is not None:
                record(key, found.value)
        if keyword(peft, "modules_to_save") is None and not is_open(peft):
            default("adapter.modules_to_save", None, peft.func, _PEFT_SAVE)
        checkpointing = keyword(peft, "use_gradient_checkpointing")
        if checkpointing is not None:
            record("memory.gradient_checkpointing", checkpointing.value,
                   lambda value: True if value == "unsloth" else value)
        elif not is_open(peft):
            default("memory.gradient_checkpointing", True, peft.func, _PEFT)

    def _automatic_precision(self, document, config: ConfigIR, script: _Script) -> None:
        """fp16 and bf16 both off under Unsloth's patched TRL trainer: Unsloth picks (rl.py)."""
        if script.trainer is None or not script.flags_closed():
            return
        flags = [config.get(key) for key in ("precision.fp16", "precision.bf16")]
        written = [script.keyword(name) for name in ("fp16", "bf16")]
        if any(found is not None and field is None for found, field in zip(written, flags)):
            return  # a flag is computed: unknown
        if any(field is not None and field.value is not False for field in flags):
            return
        anchor = script.arguments or script.trainer
        origin = Origin(span_of(document, *document.span(anchor.func)), _AMP_PICK)
        model_dtype = config.value("model.load_dtype")
        fp16 = True if model_dtype == "float16" else AUTO
        bf16 = False if model_dtype == "float16" else AUTO
        config.set("precision.fp16", Field(fp16, origin))
        config.set("precision.bf16", Field(bf16, origin))

    # ---- writing -----------------------------------------------------------------------------

    def render_precision(self, document: PythonDocument, config: ConfigIR, mode: str) -> list[Edit]:
        return self._render_mode(config, _Script(document), mode)

    def render_value(self, document: PythonDocument, config: ConfigIR, key: str, value) -> list[Edit]:
        script = _Script(document)
        if key == "model.load_dtype":
            return self._render_dtype(config, script, value)
        if key == "quantization.compute_dtype":
            # Unsloth's 4-bit compute dtype has no keyword of its own: it *is* the model's
            # `dtype=`, which only a model.load_dtype change edits (a bfloat16 model beside
            # fp16=True is a TypeError, so the dtype never moves without the precision).
            return []
        name = _KEYWORDS.get(key)
        found = script.keyword(name) if name else None
        if found is None:
            raise RenderError(f"no keyword for {key} in this script")
        return [document.replace(found.value, value)]

    def _render_mode(self, config: ConfigIR, script: _Script, mode: str) -> list[Edit]:
        if mode not in ("bf16", "fp16"):
            raise RenderError("with fp16 and bf16 both off Unsloth picks mixed precision itself; "
                              "fp32 needs dtype=torch.float32 and a GPU without bf16")
        if "model.load_dtype" not in config.fields and script.loader is not None:
            raise RenderError("the model dtype is computed here, and Unsloth refuses mixed precision that "
                              "differs from it: set fp16/bf16 by hand")
        if not script.keyword_calls:
            raise RenderError("no TrainingArguments/SFTConfig call to set precision in")
        document = script.document
        edits = []
        for name, on in (("fp16", mode == "fp16"), ("bf16", mode == "bf16")):
            found = script.keyword(name)
            if found is not None:
                if document.literal(found.value) is not on:
                    edits.append(document.replace(found.value, on))
            elif on:
                call = script.arguments or script.trainer
                edits += document.insert_keyword(call, name, on, after="fp16" if name == "bf16" else None)
        return edits

    def _render_dtype(self, config: ConfigIR, script: _Script, dtype: str) -> list[Edit]:
        loader = script.loader
        found = keyword(loader, "dtype")
        node = found.value if found is not None else _argument(loader, "dtype", 2)
        if node is None or script.document.literal(node) is None:
            raise RenderError("dtype is automatic here (None); set dtype= by hand to force one")
        computed = any(script.keyword(name) is not None and config.get(key) is None
                       for key, name in (("precision.fp16", "fp16"), ("precision.bf16", "bf16")))
        if script.keyword_calls and (computed or not script.flags_closed()):
            raise RenderError("fp16/bf16 are computed here, and Unsloth refuses a model dtype that differs "
                              "from them: change dtype by hand")
        return [script.document.replace(node, dtype)]
