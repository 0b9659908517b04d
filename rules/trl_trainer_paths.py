"""TrainingArguments switches that a TRL trainer's own code path breaks: the batch-size finder under
GRPO-like trainers (TRN085) and the Liger kernel's dataset preparation in SFTTrainer, which drops
the loss mask columns (TRN086). Read in huggingface/trl at f2cd57710 (after v1.9.0); releases from
`git tag --contains`."""

from __future__ import annotations

from linter.registry import ERROR, WARNING, Rule, register
from linter.versions import older_than

from .facts import grpo_like, pinned_version, positive_int

# 44d7ef9bd "Reject `auto_find_batch_size` in GRPO and RLOO" (#6411, fixes #3842), first in v1.9.0:
# GRPOConfig.__post_init__ / RLOOConfig.__post_init__ raise ValueError.
_FINDER_REFUSED = "1.9.0"
_GENERATION_BATCH = "0.18.0"
# SFTTrainer._prepare_dataset keeps only some columns on two paths, dropping the mask columns the
# collator masks the labels with (DataCollatorForLanguageModeling: -100 where completion_mask /
# assistant_masks is 0). completion_only_loss arrived in 9ee6c3aa5 (v0.17.0), assistant_only_loss in
# v0.19.0 (#3586). Rows: (switch IR key, switch name, loss key, first release, fixed in, column, PR).
# - Liger, `if args.use_liger_kernel: dataset = dataset.select_columns(...)`: "input_ids" (0.16-0.18),
#   {"input_ids", "position_ids"} (7c8355d03, #3526, v0.19.0); completion_mask kept from b520378b9
#   (#3674, v0.20.0), assistant_masks from 4fcef6c32 (#3914, v0.22.0); from v1.7.0 both masks are
#   folded into a "labels" column first.
# - packing, `dataset = dataset.select_columns("input_ids")` before pack_dataset (0.17.0-0.19.1);
#   both masks kept from a50bdc638 (#3749, v0.20.0).
_MASK_DROPPED = (
    ("memory.fused_cross_entropy", "use_liger_kernel", "completion_only_loss", "0.17.0", "0.20.0",
     "completion_mask", "#3674"),
    ("memory.fused_cross_entropy", "use_liger_kernel", "assistant_only_loss", "0.19.0", "0.22.0",
     "assistant_masks", "#3914"),
    ("sequence.packing", "packing", "completion_only_loss", "0.17.0", "0.20.0", "completion_mask", "#3749"),
    ("sequence.packing", "packing", "assistant_only_loss", "0.19.0", "0.20.0", "assistant_masks", "#3749"),
)

@register
class GrpoAutoFindBatchSize(Rule):
    """TRN085 grpo-auto-find-batch-size

    ## What it does
    Flags `auto_find_batch_size: true` in a TRL GRPOConfig (or RLOOConfig from 0.22, and the
    GRPO-based experimental configs): refused outright where the pinned TRL is 1.9.0 or later;
    on any TRL (pinned or not) where `generation_batch_size` equals `num_generations`, so that
    one generation batch is one prompt group and any smaller batch breaks it.

    ## Why is this bad?
    The batch-size finder catches an out-of-memory error and runs the training loop again with
    a smaller per-device batch. GRPOTrainer builds its generation batch from that batch
    (`get_train_dataloader`: `self._train_batch_size * steps_per_generation`) while its sampler
    still emits whole groups of `num_generations` completions per prompt, so the retry's batch no
    longer holds whole groups and grouping the rewards fails (`rewards.view(-1,
    num_generations)`: "shape '[-1, 1024]' is invalid for input of size 512",
    huggingface/trl#3842). TRL 1.9.0 refuses the flag at launch ("auto_find_batch_size is not
    supported by GRPO"). With `generation_batch_size == num_generations` every release that reads
    the key fails (0.18.0 to 1.8.0 at the first retry, 1.9.0 on at launch), so the rule fires
    unpinned there; with a larger generation batch the retry on releases before 1.9.0 breaks only
    for some batch sizes, and the rule stays silent.

    ## Example
    `grpo.yaml`:
        model_name_or_path: Qwen/Qwen3-0.6B
        output_dir: out
        num_generations: 16
        generation_batch_size: 16
        auto_find_batch_size: true
    Use instead (a batch that fits, found by hand):
        model_name_or_path: Qwen/Qwen3-0.6B
        output_dir: out
        num_generations: 16
        generation_batch_size: 16
        per_device_train_batch_size: 4

    ## Fix safety
    No fix: the batch that fits is the author's to find (TRL: "Set auto_find_batch_size=False and
    lower per_device_train_batch_size instead").

    ## References
    - trl/trainer/grpo_config.py GRPOConfig.__post_init__ and rloo_config.py RLOOConfig.__post_init__
      (ValueError from 44d7ef9bd, #6411, v1.9.0); grpo_trainer.py GRPOTrainer.get_train_dataloader
      (`batch_size=self._train_batch_size * self.args.steps_per_generation`, 0.18.0 to 1.8.0) and
      `_generate_and_score_completions` (`rewards.view(-1, num_generations)`); generation_batch_size
      from v0.18.0
    - huggingface/trl#3842, PR #6411
    """

    code = "TRN085"
    name = "grpo-auto-find-batch-size"
    severity = ERROR

    def check(self, run, context):
        for config in run.configs:
            auto = config.get("batch.auto_find")
            if auto is None or auto.value is not True or config.value("file.kind") != "trl" or not grpo_like(config):
                continue
            found = pinned_version(config, "trl", self.code, context)
            if found is not None and older_than(found[0], _FINDER_REFUSED) is False:
                yield self.finding(
                    config, auto.span,
                    f"auto_find_batch_size in a GRPO-like config on TRL {found[0]} ({found[1]}): the config's "
                    "__post_init__ raises ValueError (\"auto_find_batch_size is not supported by GRPO\") at launch; "
                    "set per_device_train_batch_size yourself")
                continue
            group, batch = config.value("generation.per_prompt"), config.value("generation.batch_size")
            if not positive_int(group) or batch != group or found is not None and older_than(found[0], _GENERATION_BATCH):
                continue  # generation_batch_size: GRPOConfig's from 0.18.0 (older releases refuse the key)
            where = f"TRL {found[0]} ({found[1]})" if found else "every TRL release that reads generation_batch_size"
            yield self.finding(
                config, auto.span,
                f"auto_find_batch_size in a GRPO-like config whose generation batch ({batch}) is one group of "
                f"num_generations={group}: on {where} the retry after an out-of-memory error builds a smaller "
                "generation batch that holds no whole group and grouping the rewards crashes (\"shape '[-1, "
                f"{group}]' is invalid\", huggingface/trl#3842; TRL 1.9.0 on refuses the flag at launch); set "
                "per_device_train_batch_size yourself")


@register
class SftDropsLossMask(Rule):
    """TRN086 sft-drops-loss-mask

    ## What it does
    Flags `completion_only_loss: true` or `assistant_only_loss: true` in a TRL SFTConfig together
    with `use_liger_kernel: true` or `packing: true`, where the pinned TRL drops the mask on that
    path (silent when the version is unknown):
    - Liger with `completion_only_loss`: TRL 0.17.0 to 0.19.x; with `assistant_only_loss`: 0.19.0
      to 0.21.x;
    - packing with either: TRL 0.17.0 (0.19.0 for `assistant_only_loss`) to 0.19.x.

    ## Why is this bad?
    On these paths `SFTTrainer._prepare_dataset` keeps only the columns it thought it needed
    (`input_ids`, with Liger also `position_ids`), dropping the `completion_mask` or
    `assistant_masks` column the collator masks the labels with. Training runs without a
    message, but the loss covers the prompt (or user) tokens as well: completion-only or
    assistant-only training silently becomes full-sequence training (huggingface/trl#3484).
    TRL 0.20.0 keeps both masks when packing (#3749) and `completion_mask` under Liger (#3674);
    0.22.0 keeps `assistant_masks` under Liger (#3914).

    ## Example
    `sft.yaml`:
        model_name_or_path: Qwen/Qwen2.5-0.5B
        output_dir: out
        completion_only_loss: true
        use_liger_kernel: true
    `requirements.txt`:
        trl==0.19.1
    Use instead (TRL 0.20.0 or later), in `requirements.txt`:
        trl==0.20.0

    ## Fix safety
    No fix: upgrading TRL, or giving up the Liger kernel or packing, is the author's choice.

    ## References
    - trl/trainer/sft_trainer.py SFTTrainer._prepare_dataset: `if args.use_liger_kernel: dataset =
      dataset.select_columns(...)` ("input_ids" in 0.16-0.18, {"input_ids", "position_ids"} from
      7c8355d03, #3526, v0.19.0; completion_mask kept from b520378b9, #3674, v0.20.0;
      assistant_masks from 4fcef6c32, #3914, v0.22.0); `if packing: dataset =
      dataset.select_columns("input_ids")` (0.17.0-0.19.1; both masks kept from a50bdc638, #3749,
      v0.20.0); DataCollatorForLanguageModeling (labels -100 where completion_mask /
      assistant_masks is 0); completion_only_loss from 9ee6c3aa5 (v0.17.0)
    - huggingface/trl#3484, PR #3674, PR #3749, PR #3914
    """

    code = "TRN086"
    name = "sft-drops-loss-mask"
    severity = WARNING

    def check(self, run, context):
        for config in run.configs:
            if config.value("file.kind") != "trl" or config.value("training.trainer") != "sft":
                continue
            asked = [row for row in _MASK_DROPPED
                     if config.value(row[0]) is True and config.value(f"data.{row[2]}") is True]
            if not asked:
                continue
            found = pinned_version(config, "trl", self.code, context)
            if found is None:
                continue
            for _, switch, key, since, until, column, pr in asked:
                if older_than(found[0], since) is not False or older_than(found[0], until) is not True:
                    continue
                yield self.finding(
                    config, config.span(f"data.{key}"),
                    f"{key} with {switch} on TRL {found[0]} ({found[1]}): SFTTrainer's {switch} path drops the "
                    f"{column} column while preparing the dataset, so the collator never masks the other tokens "
                    f"and the loss silently covers the whole sequence (huggingface/trl#3484; fixed in {until}, "
                    f"{pr})")
                break
