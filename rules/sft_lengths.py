"""The length an SFT run truncates its examples to, where it is not the one the script gives."""

from __future__ import annotations

from linter.registry import WARNING, Rule, register
from linter.versions import older_than

from .facts import pinned_version, positive_int

# trl/trainer/sft_config.py: v0.16.0 renamed max_seq_length to max_length (default 1024) and kept
# max_seq_length as a deprecated alias until v0.20.0 removed it; sft_trainer.py rebuilds a plain
# TrainingArguments as `SFTConfig(**args.to_dict())` and `_prepare_dataset` truncates to
# args.max_length (v0.16.0 through v0.19.1).
_TRL = ("0.16.0", "0.20.0")
_TRL_DEFAULT = 1024
# unsloth/trainer.py _backwards_compatible_trainer: from 811422bbb4 (#2544, 2025-05-27, in the
# 2025.5.7/2025.5.8 releases) a trainer kwarg such as max_seq_length is collected but, because
# every config subclasses TrainingArguments, the caller's args object is kept and the kwarg is
# dropped (fixed for declared fields only by a4ac00b7bc, #8374, 2026-08-11). unsloth/models/rl.py's
# #2669 patch (9bf691061d, 2025.6.1) that copies the model's max_seq_length into max_length runs
# only when args has a max_length, which a plain TrainingArguments lacks. Checked in the releases
# 2025.5.8, 2025.6.12 and 2025.7.5; later ones rewrote the conversion and are not claimed.
_UNSLOTH = ("2025.5.8", "2025.7.6")


def _within(version: str, bounds: tuple[str, str]) -> bool:
    return older_than(version, bounds[0]) is False and older_than(version, bounds[1]) is True


@register
class SftDefaultMaxLengthTruncation(Rule):
    """TRN058 sft-default-max-length-truncation

    ## What it does
    Flags an Unsloth script that loads the model with a `max_seq_length` above 1024 and hands
    `SFTTrainer` a plain transformers `TrainingArguments`, where the pinned TRL is 0.16-0.19 and
    the pinned Unsloth is 2025.5.8-2025.7.5. Both versions must be pinned; elsewhere the rule is
    silent.

    ## Why is this bad?
    TRL 0.16 renamed SFTConfig's `max_seq_length` to `max_length`, default 1024, and rebuilds a
    plain TrainingArguments as an SFTConfig with that default. In those Unsloth releases the
    `max_seq_length` given to SFTTrainer is dropped by Unsloth's compatibility wrapper, and the
    patch that copies the model's `max_seq_length` into `max_length` runs only for an args object
    that has a `max_length` field, which TrainingArguments has not. Every training example is then
    truncated to 1024 tokens with no message (unslothai/unsloth#2904: max_seq_length 15000,
    "The tokens are clipped at 1024").

    ## Example
    `unsloth.py`:
        from unsloth import FastLanguageModel
        from transformers import TrainingArguments
        from trl import SFTTrainer
        model, tokenizer = FastLanguageModel.from_pretrained("unsloth/llama-3-8b-bnb-4bit", max_seq_length=8192)
        trainer = SFTTrainer(model=model, tokenizer=tokenizer, train_dataset=dataset, args=TrainingArguments(output_dir="out"))
    `requirements.txt`:
        unsloth==2025.6.11
        trl==0.19.1
    Use instead, in `unsloth.py`:
        from unsloth import FastLanguageModel
        from trl import SFTConfig, SFTTrainer
        model, tokenizer = FastLanguageModel.from_pretrained("unsloth/llama-3-8b-bnb-4bit", max_seq_length=8192)
        trainer = SFTTrainer(model=model, tokenizer=tokenizer, train_dataset=dataset, args=SFTConfig(output_dir="out", max_length=8192))

    ## Fix safety
    No fix: the arguments class and its keywords are the script's own code.

    ## References
    - trl trl/trainer/sft_config.py (v0.16.0: `max_length` default 1024; `max_seq_length`
      deprecated "will be removed in version 0.20.0"), trl/trainer/sft_trainer.py `__init__`
      (`args = SFTConfig(**dict_args)` for a plain TrainingArguments) and `_prepare_dataset`
      (`truncate_dataset(dataset, args.max_length, ...)`)
    - unsloth unsloth/trainer.py `_backwards_compatible_trainer` (811422bbb4, #2544;
      a4ac00b7bc, #8374), unsloth/models/rl.py `_patch_trl_rl_trainers` max_length check
      (9bf691061d, #2669)
    - unslothai/unsloth#2904 (unsloth 2025.6.11, TRL 0.19.1); unslothai/unsloth#2669
    """

    code = "TRN058"
    name = "sft-default-max-length-truncation"
    severity = WARNING

    def check(self, run, context):
        for config in run.configs:
            if config.value("trainer.sft_plain_arguments") is not True:
                continue
            length = config.get("sequence.max_length")
            if length is None or length.origin.is_default or not positive_int(length.value) \
                    or length.value <= _TRL_DEFAULT:
                continue
            trl = pinned_version(config, "trl", self.code, context)
            unsloth = pinned_version(config, "unsloth", self.code, context) if trl is not None else None
            if trl is None or unsloth is None or not _within(trl[0], _TRL) or not _within(unsloth[0], _UNSLOTH):
                continue
            yield self.finding(
                config, length.span,
                f"max_seq_length {length.value} is not what SFTTrainer truncates to: with TRL {trl[0]} and Unsloth "
                f"{unsloth[0]} a plain TrainingArguments becomes an SFTConfig with max_length {_TRL_DEFAULT}, so "
                f"every example is cut to {_TRL_DEFAULT} tokens; pass args=SFTConfig(..., max_length="
                f"{length.value})")
