"""The bindings of the Axolotl settings its own config validation checks together at launch
(linter/adapters/axolotl_checks.py records them): each key's spelling and how its written value
is read, flags as the validators test them (truthiness or `is not None`), numbers as numbers.
A table of its own, beside the recording code, so that both stay under the module size limit."""

from __future__ import annotations

from typing import Any

from . import Binding, strategy

def _number(value: Any) -> Any:
    if isinstance(value, bool):
        raise TypeError(value)
    return float(value) if isinstance(value, str) else value


def _as_written(value: Any) -> Any:
    return value


def _scalar(value: Any) -> Any:
    return value if isinstance(value, (bool, str, int, float)) else None


def _real(value: Any) -> Any:
    """A number as written (a string or a bool is no number here)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(value)
    return value


def _count(value: Any) -> Any:
    """How many entries a list holds (None for anything else)."""
    return len(value) if isinstance(value, list) else None


def _saved_ops(value: Any) -> Any:
    """selective_checkpointing's `save` list as SelectiveCheckpointingConfig builds it (`true`: the
    default ["attention"]); None where it is no list of strings."""
    saves = ["attention"] if value is True else value.get("save", ["attention"]) if isinstance(value, dict) else None
    return list(saves) if isinstance(saves, list) and all(isinstance(item, str) for item in saves) else None


def _given(value: Any) -> bool:
    """The key is written with a value (the validators test `is not None`)."""
    return value is not None


def _flag_or_text(value: Any) -> Any:
    return value if isinstance(value, (bool, str)) else bool(value)


def _patterns(value):
    """unfrozen_parameters as train.py hands it to freeze_layers_except (a string is one pattern);
    None where an item is not a string."""
    items = [value] if isinstance(value, str) else value
    return list(items) if isinstance(items, list) and items and all(isinstance(i, str) for i in items) else None


CHECKED_BINDINGS = (
    Binding("eval.val_set_size", "val_set_size", convert=_number),
    Binding("eval.test_datasets", "test_datasets", convert=bool),
    Binding("eval.table_size", "eval_table_size", convert=_number),
    Binding("eval.sample_packing", "eval_sample_packing", convert=_flag_or_text),
    Binding("checkpoint.eval_steps", "eval_steps", convert=_number),
    Binding("eval.per_epoch", "evals_per_epoch", convert=_number),
    Binding("eval.benchmark", "do_bench_eval", convert=bool),
    # YAML 1.1's unquoted `no` reads False; `strategy` records it as "no" (the rules treat "no"
    # as undecided: Axolotl's before-validators see False, or the string).
    Binding("checkpoint.eval_strategy", "eval_strategy", convert=strategy),
    Binding("checkpoint.save_steps", "save_steps", convert=_number),
    Binding("checkpoint.saves_per_epoch", "saves_per_epoch", convert=_number),
    Binding("checkpoint.best_metric", "metric_for_best_model", convert=bool),
    Binding("training.early_stopping_patience", "early_stopping_patience", convert=_number),
    Binding("scheduler.warmup_steps", "warmup_steps"),
    Binding("scheduler.warmup_ratio", "warmup_ratio", convert=_number),
    Binding("scheduler.type", "lr_scheduler", convert=_scalar),  # core/builders/base.py lr_scheduler_type
    Binding("batch.per_device_total", "batch_size"),
    # check_dataset_or_pretraining_dataset tests `is None` (an empty list passes)
    Binding("data.datasets", "datasets", convert=lambda _: True),
    Binding("data.pretraining", "pretraining_dataset", convert=lambda _: True),
    Binding("data.streaming", "streaming", convert=bool),
    Binding("data.exact_dedup", "dataset_exact_deduplication", convert=bool),
    Binding("data.push_to_hub", "push_dataset_to_hub", convert=bool),
    Binding("data.remove_unused_columns", "remove_unused_columns", convert=lambda value: value is not False),
    Binding("hub.use_auth_token", "hf_use_auth_token", convert=lambda value: value is True),
    Binding("training.unfrozen_parameters", "unfrozen_parameters", convert=bool),
    Binding("training.unfrozen_patterns", "unfrozen_parameters", convert=_patterns),
    Binding("quantization.qat", "qat", convert=bool),
    Binding("training.deepcompile", "deepcompile", convert=bool),
    Binding("training.neftune", "neftune_noise_alpha", convert=bool),
    Binding("training.neftune_legacy", "noisy_embedding_alpha", convert=bool),
    Binding("training.torch_compile", "torch_compile", convert=_flag_or_text),
    Binding("training.torch_compile_options", "torch_compile_options", convert=_given),
    Binding("adapter.merge", "merge_lora", convert=bool),
    Binding("adapter.fuse_mlp", "flash_attn_fuse_mlp", convert=bool),
    Binding("adapter.layers_to_transform", "peft_layers_to_transform", convert=_as_written),
    Binding("adapter.layers_pattern", "peft_layers_pattern", convert=_as_written),
    Binding("adapter.target_parameters", "lora_target_parameters", convert=bool),
    Binding("adapter.dropout", "lora_dropout", convert=_number),
    Binding("optimizer.lr_groups", "lr_groups", convert=bool),
    Binding("optimizer.loraplus", "loraplus_lr_ratio", convert=bool),
    Binding("quantization.gptq", "gptq", convert=bool),
    Binding("model.multimodal", "is_multimodal"),  # utils/models.py check_model_config reads its text_config
    Binding("quantization.model_config", "model_quantization_config", convert=bool),
    Binding("model.trust_remote_code", "trust_remote_code", convert=bool),
    Binding("model.revision", "revision_of_model", convert=bool),
    Binding("memory.checkpointing_reentrant", "gradient_checkpointing_kwargs.use_reentrant"),
    Binding("memory.selective_checkpointing", "selective_checkpointing", convert=bool),
    # check_mem_mismatch tests `is not None`, not truthiness
    Binding("memory.max_memory", "max_memory", convert=_given),
    Binding("memory.gpu_memory_limit", "gpu_memory_limit", convert=_given),
    Binding("parallel.fsdp_options", "fsdp", convert=_as_written),  # tested for truthiness
    Binding("parallel.deepspeed", "deepspeed", convert=bool),
    Binding("attention.xformers_flag", "xformers_attention", convert=bool),
    # utils/schemas/training.py curriculum_sampling -> AxolotlTrainingMixins.curriculum_sampling
    Binding("training.curriculum_sampling", "curriculum_sampling", convert=bool),
    Binding("training.tokens_per_second", "include_tokens_per_second", convert=bool),
    Binding("training.ebft", "ebft", convert=bool),  # the `ebft:` section (utils/schemas/config.py)
    # The legacy boolean attention flags as written (the first present): fields typed bool | None
    # (pydantic lax) from v0.5.0 to v0.16.x, popped whatever their value from v0.17.0
    Binding("attention.legacy_flag_written", "xformers_attention", "flash_attention", "sdp_attention",
            "eager_attention", convert=_scalar),
    # Second audit (rules/refusal_rows.py): the written values the before-validators test
    Binding("tokenizer.chat_template_written", "chat_template", convert=_scalar),
    Binding("tokenizer.chat_template_jinja", "chat_template_jinja", convert=bool),
    Binding("tokenizer.mistral_common", "tokenizer_use_mistral_common", convert=bool),
    Binding("tokenizer.added_tokens_overrides", "added_tokens_overrides", convert=bool),
    Binding("tokenizer.special_tokens", "special_tokens", convert=bool),
    Binding("model.processor_kwargs", "processor_kwargs", convert=bool),
    Binding("attention.implementation_written", "attn_implementation", convert=_scalar),
    Binding("attention.flash_flag", "flash_attention", convert=bool),
    Binding("attention.gemma4_hybrid", "gemma4_hybrid_attn_impl", convert=bool),  # defaults flash_attention_2 in
    # batch_flattening: "auto" | bool (a truthy value other than "auto" counts as on)
    Binding("training.batch_flattening", "batch_flattening", convert=lambda value: value if value == "auto" else bool(value)),
    Binding("quantization.moe_experts", "quantize_moe_experts", convert=bool),
    Binding("training.fp32_norms", "fp32_norms", convert=bool),
    Binding("parallel.fsdp_config_written", "fsdp_config", convert=_given),
    Binding("parallel.fsdp_version_written", "fsdp_version", convert=_scalar),
    Binding("training.relora", "relora", convert=bool),
    Binding("adapter.target_modules_written", "lora_target_modules", convert=_as_written),
    Binding("quantization.model_config_name", "model_quantization_config", convert=_scalar),
    Binding("parallel.cpu_ram_efficient_loading", "fsdp_config.cpu_ram_efficient_loading", convert=_scalar),
    Binding("parallel.cpu_offload_pin_memory", "fsdp_config.cpu_offload_pin_memory", convert=_scalar),
    Binding("precision.fp8_all_gather", "fp8_enable_fsdp_float8_all_gather", convert=bool),
    Binding("eval.causal_lm", "do_causal_lm_eval", convert=bool),
    Binding("scheduler.jagged_restart_steps", "jagged_restart_steps", convert=bool),
    # Third audit: check_grpo_batch_size_divisibility reads trl.num_generations as written (a number)
    Binding("training.grpo_num_generations", "trl.num_generations", convert=_real),
    Binding("parallel.fsdp_config_given", "fsdp_config", convert=bool),  # `data.get("fsdp_config")` truthiness
    # schemas/fsdp.py FSDPConfig, after check_fsdp_config_kwargs_prefix strips an `fsdp_` prefix
    Binding("parallel.auto_wrap_policy_written", "fsdp_config.auto_wrap_policy", "fsdp_config.fsdp_auto_wrap_policy",
            convert=_scalar),
    Binding("parallel.min_num_params_given", "fsdp_config.min_num_params", "fsdp_config.fsdp_min_num_params",
            convert=_given),
    Binding("parallel.tensor_parallel_size", "tensor_parallel_size", convert=_real),
    Binding("training.neftune_alpha", "neftune_noise_alpha", convert=_real),
    Binding("checkpoint.save_safetensors_written", "save_safetensors", convert=_scalar),
    Binding("data.pretrain_multipack_buffer", "pretrain_multipack_buffer_size", convert=bool),
    Binding("data.streaming_multipack_buffer", "streaming_multipack_buffer_size", convert=bool),
    # schemas/deprecated.py: max_packed_sequence_len tested for truthiness, the DPO keys for `is not None`
    Binding("data.max_packed_sequence_len", "max_packed_sequence_len", convert=bool),
    Binding("training.dpo_use_logits_to_keep", "dpo_use_logits_to_keep", convert=_given),
    Binding("training.dpo_generate_during_eval", "dpo_generate_during_eval", convert=_given),
    Binding("training.dpo_norm_loss", "dpo_norm_loss", convert=_given),
    Binding("training.rpo_alpha_written", "rpo_alpha", convert=_given),
    # Fourth audit (rules/refusal_rows_fourth.py): the written values these validators test
    Binding("parallel.fsdp_use_orig_params", "fsdp_config.use_orig_params", "fsdp_config.fsdp_use_orig_params",
            convert=_scalar),
    Binding("attention.scaling_softmax", "scaling_softmax", convert=bool),
    Binding("attention.flex_flag", "flex_attention", convert=bool),
    Binding("training.grpo_liger_loss", "trl.use_liger_loss", convert=bool),
    Binding("parallel.context_parallel_size", "context_parallel_size", convert=_real),
    Binding("model.glm_dsa_kernels", "use_glm_dsa_kernels", convert=bool),
    Binding("data.dataset_count", "datasets", convert=_count),
    Binding("training.beta", "beta", convert=_real),
    Binding("training.trl_beta", "trl.beta", convert=_real),
    Binding("adapter.peft_block", "peft", convert=bool),
    Binding("model.onebitllms", "use_onebitllms", convert=bool),
    Binding("training.multi_objective_aggregation", "trl.multi_objective_aggregation", convert=_scalar),
    Binding("training.dpo_loss_type_given", "dpo_loss_type", convert=_given),
    Binding("training.dpo_loss_weights_given", "dpo_loss_weights", convert=_given),
    Binding("training.dpo_loss_type_count", "dpo_loss_type", convert=_count),
    Binding("training.dpo_loss_weights_count", "dpo_loss_weights", convert=_count),
    Binding("training.ebft_mode", "ebft.mode", convert=_scalar),
    Binding("memory.activation_offloading_written", "activation_offloading", convert=_scalar),
    Binding("eval.causal_lm_metrics", "eval_causal_lm_metrics", convert=_as_written),
    Binding("training.torch_compile_option_names", "torch_compile_options", convert=lambda value: list(value) if isinstance(value, dict) else None),
    Binding("attention.large_head_written", "large_head_attention", convert=lambda value: str(value).lower()),
    Binding("attention.bettertransformer", "flash_optimum", convert=_as_written),
    Binding("memory.selective_checkpointing_saves", "selective_checkpointing", convert=_saved_ops),
)
