"""The keys of TRL's trainer configs (trl/trainer/*_config.py, huggingface/trl at v1.9.0, mirror
f2cd57710) and ModelConfig's quantization flags that the rules read, as written: the trainers'
own checks (rules/trl_configs.py TRN076) and the release-bound facts of the RL trainers."""

from __future__ import annotations

from typing import Any

from ..document import Scalar
from ..ir import Field, Origin
from . import Binding


def _loss_types(value):
    """loss_type as written: a name, or (DPOConfig, TRL >= 0.20) a list of names."""
    if isinstance(value, list):
        return value if all(isinstance(name, str) for name in value) else None
    return value if isinstance(value, str) else None


def _number_list(value):
    if not isinstance(value, list):
        return None
    return value if all(isinstance(item, (int, float)) and not isinstance(item, bool) for item in value) else None


# Written values only (TRN076): DPOConfig loss_weights (0.20.0, d87023021, #2544) and use_weighting
# (default False); KTOConfig train_sampling_strategy (1.6.0, 1877853ae, #5864; also a TrainingArguments
# field of newer transformers); GRPOConfig off_policy_mask_threshold (default None, 0.27.0,
# 05a40176c, #4689), top_entropy_quantile (default 1.0, 0.20.0, 7e8ef867a, #3563), entropy_coef
# (default 0.0) and use_adaptive_entropy (default False) (1.8.0, 34c7f0d85, #6140).
TRL_CHECK_BINDINGS = (
    Binding("training.loss_weights", "loss_weights", convert=_number_list),
    Binding("training.preference_weighting", "use_weighting"),
    Binding("data.sampling_strategy", "train_sampling_strategy", convert=lambda value: str(value).lower()),
    Binding("training.off_policy_mask_threshold", "off_policy_mask_threshold"),
    Binding("training.top_entropy_quantile", "top_entropy_quantile"),
    Binding("training.entropy_coef", "entropy_coef"),
    Binding("training.adaptive_entropy", "use_adaptive_entropy"),
    # SFTConfig dataset_kwargs {"skip_prepare_dataset": true}: SFTTrainer neither tokenises, truncates
    # nor packs the datasets (sft_trainer.py, TRL >= 0.16)
    Binding("data.skip_prepare", "dataset_kwargs.skip_prepare_dataset", convert=lambda value: value is True),
    # GRPOConfig delta (two-sided clipping, 0.18.0, 05bc43e96, #3434)
    Binding("training.two_sided_delta", "delta"),
    # GRPOConfig's vLLM importance-sampling correction (0bef67208, #4732, v1.6.0: clip_min and
    # clip_max, default None and 3.0; cap, before it the bound, a deprecated alias of clip_max;
    # correction default True, mode default "sequence_mask"): written values only, null too.
    Binding("training.vllm_is_correction", "vllm_importance_sampling_correction"),
    Binding("training.vllm_is_mode", "vllm_importance_sampling_mode"),  # compared case-sensitively
    Binding("training.vllm_is_clip_min", "vllm_importance_sampling_clip_min"),
    Binding("training.vllm_is_clip_max", "vllm_importance_sampling_clip_max"),
    Binding("training.vllm_is_cap", "vllm_importance_sampling_cap"),
)

# TRL trainer configs, written values only: loss_type and precompute_ref_log_probs (DPO, KTO,
# BCO configs), and GRPOConfig's num_generations, generation_batch_size and
# steps_per_generation (TRL >= 0.18), ds3_gather_for_generation (TRL >= 0.15, PR #2667; also
# RLOOConfig) and use_vllm.
TRL_TRAINER_BINDINGS = (
    # a list too: DPOConfig loss_type is `list[str]` from 0.20.0 (d87023021, #2544), a str before
    Binding("training.loss_type", "loss_type", convert=_loss_types),
    Binding("training.precompute_ref", "precompute_ref_log_probs"),
    Binding("training.rpo_alpha", "rpo_alpha"),  # DPOConfig (TRL >= 0.9.3, f18253bf2, #1686)
    Binding("generation.per_prompt", "num_generations"),
    Binding("generation.per_prompt_eval", "num_generations_eval"),  # GRPOConfig, TRL >= 0.26
    Binding("generation.batch_size", "generation_batch_size"),
    Binding("generation.steps", "steps_per_generation"),
    Binding("generation.ds3_gather", "ds3_gather_for_generation"),
    Binding("generation.use_vllm", "use_vllm"),
    # GRPOConfig vllm_mode (TRL >= 0.18, #3394), vllm_server_host (>= 0.16, #3094) and
    # vllm_server_base_url (>= 0.18): written values only.
    Binding("generation.vllm_mode", "vllm_mode", convert=lambda value: str(value).lower()),
    Binding("generation.vllm_server", "vllm_server_base_url", "vllm_server_host"),
    # DPOConfig (TRL >= 0.9.3), GRPOConfig (0.15.0), RLOOConfig (0.22.0), KTOConfig (1.7.0)
    # sync_ref_model (TR-DPO reference updates, default False) and the configs' beta; written only.
    Binding("training.sync_ref_model", "sync_ref_model"),
    # GKDConfig teacher_model_name_or_path (trl/trainer/gkd_config.py, TRL >= 0.11; since 0.26
    # trl/experimental/gkd/gkd_config.py): the teacher the trainer loads by name. Written only.
    Binding("model.teacher", "teacher_model_name_or_path"),
    Binding("training.gkd_lmbda", "lmbda"),  # GKDConfig lmbda (TRL >= 0.11), written only
    Binding("training.rl_beta", "beta"),
    # GRPOConfig.use_liger_loss (TRL 0.17.0, PR #3184; a deprecated alias of use_liger_kernel from
    # 0.25.0, removed in 0.28.0): the fused liger GRPO loss.
    Binding("training.liger_loss", "use_liger_loss"),
    # GRPOConfig (TRL >= 0.14) max_prompt_length / max_completion_length, DPOConfig and KTOConfig
    # max_prompt_length: written values only (their defaults depend on the TRL release; TRN056).
    Binding("generation.max_prompt_length", "max_prompt_length"),
    Binding("generation.max_completion_length", "max_completion_length"),
    Binding("generation.mask_truncated", "mask_truncated_completions"),  # GRPOConfig, TRL >= 0.17 (1d7b8c4f7)
    # SFTConfig (trl/trainer/sft_config.py): assistant_only_loss (TRL >= 0.19, PR #3586) and
    # chat_template_path (sft_trainer.py: a .jinja file read as the template, else
    # clone_chat_template from that tokenizer). Written values only. Recipe scripts' `chat_template`
    # (the template text) and `tokenizer_name_or_path` replace the model's template too
    # (alignment-handbook get_tokenizer: tokenizer.chat_template = model_args.chat_template).
    Binding("data.assistant_only_loss", "assistant_only_loss"),
    Binding("data.completion_only_loss", "completion_only_loss"),  # SFTConfig, TRL >= 0.17 (9ee6c3aa5)
    Binding("data.chat_template_file", "chat_template_path", "chat_template", "tokenizer_name_or_path"),
    # DPOConfig / KTOConfig / ORPOConfig / CPOConfig / BCOConfig truncation_mode (default "keep_end"):
    # written value only.
    Binding("sequence.truncation_mode", "truncation_mode", convert=lambda mode: str(mode).lower()),
    # OnlineDPOConfig max_new_tokens (TRL >= 0.10; XPO / Nash-MD configs extend it), PPOConfig stop_token /
    # stop_token_id (TRL >= 0.9.3, PPOv2Config until 0.12), ModelConfig lora_task_type (trl/trainer/model_config.py,
    # default "CAUSAL_LM", #1393): written values only.
    Binding("generation.max_new_tokens", "max_new_tokens"),
    Binding("generation.stop_token", "stop_token"),
    Binding("generation.stop_token_id", "stop_token_id"),
    Binding("adapter.task_type", "lora_task_type", convert=lambda task: str(task).upper()),
    # SFTConfig use_liger (TRL 0.15.x; from 0.16 a deprecated alias of use_liger_kernel, gone in 0.18.0):
    # written value only.
    Binding("training.sft_use_liger", "use_liger"),
    # DPOConfig label_smoothing (default 0.0); GRPOConfig log_completions (default False) and
    # log_completions_hub_repo (TRL >= 0.28): written values only (TRN076).
    Binding("training.preference_label_smoothing", "label_smoothing"),
    Binding("logging.completions", "log_completions"),
    Binding("logging.completions_hub_repo", "log_completions_hub_repo"),
    *TRL_CHECK_BINDINGS,
)


def true_flag(node) -> bool:
    """A flag written as the YAML / JSON boolean true."""
    return isinstance(node, Scalar) and node.value is True


def trl_bits(read: Any) -> int | None:
    """The bit width ModelConfig's flags load in (4 wins, as the adapter reads them); where both
    load_in_4bit and load_in_8bit are true, records both (ModelConfig.__post_init__ refuses them,
    trl/trainer/model_config.py, 9a71e67be, #1176, v0.7.11)."""
    flags = [bits for bits, key in ((4, "load_in_4bit"), (8, "load_in_8bit")) if true_flag(read.node(key))]
    if len(flags) > 1:
        read.config.set("quantization.flag_widths", Field(flags, Origin(read.key_span("load_in_8bit"),
                                                                        written_as="load_in_8bit")))
    return flags[0] if flags else None
