"""LLaMA-Factory's adapter checks when the model loads (model/adapter.py _setup_lora_tuning), rows of
rules/argument_table.py's form read by TRN021: several adapters where only one can be loaded
(ZeRO-3, Unsloth, KTransformers), DoRA on a PTQ-quantized checkpoint, and the LoRA/OFT choices
Unsloth and KTransformers refuse. Found by auditing the raises of v0.9.5 (the newest release; the
same at HEAD ff6d4d12e) against the table; each first release from `git log -S '<message>'` on
hiyouga/LLaMA-Factory and `git tag --contains`. _setup_lora_tuning runs for finetuning_type lora
and oft only; its adapter checks run for every command that loads the model, the new-adapter
checks only when training without an adapter to resume (adapter_name_or_path unset here).
"""

from __future__ import annotations

from .argument_table import TRAIN, Row, _quantized, _true

_SETUP = "model/adapter.py _setup_lora_tuning"


def _peft(facts) -> bool:
    return facts.get("adapter.kind") in ("lora", "oft")


def _several(facts) -> bool:
    return _peft(facts) and len(facts.get("adapter.paths") or ()) > 1


def _new_adapter(facts) -> bool:
    """A training run that creates new adapter weights (`is_trainable and adapter_to_resume is None`)."""
    return _true(facts, "training.enabled") and _peft(facts) and facts.get("adapter.paths") is None


def _ptq(facts) -> bool:
    """A checkpoint saved GPTQ-, AWQ- or AQLM-quantized and no quantization_bit: the loaded model's
    quantization_method is set and is not bitsandbytes."""
    return not _quantized(facts) and facts.prequantized() in ("gptq", "awq", "aqlm")


ADAPTER_ROWS = (
    Row("Cannot use multiple adapters in DeepSpeed ZeRO-3.", _SETUP, "0.5.0", "04ae80a52", "adapter.paths",
        lambda f: _true(f, "training.enabled") and _several(f) and f.zero3 is True,
        "ZeRO-3 partitions the base weights the earlier adapters would be merged into; merge them first "
        "(llamafactory-cli export) and train on the merged model", command=TRAIN),
    Row("Unsloth model only accepts a single adapter.", _SETUP, "0.7.0", "5420905a2", "adapter.paths",
        lambda f: _true(f, "model.unsloth") and _several(f),
        "Unsloth loads one adapter onto its patched model; merge the others first"),
    # always: use_kt came with the check (934b3084e, 0.9.4).
    Row("KTransformers model only accepts a single adapter", _SETUP, "0.9.4", "934b3084e", "adapter.paths",
        lambda f: _true(f, "model.kt") and _several(f),
        "the KTransformers model takes one adapter; merge the others first (every release with use_kt has the "
        "check)", always=True),
    Row("DoRA is not compatible with PTQ-quantized models.", _SETUP, "0.6.0", "46f99ff27", ("adapter.dora", "model.name"),
        lambda f: _true(f, "adapter.dora") and f.get("adapter.kind") == "lora" and _new_adapter(f) and _ptq(f),
        lambda f: (f"{f.saved_quantized()}; DoRA's magnitude vector needs the dequantized weights, which PEFT has "
                   "for bitsandbytes only: drop use_dora, or start from the unquantized checkpoint with "
                   "quantization_bit"), command=TRAIN),
    # always: finetuning_type oft came with the check (003a2acb1, 0.9.4).
    Row("Unsloth is currently not supported for OFT.", _SETUP, "0.9.4", "003a2acb1", ("model.unsloth", "adapter.kind"),
        lambda f: _true(f, "model.unsloth") and f.get("adapter.kind") == "oft" and _new_adapter(f),
        "Unsloth builds LoRA adapters only; drop use_unsloth or use finetuning_type lora (every release with OFT "
        "has the check)", always=True, command=TRAIN),
    Row("KTransformers only supports LoRA finetuning.", _SETUP, "0.9.5", "887ee2b12", ("model.kt", "adapter.kind"),
        lambda f: _true(f, "model.kt") and f.get("adapter.kind") == "oft" and _new_adapter(f),
        "the KTransformers path builds a LoraConfig; use finetuning_type lora", command=TRAIN),
)
