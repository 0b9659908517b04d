"""Checks TRL's trainer configs make from the config alone: SFTTrainer's padding-free and chunked-loss
checks, DPOTrainer's exo_pair and Liger checks and GRPOConfig's Hub-logging check (audited at v1.9.0;
the GRPO batch checks are TRN012 / TRN085), and the __post_init__ of RewardConfig, OnlineDPOConfig, PPOConfig, RLOOConfig, KTOConfig, ORPOConfig,
CPOConfig, BCOConfig, GKDConfig, XPOConfig, NashMDConfig and PRMConfig, and the matching trainer's
__init__, read at every release tag of huggingface/trl (mirror f2cd57710). Which trainer reads a
file is linter/adapters/trl_trainers.py's (a key only its config defines, in the release that
reads it, or a `trl <command>` launch command).

Read and left out: value checks the parser makes first (a `Literal` annotation or a field's
metadata `choices`: PPOConfig stop_token / kl_estimator, CPOConfig loss_type with kto_pair,
OnlineDPOConfig loss_type: HfArgumentParser refuses another value before __post_init__);
GKDConfig's lmbda / beta ranges (TRN084); checks on objects the script builds (reward_funcs,
ref_model is model, a PeftModel with peft_config, the model's num_labels, the tokenizer's vocabulary,
the dataset's columns); BCO / ORPO / CPO generate_during_eval (installed packages); RLOOConfig's
batch checks (0.22+, GRPOConfig's: TRN012, through rules/facts.py grpo_like); KTO sync_ref_model
with PEFT (TRN061). RewardConfig,
ORPOConfig, BCOConfig, KTOConfig and PRMConfig have no other __post_init__ check of their own.
"""

from __future__ import annotations

from linter.registry import WARNING, Rule, kinds, register
from linter.versions import older_than

from .facts import left_out, off
from .trl_config_rows import MORE_ROWS, exact as _exact, losses as _losses, sft_base as _sft_base
from .validation_table import Row, TableRule

_PPO = "trl/trainer/ppo_trainer.py PPOTrainer.__init__ (trl/experimental/ppo from 0.26)"
_ONLINE_DPO = "trl/trainer/online_dpo_config.py OnlineDPOConfig.__post_init__ (trl/experimental/online_dpo from 0.26)"
# OnlineDPOConfig max_new_tokens default 64 (TRL >= 0.10) and max_length default 512 (TRL >= 0.14,
# 'Maximum total length of the sequence (prompt + completion) ... the leftmost tokens will be truncated').
_MAX_NEW_TOKENS, _MAX_LENGTH = 64, 512


def _unknown(config, key: str) -> bool:
    """Absent because a training script computes the key (arguments.unseen_keys), not left out."""
    return config.get(key) is None and not left_out(config, key)


def _int(config, key: str, default: int | None = None) -> int | None:
    value = config.value(key)
    if value is None:
        return default if left_out(config, key) else None  # computed by a script: unknown
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _completion_fills_length(written_length: bool):
    def when(config) -> bool:
        if not _exact(config, "online_dpo") or (not left_out(config, "sequence.max_length")) != written_length:
            return False
        new, length = _int(config, "generation.max_new_tokens", _MAX_NEW_TOKENS), _int(config, "sequence.max_length",
                                                                                         _MAX_LENGTH)
        return new is not None and length is not None and new >= length
    return when


_SFT = "trl/trainer/sft_trainer.py SFTTrainer.__init__"
_DPO = "trl/trainer/dpo_trainer.py DPOTrainer.__init__"
_SFT_MAX_LENGTH = 1024  # SFTConfig max_length, v0.16.0 to v1.9.0
_HEAD = ("`loss_type='chunked_nll'` is not supported when `lm_head` is wrapped by a PEFT adapter (e.g. "
         "`target_modules='all-linear'` or explicitly including `'lm_head'`). Either remove `lm_head` from "
         "`target_modules`, or switch to `loss_type='nll'`.")


def _chunked_head(config, written: bool) -> bool:
    """A LoRA adapter whose target_modules name lm_head (PEFT matches the top-level module by its
    name; a pattern or all-linear, which leaves the output layer out, is not judged) under SFT's
    chunked loss: written chunked_nll, or loss_type unwritten, without the Liger kernel."""
    if not _sft_base(config) or config.value("adapter.kind") != "lora" or not off(config, "memory.fused_cross_entropy"):
        return False
    targets = config.value("adapter.target_modules")
    if not ("lm_head" in targets if isinstance(targets, list) else targets == "lm_head"):
        return False
    return config.value("training.loss_type") == "chunked_nll" if written else left_out(config, "training.loss_type")


_TRUNCATED = ("max_new_tokens >= max_length in an Online DPO config: max_length bounds prompt plus completion and "
              "the prompt is cut from the left, so a completion that long leaves no prompt")
_CRASHED = ("fails in the first training step: the forward pass truncates the completion to nothing and raises a "
            "size mismatch (huggingface/trl#3042)")
_WARNING = ("This will cause prompts to be truncated or completely removed in the forward pass. To preserve prompts, "
            "ensure  e.g. `max_length > max_new_tokens + 512`.")

ROWS = (
    # b997a3198 (#4193, v0.24.0) added the warning and made the truncation keep the completion; from
    # OnlineDPOConfig's max_length (2ecd53ad7, #2558, first in v0.14.0) to 0.23 the trainer truncated
    # `prompt + completion` to max_length from the left (online_dpo_trainer.py _forward,
    # num_tokens_to_truncate) and a completion of max_length tokens or more crashed the step. TRL
    # 0.10 to 0.13 had no max_length and did not truncate: with max_length unwritten the rule needs
    # a pin.
    Row(_completion_fills_length(True), "generation.max_new_tokens", _TRUNCATED, _WARNING, _ONLINE_DPO,
        "b997a3198 #4193, v0.24.0", since="0.24.0", package="trl", before=("0.14.0", _CRASHED),
        unpinned=("TRL 0.14 to 0.23 crash in the first step (huggingface/trl#3042) and TRL 0.24.0 and later "
                  "truncate the prompts away with only a warning")),
    Row(_completion_fills_length(False), "generation.max_new_tokens",
        _TRUNCATED + f" (max_length unwritten: {_MAX_LENGTH})", _WARNING, _ONLINE_DPO, "b997a3198 #4193, v0.24.0",
        since="0.24.0", package="trl", before=("0.14.0", _CRASHED)),
    # a9b54a852 (#2528, v0.14.0) raises; PPOv2Trainer / PPOTrainer 0.9.3 to 0.13 replaced
    # stop_token_id with the tokenizer's EOS id without a word (`if args.stop_token and
    # args.stop_token == "eos": args.stop_token_id = ...eos_token_id`).
    Row(lambda config: (_exact(config, "ppo") and config.value("generation.stop_token") is not None
                        and config.value("generation.stop_token_id") is not None),
        "generation.stop_token_id", "stop_token and stop_token_id both set in a PPO config",
        "You cannot set both `stop_token` and `stop_token_id`.", _PPO, "a9b54a852 #2528, v0.14.0",
        since="0.14.0", package="trl",
        before=("0.9.3", "silently replaces stop_token_id with the tokenizer's EOS id (stop_token 'eos' wins)"),
        unpinned="TRL 0.14.0 and later refuse it at start-up, and 0.9.3 to 0.13 silently generate up to the EOS "
                 "id instead of stop_token_id"),
    # 3822674de (#5359, v1.0.0) dropped the collator's truncation and made SFTTrainer.__init__ refuse
    # padding_free without packing while max_length (SFTConfig default 1024, v0.16.0 to v1.9.0) is set;
    # a dataset with image columns is exempt (huggingface/trl#5923; unsloth#7951).
    Row(lambda config: (_sft_base(config) and config.value("sequence.padding_free") is True
                        and off(config, "sequence.packing") and config.value("model.multimodal") is not True
                        and (left_out(config, "sequence.max_length") or config.value("sequence.max_length") is not None)),
        "sequence.padding_free", "padding_free without packing in an SFT config whose max_length is set (SFTConfig's "
        f"default is {_SFT_MAX_LENGTH}): the padding-free collator does not truncate",
        "When `padding_free=True` without packing, `max_length` is not enforced. Either enable packing (e.g., "
        "`packing=True, packing_strategy='bfd'`), provide already truncated inputs, or set `max_length=None`.",
        _SFT, "3822674de #5359, v1.0.0", since="1.0.0", package="trl"),
    # 9bcf72943 (#5575, v1.4.0) added loss_type "chunked_nll" and refused it with the Liger kernel.
    Row(lambda config: (_sft_base(config) and config.value("training.loss_type") == "chunked_nll"
                        and config.value("memory.fused_cross_entropy") is True),
        "training.loss_type", "loss_type chunked_nll with use_liger_kernel in an SFT config",
        "`loss_type='chunked_nll'` is not compatible with `use_liger_kernel=True`.", _SFT, "9bcf72943 #5575, v1.4.0",
        since="1.4.0", package="trl"),
    # The chunked loss reads the output projection's weight itself: b8e6fc0aa (#5676, v1.4.0, with
    # chunked_nll) refuses a LoRA on lm_head; b58947c7e (#5846, v1.7.0) made chunked_nll the default
    # where use_liger_kernel is off (SFTConfig.__post_init__). 0.23.0 (SFTConfig loss_type) to 1.3.x
    # refuse the value: `else: raise ValueError("Invalid `loss_type` ...")`.
    Row(lambda config: _chunked_head(config, written=True), "adapter.target_modules",
        "loss_type chunked_nll with a LoRA adapter on lm_head in an SFT config", _HEAD, _SFT,
        "b8e6fc0aa #5676, v1.4.0", since="1.4.0", package="trl",
        before=("0.23.0", "refuses chunked_nll itself: \"Invalid `loss_type` chunked_nll passed. Supported values are "
                          "'nll' and 'dft'.\""),
        unpinned="every TRL whose SFTConfig has loss_type refuses it (0.23 to 1.3 the value itself: \"Invalid "
                 "`loss_type`\"; 1.4.0 on the LoRA on lm_head)"),
    Row(lambda config: _chunked_head(config, written=False), "adapter.target_modules",
        "a LoRA adapter on lm_head in an SFT config without loss_type (chunked_nll by default from TRL 1.7.0)", _HEAD,
        _SFT, "b58947c7e #5846, v1.7.0", since="1.7.0", package="trl"),
    # e3b7897c8 (Refactor DPO, #3906, v0.29.0): before, exo_pair silently replaced label_smoothing 0
    # (DPOConfig's default) with 1e-3 (dpo_trainer.py dpo_loss).
    Row(lambda config: (_exact(config, "dpo") and "exo_pair" in _losses(config)
                        and config.value("training.preference_label_smoothing") in (None, 0, 0.0)
                        and not _unknown(config, "training.preference_label_smoothing")),
        "training.loss_type", "loss_type exo_pair with label_smoothing 0 (DPOConfig's default) in a DPO config",
        "Label smoothing must be greater than 0.0 when using 'exo_pair' loss. The EXO paper recommends a value of "
        "1e-3.", _DPO, "e3b7897c8 #3906, v0.29.0", since="0.29.0", package="trl"),
    Row(lambda config: (_exact(config, "dpo") and config.value("memory.fused_cross_entropy") is True
                        and config.value("training.precompute_ref") is True),
        "training.precompute_ref", "use_liger_kernel with precompute_ref_log_probs in a DPO config",
        "Liger DPO loss does not support precomputing reference log probabilities. Either disable "
        "`precompute_ref_log_probs` or set `use_liger_kernel` to False.", _DPO, "e3b7897c8 #3906, v0.29.0",
        since="0.29.0", package="trl"),
    # 035c3ff15 (#4818, v0.28.0) added log_completions_hub_repo with the check (log_completions defaults to False).
    Row(lambda config: (_exact(config, "grpo") and config.value("logging.completions_hub_repo") is not None
                        and off(config, "logging.completions")),
        "logging.completions_hub_repo", "log_completions_hub_repo without log_completions in a GRPO config",
        "log_completions_hub_repo is set, but log_completions is False. Enable log_completions to upload completions "
        "to the Hub, or unset log_completions_hub_repo.",
        "trl/trainer/grpo_config.py GRPOConfig.__post_init__", "035c3ff15 #4818, v0.28.0", since="0.28.0",
        package="trl"),
)


@register
class TrlTrainerConfigRefused(TableRule):
    """TRN076 trl-trainer-config-refused

    ## What it does
    Flags a TRL trainer config that the config class's `__post_init__` or its trainer's
    `__init__` refuses or mishandles from the config alone (the rows of rules/trl_configs.py and
    rules/trl_config_rows.py: Online DPO, PPO, SFT, DPO, KTO, GRPO, ModelConfig). The trainer is the one whose
    config alone defines the file's keys in the TRL release that reads it (or a `trl <command>`
    launch command, or TRL's example script `examples/scripts/<trainer>.py`); a file an XPO or
    Nash-MD config may read as well (they extend OnlineDPOConfig, and their trainers do not
    truncate to max_length) is not an Online DPO file here.

    ## Why is this bad?
    - Online DPO: `max_length` bounds prompt plus completion and the trainer cuts the prompt from
      the left, so `max_new_tokens >= max_length` leaves no prompt for a completion that long:
      TRL 0.14 to 0.23 fail in the first step with a size mismatch (huggingface/trl#3042), 0.24.0
      on truncate the prompts away with only a warning. The defaults are 64 and 512.
    - PPO: `stop_token` and `stop_token_id` both set: TRL 0.14.0 on refuse it at start-up; 0.9.3
      to 0.13 silently replace `stop_token_id` with the EOS id.
    - SFT (pinned TRL): `padding_free` without packing while `max_length` is set (its default is
      1024; 1.0.0 on); `loss_type: chunked_nll` with `use_liger_kernel` (1.4.0 on); a LoRA on
      `lm_head` (`lora_target_modules`) under the chunked loss, written (1.4.0 on; 0.23 to 1.3
      refuse chunked_nll itself, so it fires unpinned) or by default (loss_type unwritten, 1.7.0 on).
    - DPO (0.29.0 on): `loss_type: exo_pair` with `label_smoothing` 0 (the default; before, 1e-3
      was used silently); `use_liger_kernel` with `precompute_ref_log_probs`.
    - GRPO (0.28.0 on): `log_completions_hub_repo` without `log_completions`.
    - rules/trl_config_rows.py: SFT `packing` with `max_length: null` (0.16.0 on; 0.15.x
      `max_seq_length: null`); DPO `loss_weights` not one per `loss_type` (0.20.0 on, fires
      unpinned), `use_weighting` with `aot` / `aot_unpaired` (0.29.0 on), `use_liger_kernel` with
      a LoRA on `lm_head` (1.8.0 on; 0.29 to 1.7 refuse any PEFT model with it); KTO
      `train_sampling_strategy` other than sequential with a KL-estimating loss (1.6.0 on); GRPO
      with the Liger loss (the switch of the release: `use_liger_loss` to 0.24, either 0.25 to
      0.27, `use_liger_kernel` from 0.28) and `top_entropy_quantile` below 1 (0.20.0 on),
      `off_policy_mask_threshold` (0.27.0 on), an entropy bonus (1.8.0 on) or `delta` (0.18.0 to
      1.3.x); ModelConfig `load_in_4bit` and `load_in_8bit` both true (every release).

    Where the TRL version is unknown a row fires only where every release that reads its keys
    fails (an Online DPO file that writes max_length: TRL 0.10 to 0.13 have no max_length).

    ## Example
    `online_dpo.yaml`:
        model_name_or_path: Qwen/Qwen2-0.5B-Instruct
        reward_model_path: trl-lib/Qwen2-0.5B-Reward
        dataset_name: trl-lib/ultrafeedback-prompt
        max_new_tokens: 1024
        max_length: 1024
    `train.sh`:
        accelerate launch examples/scripts/online_dpo.py --config online_dpo.yaml
    Use instead, in `online_dpo.yaml`:
        model_name_or_path: Qwen/Qwen2-0.5B-Instruct
        reward_model_path: trl-lib/Qwen2-0.5B-Reward
        dataset_name: trl-lib/ultrafeedback-prompt
        max_new_tokens: 1024
        max_length: 2048

    ## Fix safety
    No fix: the lengths and the stop token are the author's choice.

    ## References
    - trl/trainer/online_dpo_config.py OnlineDPOConfig (max_new_tokens 64, max_length 512 from
      2ecd53ad7, #2558, v0.14.0) and __post_init__: b997a3198 "[Online-DPO] fix the completion_len ==
      max_new_tokens crash" (#4193, v0.24.0); online_dpo_trainer.py _forward
      (num_tokens_to_truncate, v0.14.0 to v0.23.1); huggingface/trl#3042
    - trl/trainer/ppo_trainer.py PPOTrainer.__init__: a9b54a852 (#2528, v0.14.0); ppov2_trainer.py
      v0.9.3 (`args.stop_token_id = tokenizer.eos_token_id`); trl/experimental/ppo from f1e6377e4 (#4482)
    - trl/trainer/sft_trainer.py SFTTrainer.__init__: 3822674de (#5359, v1.0.0; huggingface/trl#5923),
      9bcf72943 (#5575, v1.4.0), b8e6fc0aa (#5676, v1.4.0); sft_config.py loss_type default
      b58947c7e (#5846, v1.7.0); dpo_trainer.py DPOTrainer.__init__ e3b7897c8 (#3906, v0.29.0);
      grpo_config.py GRPOConfig.__post_init__ 035c3ff15 (#4818, v0.28.0)
    - rules/trl_config_rows.py: sft_trainer.py 5b9236d1e (#2405), be1e34003 (#2895); dpo_config.py
      d87023021 (#2544); dpo_trainer.py e3b7897c8 (#3906), 9c0776ef6 (#6159); kto_trainer.py
      1877853ae (#5864), 51c6d3ca3 (#5872); grpo_config.py 05bc43e96 (#3434), 5c521b789 (#5690);
      grpo_trainer.py 7e8ef867a (#3563), 05a40176c (#4689), 34c7f0d85 (#6140); model_config.py
      9a71e67be (#1176)
    - trainer kinds: linter/data/trl_config_keys.json (bench/trl_config_keys.py, every TRL tag)
    """

    code = "TRN076"
    name = "trl-trainer-config-refused"
    triggers = kinds("trl")  # every row asks _exact: a TRL trainer config
    rows = ROWS + MORE_ROWS


# examples/scripts/reward_modeling.py: "You are using a `task_type` that is different than `SEQ_CLS` for
# PEFT. This will lead to silent bugs"; RewardTrainer's docstring: for a causal-LM checkpoint set
# modules_to_save=["score"] "to ensure that the reward head is properly trained".
_SEQ_CLS = ("SEQ_CLS",)


def _reward_checkpoint(name: str) -> bool:
    """A checkpoint whose name says it already carries a reward or classification head."""
    lowered = name.lower()
    return any(word in lowered for word in ("reward", "-rm", "_rm", "prm", "classif", "seq-cls", "seqcls"))


@register
class RewardLoraHeadNotTrained(Rule):
    """TRN077 reward-lora-head-not-trained

    ## What it does
    Flags a TRL reward-model config (RewardConfig's keys, or a `trl reward` launch command) that
    trains a LoRA adapter (`use_peft: true`) with `lora_task_type` other than `SEQ_CLS`
    (ModelConfig's default is `CAUSAL_LM`) and no `lora_modules_to_save` naming `score`, on a
    causal-LM checkpoint.

    ## Why is this bad?
    RewardTrainer loads the checkpoint with AutoModelForSequenceClassification (num_labels=1),
    which adds a freshly initialised `score` head. Only a PEFT `SEQ_CLS` adapter
    (PeftModelForSequenceClassification) puts that head in `modules_to_save`; a `CAUSAL_LM` one
    freezes it, so training learns through a random, frozen head and the saved adapter does not
    hold it: the reloaded model warns "newly initialized: [score.weight]" and scores at random.
    Every TRL release builds a CAUSAL_LM LoRA unless told otherwise (get_peft_config hard-coded it
    before #1393), so the rule fires with the TRL version unknown. A checkpoint already a
    sequence classifier (its name says reward / classifier) has a trained head: silent.

    ## Example
    `reward.yaml`:
        model_name_or_path: Qwen/Qwen2.5-0.5B-Instruct
        dataset_name: trl-lib/ultrafeedback_binarized
        center_rewards_coefficient: 0.01
        use_peft: true
        lora_r: 16
    Use instead:
        model_name_or_path: Qwen/Qwen2.5-0.5B-Instruct
        dataset_name: trl-lib/ultrafeedback_binarized
        center_rewards_coefficient: 0.01
        use_peft: true
        lora_r: 16
        lora_task_type: SEQ_CLS

    ## Fix safety
    No automatic fix (the rule points at `use_peft`); set `lora_task_type: SEQ_CLS`, or
    `lora_modules_to_save: [score]`.

    ## References
    - trl/trainer/model_config.py ModelConfig.lora_task_type (default "CAUSAL_LM", 'use "SEQ_CLS"
      for reward modeling') and trl/trainer/utils.py get_peft_config (task_type=lora_task_type):
      huggingface/trl#1393; before it get_peft_config always built task_type="CAUSAL_LM"
    - trl/trainer/reward_trainer.py RewardTrainer (model_init_kwargs num_labels=1; docstring on
      modules_to_save=["score"]); examples/scripts/reward_modeling.py's warning
    - peft/peft_model.py PeftModelForSequenceClassification (adds the classifier / score head to
      modules_to_save)
    - huggingface/trl#1379
    """

    code = "TRN077"
    name = "reward-lora-head-not-trained"
    severity = WARNING
    triggers = kinds("trl")

    def check(self, run, context):
        for config in run.configs:
            if (config.value("file.kind") != "trl" or config.value("training.trainer") != "reward"
                    or config.value("adapter.kind") != "lora"):
                continue
            task = config.value("adapter.task_type") or "CAUSAL_LM"
            saved = config.value("adapter.modules_to_save") or []
            model = config.value("model.name")
            if task in _SEQ_CLS or "score" in saved or not isinstance(model, str) or _reward_checkpoint(model):
                continue
            found = config.version("trl")
            on = f" on TRL {found[0]} ({found[1]})" if found and older_than(found[0], "0.7.0") is False else ""
            yield self.finding(
                config, config.span("adapter.task_type", "adapter.kind"),
                f"reward model with a {task} LoRA adapter{on}: the score head AutoModelForSequenceClassification "
                f"adds to {model} stays frozen at its random initialisation and is not saved with the adapter "
                "(PEFT adds it to modules_to_save only for task_type SEQ_CLS); set lora_task_type: SEQ_CLS or "
                "lora_modules_to_save: [score]")
