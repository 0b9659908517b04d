"""The predicates of the later rows of rules/release_bugs.py: what a config must run for each bug
(the TRL trainers and losses, the bitsandbytes, Axolotl and PEFT cases)."""

from __future__ import annotations

import re

from .facts import GRPO_LIKE
from .release_table import ARGUMENT_FILES


def _number_above_zero(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0


def _zero3_in_run(f) -> bool:
    """Another config of the run runs ZeRO-3: a DeepSpeed JSON with stage 3, or an accelerate config
    with distributed_type DEEPSPEED and its own zero_stage 3."""
    return any(stage == 3 for stage in f.zero_stages())


def zero3_bf16_lora(f) -> bool:
    """A TRL file training a LoRA adapter (use_peft) on an unquantized base in bf16, in a run with ZeRO-3."""
    return (f("file.kind") == "trl" and f.arguments() and f("adapter.kind") == "lora"
            and not f("quantization.bits") and f("precision.bf16") is True and _zero3_in_run(f))


# transformers OptimizerNames that build bitsandbytes' Lion with optim_bits 32 (trainer.py
# get_optimizer_cls_and_kwargs: LION / PAGED_LION -> bnb.optim.Lion / PagedLion, optim_bits 32).
_ARGUMENT_READERS = ARGUMENT_FILES + ("axolotl",)  # Axolotl passes an optimizer name it does not build to optim


def bnb_lion_32bit(f, name: str) -> bool:
    """optim `name` with weight_decay above 0 read by the Trainer, no DeepSpeed config (whose optimizer
    block would replace it)."""
    return (str(f("optimizer.name") or "").lower() == name and _number_above_zero(f("optimizer.weight_decay"))
            and f("file.kind") in _ARGUMENT_READERS and f("arguments.project_parser") is not True
            and not any(link.kind == "deepspeed" for link in f.config.links))


BNB_LION = ("optim {optimizer.name} (bitsandbytes 32-bit Lion) with weight_decay {optimizer.weight_decay}",
             "bitsandbytes' 32-bit kernel adds the weight decay to the gradient before Lion takes its sign, so the "
             "decay turns every update's direction instead of shrinking the weights, and the run trains with a "
             "different optimizer than Lion with decoupled weight decay, silently",
             "bitsandbytes-foundation/bitsandbytes#1992; fixed in 0.50.0 (#1993)")


def grpo_curriculum(f) -> bool:
    """An Axolotl rl: grpo config with curriculum_sampling on."""
    return (f("file.kind") == "axolotl" and f("training.trainer") == "grpo"
            and f("training.curriculum_sampling") is True)


# Model types whose input embedding is transformers' Gemma3TextScaledWordEmbedding (modeling_gemma3.py,
# from 4.50.0: forward multiplies by embed_scale = sqrt(hidden_size)); by config.json, else the name.
_SCALED_EMBEDDING_TYPES = ("gemma3", "gemma3_text")
_SCALED_EMBEDDING_NAMES = re.compile(r"(^|/)(gemma-3-\d|medgemma-)", re.I)


def _scaled_embedding(f) -> bool:
    name = f("model.name")
    if not isinstance(name, str):
        return False
    from linter.models import model_type_of

    found = model_type_of(name, f.config.path.parent)
    if found is not None:
        return found[0] in _SCALED_EMBEDDING_TYPES
    return bool(_SCALED_EMBEDDING_NAMES.search(name))


def trainable_tokens_scaled(f) -> bool:
    """A PEFT TRAINABLE_TOKENS adapter, or LoRA trainable_token_indices, on a scaled-embedding model."""
    return (f("file.kind") == "peft" and (f("adapter.kind") == "trainable_tokens"
                                          or bool(f("adapter.trainable_token_layers")))
            and _scaled_embedding(f))


def lora_embedding_scaled(f) -> bool:
    """A PEFT LoRA adapter targeting embed_tokens on a scaled-embedding model."""
    targets = f("adapter.target_modules")
    return (f("file.kind") == "peft" and f("adapter.kind") == "lora" and isinstance(targets, (list, tuple))
            and "embed_tokens" in targets and _scaled_embedding(f))


# Names a vision-language checkpoint carries; SFTTrainer skips the check for image datasets.
VISION_WORDS = ("-vl", "vl-", "vision", "llava", "idefics", "paligemma", "smolvlm", "pixtral", "omni", "qwen3.5")


def sft_file(f) -> bool:
    """A TRL file SFTTrainer reads: SFT keys, or no key of another trainer's config."""
    if f("file.kind") != "trl":
        return False
    trainer = f("training.trainer")
    return trainer == "sft" or (trainer is None and all(
        f(key) is None for key in ("training.rl_beta", "training.loss_type", "training.precompute_ref")))


def _trl_pin(f) -> str | None:
    found = f.config.version("trl")
    return found[0] if found else None


def _grpo_trainer(f) -> bool:
    """A TRL file GRPOTrainer (or an experimental trainer built on it) reads; not RLOO."""
    candidates = set(f("training.trainer_candidates") or ())
    trainer = f("training.trainer")
    return f("file.kind") == "trl" and (trainer == "grpo" or trainer is None and bool(candidates)
                                        and "rloo" not in candidates and candidates <= GRPO_LIKE)


def grpo_liger_zero3(f) -> bool:
    """GRPO's fused liger loss (use_liger_loss; use_liger_kernel from 0.25.0) in a ZeRO-3 run."""
    from .rl_losses import _liger_loss_on

    version = _trl_pin(f) if _grpo_trainer(f) else None
    return version is not None and _liger_loss_on(f.config, version) and _zero3_in_run(f)


def preference_liger_zero3(trainer: str):
    def applies(f) -> bool:
        return (f("file.kind") == "trl" and f("training.trainer") == trainer
                and f("memory.fused_cross_entropy") is True and _zero3_in_run(f))
    return applies


def chunked_nll_zero3(f) -> bool:
    return sft_file(f) and f("training.loss_type") == "chunked_nll" and _zero3_in_run(f)


# GRPOTrainer loss types divided by num_items_in_batch (compute_loss), with the release that brought each:
# dapo (2324245ca, #3938, v0.22.0, also the default loss_type from then), cispo (v0.26.0), vespo (v1.0.0).
_ITEM_NORMALISED = (("dapo", "0.22.0"), ("cispo", "0.26.0"), ("vespo", "1.0.0"))


def truncated_still_counted(f) -> bool:
    """GRPO with mask_truncated_completions true and a loss type normalised by num_items_in_batch
    (dapo by default), the fused liger loss off (it normalises by itself)."""
    if not _grpo_trainer(f) or f("generation.mask_truncated") is not True:
        return False
    if f("training.liger_loss") is True or f("memory.fused_cross_entropy") is True:
        return False
    version = _trl_pin(f)
    loss = f("training.loss_type") or "dapo"
    from linter.versions import older_than

    return version is not None and any(loss == name and older_than(version, since) is False
                                       for name, since in _ITEM_NORMALISED)


def bfd_packing(f) -> bool:
    """An SFT file with packing true, packing_strategy bfd (the default) and max_length not null."""
    length = f.config.get("sequence.max_length")
    return (sft_file(f) and f("sequence.packing") is True and f("sequence.packing_strategy") in (None, "bfd")
            and not (length is not None and length.value is None))


LM_HEAD_SHARD = ("reads lm_head.weight directly instead of through the module's forward, so under ZeRO-3 it "
                  "gets the partitioned empty shard and the first training step dies with a size mismatch in the "
                  "fused matmul")


# ludwig/schema/llms/generation.py LLMGenerationConfig.max_new_tokens: default 32 in every release.
LUDWIG_MAX_NEW_TOKENS = 32


def ludwig_default_generation_short(f) -> bool:
    """A Ludwig LLM config with a text output feature whose own max_sequence_length is above 32 and no
    generation.max_new_tokens written (the default 32 is what generates before Ludwig 0.8.6)."""
    length = f("data.output_max_length")
    types = f("data.output_types")
    return (f("file.kind") == "ludwig" and f("model.kind") == "llm" and bool(types) and str(types[0]).lower() == "text"
            and isinstance(length, int) and length > LUDWIG_MAX_NEW_TOKENS
            and f.config.get("generation.max_new_tokens") is None)


# transformers training_args.py TrainingArguments.__post_init__ writes ACCELERATE_MIXED_PRECISION fp16 / bf16 over
# the launcher's value when its fp16 / bf16 is on ("if training args is specified, it will override the one
# specified in the accelerate config"); Axolotl and LLaMA-Factory build TrainingArguments from theirs.
_HALF_PRECISION_READERS = ARGUMENT_FILES + ("axolotl",)


def accelerate_fp8(kind: str):
    """An accelerate config with distributed_type `kind` and mixed_precision fp8 (as the launch reads
    it), in a run where no Trainer arguments turn fp16 or bf16 on (which replace fp8 before the
    Accelerator is built). Under DEEPSPEED, only the config's own deepspeed_config: beside a
    deepspeed_config_file accelerate refuses the written mixed_precision itself (DS006)."""
    def applies(f) -> bool:
        if f("file.kind") != "accelerate" or f("parallel.accelerate_distributed_type") != kind:
            return False
        if f("precision.fp8") is not True:
            return False
        if kind == "DEEPSPEED" and any(link.kind == "deepspeed" for link in f.config.links):
            return False
        return not any(other.value("file.kind") in _HALF_PRECISION_READERS and any(
            other.value(key) not in (None, False) for key in ("precision.bf16", "precision.fp16"))
            for other in f.others())
    return applies


_WRAP_NAMES = ("TRANSFORMER_BASED_WRAP", "SIZE_BASED_WRAP", "NO_WRAP")  # accelerate utils/constants.py


def accelerate_wrap_unread(f) -> bool:
    """An accelerate FSDP config whose fsdp_auto_wrap_policy set_auto_wrap_policy does not know (it
    compares the exact names), in a run where no Trainer arguments file turns FSDP on (TrainingArguments
    then exports its own FSDP_AUTO_WRAP_POLICY) and no launch command gives the policy."""
    if f("file.kind") != "accelerate" or f("parallel.accelerate_distributed_type") != "FSDP":
        return False
    policy = f("parallel.accelerate_fsdp_wrap_policy")
    if not isinstance(policy, str) or policy in _WRAP_NAMES:
        return False
    if "parallel.accelerate_fsdp_wrap_policy" in (f("launch.overridden") or ()):
        return False
    return not any(other.value("file.kind") in ARGUMENT_FILES and other.value("parallel.fsdp") is True
                   for other in f.others())
