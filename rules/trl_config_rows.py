"""More rows of TRN076 (rules/trl_configs.py): the TRL config refusals of a second audit at v1.9.0
(huggingface/trl mirror f2cd57710), each bounded by the release tags whose source has the check:
SFTTrainer's packing without max_length, DPOConfig's loss_weights, DPOTrainer's WPO weighting and
Liger-with-PEFT checks, KTOTrainer's sampler check (its batch check is TRN013), GRPO's Liger checks (the switch GRPO reads:
use_liger_loss 0.17 to 0.24, use_liger_loss over use_liger_kernel 0.25 to 0.27, use_liger_kernel
from 0.28, as rules/rl_losses.py reads it), GRPOConfig's vLLM importance-sampling clip checks (1.6.0)
and ModelConfig's two bit widths.

Read and left out: GRPOConfig auto_find_batch_size (1.9.0; rules/rl_trainers.py) and sequence
parallelism (parallelism_config: an object); DPO / GRPO prompt-learning PEFT with Liger (ModelConfig
builds only LoRA); KTO with Liger and precompute_ref_log_probs.
"""

from __future__ import annotations

from .facts import is_number, left_out
from .rl_losses import _liger_loss_on
from .validation_table import Row


def exact(config, trainer: str) -> bool:
    """The file is read by `trainer` itself, not by a subclass config's trainer."""
    return (config.value("file.kind") == "trl" and config.value("training.trainer") == trainer
            and config.value("training.trainer_candidates") in (None, [trainer]))


def sft_base(config) -> bool:
    """SFTTrainer.__init__ runs for the file: SFT's config, or GKD's (GKDConfig extends SFTConfig and
    GKDTrainer calls SFTTrainer.__init__ with it; with padding_free its own collator is refused first,
    "Passing a custom data collator is not supported when using padding-free")."""
    return config.value("file.kind") == "trl" and config.value("training.trainer") == "sft"


def losses(config) -> list:
    found = config.value("training.loss_type")
    return found if isinstance(found, list) else [found]


def _grpo(config) -> bool:
    """GRPOTrainer.__init__ runs for the file (GRPOConfig's subclasses' trainers call it too)."""
    return config.value("file.kind") == "trl" and config.value("training.trainer") == "grpo"


def _grpo_liger(config) -> bool:
    """GRPO's fused Liger loss is on: by the switch of the pinned release; unpinned, only a written
    use_liger_loss (the switch of every release that reads it, 0.17.0 to 0.27.x)."""
    found = config.version("trl")
    if found is None:
        return config.value("training.liger_loss") is True
    return _liger_loss_on(config, found[0])


# GRPOConfig vllm_importance_sampling_clip_max default 3.0 (0bef67208, #4732, v1.6.0 to v1.9.0)
_IS_CLIP_MAX = 3.0
_UNKNOWN = object()  # a bound a training script computes (arguments.unseen_keys): neither a number nor null


def _is_bounds(config) -> tuple:
    """The (clip_min, clip_max) GRPOConfig.__post_init__ compares (1.6.0 on): a written
    vllm_importance_sampling_cap (deprecated) replaces clip_max first; an unwritten clip_max is 3.0."""
    cap = config.value("training.vllm_is_cap")
    if cap is not None:
        high = cap
    elif config.get("training.vllm_is_clip_max") is not None:
        high = config.value("training.vllm_is_clip_max")
    else:  # unwritten: the default; computed by a script: unknown
        high = _IS_CLIP_MAX if left_out(config, "training.vllm_is_clip_max") and left_out(
            config, "training.vllm_is_cap") else _UNKNOWN
    written = config.get("training.vllm_is_clip_min") is not None or left_out(config, "training.vllm_is_clip_min")
    return (config.value("training.vllm_is_clip_min") if written else _UNKNOWN), high


def _is_inverted(config) -> bool:
    low, high = _is_bounds(config)
    return _grpo(config) and is_number(low) and is_number(high) and low >= high


def _is_unbounded(config) -> bool:
    """A `*_truncate` mode with the correction on (its default) and neither bound: clip_max written
    null (no cap), clip_min unwritten or null."""
    low, high = _is_bounds(config)
    correction = left_out(config, "training.vllm_is_correction") or config.value("training.vllm_is_correction")
    return (_grpo(config) and correction is True and low is None and high is None
            and config.value("training.vllm_is_mode") in ("token_truncate", "sequence_truncate"))


def _head_lora(config) -> bool:
    targets = config.value("adapter.target_modules")
    return config.value("adapter.kind") == "lora" and isinstance(targets, list) and "lm_head" in targets


def _dpo_liger(config) -> bool:
    return exact(config, "dpo") and config.value("memory.fused_cross_entropy") is True


def _packing_unbounded(config, spelling: str = "max_length") -> bool:
    """packing with `max_length: null` written (the key SFTConfig has from 0.16.0; `max_seq_length`
    before), the datasets prepared (no skip_prepare_dataset; a vision dataset is never prepared, 1.x)."""
    return (sft_base(config) and config.value("sequence.packing") is True
            and config.get("sequence.max_length") is not None and config.value("sequence.max_length") is None
            and config.written_as("sequence.max_length") == spelling
            and config.value("data.skip_prepare") is not True and config.value("model.multimodal") is not True)


def _weights_mismatch(config) -> bool:
    weights = config.value("training.loss_weights")
    return exact(config, "dpo") and isinstance(weights, list) and len(weights) != len(losses(config))


def _kto_kl(config) -> bool:
    """KTOTrainer estimates the KL term: every loss_type but apo_zero_unpaired (default "kto")."""
    return config.value("file.kind") == "trl" and config.value("training.trainer") == "kto" \
        and config.value("training.loss_type") != "apo_zero_unpaired"


def _flag_widths(config) -> bool:
    """Both widths on in a TRL file that TRL's ModelConfig reads (not a project's own class)."""
    widths = config.value("quantization.flag_widths")
    own = config.value("arguments.project_keys") or []
    return (config.value("file.kind") == "trl" and isinstance(widths, list) and len(widths) > 1
            and not {"load_in_4bit", "load_in_8bit"} & set(own))


_SFT = "trl/trainer/sft_trainer.py SFTTrainer._prepare_dataset"
_DPO = "trl/trainer/dpo_trainer.py DPOTrainer.__init__"
_KTO = "trl/trainer/kto_trainer.py KTOTrainer.__init__ (trl/experimental/kto 0.26 to 1.7)"
_GRPO = "trl/trainer/grpo_trainer.py GRPOTrainer.__init__"
_GRPO_CONFIG = "trl/trainer/grpo_config.py GRPOConfig.__post_init__"
_LIGER_PEFT = "Liger DPO loss is not implemented for PEFT models."
_LIGER_HEAD = ("`use_liger_kernel=True` is incompatible with applying a PEFT adapter to `lm_head`. The Liger fused DPO "
               "loss reads `lm_head.weight` directly, so the adapter on the head is ignored and never trained. Either "
               "remove `'lm_head'` from your `target_modules`, or set `use_liger_kernel=False`.")

MORE_ROWS = (
    # 5b9236d1e (#2405, v0.15.0) raised for max_seq_length None with packing; be1e34003 (#2895, v0.16.0)
    # renamed it max_length (0.16 to 0.19 keep max_seq_length as an alias that overrides it when not
    # None). Before 0.15 SFTTrainer filled in min(model_max_length, 1024).
    Row(_packing_unbounded, "sequence.max_length", "packing with max_length null in an SFT config",
        "When packing is enabled, `max_length` can't be `None`.", _SFT, "be1e34003 #2895, v0.16.0",
        since="0.16.0", package="trl",
        unpinned="every TRL whose SFTConfig has max_length (0.16.0 on) refuses it when it packs the dataset"),
    Row(lambda config: _packing_unbounded(config, "max_seq_length"), "sequence.max_length",
        "packing with max_seq_length null in an SFT config", "When packing is enabled, `max_seq_length` can't be "
        "`None`.", _SFT, "5b9236d1e #2405, v0.15.0", since="0.15.0", until="0.16.0", package="trl"),
    # d87023021 (MPO, #2544, v0.20.0) added loss_weights with the check in DPOConfig.__post_init__
    # ("Length of loss_weights list (...) must match number of loss types (...)"); e3b7897c8 (#3906,
    # v0.29.0) reworded it.
    Row(_weights_mismatch, "training.loss_weights", "loss_weights and loss_type of different lengths in a DPO "
        "config (an unwritten loss_type is one loss, sigmoid)",
        "`loss_weights` must have the same length as `loss_type` when combining multiple losses.",
        "trl/trainer/dpo_config.py DPOConfig.__post_init__", "d87023021 #2544, v0.20.0; reworded e3b7897c8 #3906, "
        "v0.29.0", since="0.20.0", package="trl",
        unpinned="every TRL whose DPOConfig has loss_weights (0.20.0 on) refuses it"),
    Row(lambda config: (exact(config, "dpo") and config.value("training.preference_weighting") is True
                        and any(loss in ("aot", "aot_unpaired") for loss in losses(config))),
        "training.preference_weighting", "use_weighting with loss_type aot / aot_unpaired in a DPO config",
        "WPO-style weighting is not implemented for 'aot' or 'aot_unpaired' because those losses sort samples, "
        "which would misalign per-pair weights.", _DPO, "e3b7897c8 #3906, v0.29.0", since="0.29.0", package="trl"),
    # e3b7897c8 (#3906, v0.29.0) refused every PEFT model with the Liger DPO loss; 9c0776ef6 (#6159,
    # v1.8.0) lets PEFT through and refuses only an adapter on the output embeddings.
    Row(lambda config: _dpo_liger(config) and _head_lora(config), "adapter.target_modules",
        "use_liger_kernel with a LoRA adapter on lm_head in a DPO config", _LIGER_HEAD, _DPO,
        "9c0776ef6 #6159, v1.8.0", since="1.8.0", package="trl",
        before=("0.29.0", f"refuses any PEFT model with the Liger loss: \"{_LIGER_PEFT}\"")),
    Row(lambda config: _dpo_liger(config) and config.value("adapter.kind") == "lora" and not _head_lora(config),
        "memory.fused_cross_entropy", "use_liger_kernel with use_peft in a DPO config", _LIGER_PEFT, _DPO,
        "e3b7897c8 #3906, v0.29.0 (1.8.0 allows PEFT, 9c0776ef6 #6159)", since="0.29.0", until="1.8.0",
        package="trl"),
    # 1877853ae (#5864, v1.6.0) gave KTOConfig train_sampling_strategy (default "sequential") and refused
    # another; 51c6d3ca3 (#5872, v1.6.0) exempted apo_zero_unpaired. Before, KTOTrainer's own
    # _get_train_sampler was always sequential.
    Row(lambda config: (_kto_kl(config) and isinstance(config.value("data.sampling_strategy"), str)
                        and config.value("data.sampling_strategy") != "sequential"),
        "data.sampling_strategy", "train_sampling_strategy other than sequential in a KTO config whose loss "
        "estimates the KL term", "Loss type `'...'` estimates the KL divergence term and requires "
        "`train_sampling_strategy='sequential'` because the KL completion for each example is precomputed against "
        "its neighbors in a fixed-order batch; any other strategy breaks that pairing.", _KTO,
        "1877853ae #5864, 51c6d3ca3 #5872, v1.6.0", since="1.6.0", package="trl"),
    # GRPO with the fused Liger loss: 05bc43e96 (#3434, v0.18.0) refused delta in GRPOConfig.__post_init__
    # until 5c521b789 (#5690, v1.4.0) taught the Liger loss two-sided clipping.
    Row(lambda config: _grpo(config) and is_number(config.value("training.two_sided_delta")) and _grpo_liger(config),
        "training.two_sided_delta", "delta (two-sided clipping) with the Liger GRPO loss",
        "Liger loss does not support two-sided GRPO loss yet. (0.25 to 1.3: \"Liger kernel ...\")",
        "trl/trainer/grpo_config.py GRPOConfig.__post_init__", "05bc43e96 #3434, v0.18.0 (until 5c521b789 #5690, "
        "v1.4.0)", since="0.18.0", until="1.4.0", package="trl"),
    Row(lambda config: (_grpo(config) and is_number(config.value("training.top_entropy_quantile"))
                        and config.value("training.top_entropy_quantile") < 1 and _grpo_liger(config)),
        "training.top_entropy_quantile", "top_entropy_quantile below 1 with the Liger GRPO loss",
        "Liger Kernels don't currently support masking token positions based on entropy.", _GRPO,
        "7e8ef867a #3563, v0.20.0", since="0.20.0", package="trl",
        unpinned="every TRL that reads both use_liger_loss and top_entropy_quantile (0.20.0 to 0.27.x) refuses it"),
    Row(lambda config: (_grpo(config) and config.value("training.off_policy_mask_threshold") is not None
                        and _grpo_liger(config)),
        "training.off_policy_mask_threshold", "off_policy_mask_threshold with the Liger GRPO loss",
        "Liger kernel does not support off-policy sequence masking yet.", _GRPO, "05a40176c #4689, v0.27.0",
        since="0.27.0", package="trl",
        unpinned="TRL 0.27.x, the one release that reads both use_liger_loss and off_policy_mask_threshold, refuses "
                 "it"),
    Row(lambda config: (_grpo(config) and (config.value("training.adaptive_entropy") is True or (
        is_number(config.value("training.entropy_coef")) and config.value("training.entropy_coef") != 0))
        and _grpo_liger(config)), "training.entropy_coef", "an entropy bonus (entropy_coef, use_adaptive_entropy) with "
        "the Liger GRPO loss", "Entropy bonus is not supported with Liger kernel.", _GRPO, "34c7f0d85 #6140, v1.8.0",
        since="1.8.0", package="trl"),
    # 0bef67208 (#4732, v1.6.0) split vllm_importance_sampling_cap into clip_min / clip_max and added
    # both checks to GRPOConfig.__post_init__ (unchanged to v1.9.0); before, clip_min / clip_max
    # were no GRPOConfig fields.
    Row(_is_inverted, "training.vllm_is_clip_min", "vllm_importance_sampling_clip_min not below "
        f"vllm_importance_sampling_clip_max (a written cap replaces it; unwritten, {_IS_CLIP_MAX}) in a GRPO config",
        "vllm_importance_sampling_clip_min (...) must be less than vllm_importance_sampling_clip_max (...).",
        _GRPO_CONFIG, "0bef67208 #4732, v1.6.0", since="1.6.0", package="trl",
        unpinned="every TRL whose GRPOConfig has vllm_importance_sampling_clip_min (1.6.0 on) refuses it"),
    Row(_is_unbounded, "training.vllm_is_clip_max", "a *_truncate vllm_importance_sampling_mode with neither "
        "vllm_importance_sampling_clip_min nor vllm_importance_sampling_clip_max in a GRPO config",
        "At least one of `vllm_importance_sampling_clip_min` or `vllm_importance_sampling_clip_max` must be set when "
        "`vllm_importance_sampling_mode` is a `*_truncate` mode.", _GRPO_CONFIG, "0bef67208 #4732, v1.6.0",
        since="1.6.0", package="trl",
        unpinned="every TRL whose GRPOConfig has vllm_importance_sampling_clip_max (1.6.0 on) refuses it"),
    # ModelConfig has refused both widths since it came (9a71e67be, #1176, v0.7.11).
    Row(_flag_widths, "quantization.flag_widths", "load_in_8bit and load_in_4bit both true",
        "You can't use 8 bit and 4 bit precision at the same time",
        "trl/trainer/model_config.py ModelConfig.__post_init__", "9a71e67be #1176, v0.7.11", package="trl"),
)
