"""Launch-time refusals, one row each: the settings a framework's own config validation refuses
together, with its message, where the check lives and the release that added it (read by
rules/launch_refusals.py, TRN025).

Conditions test IR values the way the validator tests the written ones: `Set` is Python
truthiness (`data.get(key)`), `Unset` its negation (absent counts as unset). Every row was read
in axolotl-ai-cloud/axolotl at 067b021c8 (v0.18.0+) and its first release found with
`git log -S '<message>'` and `git tag --contains`; each is present in every release since, except
the last rows, checks Axolotl dropped later (read at their last release, bounded by `until`).

The one check read from the model's files is utils/models.py check_model_config (v0.4.0-v0.8.1),
which normalize_config runs at launch right after the validation: the SavedQuantized condition
asks linter/models.py whether the checkpoint was saved quantized (its config.json, or its name).
Left out: other checks that need the dataset, the model's files, installed packages, the GPU's
capabilities, the GPU count or the environment (check_rl_config_gradient_checkpointing's n_gpu);
context parallelism with packing (which message is raised first depends on the attention
backend); v0.4.0-v0.5.0's ZeRO-3 + flash_attention check on the DeepSpeed JSON's bf16/fp16
`enabled` (not confirmed against a thread: Axolotl's own zero3.json then held "auto"); warnings
(LOG.warning); checks covered elsewhere (load_in_4bit/8bit without an adapter: QNT005; FSDP2 /
FSDP offload with 8-bit optimizers: TRN020); and checks whose tested keys changed between
releases (ReLoRA's relora_steps -> relora before v0.12.0: the relora row needs a pinned release;
fsdp_version's resolution order, bf16's "auto" default for BetterTransformer). The second and
third audits' rows are in rules/refusal_rows.py, the fourth's in rules/refusal_rows_fourth.py, the
fifth's in rules/refusal_rows_fifth.py.
"""

from __future__ import annotations

from .refusal_conditions import (  # noqa: F401 (re-exported)
    AnyOf, Contains, Eq, FewerThan, FromRelease, In, IsNot, NotIn, NotLaxBool, NotMultiple, Refusal, SavedQuantized, Set,
    Unset,
)
from .refusal_rows import LATER_ROWS
from .refusal_rows_fifth import FIFTH_ROWS
from .refusal_rows_fourth import FOURTH_ROWS


# Before its pydantic schema (v0.5.0, #1239) Axolotl checked the config in one function; from
# v0.5.0 the validators moved from utils/config/models/input/v0_4_1 to utils/schemas (v0.8.0)
# and into utils/schemas/validation.py's mixins (v0.11.0), mostly under the same names.
EARLIER_PLACES = {"axolotl": (("0.3.0", "utils/validation.py validate_config"),
                              ("0.5.0", "utils/config.py validate_config"))}

_V = "utils/schemas/validation.py"
_C = "utils/schemas/config.py"
_P = "utils/schemas/peft.py"
_QLORA = Eq("adapter.kind", "qlora")
_RL = NotIn("training.trainer", None, "sft")  # `rl` written (training.trainer is "sft" without it)

REFUSALS = (
    # -- data --------------------------------------------------------------------------------
    # data.datasets / data.pretraining are recorded where written non-null (the check tests `is None`)
    Refusal((Unset("data.datasets"), Unset("data.pretraining")), "either datasets or pretraining_dataset is required",
            f"{_V} check_dataset_or_pretraining_dataset", "0.5.0", "cc3cebfa7 (#1239)"),
    Refusal((Set("data.push_to_hub"), Unset("hub.use_auth_token")),
            "Require cfg.hf_use_auth_token to be True for push_dataset_to_hub",
            f"{_V} check_push_ds_auth", "0.1.0", "1c33eb88a"),
    Refusal((Set("eval.test_datasets"), Set("eval.val_set_size")),
            "non-zero val_set_size should not be used with test_datasets configuration",
            f"{_V} check_val_w_test_datasets", "0.4.0", "cda52dc32 (#786)"),
    Refusal((Set("data.pretraining"), Unset("training.max_steps")),
            "max_steps must be set when using iterable pretraining_dataset, Trainer can't infer length and schedule "
            "optimizer/learning rate without it!", f"{_V} check_pretraining_w_max_steps", "0.4.0", "2f586d18d (#556)"),
    Refusal((Set("data.pretraining"), Set("eval.val_set_size")),
            "val_set_size is not supported with pretraining_dataset. Use test_datasets to specify evaluation datasets "
            "for pretraining.", f"{_V} check_pretraining_w_val_set_size", "0.13.0", "231a67e70 (#3101)"),
    Refusal((Set("data.streaming"), Set("eval.val_set_size")),
            "val_set_size is not supported with streaming datasets. Use test_datasets to specify evaluation datasets "
            "when streaming is enabled.", f"{_V} check_streaming_w_val_set_size", "0.13.0", "231a67e70 (#3101)",
            unpinned="streaming"),
    Refusal((Set("data.streaming"), Unset("training.max_steps")),
            "max_steps must be set when using streaming datasets. Trainer cannot infer dataset length for iterable "
            "datasets.", f"{_V} check_streaming_w_max_steps", "0.13.0", "231a67e70 (#3101)", unpinned="streaming"),
    Refusal((Set("data.exact_dedup"), AnyOf(Set("data.streaming"), Set("data.pretraining"))),
            "dataset_exact_deduplication is not available for streaming datasets.",
            f"{_C} check_deduplication_with_streaming", "0.13.0", "231a67e70 (#3101)"),
    Refusal((Set("data.exact_dedup"), Set("data.skip_prepare")),
            "dataset_exact_deduplication=True has no effect when skip_prepare_dataset=True. Deduplication runs as part "
            "of the prepare pipeline, which is skipped. Either set skip_prepare_dataset: false or disable "
            "dataset_exact_deduplication.", f"{_C} check_deduplication_with_skip_prepare", "0.15.0",
            "474208b79 (#3427)"),
    Refusal((Set("data.pretraining"), Set("training.tokens_per_second")),
            "pretraining_dataset and include_tokens_per_second cannot be used together.",
            f"{_V} pretrain_with_tps", "0.11.0", "a24957fa0 (#2831)"),
    # -- batch and schedule ------------------------------------------------------------------
    Refusal((FewerThan(2, "batch.micro", "batch.grad_accum", "batch.per_device_total"),),
            "At least two of micro_batch_size, gradient_accumulation_steps, batch_size must be set",
            f"{_V} check_batch_size_fields", "0.5.0", "cc3cebfa7 (#1239)"),
    Refusal((Set("batch.grad_accum"), Set("batch.per_device_total")),
            "please set only one of gradient_accumulation_steps or batch_size",
            f"{_V} check_gas_bsz", "0.2.1", "3aad5f3b3"),
    Refusal((Set("scheduler.warmup_steps"), Set("scheduler.warmup_ratio")),
            "warmup_steps and warmup_ratio are mutually exclusive", f"{_V} check_warmup", "0.4.0", "fb12895a1 (#893)"),
    Refusal((Eq("training.trainer", "simpo"), Set("scheduler.warmup_ratio")),
            "warmup_ratio is not supported with the simpo trainer. Please use `warmup_steps` instead",
            f"{_V} check_simpo_warmup", "0.5.0", "d7eea2ff3 (#1925)"),
    # -- saving and evaluation -------------------------------------------------------------------
    # save/eval strategy "no" is left out: YAML's unquoted `no` reads False, which the check skips.
    Refusal((Set("checkpoint.save_strategy"), Set("checkpoint.save_steps"),
             NotIn("checkpoint.save_strategy", "steps", "no")),
            "save_strategy and save_steps mismatch. Please set save_strategy to 'steps' or remove save_steps.",
            f"{_V} check_saves", "0.4.0", "383f88d7a (#633)"),
    Refusal((Set("checkpoint.saves_per_epoch"), Set("checkpoint.save_steps")),
            "save_steps and saves_per_epoch are mutually exclusive and cannot be used together.",
            f"{_V} check_saves", "0.4.0", "5f79b8242 (#944)"),
    Refusal((Eq("checkpoint.save_strategy", "best"), Unset("checkpoint.best_metric")),
            "save_strategy: 'best' requires metric_for_best_model to be set. Please specify the metric to use, e.g. "
            "metric_for_best_model: eval_loss", f"{_C} check_save_strategy_best_requires_metric", "0.16.0",
            "55a7950e3"),
    Refusal((Set("checkpoint.eval_strategy"), Set("checkpoint.eval_steps"), NotIn("checkpoint.eval_strategy", "steps", "no")),
            "eval_strategy and eval_steps mismatch. Please set eval_strategy to 'steps' or remove eval_steps.",
            f"{_V} check_evals", "0.5.1", "c16ec398d (#1682)"),
    Refusal((Eq("eval.val_set_size", 0), AnyOf(Set("checkpoint.eval_steps"), Set("checkpoint.eval_strategy")),
             Unset("eval.test_datasets"), NotIn("checkpoint.eval_strategy", "no")),
            "eval_steps and eval_strategy are not supported with val_set_size == 0",
            f"{_V} check_evals", "0.5.1", "c16ec398d (#1682)"),
    Refusal((Set("eval.per_epoch"), Set("checkpoint.eval_steps")),
            "eval_steps and evals_per_epoch are mutually exclusive and cannot be used together.",
            f"{_V} check_evals", "0.4.0", "5f79b8242 (#944)"),
    Refusal((Set("eval.per_epoch"), Set("checkpoint.eval_strategy"), NotIn("checkpoint.eval_strategy", "steps", "no")),
            "eval_strategy must be empty or set to `steps` when used with evals_per_epoch.",
            f"{_V} check_evals", "0.5.1", "c16ec398d (#1682)"),
    Refusal((Set("eval.benchmark"), Unset("eval.per_epoch"), Unset("checkpoint.eval_steps")),
            "do_bench_eval requires evals_per_epoch or eval_steps to be set.",
            f"{_V} check_evals", "0.5.0", "8159cbd1a (#1926)"),
    Refusal((Set("sequence.packing"), Set("eval.table_size"), IsNot("eval.sample_packing", False)),
            "eval_table_size and eval_sample_packing are not supported together with sample_packing. Please set "
            "'eval_sample_packing' to false.", f"{_V} check_eval_packing", "0.4.0", "9923b7264 (#769)",
            unpinned="eval_table_size (5b67ea98a, #521, v0.4.0)"),
    Refusal((Set("training.early_stopping_patience"), AnyOf(Unset("checkpoint.save_steps"), Unset("checkpoint.eval_steps"))),
            "`early_stopping_patience` requires save_steps and eval_steps to be set. eval_steps should evenly divide "
            "save_steps.", f"{_V} check_early_stopping", "0.3.0", "e30f1e3cf (#537)"),
    Refusal((Set("training.early_stopping_patience"), NotMultiple("checkpoint.save_steps", "checkpoint.eval_steps")),
            "`early_stopping_patience` requires that eval_steps should evenly divide save_steps.",
            f"{_V} check_early_stopping", "0.3.0", "e30f1e3cf (#537)"),
    # -- adapters and quantization ---------------------------------------------------------------
    Refusal((_QLORA, Unset("adapter.merge"), Eq("quantization.bits", 8)), "Can't load qlora in 8bit",
            f"{_P} LoraConfig.validate_qlora", "0.1.0", "52dd92a0c"),
    Refusal((_QLORA, Unset("adapter.merge"), Unset("quantization.bits"), Unset("quantization.gptq")),
            "Require cfg.load_in_4bit to be True for qlora", f"{_P} LoraConfig.validate_qlora", "0.1.0", "52dd92a0c"),
    Refusal((Set("adapter.kind"), Set("adapter.layers_to_transform"), Set("training.unfrozen_parameters")),
            "`unfrozen_parameters` used with `peft_layers_to_transform` can have unexpected behavior.",
            f"{_V} check_frozen", "0.4.0", "8487b97cf (#1118)"),
    Refusal((Set("adapter.layers_pattern"), Unset("adapter.layers_to_transform")),
            "peft_layers_pattern requires peft_layers_to_transform to be set",
            f"{_V} check_peft_layers_pattern", "0.5.0", "e1915f562 (#1940)", unpinned="peft_layers_pattern"),
    Refusal((In("adapter.kind", "lora", "qlora"), Set("adapter.fuse_mlp")),
            "Fused modules are not supported with LoRA/QLoRA", f"{_V} check_fused_lora", "0.5.0", "cc3cebfa7 (#1239)"),
    Refusal((Set("adapter.kernels"), Eq("adapter.kind", "lora"), Eq("quantization.bits", 8)),
            "lora_mlp_kernel, lora_qkv_kernel, and lora_o_kernel are not compatible with 8-bit LoRA a the moment.",
            f"{_V} check_lora_kernels_8bit", "0.12.0", "e758343ca (#2992)"),
    Refusal((Set("adapter.kernels"), Set("model.trust_remote_code")),
            "lora_mlp_kernel, lora_qkv_kernel, and lora_o_kernel are not compatible with trust_remote_code. Please "
            "disable trust_remote_code or explicitly set lora_*_kernel to false.",
            f"{_V} check_lora_kernels_trust_remote_code", "0.15.0", "a2da85257"),
    Refusal((Set("adapter.target_parameters"), Set("adapter.dropout")),
            "lora_dropout must be 0 when lora_target_parameters is set. PEFT's ParamWrapper does not support "
            "lora_dropout != 0.", f"{_P} validate_lora_target_parameters_dropout", "0.15.0", "945c8aeb1",
            unpinned="lora_target_parameters (deac7b18a, #3006, v0.12.0)",
            before=("0.12.0", "0.12.0 to 0.14.x pass it to PEFT, whose ParamWrapper (PEFT 0.17.0 on, the only "
                     "releases with target_parameters) raises \"lora.ParamWrapper does not work with lora_dropout != 0.\" "
                     "when the adapter is built (peft src/peft/tuners/lora/layer.py, f3b97c370, #2638)")),
    Refusal((Set("optimizer.lr_groups"), Set("optimizer.loraplus")),
            "lr_groups and loraplus_lr_ratio cannot be used together.", f"{_V} check_lr_groups", "0.8.0",
            "ae6637415 (#2367)"),
    Refusal((Set("quantization.model_config"), Set("quantization.bits")),
            "model_quantization_config and load_in_8bit or load_in_4bit cannot be used together.",
            f"{_V} check_model_quantization_config_vs_bnb", "0.12.0", "ba3dba3e4 (#3020)",
            unpinned="model_quantization_config (ba3dba3e4, #3020)"),
    Refusal((Set("quantization.qat"), Eq("quantization.bits", 8)), "QAT and load_in_8bit cannot be used together.",
            f"{_C} check_qat_config", "0.10.0", "5fca21410 (#2590)", unpinned="qat"),
    Refusal((Set("quantization.qat"), Eq("quantization.bits", 4)), "QAT and load_in_4bit cannot be used together.",
            f"{_C} check_qat_config", "0.10.0", "5fca21410 (#2590)", unpinned="qat"),
    Refusal((Set("quantization.gptq"), Set("model.revision")),
            "revision_of_model is not supported for GPTQ models. Please download the model from HuggingFace Hub "
            "manually for correct branch, point to its path, and remove revision_of_model from the config.",
            f"{_V} check_gptq_w_revision", "0.5.0", "6b3b27192 (#1345)"),
    # -- RL ----------------------------------------------------------------------------------------
    Refusal((_RL, Set("sequence.packing")), "`sample_packing: true` does not work with RLHF training",
            f"{_V} check_sample_packing_w_rl", "0.4.0", "59a31fe61 (#1174)"),
    Refusal((Eq("training.trainer", "kto"), AnyOf(Set("sequence.packing"), Set("eval.sample_packing"))),
            "sample_packing is not supported with kto", f"{_V} check_kto_config", "0.6.0", "c78de6f21 (#2158)"),
    Refusal((Eq("training.trainer", "kto"), IsNot("data.remove_unused_columns", False)),
            "Set `remove_unused_columns: False` when using kto", f"{_V} check_kto_config", "0.6.0",
            "c78de6f21 (#2158)"),
    Refusal((NotIn("training.trainer", "dpo"), Set("training.dpo_loss_mix")),
            "`dpo_loss_type` and `dpo_loss_weights` are for DPO only", f"{_V} check_dpo", "0.17.0",
            "90090fa9e (#3566)",
            unpinned="dpo_loss_type / dpo_loss_weights (90090fa9e, #3566)"),
    Refusal((Eq("training.trainer", "ebft"), Unset("training.ebft")),
            "`ebft` config section is required when `rl: ebft` is set. Add an `ebft:` section with at least `mode: "
            "structured` or `mode: strided`.", f"{_V} check_ebft_config_required", "0.16.0", "c50c4acbf (#3527)",
            unpinned="rl: ebft (c50c4acbf, #3527)"),
    # -- parallelism, optimizers, memory -----------------------------------------------------------
    Refusal((Set("parallel.deepspeed"), Set("parallel.fsdp_options")), "deepspeed and fsdp cannot be used together.",
            f"{_V} check_fsdp_deepspeed", "0.5.0", "3fd809371 (#1388)"),
    Refusal((Eq("optimizer.name", "muon"), Set("parallel.deepspeed")),
            "Muon optimizer is currently incompatible with DeepSpeed", f"{_V} check_muon_deepspeed_fsdp", "0.8.0",
            "df119e372 (#2464)",
            unpinned="optimizer: muon (ae6637415, #2367, v0.8.0)"),
    Refusal((Set("training.deepcompile"), Unset("parallel.deepspeed")), "DeepCompile is only supported with DeepSpeed",
            f"{_V} check_deepcompile", "0.12.0", "cd079b553 (#2574)", unpinned="deepcompile"),
    Refusal((Contains("model.name", "falcon"), Set("parallel.fsdp_options")), "FSDP is not supported for falcon models",
            f"{_V} check_falcon_fsdp", "0.2.1", "babf0fdb7"),
    Refusal((Contains("model.name", "mpt"), Set("memory.gradient_checkpointing")),
            "gradient_checkpointing is not supported for MPT models", f"{_V} check_mpt_checkpointing", "0.2.1",
            "14668fa54"),
    Refusal((Set("memory.activation_offload"), Unset("memory.gradient_checkpointing")),
            "activation_offloading requires gradient_checkpointing", f"{_V} check_activation_offloading_wo_gc",
            "0.12.0", "99187cd20 (#2900)",
            unpinned="activation_offloading (99187cd20, #2900)"),
    Refusal((Set("memory.selective_checkpointing"), Unset("memory.gradient_checkpointing")),
            "selective_checkpointing requires gradient_checkpointing", f"{_V} check_selective_checkpointing",
            "0.18.0", "f51fa20a9",
            unpinned="selective_checkpointing (f51fa20a9)"),
    Refusal((Set("training.unfrozen_parameters"), Eq("memory.checkpointing_reentrant", True)),
            "`use_reentrant` must be false when used with partially frozen model.",
            f"{_V} check_use_reentrant_mismatch", "0.4.0", "6910e6a8c (#1142)"),
    Refusal((Set("memory.max_memory"), Set("memory.gpu_memory_limit")),
            "max_memory and gpu_memory_limit are mutually exclusive and cannot be used together.",
            f"{_V} check_mem_mismatch", "0.4.0", "bdfefaf05 (#918)"),
    Refusal((Set("training.neftune"), Set("training.neftune_legacy")),
            "noisy_embedding_alpha is deprecated, use neftune_noise_alpha; both are set, please remove the deprecated "
            "noisy_embedding_alpha setting", f"{_V} check_neftune", "0.4.0", "ef2434253"),
    Refusal((Set("training.torch_compile_options"), Unset("training.torch_compile")),
            "torch_compile_options is set but torch_compile is not enabled. Set torch_compile: true (or torch_compile: "
            "auto) to use these flags.", f"{_C} check_torch_compile_options_requires_compile", "0.18.0", "f3e434f74",
            unpinned="torch_compile_options (f3e434f74)"),
    # -- dropped since: refused only by the releases between `since` and `until` -------------------
    # v0.4.0's form had no test_datasets exemption (utils/config.py validate_config, #633); 8c2e05ade
    # (#1245, first in v0.5.0) added `and not cfg.test_datasets`. early_stopping_patience needs
    # eval_steps, so on 0.4.0 a test_datasets run with early stopping stops here (axolotl#1286).
    Refusal((Eq("eval.val_set_size", 0), Set("checkpoint.eval_steps"), Set("eval.test_datasets")),
            "eval_steps and evaluation_strategy are not supported with val_set_size == 0",
            "utils/config.py validate_config (v0.4.0)", "0.4.0", "383f88d7a (#633)", until="0.5.0",
            note="test_datasets does not exempt the eval set from this check before 0.5.0"),
    # The legacy attention flags were fields typed Optional[bool] / bool | None from the pydantic
    # schema (cc3cebfa7, #1239, v0.5.0) to v0.16.x; e4032fc90 (#3602, v0.17.0) pops them in
    # normalize_attn_implementation before the fields are validated, whatever their value.
    Refusal((NotLaxBool("attention.legacy_flag_written"),),
            "Input should be a valid boolean, unable to interpret input",
            f"{_C} AxolotlInputConfig (pydantic field validation, bool | None)", "0.5.0", "cc3cebfa7 (#1239)",
            until="0.17.0", note="a legacy attention flag (xformers_attention, flash_attention, sdp_attention, "
            "eager_attention) written as a value that is no boolean, such as an empty string"),
    Refusal((Set("sequence.packing"), Set("attention.xformers_flag")),
            "sample_packing not compatible with xformers_attention. Use flash_attention",
            f"{_V} check_sample_packing_w_xformers (v0.9.0)", "0.3.0", "2bb0b7897 (#285)", until="0.9.1"),
    Refusal((Set("parallel.deepspeed"), Set("training.torch_compile")),
            "torch_compile should be set within your deepspeed config file",
            f"{_V} check_torch_compile_deepspeed (v0.12.2)", "0.5.0", "8619b2d85 (#1763)", until="0.13.0"),
    Refusal((Set("adapter.kernels"), _RL),
            "lora_mlp_kernel, lora_qkv_kernel, and lora_o_kernel are not compatible with RL at the moment.",
            f"{_V} check_lora_kernels_rl (v0.15.0)", "0.10.0", "e33f22543 (#2706)", until="0.16.0"),
    Refusal((Set("adapter.kernels"), Set("adapter.dora")),
            "lora_mlp_kernel, lora_qkv_kernel, and lora_o_kernel are not compatible with DoRA at the moment.",
            f"{_V} check_lora_kernels_dora (v0.15.0)", "0.12.0", "e758343ca (#2992)", until="0.16.0"),
    # utils/models.py check_model_config, run at launch by normalize_config (utils/config.py; utils/config/
    # __init__.py from v0.5.0) through load_model_config, right after the validation: any saved
    # quantization_config without `gptq: true` (a581e9f8f #913, v0.4.0); from 7830fe04b (#1767, v0.5.0) not with
    # load_in_4bit, nor for a multimodal model (its text_config is read); removed by e0420b352 (#2511, v0.9.0).
    Refusal((Unset("quantization.gptq"), FromRelease("0.5.0", NotIn("quantization.bits", 4), Unset("model.multimodal")),
             SavedQuantized()),
            "model_config.quantization_config is set but `gptq` flag is not. Please use the `gptq` flag to train "
            "quantized model or point to a non-quantized model.",
            "utils/models.py check_model_config (v0.8.1; load_in_4bit exempt from v0.5.0)", "0.4.0",
            "a581e9f8f (#913)", until="0.9.0", outside_validation=True),
    Refusal((Eq("training.trainer", "kto"), Set("memory.gradient_checkpointing"),
             Unset("memory.checkpointing_reentrant")),
            "Set `gradient_checkpointing_kwargs: {use_reentrant: true}` for when kto is enabled",
            f"{_V} check_kto_config (v0.7.1)", "0.6.0", "c78de6f21 (#2158)", until="0.8.0"),
) + LATER_ROWS + FOURTH_ROWS + FIFTH_ROWS  # rules/refusal_rows.py (second and third audits), _fourth.py, _fifth.py
