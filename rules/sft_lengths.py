"""The lengths TRL's trainers cut their data to: an SFT run's, where it is not the one the script
gives (TRN058), and the limits of the preference and RL trainers that cut or drop data without a
message (TRN056)."""

from __future__ import annotations

from linter.registry import WARNING, Rule, kinds, register
from linter.versions import older_than

from .facts import HF_TRAINER_FILES, grpo_like, pinned_version, positive_int, read_by_repository_script

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
    triggers = ("trainer.sft_plain_arguments",)

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


class _Limit:
    """One length limit of a TRL trainer config: the trainer that reads it, its IR key and field
    name, what the trainer does to data beyond it, its default in each [first, before) TRL window,
    whether a written value is a hazard too, and the text used where the TRL version is unknown
    (None: silent then)."""

    __slots__ = ("trainer", "key", "field", "effect", "defaults", "written", "unpinned", "source", "unless")

    def __init__(self, trainer, key, field, effect, defaults, source, written=False, unpinned=None, unless=None):
        self.trainer, self.key, self.field, self.effect = trainer, key, field, effect
        self.defaults, self.source, self.written, self.unpinned = defaults, source, written, unpinned
        self.unless = unless  # config -> bool: the trainer does not cut there


_DROPS = "drops every pair longer than {n} from the dataset (it does not truncate them)"
_CUTS_COMPLETIONS = "stops every completion at {n} (a cut-off answer is scored as unfinished)"
_CUTS_PROMPTS = "keeps only the last {n} of every prompt"
_CUTS_PAIRS = "truncates every prompt + completion to {n}"
_CUTS_EXAMPLES = "truncates every training example to {n}"
_WHAT = {"max_prompt_length": "prompt", "max_completion_length": "completion"}
# Read from TRL's history (huggingface/trl, trl/trainer/*_config.py and *_trainer.py):
_LIMITS = (
    # sft_config.py: max_seq_length defaults to 1024 from the SFT simplification (5b9236d1e, #2405,
    # v0.15.0; before, None made SFTTrainer pick min(tokenizer.model_max_length, 1024), with a warning
    # up to 0.13); v0.16.0 renamed it max_length, still 1024 at v1.9.0. sft_trainer.py _prepare_dataset
    # truncates every example to it unless packing (which chunks instead); 1.x leaves it unenforced for
    # padding_free without packing (its __init__ warns).
    _Limit("sft", "sequence.max_length", "max_length", _CUTS_EXAMPLES, (("0.15.0", None, 1024),),
           "SFTTrainer (sft_trainer.py _prepare_dataset truncation)",
           unless=lambda config: config.value("sequence.packing") is True
           or config.value("sequence.padding_free") is True),
    # reward_trainer.py: cc23b511e (#2102, v0.12.0) tokenizes inside the trainer and then
    # `train_dataset.filter(lambda x: len(x["input_ids_chosen"]) <= max_length and ...)`, with
    # `max_length = 512 if args.max_length is None` (0.12-0.14); RewardConfig.max_length defaults to
    # 1024 from v0.15.0; the rewritten _prepare_dataset (v0.24.0 on, still at v1.9.0) keeps the filter
    # while the field's help says longer sequences "are truncated from the right" (trl#2488). Before
    # 0.12 TRL's own reward script (examples/scripts/reward_modeling.py, v0.8-v0.11) filters by the
    # written max_length the same way, so a written value drops pairs on every release.
    _Limit("reward", "sequence.max_length", "max_length", _DROPS,
           (("0.12.0", "0.15.0", 512), ("0.15.0", None, 1024)),
           "RewardTrainer (reward_trainer.py, a dataset.filter on the chosen/rejected lengths)", written=True),
    # grpo_config.py / rloo_config.py (RLOO >= 0.22 has num_generations too): max_completion_length
    # default 256 from GRPO's first release (0f5ffad26, #2565, v0.14.0) through v1.9.0; 286d19fc7
    # (#6264, after v1.9.0) makes it 512 in both.
    # Generation stops there (grpo_trainer.py max_new_tokens=self.max_completion_length) with no
    # message; every release truncates at 256 or 512.
    _Limit("grpo", "generation.max_completion_length", "max_completion_length", _CUTS_COMPLETIONS,
           (("0.14.0", "1.9.1", 256),), "GRPOTrainer / RLOOTrainer (max_new_tokens)",
           unpinned="256 tokens on TRL 0.14 to 1.9.0, 512 after huggingface/trl#6264"),
    # grpo_config.py: max_prompt_length default 512 (b6a084c46, #2598, v0.14.0) until v0.26.0 made
    # it None; grpo_trainer.py keeps `input_ids[:, -self.max_prompt_length:]`.
    _Limit("grpo", "generation.max_prompt_length", "max_prompt_length", _CUTS_PROMPTS,
           (("0.14.0", "0.26.0", 512),), "GRPOTrainer / RLOOTrainer (prompt left-truncation)"),
    # dpo_config.py: max_length 1024 and max_prompt_length 512 are DPOConfig defaults from v0.14.0
    # (before, None made DPOTrainer warn and use 512 / 128); max_prompt_length keeps 512 until
    # v0.28.0 turned it into a deprecated sentinel and the DPO refactor (e3b7897c8, #3906, v0.29.0)
    # removed it; max_length 1024 is still the default at v1.9.0 ("truncated ... depending on the
    # truncation_mode").
    _Limit("dpo", "sequence.max_length", "max_length", _CUTS_PAIRS, (("0.14.0", None, 1024),),
           "DPOTrainer (dpo_trainer.py, truncation_mode)"),
    _Limit("dpo", "generation.max_prompt_length", "max_prompt_length", _CUTS_PROMPTS, (("0.14.0", "0.28.0", 512),),
           "DPOTrainer (dpo_trainer.py tokenize_row)"),
    # kto_config.py: max_length 1024 from v0.14.0 (before, None made KTOTrainer warn and use 512), still
    # the default at v1.9.0 (KTOConfig in trl/experimental/kto from v0.26); kto_trainer.py truncates a
    # longer prompt + completion (_process_tokens; full_ids[: max_length] in 1.x). Its
    # max_prompt_length (512, v0.14-v0.26) cuts the prompt only when the pair is over max_length.
    _Limit("kto", "sequence.max_length", "max_length", _CUTS_PAIRS, (("0.14.0", None, 1024),),
           "KTOTrainer (kto_trainer.py truncation)"),
    # cpo_config.py (trl/experimental/cpo from v0.26): max_length 1024 from v0.14.0 (None before: CPOTrainer
    # warned and used 512), still at v1.9.0; cpo_trainer.py tokenize_row cuts the prompt, then the
    # answers, of a pair over it.
    _Limit("cpo", "sequence.max_length", "max_length", _CUTS_PAIRS, (("0.14.0", None, 1024),),
           "CPOTrainer (cpo_trainer.py tokenize_row)"),
)


def _default_in(limit: _Limit, version: str):
    for first, before, default in limit.defaults:
        if older_than(version, first) is False and (before is None or older_than(version, before) is True):
            return default
    return None


@register
class TrlLengthLimitCutsData(Rule):
    """TRN056 trl-length-limit-cuts-data

    ## What it does
    Flags a TRL trainer config whose length limit drops or cuts data without a message. The
    limits:
    - RewardConfig `max_length`, written (any release) or left at its default (512 on TRL
      0.12-0.14, 1024 from 0.15): pairs longer than it are dropped, not truncated;
    - GRPOConfig (and RLOOConfig) `max_completion_length` left at its default, 256 tokens
      through TRL 1.9.0 and 512 after (fired with the TRL version unknown: every release
      cuts there), and `max_prompt_length` left at 512 (TRL 0.14-0.25);
    - SFTConfig `max_length` (`max_seq_length` before 0.16) left at 1024 (TRL 0.15 on)
      without packing or padding-free batches;
    - DPOConfig `max_length` left at 1024 (TRL 0.14 on) and `max_prompt_length` at 512
      (TRL 0.14-0.27); KTOConfig and CPOConfig `max_length` left at 1024 (TRL 0.14 on).
    The trainer is known from a key only its config has (`center_rewards_coefficient`;
    `num_generations`; `dataset_text_field`, `packing`, ...; `rpo_alpha`,
    `f_divergence_type`, ...; `desirable_weight`; `cpo_alpha`, `simpo_gamma`) or the
    checkout's `trl <trainer>` launch command. The default rows need the TRL version (silent
    without it, except GRPO's completion length) and are silent for a file that the
    repository's own script reads.

    ## Why is this bad?
    RewardTrainer tokenizes the pairs and then filters out every pair whose chosen or
    rejected sequence is longer than `max_length` (TRL 0.12-0.23 where it tokenizes the
    dataset itself; always from 0.24; before 0.12 TRL's own reward script filtered the same
    way), while RewardConfig's help says longer sequences are "truncated from the right": on
    long chat data a large share of the pairs never reaches training (huggingface/trl#2488).
    GRPO stops generation at `max_completion_length`: on reasoning tasks most completions
    are cut before the answer, score 0, and the group rewards lose their variance
    (huggingface/trl#6263: 57 % clipped at the default 256). SFT, DPO, KTO and CPO truncate
    longer examples, prompts and pairs to their defaults without a word (DPO, KTO and CPO
    warned before TRL 0.14, when they chose a length themselves).

    ## Example
    `reward.yaml`:
        model_name_or_path: Qwen/Qwen2.5-0.5B-Instruct
        dataset_name: trl-lib/ultrafeedback_binarized
        per_device_train_batch_size: 8
        max_length: 512
        center_rewards_coefficient: 0.01
    Use instead:
        model_name_or_path: Qwen/Qwen2.5-0.5B-Instruct
        dataset_name: trl-lib/ultrafeedback_binarized
        per_device_train_batch_size: 8
        max_length: null
        center_rewards_coefficient: 0.01

    ## Fix safety
    No fix: the limit the data needs depends on its token lengths and the GPU memory.

    ## References
    - trl trl/trainer/sft_config.py `max_seq_length` 1024 (5b9236d1e, #2405, v0.15.0), renamed
      `max_length` in v0.16.0; trl/trainer/sft_trainer.py `_prepare_dataset` truncation
    - trl trl/trainer/reward_trainer.py RewardTrainer (`dataset.filter(... <= max_length)`:
      cc23b511e, #2102, first in v0.12.0; the rewritten `_prepare_dataset` from v0.24.0, at
      v1.9.0), trl/trainer/reward_config.py (max_length default 1024 from v0.15.0),
      examples/scripts/reward_modeling.py (the same filter, v0.8-v0.11)
    - trl trl/trainer/grpo_config.py and rloo_config.py `max_completion_length` (256 from
      0f5ffad26, #2565, v0.14.0; 512 from 286d19fc7, #6264, after v1.9.0),
      `max_prompt_length` (512 from b6a084c46, #2598, v0.14.0; None from v0.26.0)
    - trl trl/trainer/dpo_config.py `max_length` 1024 and `max_prompt_length` 512 (v0.14.0;
      max_prompt_length removed by e3b7897c8, #3906, v0.29.0); trl/trainer/kto_config.py
      (trl/experimental/kto/kto_config.py from v0.26) and trl/trainer/cpo_config.py
      (trl/experimental/cpo from v0.26) `max_length` 1024 from v0.14.0
    - huggingface/trl#2488, huggingface/trl#6263
    """

    code = "TRN056"
    name = "trl-length-limit-cuts-data"
    severity = WARNING
    triggers = kinds(*HF_TRAINER_FILES)

    def check(self, run, context):
        for config in run.configs:
            # GRPO's limits where the keys leave GRPO or RLOO >= 0.22 (the same 256-token completion default)
            trainer = "grpo" if grpo_like(config) else config.value("training.trainer")
            if trainer not in ("sft", "reward", "grpo", "dpo", "kto", "cpo") or config.value("file.kind") not in HF_TRAINER_FILES:
                continue
            for limit in _LIMITS:
                if limit.trainer == trainer:
                    found = self._finding(config, limit, context)
                    if found is not None:
                        yield found

    def _finding(self, config, limit, context):
        field = config.get(limit.key)
        if field is not None and not field.origin.is_default:
            if not limit.written or not positive_int(field.value):
                return None
            cut = limit.effect.format(n=f"{field.value} tokens")
            return self.finding(config, field.span, f"{limit.field} {field.value}: {limit.source} {cut}; write "
                                f"a {limit.field} above the longest pair, or null to keep every pair")
        if read_by_repository_script(config, limit.field) or (limit.unless is not None and limit.unless(config)):
            return None
        trl = config.version("trl") if limit.unpinned else pinned_version(config, "trl", self.code, context)
        if trl is None:
            if limit.unpinned is None:
                return None
            default, bound = limit.unpinned, "on every TRL release"
        else:
            default = _default_in(limit, trl[0])
            if default is None:
                if limit.unpinned is None or older_than(trl[0], limit.defaults[0][0]) is not False:
                    return None
                default = limit.unpinned  # a release after the last one read: 256 or 512
            bound = f"on TRL {trl[0]} ({trl[1]})"
        n = f"{default} tokens" if isinstance(default, int) else "that length"
        default = f"{default} tokens" if isinstance(default, int) else default
        return self.finding(
            config, config.file_span,
            f"{limit.field} is left at its default, {default}: {bound} {limit.source} "
            f"{limit.effect.format(n=n)}, without a message; write {limit.field} "
            f"for the longest {_WHAT.get(limit.field, 'sequence')} the data needs")
