"""Launch-time refusals of Axolotl's config validation, fourth audit (read by rules/refusal_table.py,
which appends them to its REFUSALS; the conditions as there: `Set` is Python truthiness).

Read in axolotl-ai-cloud/axolotl at 067b021c8 (v0.18.0+9; utils/schemas/ unchanged since v0.18.0):
utils/schemas/validation.py, config.py, datasets.py and peft.py. Each row's first release from
`git log -S '<message>'` and `git tag --contains`, its condition read at that tag and at every later
one (`git grep`); `before` gives the older releases' message where the check's wording or the key it
tests changed, `until` the release that dropped a check.

Left out (counted in the audit, not rows): checks that need the GPU or its count (check_fp8,
sage/fp8 attention compute capability, check_multigpu_lora_kernels and
check_rl_config_gradient_checkpointing on n_gpu, GRPO's world_size check), the torch version
(ADOPT, flex attention, QAT, FSDP2) or an installed package (mistral-common, ring-flash-attn, CUDA for
quantize_moe_experts, Ascend NPU); ReLoRA with the one_cycle scheduler (Axolotl's lr_scheduler is no
key read here); qlora merge_lora with load_in_4bit / load_in_8bit (`axolotl merge-lora` overrides both
before validating, so a merge-only file passes); checks another row already refuses first (ReLoRA
with fused modules: check_fused_lora; hidden_states offloading with reentrant checkpointing and
unfrozen_parameters: check_use_reentrant_mismatch).
"""

from __future__ import annotations

from .refusal_conditions import (
    AnyOf, Compare, Contains, Differ, Eq, HasOtherThan, In, IsNot, NotContains, NotIn, Refusal, Set, Unset,
)

_V = "utils/schemas/validation.py"
_C = "utils/schemas/config.py"
_FSDP = AnyOf(Set("parallel.fsdp_options"), Set("parallel.fsdp_config_given"))  # `data.get("fsdp") or ...`
_NOT_FSDP2 = NotIn("parallel.fsdp_version", 2, "2")  # _resolve_fsdp_version: top-level, fsdp_config's, else 1
_MUON = Eq("optimizer.name", "muon")
_QGALORE = Eq("optimizer.name", "q_galore_adamw8bit")
_QGALORE_KEY = "optimizer: q_galore_adamw8bit (20f56fac1, #3654, v0.17.0)"
_CP = Compare("parallel.context_parallel_size", ">", 1)
_CP_KEY = "context_parallel_size (294c7fe7a, #2977, v0.12.0)"
_EBFT_STRIDED = (Eq("training.trainer", "ebft"), Eq("training.ebft_mode", "strided"))
_RELORA = (Set("training.relora"), Set("scheduler.jagged_restart_steps"))
_QLORA_GPTQ = (Eq("adapter.kind", "qlora"), NotIn("quantization.bits", 8), Set("quantization.gptq"))
_DPO = Eq("training.trainer", "dpo")
# utils/schemas/enums.py CANONICAL_ATTN_IMPLS and SHORT_FORM_ALIAS_TO_CANONICAL (v0.17.0 = v0.18.0)
_ATTN_NAMES = ("eager", "sdpa", "flash_attention_2", "flash_attention_3", "flex_attention", "xformers", "sage", "fp8",
               "flash", "flex", "sdp")
_FLASH_LIB = ("flash_attention_2", "flash_attention_3", "kernels-community/flash-attn2",
              "kernels-community/flash-attn3")  # enums.py ATTN_IMPLS_USING_FLASH_LIB
# enums.py INDUCTOR_COMPILE_OPTIONS_ALLOWLIST (f3e434f74, #3692, v0.18.0)
_INDUCTOR = ("coordinate_descent_tuning", "coordinate_descent_check_all_directions", "shape_padding",
             "epilogue_fusion", "max_autotune_gemm", "fx_graph_cache", "assume_aligned_inputs", "comprehensive_padding",
             "decompose_mem_bound_mm", "triton.cudagraphs")

FOURTH_ROWS = (
    # -- optimizers ------------------------------------------------------------------------------------
    # check_muon_deepspeed_fsdp: df119e372 (#2464, v0.8.0) refused Muon with any FSDP; bbd3486f5 (#3264,
    # v0.13.1, distributed Muon) only with FSDP1.
    Refusal((_MUON, Unset("parallel.deepspeed"), _FSDP, _NOT_FSDP2),
            "Muon optimizer is only compatible with FSDP2. Set fsdp_version: 2 to use Muon with FSDP.",
            f"{_V} check_muon_deepspeed_fsdp", "0.13.1", "bbd3486f5 (#3264)",
            unpinned="optimizer: muon (ae6637415, #2367, v0.8.0)",
            before=("0.8.0", "0.8.0 to 0.13.0 refuse Muon with any FSDP at launch: \"Muon optimizer is currently "
                             "incompatible with DeepSpeed and FSDP\" (check_muon_deepspeed_fsdp, df119e372, #2464)")),
    Refusal((_MUON, Unset("parallel.deepspeed"), _FSDP, In("parallel.fsdp_version", 2, "2")),
            "Muon optimizer is currently incompatible with DeepSpeed and FSDP",
            f"{_V} check_muon_deepspeed_fsdp (v0.13.0)", "0.8.0", "df119e372 (#2464)", until="0.13.1"),
    # check_qgalore (20f56fac1, #3654, v0.17.0, with the optimizer name), raised in this order
    Refusal((_QGALORE, Set("adapter.kind")),
            "q_galore_adamw8bit operates on full-precision parameters and is incompatible with adapter='<adapter>'. "
            "Remove the adapter setting or pick a different optimizer.", f"{_V} check_qgalore", "0.17.0",
            "20f56fac1 (#3654)", unpinned=_QGALORE_KEY),
    Refusal((_QGALORE, Unset("adapter.kind"), Set("parallel.deepspeed")),
            "q_galore_adamw8bit is not yet validated with DeepSpeed. Use DDP or FSDP2 with use_orig_params=True.",
            f"{_V} check_qgalore", "0.17.0", "20f56fac1 (#3654)", unpinned=_QGALORE_KEY),
    Refusal((_QGALORE, Unset("adapter.kind"), Unset("parallel.deepspeed"), _FSDP, _NOT_FSDP2),
            "q_galore_adamw8bit requires FSDP2. Set fsdp_version: 2.", f"{_V} check_qgalore", "0.17.0",
            "20f56fac1 (#3654)", unpinned=_QGALORE_KEY),
    Refusal((_QGALORE, Unset("adapter.kind"), Unset("parallel.deepspeed"), _FSDP, In("parallel.fsdp_version", 2, "2"),
             IsNot("parallel.fsdp_use_orig_params", True)),
            "q_galore_adamw8bit requires fsdp_config.use_orig_params=True so that per-parameter projection state "
            "survives FSDP sharding.", f"{_V} check_qgalore", "0.17.0", "20f56fac1 (#3654)", unpinned=_QGALORE_KEY),
    # -- attention ----------------------------------------------------------------------------------------
    # check_scaling_softmax_requires_flex: with the key (258ce8d4f, #3338, v0.13.1) a before-validator on the
    # flex_attention flag; from e4032fc90 (#3602, v0.17.0) an after-validator on the normalized
    # attn_implementation (the flag maps to flex_attention). Neither written: refused in every release.
    Refusal((Set("attention.scaling_softmax"), Unset("attention.flex_flag"),
             NotIn("attention.implementation_written", "flex_attention")),
            "scaling_softmax requires flex attention. Add `attn_implementation: flex_attention` to your config.",
            f"{_V} check_scaling_softmax_requires_flex", "0.17.0", "e4032fc90 (#3602)",
            unpinned="scaling_softmax (258ce8d4f, #3338, v0.13.1)",
            before=("0.13.1", "0.13.1 to 0.16.x refuse it at launch: \"scaling_softmax requires flex_attention: true\" "
                              "(check_scaling_softmax_requires_flex, 258ce8d4f, #3338)")),
    # normalize_attn_implementation (e4032fc90, #3602, v0.17.0, the release that added gemma4_hybrid_attn_impl)
    Refusal((Set("attention.gemma4_hybrid"), Set("attention.implementation_written"),
             NotIn("attention.implementation_written", "flash_attention_2")),
            "gemma4_hybrid_attn_impl requires attn_implementation=flash_attention_2 (sliding-window layers run under "
            "FA2); got <attn_implementation>.", f"{_C} normalize_attn_implementation", "0.17.0", "e4032fc90 (#3602)",
            unpinned="gemma4_hybrid_attn_impl (b8358aa5a, #3598, v0.17.0)"),
    # validate_attn_implementation (e4032fc90, #3602, v0.17.0): a name outside CANONICAL_ATTN_IMPLS and the short
    # aliases (their own row) without a "/"; before, the name went to transformers as written
    Refusal((NotIn("attention.implementation_written", None, *_ATTN_NAMES),
             NotContains("attention.implementation_written", "/")),
            "attn_implementation=<value> is not a recognized backend. Expected one of: ['eager', 'flash_attention_2', "
            "'flash_attention_3', 'flex_attention', 'fp8', 'sage', 'sdpa', 'xformers'], or a hub-kernel path "
            "containing '/'.", f"{_C} validate_attn_implementation", "0.17.0", "e4032fc90 (#3602)"),
    # validate_large_head_attention (8eac710b2, #3747, v0.18.0, with the key): str(value).lower() in the three
    Refusal((NotIn("attention.large_head_written", None, "auto", "sdpa", "triton_flash"),),
            "large_head_attention must be one of ['auto', 'sdpa', 'triton_flash'], got <value>",
            f"{_C} validate_large_head_attention", "0.18.0", "8eac710b2 (#3747)",
            unpinned="large_head_attention (8eac710b2, #3747, v0.18.0)"),
    # -- context parallelism ------------------------------------------------------------------------------
    # check_context_parallel_size with context_parallel_size (294c7fe7a, #2977, v0.12.0; sequence_parallel_degree
    # before): the flash_attention flag until 0.16.x, attn_uses_flash_lib from e4032fc90 (#3602, v0.17.0);
    # gemma4_hybrid_attn_impl defaults flash_attention_2 in and use_glm_dsa_kernels skips the check (v0.18.0)
    Refusal((_CP, Unset("model.glm_dsa_kernels"), Unset("attention.gemma4_hybrid"), Unset("attention.flash_flag"),
             NotIn("attention.implementation_written", *_FLASH_LIB)),
            "context_parallel_size > 1 requires flash attention (attn_implementation: flash_attention_2 or "
            "flash_attention_3).", f"{_V} check_context_parallel_size", "0.17.0", "e4032fc90 (#3602)",
            unpinned=_CP_KEY,
            before=("0.12.0", "0.12.0 to 0.16.x refuse it at launch: \"flash_attention: true must be set with "
                              "context_parallel_size > 1\" (check_context_parallel_size, 294c7fe7a, #2977)")),
    # b8c633aa9 (#2520, v0.9.0, under sequence_parallel_degree), after the flash test: the flash_attention flag
    # passes it in every release (attn_implementation unwritten)
    Refusal((_CP, Unset("model.glm_dsa_kernels"), Set("attention.flash_flag"), Unset("attention.implementation_written"),
             Set("sequence.packing"), Compare("batch.micro", ">", 1)),
            "micro_batch_size must be set to 1 when sample_packing is enabled due to a `ring-flash-attn` requirement",
            f"{_V} check_context_parallel_size", "0.12.0", "b8c633aa9 (#2520); 294c7fe7a (#2977)", unpinned=_CP_KEY),
    # check_grpo_liger_sequence_parallel (80304c26a, #2643, v0.10.0 on sequence_parallel_degree; on
    # context_parallel_size from 294c7fe7a, #2977, v0.12.0)
    Refusal((Eq("training.trainer", "grpo"), Set("training.grpo_liger_loss"), _CP),
            "GRPO + SP + Liger not currently supported", f"{_V} check_grpo_liger_sequence_parallel", "0.12.0",
            "80304c26a (#2643); 294c7fe7a (#2977)", unpinned=_CP_KEY),
    # -- data ---------------------------------------------------------------------------------------------
    # check_streaming_w_multiple_datasets (231a67e70, #3101, v0.13.0, with the top-level streaming key);
    # raises NotImplementedError
    Refusal((Set("data.streaming"), Set("sequence.packing"), Compare("data.dataset_count", ">", 1)),
            "Sample packing with multiple streaming datasets is not yet supported",
            f"{_V} check_streaming_w_multiple_datasets", "0.13.0", "231a67e70 (#3101)",
            unpinned="streaming (231a67e70, #3101, v0.13.0)"),
    # SFTDataset.check_chat_template_config (bfc77b0f3, #1970, v0.5.0): reached for every dataset of a file
    # without `rl` only from b194e17c2 (#2260, v0.7.0), when validate_config began building each one as an
    # SFTDataset (before, pydantic's union fell back to DPODataset, which has no such check)
    Refusal((Eq("training.trainer", "sft"), Set("data.dataset_jinja_missing")),
            "chat_template_jinja is required when chat_template is set to jinja",
            "utils/schemas/datasets.py SFTDataset.check_chat_template_config", "0.7.0", "bfc77b0f3 (#1970); b194e17c2 "
            "(#2260)", note="a datasets[] entry with chat_template: jinja and no chat_template_jinja of its own"),
    # check_causal_lm_evals (5a5d47458, #1274, v0.5.0, with the key; the same five metrics in every release)
    Refusal((HasOtherThan("eval.causal_lm_metrics", "sacrebleu", "comet", "ter", "chrf", "perplexity"),),
            "eval_causal_lm_metrics must be one of {'sacrebleu', 'comet', 'ter', 'chrf', 'perplexity'}",
            f"{_V} check_causal_lm_evals", "0.5.0", "5a5d47458 (#1274)",
            unpinned="eval_causal_lm_metrics (5a5d47458, #1274, v0.5.0)"),
    # -- RL -----------------------------------------------------------------------------------------------
    # check_beta_and_trl_beta_match (51cd40948, #2401, v0.8.0; both keys older)
    Refusal((Differ("training.beta", "training.trl_beta"),), "beta and trl.beta must match or one must be removed",
            f"{_C} check_beta_and_trl_beta_match", "0.8.0", "51cd40948 (#2401)"),
    Refusal((Eq("training.trainer", "gdpo"), Eq("training.multi_objective_aggregation", "sum_then_normalize")),
            "`multi_objective_aggregation` value set as `sum_then_normalize` => GRPO, but GDPO was selected",
            f"{_V} check_gdpo", "0.13.2", "d0d26d506 (#3353)", unpinned="rl: gdpo (d0d26d506, #3353, v0.13.2)"),
    # check_dpo (90090fa9e, #3566, v0.17.0, with both keys)
    Refusal((_DPO, Set("training.dpo_loss_weights_given"), Unset("training.dpo_loss_type_given")),
            "`dpo_loss_weights` requires `dpo_loss_type` to be set", f"{_V} check_dpo", "0.17.0", "90090fa9e (#3566)",
            unpinned="dpo_loss_weights (90090fa9e, #3566, v0.17.0)"),
    Refusal((_DPO, Differ("training.dpo_loss_type_count", "training.dpo_loss_weights_count")),
            "`dpo_loss_type` and `dpo_loss_weights` must be the same length, but got <n> losses and <m> weights",
            f"{_V} check_dpo", "0.17.0", "90090fa9e (#3566)", unpinned="dpo_loss_type (90090fa9e, #3566, v0.17.0)"),
    # check_ebft_torch_compile / check_ebft_activation_offloading (c50c4acbf, #3527, v0.16.0, with rl: ebft);
    # the flex_attention flag until 0.16.x, the attn_implementation it maps to from v0.17.0
    Refusal((*_EBFT_STRIDED, Eq("training.torch_compile", True), Set("memory.gradient_checkpointing")),
            "EBFT strided mode: `torch_compile: true` with `gradient_checkpointing: true` causes CheckpointError "
            "(BlockMask metadata mismatch during recomputation). Remove `torch_compile` — the flex_attention kernel "
            "compiles itself internally.", f"{_V} check_ebft_torch_compile", "0.16.0", "c50c4acbf (#3527)",
            unpinned="rl: ebft (c50c4acbf, #3527)"),
    Refusal((*_EBFT_STRIDED, Eq("memory.activation_offloading_written", True), Set("attention.flex_flag"),
             Unset("attention.implementation_written")),
            "EBFT strided mode: `activation_offloading: true` is incompatible with `attn_implementation: "
            "flex_attention`. Activation offloading replaces gradient checkpointing with FSDP-style wrapping that "
            "conflicts with flex_attention's reentrant checkpoint requirement. Remove `activation_offloading` — the "
            "strided trainer uses micro-batched forward passes for memory efficiency instead.",
            f"{_V} check_ebft_activation_offloading", "0.16.0", "c50c4acbf (#3527)",
            unpinned="rl: ebft (c50c4acbf, #3527)"),
    # -- adapters, quantization, checkpointing ------------------------------------------------------------
    # LoraConfig.validate_qlora (52dd92a0c, v0.1.0): gptq with qlora, merged or not
    Refusal((*_QLORA_GPTQ, Set("adapter.merge")), "Can't merge qlora if gptq", "utils/schemas/peft.py "
            "LoraConfig.validate_qlora", "0.1.0", "52dd92a0c"),
    Refusal((*_QLORA_GPTQ, Unset("adapter.merge")), "Can't load qlora if gptq", "utils/schemas/peft.py "
            "LoraConfig.validate_qlora", "0.1.0", "52dd92a0c"),
    # check_qat_config (5fca21410, #2590, v0.10.0, with qat): the `peft:` block first
    Refusal((Set("quantization.qat"), Set("adapter.peft_block")), "QAT and PEFT cannot be used together.",
            f"{_C} check_qat_config", "0.10.0", "5fca21410 (#2590)", unpinned="qat"),
    Refusal((Set("model.onebitllms"), In("adapter.kind", "lora", "qlora")),
            "LoRA/QLoRA is not supported with use_onebitllms", f"{_V} check_onebitllms_lora", "0.17.0",
            "e662972a2 (#3634)", unpinned="use_onebitllms (e662972a2, #3634, v0.17.0)"),
    # check_relora from 7b68dfafd (#1680, v0.12.0; the `relora` switch): pinned only, as the relora row.
    # 0.12.0 to 0.16.x asked for adapter lora or qlora; b7ec06b8a (#3647, v0.17.0) lets plugin adapters in
    Refusal((*_RELORA, Unset("adapter.kind")),
            "cfg.adapter must support ReLoRA to use ReLoRA restart semantics", f"{_V} check_relora", "0.17.0",
            "b7ec06b8a (#3647)", before=("0.12.0", "0.12.0 to 0.16.x refuse it at launch: \"cfg.adapter must be lora "
                                                   "or qlora to use ReLoRA\" (check_relora, 7b68dfafd, #1680)")),
    Refusal((*_RELORA, In("adapter.kind", "lora", "qlora"), _FSDP), "fsdp not supported with ReLoRA",
            f"{_V} check_relora", "0.12.0", "7b68dfafd (#1680)"),
    Refusal((*_RELORA, In("adapter.kind", "lora", "qlora"), Unset("parallel.fsdp_options"),
             Unset("parallel.fsdp_config_given"), Set("parallel.deepspeed")),
            "deepspeed not supported with ReLoRA", f"{_V} check_relora", "0.12.0", "7b68dfafd (#1680)"),
    # check_selective_checkpointing (f51fa20a9, #3786, v0.18.0, with the key), after its gradient_checkpointing row
    Refusal((Set("memory.selective_checkpointing"), Set("memory.gradient_checkpointing"),
             Set("memory.checkpointing_reentrant")),
            "selective_checkpointing requires non-reentrant checkpointing (gradient_checkpointing_kwargs."
            "use_reentrant: false)", f"{_V} check_selective_checkpointing", "0.18.0", "f51fa20a9 (#3786)",
            unpinned="selective_checkpointing (f51fa20a9)"),
    Refusal((Set("memory.selective_checkpointing"), Set("memory.gradient_checkpointing"),
             Unset("memory.checkpointing_reentrant"), Set("memory.activation_offloading_written"),
             NotIn("memory.activation_offloading_written", "hidden_states")),
            "selective_checkpointing is only compatible with activation_offloading: hidden_states (or false); the "
            "TRL offloader paths bypass HF gradient checkpointing", f"{_V} check_selective_checkpointing", "0.18.0",
            "f51fa20a9 (#3786)", unpinned="selective_checkpointing (f51fa20a9)"),
    # check_nemotron_h_gradient_checkpointing (bb622b83d, #3508, v0.16.0): base_model names a Nemotron-H
    Refusal((Contains("model.name", "nemotron-h"), Set("memory.gradient_checkpointing"), Unset("sequence.packing")),
            "gradient_checkpointing for nemotron_h requires sample_packing: true. The upstream model marks "
            "supports_gradient_checkpointing=False; axolotl only enables it after applying the sample-packing patch.",
            f"{_V} check_nemotron_h_gradient_checkpointing", "0.16.0", "bb622b83d (#3508)"),
    # validate_torch_compile_options (f3e434f74, #3692, v0.18.0, with the key)
    Refusal((HasOtherThan("training.torch_compile_option_names", *_INDUCTOR),),
            "torch_compile_options contains disallowed inductor flags: <flags>. Allowed: <allowlist>.",
            f"{_C} validate_torch_compile_options", "0.18.0", "f3e434f74 (#3692)",
            unpinned="torch_compile_options (f3e434f74)"),
)
