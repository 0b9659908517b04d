"""What Unsloth's generated GRPOConfig does to the batch a GRPO script asks for (TRN099).

Facts from unslothai/unsloth (bare mirror at 015bdef0d9; __version__ from unsloth/models/_utils.py,
found with `git log -S`; a commit that sets __version__ itself is in that release, one committed
under an unchanged __version__ is certain only from the next bump) and huggingface/trl (tags).
"""

from __future__ import annotations

from linter.registry import WARNING, Rule, register
from linter.versions import older_than

from .facts import pinned_version, positive_int, world_size

# unsloth/models/rl_replacements.py grpo_trainer_fix_batch_size (c66350a48a, #1716, which sets
# __version__ 2025.2.10): a snippet in UnslothGRPOConfig.__init__, `if per_device_train_batch_size
# % num_generations: per_device_train_batch_size = num_generations`, added only where TRL's
# GRPOTrainer source holds "divisible by the number of generations" (TRL 0.15.0 to 0.17.x: the
# check lives in grpo_trainer.py there, in grpo_config.py from 0.18.0, and 0.14 has none).
_FIX_BATCH = "2025.2.10"
_TRL_TRAINER_CHECK = ("0.15.0", "0.18.0")
# unsloth/models/rl.py _patch_trl_rl_trainers check_num_generations (623060ba29, #2645, which sets
# 2025.5.8): the same rewrite for every TRL whose config takes per_device_train_batch_size and
# num_generations (every GRPOConfig).
_EVERY_TRL = "2025.5.8"
# 5b0f19624c (#3609, "Remove grpo requirement bs=num_generations", committed under 2025.11.3, so
# certain from 2025.11.4): where the config also takes steps_per_generation and
# generation_batch_size (TRL >= 0.18.0), the rewrite happens only when both are None and
# `gradient_accumulation_steps * WORLD_SIZE * per_device_train_batch_size` is not a multiple of
# num_generations (WORLD_SIZE from the environment, 1 without a launcher). Still so at 015bdef0d9.
_ACCUMULATED = ("2025.11.3", "2025.11.4")
_TRL_GENERATION_KEYS = "0.18.0"


def _between(version: str, since: str, until: str | None) -> bool:
    return older_than(version, since) is False and (until is None or older_than(version, until) is True)


def _formulas(unsloth: str, trl: str | None) -> set[str] | None:
    """The rewrites the pinned releases may run: "micro" (per_device_train_batch_size alone),
    "accumulated" (x gradient_accumulation_steps x WORLD_SIZE); empty where none runs; None where
    the TRL version decides and is unknown."""
    if older_than(unsloth, _FIX_BATCH) is not False:
        return set()
    if older_than(unsloth, _EVERY_TRL):
        if trl is None:
            return None
        return {"micro"} if _between(trl, *_TRL_TRAINER_CHECK) else set()
    if older_than(unsloth, _ACCUMULATED[0]):
        return {"micro"}
    if trl is not None and older_than(trl, _TRL_GENERATION_KEYS):
        return {"micro"}
    newer = trl is not None and older_than(unsloth, _ACCUMULATED[1]) is False
    return {"accumulated"} if newer else {"micro", "accumulated"}


@register
class GrpoBatchRaisedToNumGenerations(Rule):
    """TRN099 grpo-batch-raised-to-num-generations

    ## What it does
    Flags a `GRPOConfig` in an Unsloth script (imported from trl after unsloth, every keyword
    written out) whose `per_device_train_batch_size` Unsloth's generated config replaces by
    `num_generations`: with unsloth 2025.2.10 to 2025.5.7 and TRL 0.15 to 0.17, or unsloth
    2025.5.8 and later, where `per_device_train_batch_size` is not a multiple of
    `num_generations`; from unsloth 2025.11.4 with TRL 0.18 or later, where neither
    `generation_batch_size` nor `steps_per_generation` is written and `per_device_train_batch_size`
    x `gradient_accumulation_steps` x GPUs is not (the GPUs as `--world-size` or a launcher
    config gives them). Fires where `num_generations` is the larger (a larger batch only shrinks
    to it); silent where the versions that decide are unknown.

    ## Why is this bad?
    TRL refuses a GRPO batch that holds no whole group of completions (TRN012); Unsloth's copy
    of the config instead raises the per-device batch to `num_generations`, printing only "We
    will change the batch size of 1 to the `num_generations` of 32". Every step then generates
    and back-propagates that many full-length completions per GPU, many times the batch the
    config asks for, and a run sized for it runs out of memory (unslothai/unsloth#3572, #2765,
    #1878; the PR to stop it, #3838, was declined).

    ## Example
    `train.py`:
        from unsloth import FastLanguageModel
        from trl import GRPOConfig, GRPOTrainer
        model, tokenizer = FastLanguageModel.from_pretrained("unsloth/Qwen3-4B-Base", max_seq_length=2048)
        model = FastLanguageModel.get_peft_model(model, r=32)
        args = GRPOConfig(per_device_train_batch_size=1, gradient_accumulation_steps=1, num_generations=32, output_dir="out")
    `requirements.txt`:
        unsloth==2025.11.2
    Use instead (the batch you mean, one that holds whole groups):
        args = GRPOConfig(per_device_train_batch_size=1, gradient_accumulation_steps=8, num_generations=8, output_dir="out")

    ## Fix safety
    No fix: fewer generations change the method, a larger batch needs memory; the author picks.

    ## References
    - unsloth/models/rl_replacements.py grpo_trainer_fix_batch_size (c66350a48a, #1716, 2025.2.10)
    - unsloth/models/rl.py _patch_trl_rl_trainers check_num_generations (623060ba29, #2645,
      2025.5.8; the accumulated form 5b0f19624c, #3609, 2025.11.4); still so at 015bdef0d9
    - unsloth/models/llama.py calls PatchFastRL on import (95fb1d699d), replacing trl.GRPOConfig
    - trl/trainer/grpo_trainer.py (v0.15.0 to v0.17.0: "divisible by the number of generations"),
      grpo_config.py (steps_per_generation and generation_batch_size from v0.18.0)
    - unslothai/unsloth#3572, #2765, #1878, #3149, #2583, #3838
    """

    code = "TRN099"
    name = "grpo-batch-raised-to-num-generations"
    severity = WARNING
    triggers = ("trainer.patched_grpo_config",)

    def check(self, run, context):
        for config in run.configs:
            if config.value("trainer.patched_grpo_config") is not True:
                continue
            micro, generations = config.value("batch.micro"), config.value("generation.per_prompt")
            if not (positive_int(micro) and positive_int(generations)) or generations <= micro:
                continue  # a multiple of num_generations is kept; a larger batch only shrinks to it
            unsloth = pinned_version(config, "unsloth", self.code, context)
            if unsloth is None:
                continue
            trl = config.version("trl")
            formulas = _formulas(unsloth[0], trl[0] if trl else None)
            if formulas is None:
                context.unknown_version(config, "trl", self.code)
                continue
            if not formulas or "accumulated" in formulas and not self._accumulated(config, run, context, micro,
                                                                                     generations):
                continue
            if formulas == {"accumulated"}:
                rule = "per_device_train_batch_size x gradient_accumulation_steps x GPUs is not a multiple of it"
            else:
                rule = "it is not a multiple of num_generations"
            on = f"unsloth {unsloth[0]} ({unsloth[1]})" + (f" with trl {trl[0]} ({trl[1]})" if trl else "")
            yield self.finding(
                config, config.span("generation.per_prompt"),
                f"per_device_train_batch_size {micro} with num_generations {generations}: on {on} Unsloth's GRPOConfig "
                f"replaces per_device_train_batch_size by num_generations where {rule}, printing only \"We will change "
                f"the batch size of {micro} to the `num_generations` of {generations}\"; each step then generates and "
                f"back-propagates {generations} completions per GPU, {generations / micro:.3g}x the batch asked for (out "
                "of memory where the batch was sized to fit); make the batch hold whole groups of num_generations "
                "yourself")

    @staticmethod
    def _accumulated(config, run, context, micro: int, generations: int) -> bool:
        """Does the accumulated form rewrite the batch? Only where it runs (neither generation key
        written) and the GPUs and accumulation steps are known."""
        if config.get("generation.batch_size") is not None or config.get("generation.steps") is not None:
            return False
        accumulation, world = config.value("batch.grad_accum"), world_size(run, context)
        return positive_int(accumulation) and positive_int(world) and accumulation * world * micro % generations != 0
