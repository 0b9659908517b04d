"""Launch-time refusals of Axolotl's config validation, second audit (read by rules/refusal_table.py,
which appends them to its REFUSALS; the conditions as there: `Set` is Python truthiness).

Read in axolotl-ai-cloud/axolotl at 067b021c8 (v0.18.0+): utils/schemas/validation.py and
utils/schemas/config.py (AxolotlInputConfig, and AxolotlConfigWCapabilities, which `axolotl
train` / `preprocess` validate with, cli/config.py load_cfg -> validate_config(capabilities=...)).
Each row's first release from `git log -S '<message>'` and `git tag --contains`; each check is in
every release since (`git grep` at every tag), unless `until` says otherwise.

Where a check runs in a "before" validator it sees the YAML as written (`data.get(key)`); the
rows bind those written values (linter/adapters/axolotl_checks.py). Rows leave out what the
validator resolves from other keys first (the fsdp_version copied out of fsdp_config before
check_fsdp2_base_model_quant_rl, whose order against check_fsdp_version_in_fsdp_config pydantic
decides; Magistral names that switch tokenizer_use_mistral_common on): those stay silent.
"""

from __future__ import annotations

from .refusal_conditions import AnyOf, Compare, Eq, In, InvalidRegex, NotIn, NotMultiple, Refusal, Set, Unset

_V = "utils/schemas/validation.py"
_C = "utils/schemas/config.py"
_MISTRAL = Set("tokenizer.mistral_common")  # tokenizer_use_mistral_common written truthy
_MISTRAL_KEY = "tokenizer_use_mistral_common (eac4a61f5, #2780, v0.10.0)"
_MOE = Set("quantization.moe_experts")
_MOE_KEY = "quantize_moe_experts (945c8aeb1, #3439, v0.15.0)"
_FLATTEN = Eq("training.batch_flattening", True)  # truthy and not "auto" (auto is exempt in every release)
_FLATTEN_KEY = "batch_flattening (bd2a594b8, #2167, v0.7.0)"
_FP32_NORMS_KEY = "fp32_norms (b05ab9a07, #3670, v0.17.0)"
_D = "utils/schemas/deprecated.py DeprecatedParameters"
_GRPO = Eq("training.trainer", "grpo")
# utils/schemas/enums.py CustomSupportedOptimizers (1bcfc08c9, #3457, v0.16.0, with the check)
_FLASH_OPTIMIZERS = In("optimizer.name", "flash_adamw", "flash_adam", "flash_sgd", "flash_sgdw", "flash_lion")

LATER_ROWS = (
    # -- chat templates and tokenizers ---------------------------------------------------------------
    # 0.5.0 (bfc77b0f3, #1970) to 0.17.x: "... set to jinja"; 5e920c741 (#3802, v0.18.0) the message below.
    # 0.4.0 reads chat_template too and fails on "jinja" when the tokenizer loads (utils/chat_templates.py
    # chat_templates: "Template 'jinja' not found."); no release before 0.4.0 reads chat_template.
    Refusal((Eq("tokenizer.chat_template_written", "jinja"), Unset("tokenizer.chat_template_jinja")),
            "chat_template_jinja is required when chat_template is set to 'jinja'. Please provide the Jinja "
            "template string in chat_template_jinja field.", f"{_V} check_chat_template_config", "0.18.0",
            "5e920c741 (#3802)", unpinned="chat_template: jinja (bfc77b0f3, #1970, v0.5.0)",
            before=("0.5.0", "0.5.0 to 0.17.x refuse it at launch: \"chat_template_jinja is required when "
                             "chat_template is set to jinja\" (check_chat_template_config, bfc77b0f3, #1970)")),
    # check_mistral_common_incompatible_options (eac4a61f5, #2780, v0.10.0; processor_kwargs 1bf65c500, #3612,
    # v0.17.0, the release that added the key): raised in this order, one at a time.
    Refusal((_MISTRAL, Set("tokenizer.added_tokens_overrides")),
            "added_tokens_overrides is not supported with mistral-common tokenizer",
            f"{_V} check_mistral_common_incompatible_options", "0.10.0", "eac4a61f5 (#2780)", unpinned=_MISTRAL_KEY),
    Refusal((_MISTRAL, Set("tokenizer.special_tokens")),
            "special_tokens override is not supported with mistral-common tokenizer",
            f"{_V} check_mistral_common_incompatible_options", "0.10.0", "eac4a61f5 (#2780)", unpinned=_MISTRAL_KEY),
    Refusal((_MISTRAL, Set("tokenizer.added_tokens")),
            "tokens override is not supported with mistral-common tokenizer",
            f"{_V} check_mistral_common_incompatible_options", "0.10.0", "eac4a61f5 (#2780)", unpinned=_MISTRAL_KEY),
    Refusal((_MISTRAL, Set("tokenizer.chat_template_written")),
            "Setting chat_template is not supported with mistral-common tokenizer",
            f"{_V} check_mistral_common_incompatible_options", "0.10.0", "eac4a61f5 (#2780)", unpinned=_MISTRAL_KEY),
    Refusal((_MISTRAL, Set("model.processor_kwargs")),
            "processor_kwargs is not supported with mistral-common tokenizer",
            f"{_V} check_mistral_common_incompatible_options", "0.17.0", "1bf65c500 (#3612)",
            unpinned="processor_kwargs (1bf65c500, #3612, v0.17.0)"),
    # -- attention -------------------------------------------------------------------------------------
    # normalize_attn_implementation / validate_attn_implementation (e4032fc90, #3602, v0.17.0); before, the
    # legacy flags and attn_implementation were read side by side and a short name went to transformers.
    Refusal((Set("attention.implementation_written"), Set("attention.legacy_flags_on")),
            "attn_implementation=<value> cannot be combined with legacy attention flags (<flags>). The legacy "
            "flags are deprecated — set only `attn_implementation`.", f"{_C} normalize_attn_implementation", "0.17.0",
            "e4032fc90 (#3602)", note="the flags: xformers_attention, sage_attention, flex_attention, "
            "flash_attention, sdp_attention, eager_attention (any written true)"),
    Refusal((In("attention.implementation_written", "flash", "flex", "sdp"),),
            "attn_implementation=<alias> is not accepted. Use the canonical name <name> instead.",
            f"{_C} validate_attn_implementation", "0.17.0", "e4032fc90 (#3602)",
            note="flash -> flash_attention_2, flex -> flex_attention, sdp -> sdpa"),
    # check_batch_flattening_fa (bd2a594b8, #2167, v0.7.0; `auto` exempt from the start): a before-validator
    # testing `flash_attention` until 0.16.x, an after-validator testing attn_supports_packing (the
    # normalized attn_implementation) from e4032fc90 (#3602, v0.17.0).
    # (gemma4_hybrid_attn_impl fills in flash_attention_2 where no backend is written, normalize_attn_implementation)
    Refusal((_FLATTEN, Unset("attention.implementation"), Unset("attention.gemma4_hybrid")),
            "batch_flattening requires a varlen-capable attention backend (e.g., attn_implementation: "
            "flash_attention_2).", f"{_V} check_batch_flattening_fa", "0.17.0", "e4032fc90 (#3602)",
            unpinned=_FLATTEN_KEY,
            before=("0.7.0", "0.7.0 to 0.16.x refuse it at launch: \"batch_flattening requires flash attention\" "
                             "(check_batch_flattening_fa, bd2a594b8, #2167)")),
    # the flash_attention flag alone (attn_implementation unwritten) passes the attention test in every release
    Refusal((_FLATTEN, Set("sequence.packing"), Set("attention.flash_flag"),
             Unset("attention.implementation_written")),
            "batch_flattening not compatible with sample_packing", f"{_V} check_batch_flattening_fa", "0.7.0",
            "bd2a594b8 (#2167)", unpinned=_FLATTEN_KEY),
    # -- quantization and adapters ---------------------------------------------------------------------
    # AxolotlConfigWCapabilities.check_quantize_moe_experts (945c8aeb1, #3439, v0.15.0, with the key;
    # lora_target_linear 6c8c73e5a, #3461, also first in v0.15.0). Without an adapter but with load_in_*bit
    # peft.py validate_adapter may refuse first (QNT005), so that case is left to it.
    Refusal((_MOE, Set("adapter.target_linear")),
            "lora_target_linear is not compatible with quantize_moe_experts. Use lora_target_parameters to target "
            "expert weights instead.", f"{_C} AxolotlConfigWCapabilities.check_quantize_moe_experts", "0.15.0",
            "6c8c73e5a (#3461)", unpinned=_MOE_KEY),
    Refusal((_MOE, NotIn("adapter.kind", "lora", "qlora"), Unset("quantization.bits")),
            "quantize_moe_experts requires adapter: lora or qlora",
            f"{_C} AxolotlConfigWCapabilities.check_quantize_moe_experts", "0.15.0", "945c8aeb1 (#3439)",
            unpinned=_MOE_KEY),
    Refusal((_MOE, In("adapter.kind", "lora", "qlora"), Unset("quantization.bits")),
            "quantize_moe_experts requires load_in_4bit or load_in_8bit",
            f"{_C} AxolotlConfigWCapabilities.check_quantize_moe_experts", "0.15.0", "945c8aeb1 (#3439)",
            unpinned=_MOE_KEY),
    # -- parallelism -------------------------------------------------------------------------------------
    # check_fp32_norms (b05ab9a07, #3670, v0.17.0, with the key), an after-validator: fsdp_version as
    # check_fsdp_version_in_fsdp_config resolved it (top-level, else fsdp_config's, else 1).
    Refusal((Set("training.fp32_norms"), Unset("parallel.fsdp_config_written")),
            "fp32_norms requires FSDP to be enabled (fsdp_config block must be set).", f"{_C} check_fp32_norms",
            "0.17.0", "b05ab9a07 (#3670)", unpinned=_FP32_NORMS_KEY),
    Refusal((Set("training.fp32_norms"), Set("parallel.fsdp_config_written"), NotIn("parallel.fsdp_version", 2, "2")),
            "fp32_norms requires fsdp_version: 2. FSDP1's flat-param dtype uniformity constraint is incompatible "
            "with keeping norms in fp32 while decoder layers run in bf16.", f"{_C} check_fp32_norms", "0.17.0",
            "b05ab9a07 (#3670)", unpinned=_FP32_NORMS_KEY),
    # check_fsdp2_base_model_quant_rl (d6e4a611e, #2760, v0.12.0): `data.get("fsdp_version") == 2`, the
    # top-level key written as the number 2 (fsdp_version itself first in v0.8.1).
    Refusal((Eq("parallel.fsdp_version_written", 2), In("training.trainer", "dpo", "kto", "orpo", "ipo"),
             Set("quantization.bits")),
            "FSDP2 does not support load_in_8bit or load_in_4bit with <rl>. Please use DeepSpeed or set "
            "`fsdp_version` to 1.", f"{_V} check_fsdp2_base_model_quant_rl", "0.12.0", "d6e4a611e (#2760)",
            note="rl is dpo, kto, orpo or ipo"),
    # check_fsdp2_cpu_offload_pin_memory (850c1a5f8, #3167, v0.13.0, with fsdp_config.cpu_offload_pin_memory):
    # a before-validator reading the top-level fsdp_version; rows fire only where every spelling agrees.
    Refusal((Eq("parallel.cpu_offload_pin_memory", False), NotIn("parallel.fsdp_version", 2, "2")),
            "FSDP1 does not support disabling cpu_offload_pin_memory, please set `fsdp_version` to 2",
            f"{_V} check_fsdp2_cpu_offload_pin_memory", "0.13.0", "850c1a5f8 (#3167)",
            unpinned="fsdp_config.cpu_offload_pin_memory (143dea475, #3170, v0.13.0)"),
    Refusal((Eq("parallel.cpu_offload_pin_memory", False), In("parallel.fsdp_version_written", 2, "2"),
             Unset("parallel.offload_param")),
            "disabling cpu_offload_pin_memory requires enabling offload_params",
            f"{_V} check_fsdp2_cpu_offload_pin_memory", "0.13.0", "850c1a5f8 (#3167)",
            unpinned="fsdp_config.cpu_offload_pin_memory (143dea475, #3170, v0.13.0)"),
    # check_fp8_config (208fb7b8e, #2926, v0.12.0, with the key): `data.get("fsdp_version") == 2`
    Refusal((Set("precision.fp8_all_gather"), NotIn("parallel.fsdp_version", 2)),
            "fp8_enable_fsdp_float8_all_gather requires FSDP2 (fsdp_version: 2) to be used.",
            f"{_V} check_fp8_config", "0.12.0", "208fb7b8e (#2926)",
            unpinned="fp8_enable_fsdp_float8_all_gather (208fb7b8e, #2926, v0.12.0)"),
    # check_gpt_oss_fsdp_loading (9d5c95db6, #3019, v0.12.0, the release that added model_quantization_config)
    Refusal((Eq("quantization.model_config_name", "Mxfp4Config"), Eq("parallel.cpu_ram_efficient_loading", True)),
            "FSDP cpu_ram_efficient_loading is not supported for Mxfp4Config model quantization.",
            f"{_V} check_gpt_oss_fsdp_loading", "0.12.0", "9d5c95db6 (#3019)",
            unpinned="model_quantization_config (ba3dba3e4, #3020, v0.12.0)"),
    # -- training ----------------------------------------------------------------------------------------
    # check_lora_target_modules_regex (55a7950e3, #3538, v0.16.0): each listed string must compile as a
    # regular expression (a glob such as "*_proj" does not); older releases hand the list to PEFT.
    Refusal((InvalidRegex("adapter.target_modules_written"),),
            "lora_target_modules contains invalid regex pattern(s): <patterns>. Please provide valid Python regex "
            "patterns or plain module name strings.", f"{_C} check_lora_target_modules_regex", "0.16.0",
            "55a7950e3 (#3538)"),
    # check_causal_lm_evals (5a5d47458, #1274, v0.5.0, with the key); eval_sample_packing as written
    Refusal((Set("eval.causal_lm"), Set("eval.sample_packing")),
            "do_causal_lm_eval is enabled, eval_sample_packing must be set to False",
            f"{_V} check_causal_lm_evals", "0.5.0", "5a5d47458 (#1274)",
            unpinned="do_causal_lm_eval (5a5d47458, #1274, v0.5.0)"),
    # check_cross_entropy_conflicts (372f664c6, #3330, v0.13.1): two or more of cut_cross_entropy,
    # chunked_cross_entropy, liger_cross_entropy, liger_fused_linear_cross_entropy written truthy.
    Refusal((NotIn("training.cross_entropy_patches", None, 0, 1),),
            "Only one cross entropy optimization can be enabled at a time. Found <n> enabled: <names>. Please "
            "disable all but one.",
            f"{_V} check_cross_entropy_conflicts", "0.13.1", "372f664c6 (#3330)",
            note="cut_cross_entropy, chunked_cross_entropy, liger_cross_entropy and "
            "liger_fused_linear_cross_entropy exclude each other"),
    # check_relora from 7b68dfafd (#1680, v0.12.0), when `relora: true` replaced relora_steps (older releases
    # read relora_steps and no `relora` switch: the row needs a pinned release).
    Refusal((Set("training.relora"), Unset("scheduler.jagged_restart_steps")),
            "jagged_restart_steps must be set to use ReLoRA", f"{_V} check_relora", "0.12.0", "7b68dfafd (#1680)"),
    # -- third audit (067b021c8) -------------------------------------------------------------------------
    # check_grpo_batch_size_divisibility (7420fd4de, #3606, v0.17.0), a before-validator on `rl: grpo` with
    # trl.num_generations written: >= 2, then dividing trl.generation_batch_size (else micro_batch_size *
    # gradient_accumulation_steps, each `or 1`). Older releases leave both to TRL's GRPOTrainer after the model
    # loads (its own checks differ by TRL release): pinned only. The multi-rank test reads the launch's GPUs.
    Refusal((_GRPO, Compare("training.grpo_num_generations", "<", 2)),
            "GRPO requires `trl.num_generations >= 2` (got <n>). With num_generations=1, every group has zero "
            "advantage and the policy never updates.", f"{_V} check_grpo_batch_size_divisibility", "0.17.0",
            "7420fd4de (#3606)"),
    Refusal((_GRPO, Compare("training.grpo_num_generations", ">=", 2),
             NotMultiple("training.grpo_generation_batch", "training.grpo_num_generations")),
            "GRPO: generation batch size must be divisible by `trl.num_generations`. Got effective_gbs=<gbs> (from "
            "<source>) and num_generations=<n>.", f"{_V} check_grpo_batch_size_divisibility", "0.17.0",
            "7420fd4de (#3606)", note="the batch is trl.generation_batch_size, else micro_batch_size * "
            "gradient_accumulation_steps"),
    # FSDPConfig.validate_size_based_wrap (df327bb32, #3710, v0.18.0, with min_num_params); fsdp_-prefixed
    # spellings count (check_fsdp_config_kwargs_prefix strips the prefix first)
    Refusal((Eq("parallel.auto_wrap_policy_written", "SIZE_BASED_WRAP"), Unset("parallel.min_num_params_given")),
            "fsdp_config.min_num_params is required when auto_wrap_policy is SIZE_BASED_WRAP",
            "utils/schemas/fsdp.py FSDPConfig.validate_size_based_wrap", "0.18.0", "df327bb32 (#3710)"),
    # check_flashoptim_deepspeed_fsdp (1bcfc08c9, #3457, v0.16.0): `fsdp` or `fsdp_config` truthy, the version
    # from the top-level fsdp_version, else fsdp_config's, else 1 (_resolve_fsdp_version)
    Refusal((_FLASH_OPTIMIZERS, Set("parallel.deepspeed")),
            "<optimizer> optimizer is incompatible with DeepSpeed. Flash optimizers only support DDP and FSDP2.",
            f"{_V} check_flashoptim_deepspeed_fsdp", "0.16.0", "1bcfc08c9 (#3457)",
            unpinned="optimizer: flash_* (1bcfc08c9, #3457, v0.16.0)"),
    Refusal((_FLASH_OPTIMIZERS, Unset("parallel.deepspeed"),
             AnyOf(Set("parallel.fsdp_options"), Set("parallel.fsdp_config_given")),
             NotIn("parallel.fsdp_version", 2, "2")),
            "<optimizer> optimizer is only compatible with FSDP2. Set fsdp_version: 2 to use flash optimizers with FSDP.",
            f"{_V} check_flashoptim_deepspeed_fsdp", "0.16.0", "1bcfc08c9 (#3457)",
            unpinned="optimizer: flash_* (1bcfc08c9, #3457, v0.16.0)"),
    # check_tensor_parallel_optimizer (294c7fe7a, #2977, v0.12.0; tensor_parallel_size itself from v0.8.0)
    Refusal((Compare("parallel.tensor_parallel_size", ">", 1),
             In("optimizer.name", "paged_adamw_8bit", "adamw_8bit", "adamw_bnb_8bit")),
            "tensor_parallel_size is not supported with paged_adamw_8bit, adamw_8bit, and adamw_bnb_8bit optimizers",
            f"{_V} check_tensor_parallel_optimizer", "0.12.0", "294c7fe7a (#2977)"),
    # validate_neftune_noise_alpha: with the key (ef2434253, #941, v0.4.0; utils/config.py validate_config until
    # the pydantic schema of v0.5.0)
    Refusal((Compare("training.neftune_alpha", "<=", 0),),
            "neftune_noise_alpha must be > 0.0", f"{_V} validate_neftune_noise_alpha", "0.4.0", "ef2434253 (#941)",
            unpinned="neftune_noise_alpha (ef2434253, #941, v0.4.0)"),
    # validate_save_safetensors (fc4e37920, #3272, v0.14.0, the transformers v5 upgrade): `v is False`
    Refusal((Eq("checkpoint.save_safetensors_written", False),),
            "save_safetensors=False is not supported in Transformers V5. Transformers V5 always uses safetensors "
            "format for model serialization. This field is deprecated and will be removed in a future version.",
            "utils/schemas/model.py ModelOutputConfig.validate_save_safetensors", "0.14.0", "fc4e37920 (#3272)"),
    # check_multipack_buffer_size (231a67e70, #3101, v0.13.0, with streaming_multipack_buffer_size)
    Refusal((Set("data.pretrain_multipack_buffer"), Set("data.streaming_multipack_buffer")),
            "pretrain_multipack_buffer_size is deprecated, use streaming_multipack_buffer_size; both are set, please "
            "remove the deprecated pretrain_multipack_buffer_size setting", f"{_V} check_multipack_buffer_size",
            "0.13.0", "231a67e70 (#3101)", unpinned="streaming_multipack_buffer_size (231a67e70, #3101, v0.13.0)"),
    # Removed keys whose validators raise DeprecationWarning (a launch failure, not a log line); v0.3.0 packed
    # with max_packed_sequence_len, and TRL's DPO read the others until Axolotl's TRL 0.29 upgrade.
    Refusal((Set("data.max_packed_sequence_len"),), "`max_packed_sequence_len` is no longer supported",
            f"{_D}.validate_max_packed_sequence_len", "0.4.0", "2ce5c0d68 (#1141)"),
    Refusal((Set("training.dpo_use_logits_to_keep"),),
            "`dpo_use_logits_to_keep` is no longer supported, it has been removed in TRL >= 0.29.0",
            f"{_D}.validate_dpo_use_logits_to_keep", "0.15.0", "cada93cee (#3459)"),
    Refusal((Set("training.dpo_generate_during_eval"),),
            "`dpo_generate_during_eval` is no longer supported, it has been removed in TRL >= 0.29.0",
            f"{_D}.validate_dpo_generate_during_eval", "0.15.0", "cada93cee (#3459)"),
    Refusal((Set("training.dpo_norm_loss"),),
            "`dpo_norm_loss` is no longer supported, due to breaking changes in TRL >= 0.29.0",
            f"{_D}.validate_dpo_norm_loss", "0.16.0", "a81feabbd (#3560)"),
    Refusal((Set("training.rpo_alpha_written"),),
            "`rpo_alpha` has been deprecated in TRL >= 0.29.0, and now requires passing multiple loss types, which "
            "is not yet supported by Axolotl.", f"{_D}.validate_rpo_alpha", "0.16.0", "a81feabbd (#3560)"),
)
