"""TRN025 axolotl-config-refused: every row of rules/refusal_table.py fires on a config that
Axolotl's validation refuses, a neighbouring config it accepts stays silent, and a pinned
Axolotl older than the row's release (or no pin at all) keeps the row silent."""

from __future__ import annotations

import json

import pytest

from conftest import FIXTURES, trainlint
from linter import registry

DEL = object()
BASE = {
    "base_model": "NousResearch/Llama-2-7b-hf",
    "datasets": [{"path": "tatsu-lab/alpaca", "type": "alpaca"}],
    "micro_batch_size": 2,
    "gradient_accumulation_steps": 4,
}
_TEST_SETS = [{"path": "tatsu-lab/alpaca", "type": "alpaca", "split": "test"}]
_EVAL = {"val_set_size": 0.05}
_LORA = {"adapter": "lora"}
_QAT = {"qat": {"weight_dtype": "int8"}}
_MISTRAL = {"tokenizer_use_mistral_common": True}
_MOE = {"adapter": "lora", "load_in_8bit": True, "quantize_moe_experts": True}
_FSDP2 = {"fsdp_version": 2, "fsdp_config": {"reshard_after_forward": True}}

# (a piece of the row's message, settings that fire it, a neighbour that does not)
CASES = [
    ("either datasets or pretraining_dataset", {"datasets": DEL},
     {"datasets": DEL, "pretraining_dataset": "allenai/c4", "max_steps": 100}),
    ("push_dataset_to_hub", {"push_dataset_to_hub": "me/ds"},
     {"push_dataset_to_hub": "me/ds", "hf_use_auth_token": True}),
    ("non-zero val_set_size", {"test_datasets": _TEST_SETS, "val_set_size": 0.05},
     {"test_datasets": _TEST_SETS, "val_set_size": 0}),
    ("using iterable pretraining_dataset", {"pretraining_dataset": "allenai/c4"},
     {"pretraining_dataset": "allenai/c4", "max_steps": 100}),
    ("not supported with pretraining_dataset", {"pretraining_dataset": "allenai/c4", "max_steps": 100, **_EVAL},
     {"pretraining_dataset": "allenai/c4", "max_steps": 100, "test_datasets": _TEST_SETS}),
    ("not supported with streaming datasets", {"streaming": True, "max_steps": 100, **_EVAL},
     {"streaming": True, "max_steps": 100}),
    ("when using streaming datasets", {"streaming": True}, {"streaming": True, "max_steps": 100}),
    ("not available for streaming", {"dataset_exact_deduplication": True, "streaming": True, "max_steps": 100},
     {"dataset_exact_deduplication": True}),
    ("has no effect when skip_prepare_dataset", {"dataset_exact_deduplication": True, "skip_prepare_dataset": True},
     {"dataset_exact_deduplication": True}),
    ("include_tokens_per_second cannot", {"pretraining_dataset": "allenai/c4", "max_steps": 100,
                                          "include_tokens_per_second": True},
     {"pretraining_dataset": "allenai/c4", "max_steps": 100, "include_tokens_per_second": False}),
    ("section is required when `rl: ebft`", {"rl": "ebft"}, {"rl": "ebft", "ebft": {"mode": "structured"}}),
    ("At least two of", {"gradient_accumulation_steps": DEL}, {"gradient_accumulation_steps": DEL, "batch_size": 8}),
    ("only one of gradient_accumulation_steps", {"batch_size": 16},
     {"gradient_accumulation_steps": DEL, "batch_size": 16}),
    ("warmup_steps and warmup_ratio", {"warmup_steps": 10, "warmup_ratio": 0.1}, {"warmup_ratio": 0.1}),
    ("simpo trainer", {"rl": "simpo", "warmup_ratio": 0.1}, {"rl": "simpo", "warmup_steps": 10}),
    ("save_strategy and save_steps mismatch", {"save_strategy": "epoch", "save_steps": 100},
     {"save_strategy": "steps", "save_steps": 100}),
    ("save_steps and saves_per_epoch", {"saves_per_epoch": 2, "save_steps": 100}, {"saves_per_epoch": 2}),
    ("'best' requires metric_for_best_model", {"save_strategy": "best"},
     {"save_strategy": "best", "metric_for_best_model": "eval_loss"}),
    ("eval_strategy and eval_steps mismatch", {**_EVAL, "eval_strategy": "epoch", "eval_steps": 50},
     {**_EVAL, "eval_strategy": "steps", "eval_steps": 50}),
    ("eval_steps and eval_strategy are not supported", {"val_set_size": 0, "eval_steps": 50},
     {"val_set_size": 0, "eval_steps": 50, "test_datasets": _TEST_SETS}),
    ("eval_steps and evals_per_epoch", {**_EVAL, "evals_per_epoch": 4, "eval_steps": 50},
     {**_EVAL, "evals_per_epoch": 4}),
    ("must be empty or set to `steps`", {**_EVAL, "evals_per_epoch": 4, "eval_strategy": "epoch"},
     {**_EVAL, "evals_per_epoch": 4, "eval_strategy": "steps"}),
    ("do_bench_eval requires", {"do_bench_eval": True}, {"do_bench_eval": True, "evals_per_epoch": 2}),
    ("eval_table_size and eval_sample_packing", {"sample_packing": True, "eval_table_size": 5},
     {"sample_packing": True, "eval_table_size": 5, "eval_sample_packing": False}),
    ("requires save_steps and eval_steps to be set", {"early_stopping_patience": 3, "eval_steps": 50},
     {"early_stopping_patience": 3, "eval_steps": 50, "save_steps": 100}),
    ("requires that eval_steps should evenly divide",
     {"early_stopping_patience": 3, "eval_steps": 30, "save_steps": 100},
     {"early_stopping_patience": 3, "eval_steps": 30, "save_steps": 90}),
    ("Can't load qlora in 8bit", {"adapter": "qlora", "load_in_8bit": True}, {**_LORA, "load_in_8bit": True}),
    ("Require cfg.load_in_4bit", {"adapter": "qlora"}, {"adapter": "qlora", "load_in_4bit": True}),
    ("used with `peft_layers_to_transform`",
     {**_LORA, "peft_layers_to_transform": [0, 1], "unfrozen_parameters": ["^lm_head.weight$"]},
     {**_LORA, "peft_layers_to_transform": [0, 1]}),
    ("peft_layers_pattern requires", {**_LORA, "peft_layers_pattern": ["layers"]},
     {**_LORA, "peft_layers_pattern": ["layers"], "peft_layers_to_transform": [0]}),
    ("Fused modules", {**_LORA, "flash_attn_fuse_mlp": True}, {"flash_attn_fuse_mlp": True}),
    ("8-bit LoRA", {**_LORA, "load_in_8bit": True, "lora_mlp_kernel": True}, {**_LORA, "lora_mlp_kernel": True}),
    ("compatible with trust_remote_code", {**_LORA, "lora_qkv_kernel": True, "trust_remote_code": True},
     {**_LORA, "lora_qkv_kernel": False, "trust_remote_code": True}),
    ("lora_dropout must be 0", {**_LORA, "lora_target_parameters": ["mlp.experts.gate_up_proj"], "lora_dropout": 0.05},
     {**_LORA, "lora_target_parameters": ["mlp.experts.gate_up_proj"], "lora_dropout": 0.0}),
    ("lr_groups and loraplus_lr_ratio",
     {**_LORA, "lr_groups": [{"name": "o", "modules": ["o_proj"], "lr": 1e-4}], "loraplus_lr_ratio": 16},
     {**_LORA, "loraplus_lr_ratio": 16}),
    ("model_quantization_config and load_in", {"model_quantization_config": "Mxfp4Config", "adapter": "qlora",
                                               "load_in_4bit": True},
     {"model_quantization_config": "Mxfp4Config", **_LORA}),
    ("QAT and load_in_8bit", {**_QAT, "load_in_8bit": True}, _QAT),
    ("QAT and load_in_4bit", {**_QAT, "load_in_4bit": True}, {**_QAT, "load_in_4bit": False}),
    ("revision_of_model is not supported for GPTQ", {**_LORA, "gptq": True, "revision_of_model": "gptq-4bit"},
     {**_LORA, "gptq": True}),
    ("does not work with RLHF", {"rl": "dpo", "sample_packing": True}, {"rl": "dpo"}),
    ("sample_packing is not supported with kto", {"rl": "kto", "remove_unused_columns": False,
                                                  "eval_sample_packing": True},
     {"rl": "kto", "remove_unused_columns": False}),
    ("remove_unused_columns: False", {"rl": "kto"}, {"rl": "kto", "remove_unused_columns": False}),
    ("are for DPO only", {"rl": "orpo", "dpo_loss_type": ["sigmoid"]}, {"rl": "dpo", "dpo_loss_type": ["sigmoid"]}),
    ("deepspeed and fsdp", {"deepspeed": "ds.json", "fsdp": ["full_shard"]}, {"deepspeed": "ds.json"}),
    ("Muon optimizer is currently incompatible with DeepSpeed", {"optimizer": "muon", "deepspeed": "ds.json"},
     {"optimizer": "muon"}),
    ("DeepCompile", {"deepcompile": True}, {"deepcompile": True, "deepspeed": "ds.json"}),
    ("falcon", {"base_model": "tiiuae/falcon-7b", "fsdp": ["full_shard"]}, {"base_model": "tiiuae/falcon-7b"}),
    ("MPT", {"base_model": "mosaicml/mpt-7b", "gradient_checkpointing": True},
     {"base_model": "mosaicml/mpt-7b", "gradient_checkpointing": False}),
    ("activation_offloading requires", {"activation_offloading": True},
     {"activation_offloading": True, "gradient_checkpointing": True}),
    ("selective_checkpointing requires gradient", {"selective_checkpointing": True},
     {"selective_checkpointing": True, "gradient_checkpointing": True}),
    ("partially frozen", {"unfrozen_parameters": ["^lm_head.weight$"], "gradient_checkpointing": True,
                          "gradient_checkpointing_kwargs": {"use_reentrant": True}},
     {"unfrozen_parameters": ["^lm_head.weight$"], "gradient_checkpointing": True,
      "gradient_checkpointing_kwargs": {"use_reentrant": False}}),
    ("max_memory and gpu_memory_limit", {"max_memory": {"0": "20GiB"}, "gpu_memory_limit": "20GiB"},
     {"gpu_memory_limit": "20GiB"}),
    ("noisy_embedding_alpha", {"neftune_noise_alpha": 5, "noisy_embedding_alpha": 5}, {"neftune_noise_alpha": 5}),
    ("torch_compile_options is set but", {"torch_compile_options": {"max_autotune_gemm": True}},
     {"torch_compile_options": {"max_autotune_gemm": True}, "torch_compile": True}),
    # second audit (rules/refusal_rows.py)
    ("set to 'jinja'", {"chat_template": "jinja"}, {"chat_template": "jinja", "chat_template_jinja": "{{ messages }}"}),
    ("added_tokens_overrides is not supported", {**_MISTRAL, "added_tokens_overrides": {"10": "<tool>"}},
     {"added_tokens_overrides": {"10": "<tool>"}}),
    ("special_tokens override", {**_MISTRAL, "special_tokens": {"pad_token": "<pad>"}}, _MISTRAL),
    ("tokens override", {**_MISTRAL, "tokens": ["<tool>"]}, {"tokens": ["<tool>"]}),
    ("Setting chat_template is not supported", {**_MISTRAL, "chat_template": "chatml"}, {"chat_template": "chatml"}),
    ("processor_kwargs is not supported", {**_MISTRAL, "processor_kwargs": {"use_fast": True}},
     {"processor_kwargs": {"use_fast": True}}),
    ("cannot be combined with legacy", {"attn_implementation": "flash_attention_2", "flash_attention": True},
     {"attn_implementation": "flash_attention_2", "flash_attention": False}),
    ("is not accepted", {"attn_implementation": "flash"}, {"attn_implementation": "flash_attention_2"}),
    ("requires a varlen-capable", {"batch_flattening": True}, {"batch_flattening": "auto"}),
    ("not compatible with sample_packing", {"batch_flattening": True, "sample_packing": True, "flash_attention": True},
     {"batch_flattening": "auto", "sample_packing": True, "flash_attention": True}),
    ("lora_target_linear is not compatible", {**_MOE, "lora_target_linear": True}, _MOE),
    ("requires adapter: lora or qlora", {"quantize_moe_experts": True}, {"quantize_moe_experts": False}),
    ("requires load_in_4bit or load_in_8bit", {**_LORA, "quantize_moe_experts": True}, _MOE),
    ("requires FSDP to be enabled", {"fp32_norms": True}, {"fp32_norms": True, **_FSDP2}),
    ("requires fsdp_version: 2", {"fp32_norms": True, "fsdp_config": _FSDP2["fsdp_config"]}, {"fp32_norms": True, **_FSDP2}),
    ("FSDP2 does not support load_in_8bit", {"rl": "dpo", "adapter": "qlora", "load_in_4bit": True, **_FSDP2},
     {"rl": "dpo", "adapter": "qlora", "load_in_4bit": True, **_FSDP2, "fsdp_version": 1}),
    ("Only one cross entropy", {"liger_cross_entropy": True, "cut_cross_entropy": True}, {"cut_cross_entropy": True}),
    ("FSDP1 does not support disabling", {"fsdp_config": {"offload_params": True, "cpu_offload_pin_memory": False}},
     {**_FSDP2, "fsdp_config": {"offload_params": True, "cpu_offload_pin_memory": False}}),
    ("requires enabling offload_params", {**_FSDP2, "fsdp_config": {"cpu_offload_pin_memory": False}},
     {**_FSDP2, "fsdp_config": {"offload_params": True, "cpu_offload_pin_memory": False}}),
    ("float8_all_gather requires FSDP2", {"fp8_enable_fsdp_float8_all_gather": True, "fsdp_version": 1},
     {"fp8_enable_fsdp_float8_all_gather": True, **_FSDP2}),
    ("not supported for Mxfp4Config", {"model_quantization_config": "Mxfp4Config", **_LORA,
                                       "fsdp_config": {"cpu_ram_efficient_loading": True}},
     {"model_quantization_config": "Mxfp4Config", **_LORA, "fsdp_config": {"cpu_ram_efficient_loading": False}}),
    ("invalid regex", {**_LORA, "lora_target_modules": ["*_proj"]}, {**_LORA, "lora_target_modules": [".*_proj"]}),
    ("do_causal_lm_eval is enabled", {**_EVAL, "do_causal_lm_eval": True, "eval_sample_packing": True},
     {**_EVAL, "do_causal_lm_eval": True, "eval_sample_packing": False}),
    ("jagged_restart_steps must be set", {**_LORA, "relora": True}, {**_LORA, "relora": True, "jagged_restart_steps": 100}),
    # third audit (rules/refusal_rows.py)
    ("GRPO requires `trl.num_generations >= 2`", {"rl": "grpo", "trl": {"num_generations": 1}},
     {"rl": "grpo", "trl": {"num_generations": 2}}),
    ("generation batch size must be divisible", {"rl": "grpo", "trl": {"num_generations": 3}},
     {"rl": "grpo", "trl": {"num_generations": 3, "generation_batch_size": 12}}),
    ("min_num_params is required", {**_FSDP2, "fsdp_config": {"fsdp_auto_wrap_policy": "SIZE_BASED_WRAP"}},
     {**_FSDP2, "fsdp_config": {"auto_wrap_policy": "SIZE_BASED_WRAP", "min_num_params": 100000000}}),
    ("Flash optimizers only support DDP and FSDP2", {"optimizer": "flash_adamw", "deepspeed": "ds.json"},
     {"optimizer": "flash_adamw"}),
    ("to use flash optimizers with FSDP", {"optimizer": "flash_lion", "fsdp_config": {"reshard_after_forward": True}},
     {"optimizer": "flash_lion", **_FSDP2}),
    ("tensor_parallel_size is not supported", {"tensor_parallel_size": 2, "optimizer": "adamw_bnb_8bit"},
     {"tensor_parallel_size": 2, "optimizer": "adamw_torch_fused"}),
    ("neftune_noise_alpha must be > 0.0", {"neftune_noise_alpha": 0}, {"neftune_noise_alpha": 5}),
    ("save_safetensors=False", {"save_safetensors": False}, {"save_safetensors": True}),
    ("both are set, please remove the deprecated pretrain_multipack",
     {"pretrain_multipack_buffer_size": 10000, "streaming_multipack_buffer_size": 10000},
     {"streaming_multipack_buffer_size": 10000}),
    ("`max_packed_sequence_len` is no longer", {"max_packed_sequence_len": 2048}, {"max_packed_sequence_len": 0}),
    ("`dpo_use_logits_to_keep` is no longer", {"rl": "dpo", "dpo_use_logits_to_keep": True},
     {"rl": "dpo", "dpo_use_logits_to_keep": None}),
    ("`dpo_generate_during_eval` is no longer", {"rl": "dpo", "dpo_generate_during_eval": False}, {"rl": "dpo"}),
    ("`dpo_norm_loss` is no longer", {"rl": "dpo", "dpo_norm_loss": True}, {"rl": "dpo"}),
    ("`rpo_alpha` has been deprecated", {"rl": "dpo", "rpo_alpha": 0.5}, {"rl": "dpo"}),
    # fourth audit (rules/refusal_rows_fourth.py)
    ("Muon optimizer is only compatible with FSDP2", {"optimizer": "muon", "fsdp": ["full_shard"]},
     {"optimizer": "muon", "fsdp": ["full_shard"], "fsdp_version": 2}),
    ("incompatible with adapter=", {"optimizer": "q_galore_adamw8bit", **_LORA}, {"optimizer": "q_galore_adamw8bit"}),
    ("q_galore_adamw8bit is not yet validated with DeepSpeed", {"optimizer": "q_galore_adamw8bit", "deepspeed": "ds.json"},
     {"optimizer": "adamw_8bit", "deepspeed": "ds.json"}),
    ("q_galore_adamw8bit requires FSDP2", {"optimizer": "q_galore_adamw8bit", "fsdp_config": {"use_orig_params": True}},
     {"optimizer": "q_galore_adamw8bit", "fsdp_version": 2, "fsdp_config": {"use_orig_params": True}}),
    ("requires fsdp_config.use_orig_params=True", {"optimizer": "q_galore_adamw8bit", **_FSDP2},
     {"optimizer": "q_galore_adamw8bit", "fsdp_version": 2, "fsdp_config": {"fsdp_use_orig_params": True}}),
    ("scaling_softmax requires flex attention", {"scaling_softmax": True},
     {"scaling_softmax": True, "flex_attention": True}),
    ("gemma4_hybrid_attn_impl requires", {"gemma4_hybrid_attn_impl": True, "attn_implementation": "sdpa"},
     {"gemma4_hybrid_attn_impl": True}),
    ("is not a recognized backend", {"attn_implementation": "flash_attn"},
     {"attn_implementation": "kernels-community/flash-attn3"}),
    ("large_head_attention must be one of", {"large_head_attention": "triton"}, {"large_head_attention": "Triton_Flash"}),
    ("context_parallel_size > 1 requires flash attention", {"context_parallel_size": 2, "attn_implementation": "sdpa"},
     {"context_parallel_size": 2, "attn_implementation": "flash_attention_3"}),
    ("ring-flash-attn", {"context_parallel_size": 2, "flash_attention": True, "sample_packing": True},
     {"context_parallel_size": 2, "flash_attention": True, "sample_packing": True, "micro_batch_size": 1}),
    ("GRPO + SP + Liger", {"rl": "grpo", "trl": {"use_liger_loss": True}, "context_parallel_size": 2,
                           "flash_attention": True},
     {"rl": "grpo", "trl": {"use_liger_loss": True}, "context_parallel_size": 1}),
    ("multiple streaming datasets", {"streaming": True, "max_steps": 100, "sample_packing": True,
                                     "datasets": [{"path": "a/b", "type": "alpaca"}, {"path": "c/d", "type": "alpaca"}]},
     {"streaming": True, "max_steps": 100, "sample_packing": True}),
    ("required when chat_template is set to jinja", {"datasets": [{"path": "a/b", "type": "chat_template",
                                                                   "chat_template": "jinja"}]},
     {"datasets": [{"path": "a/b", "type": "chat_template", "chat_template": "jinja",
                    "chat_template_jinja": "{{ messages }}"}]}),
    ("eval_causal_lm_metrics must be one of", {"do_causal_lm_eval": True, "eval_causal_lm_metrics": ["bleu"]},
     {"do_causal_lm_eval": True, "eval_causal_lm_metrics": ["sacrebleu", "chrf"]}),
    ("beta and trl.beta must match", {"rl": "dpo", "beta": 0.1, "trl": {"beta": 0.2}},
     {"rl": "dpo", "beta": 0.1, "trl": {"beta": 0.1}}),
    ("but GDPO was selected", {"rl": "gdpo", "trl": {"multi_objective_aggregation": "sum_then_normalize"}},
     {"rl": "grpo", "trl": {"multi_objective_aggregation": "sum_then_normalize"}}),
    ("`dpo_loss_weights` requires `dpo_loss_type`", {"rl": "dpo", "dpo_loss_weights": [1.0]},
     {"rl": "dpo", "dpo_loss_weights": [1.0], "dpo_loss_type": ["sigmoid"]}),
    ("must be the same length", {"rl": "dpo", "dpo_loss_type": ["sigmoid", "sft"], "dpo_loss_weights": [1.0]},
     {"rl": "dpo", "dpo_loss_type": ["sigmoid", "sft"], "dpo_loss_weights": [1.0, 0.5]}),
    ("`torch_compile: true` with `gradient_checkpointing: true`",
     {"rl": "ebft", "ebft": {"mode": "strided"}, "torch_compile": True, "gradient_checkpointing": True},
     {"rl": "ebft", "ebft": {"mode": "structured"}, "torch_compile": True, "gradient_checkpointing": True}),
    ("`activation_offloading: true` is incompatible", {"rl": "ebft", "ebft": {"mode": "strided"},
                                                       "activation_offloading": True, "flex_attention": True,
                                                       "gradient_checkpointing": True},
     {"rl": "ebft", "ebft": {"mode": "strided"}, "flex_attention": True, "gradient_checkpointing": True}),
    ("Can't merge qlora if gptq", {"adapter": "qlora", "gptq": True, "merge_lora": True},
     {"adapter": "lora", "gptq": True, "merge_lora": True}),
    ("Can't load qlora if gptq", {"adapter": "qlora", "gptq": True}, {"adapter": "lora", "gptq": True}),
    ("QAT and PEFT", {**_QAT, "peft": {"loftq_config": {"loftq_bits": 4}}}, _QAT),
    ("not supported with use_onebitllms", {"use_onebitllms": True, **_LORA}, {"use_onebitllms": True}),
    ("cfg.adapter must support ReLoRA", {"relora": True, "jagged_restart_steps": 100},
     {"relora": True, "jagged_restart_steps": 100, **_LORA}),
    ("fsdp not supported with ReLoRA", {**_LORA, "relora": True, "jagged_restart_steps": 100, "fsdp": ["full_shard"]},
     {**_LORA, "relora": True, "jagged_restart_steps": 100}),
    ("deepspeed not supported with ReLoRA", {**_LORA, "relora": True, "jagged_restart_steps": 100,
                                             "deepspeed": "ds.json"},
     {**_LORA, "relora": True, "jagged_restart_steps": 100}),
    ("requires non-reentrant checkpointing", {"selective_checkpointing": True, "gradient_checkpointing": True,
                                              "gradient_checkpointing_kwargs": {"use_reentrant": True}},
     {"selective_checkpointing": True, "gradient_checkpointing": True,
      "gradient_checkpointing_kwargs": {"use_reentrant": False}}),
    ("only compatible with activation_offloading: hidden_states",
     {"selective_checkpointing": True, "gradient_checkpointing": True, "activation_offloading": "legacy"},
     {"selective_checkpointing": True, "gradient_checkpointing": True, "activation_offloading": "hidden_states"}),
    ("nemotron_h requires sample_packing", {"base_model": "nvidia/Nemotron-H-8B-Base-8K", "gradient_checkpointing": True},
     {"base_model": "nvidia/Nemotron-H-8B-Base-8K", "gradient_checkpointing": True, "sample_packing": True}),
    ("disallowed inductor flags", {"torch_compile": True, "torch_compile_options": {"max_autotune": True}},
     {"torch_compile": True, "torch_compile_options": {"max_autotune_gemm": True}}),
    # fifth audit (rules/refusal_rows_fifth.py)
    ("AMP is not supported with BetterTransformer", {"flash_optimum": True, "fp16": True},
     {"flash_optimum": True, "bf16": False}),
    ("not compatible with the one_cycle", {**_LORA, "relora": True, "jagged_restart_steps": 100,
                                           "lr_scheduler": "one_cycle"},
     {**_LORA, "relora": True, "jagged_restart_steps": 100, "lr_scheduler": "cosine"}),
    ("match matmul ops", {**_LORA, "gradient_checkpointing": True, "selective_checkpointing": {"save": ["mm"]}},
     {**_LORA, "gradient_checkpointing": True, "selective_checkpointing": {"save": ["attention"]}}),
    ("Conflicting message role fields",
     {"datasets": [{"path": "a/b", "type": "chat_template", "message_field_role": "from",
                    "message_property_mappings": {"role": "speaker"}}]},
     {"datasets": [{"path": "a/b", "type": "chat_template", "message_field_role": "speaker",
                    "message_property_mappings": {"role": "speaker"}}]}),
    ("Conflicting message content fields",
     {"datasets": [{"path": "a/b", "type": "chat_template", "message_field_content": "value",
                    "message_property_mappings": {"content": "text"}}]},
     {"rl": "dpo", "datasets": [{"path": "a/b", "type": "chat_template", "message_field_content": "value",
                                 "message_property_mappings": {"content": "text"}}]}),
]
# Checks Axolotl dropped later: (piece, fires, neighbour, a release that has the check)
DROPPED = [
    # a legacy attention flag written empty: no boolean for pydantic (v0.5.0-v0.16.x), popped from v0.17.0
    ("Input should be a valid boolean", {"xformers_attention": ""}, {"xformers_attention": False}, "0.16.1"),
    ("xformers_attention", {"sample_packing": True, "xformers_attention": True},
     {"sample_packing": True, "flash_attention": True}, "0.8.1"),
    ("torch_compile should be set", {"deepspeed": "ds.json", "torch_compile": True}, {"torch_compile": True}, "0.12.2"),
    ("compatible with RL", {**_LORA, "rl": "dpo", "lora_mlp_kernel": True}, {**_LORA, "rl": "dpo"}, "0.15.0"),
    ("compatible with DoRA", {**_LORA, "peft_use_dora": True, "lora_o_kernel": True}, {**_LORA, "peft_use_dora": True},
     "0.12.0"),
    ("for when kto is enabled", {"rl": "kto", "remove_unused_columns": False, "gradient_checkpointing": True},
     {"rl": "kto", "remove_unused_columns": False, "gradient_checkpointing": True,
      "gradient_checkpointing_kwargs": {"use_reentrant": True}}, "0.7.1"),
    # v0.4.0's form: test_datasets did not exempt the eval set yet (axolotl#1286)
    ("evaluation_strategy are not supported", {"val_set_size": 0, "eval_steps": 50, "test_datasets": _TEST_SETS},
     {"val_set_size": 0, "test_datasets": _TEST_SETS}, "0.4.0"),
    ("Muon optimizer is currently incompatible with DeepSpeed and FSDP", {"optimizer": "muon", **_FSDP2},
     {"optimizer": "muon"}, "0.13.0"),
    ("is set but `gptq` flag is not", {"base_model": "TheBloke/Llama-2-7B-GPTQ"},
     {"base_model": "TheBloke/Llama-2-7B-GPTQ", "gptq": True}, "0.8.1"),
]
# The release before each row's first release (git tag --sort=creatordate).
_BEFORE = {"0.2.1": "0.2.0", "0.3.0": "0.2.1", "0.4.0": "0.3.0", "0.5.0": "0.4.0", "0.5.1": "0.5.0",
           "0.6.0": "0.5.2", "0.7.0": "0.6.0", "0.8.0": "0.7.1", "0.10.0": "0.9.2", "0.11.0": "0.10.1", "0.12.0": "0.11.0", "0.13.0": "0.12.2", "0.13.1": "0.13.0", "0.13.2": "0.13.1", "0.14.0": "0.13.2",
           "0.15.0": "0.14.0", "0.16.0": "0.15.0", "0.17.0": "0.16.1", "0.18.0": "0.17.0"}
_IDS = [piece for piece, _, _ in CASES]


@pytest.fixture(autouse=True)
def _pins_only(nothing_installed):
    """Versions come from the pins each test writes (conftest.nothing_installed)."""


def _refusals():
    """The table, imported after the registry has loaded the rule packs (importing `rules`
    first would make the registry report the built-in pack as empty)."""
    registry.all_rules()
    from rules.refusal_table import REFUSALS

    return REFUSALS


def _row(piece: str):
    rows = [row for row in _refusals() if piece in row.message]
    if len(rows) > 1 and any(row.message == piece for row in rows):  # one message begins another
        rows = [row for row in rows if row.message == piece]
    if len(rows) > 1:  # "tokens override" is also inside "special_tokens override": the row it begins
        rows = [row for row in rows if row.message.startswith(piece)]
    assert len(rows) == 1, (piece, len(rows))
    return rows[0]


def _config(tmp_path, settings: dict, pin: str | None = "0.18.0", name: str = "axolotl.yaml"):
    merged = {**BASE, **settings}
    text = "".join(f"{key}: {json.dumps(value)}\n" for key, value in merged.items() if value is not DEL)
    (tmp_path / name).write_text(text)
    if pin:
        (tmp_path / "requirements.txt").write_text(f"axolotl=={pin}\n")
    return tmp_path / name


def _messages(path) -> list[str]:
    result = trainlint("check", path, "--no-detect", "--format", "json", "--select", "TRN025")
    assert result.code in (0, 1), result.err
    return [finding["message"] for finding in json.loads(result.out)]


# Rows that need the torch version (a pin beside the config): test_torch_floors
_TORCH_ROWS = ["ADOPT optimizer is incompatible", "Flex attention is not supported", "QAT is not supported on torch",
               "FSDP2 is not supported on torch"]


def test_every_row_has_a_case():
    pieces = _IDS + [piece for piece, *_ in DROPPED] + _TORCH_ROWS
    assert sorted(id(_row(piece)) for piece in pieces) == sorted(id(row) for row in _refusals())


def test_base_config_is_accepted(tmp_path):
    assert _messages(_config(tmp_path, {})) == []


@pytest.mark.parametrize("piece, fire, neighbour", CASES, ids=_IDS)
def test_row_fires_and_its_neighbour_does_not(tmp_path, piece, fire, neighbour):
    found = _messages(_config(tmp_path, fire))
    assert any(piece in message for message in found), found
    assert "axolotl 0.18.0" in found[0] and "refuses this config at launch" in found[0]
    (tmp_path / "clean").mkdir()
    assert _messages(_config(tmp_path / "clean", neighbour)) == []


@pytest.mark.parametrize("piece, fire, neighbour", CASES, ids=_IDS)
def test_row_silent_before_its_release_and_without_a_pin(tmp_path, piece, fire, neighbour):
    """Unpinned, only a row whose check came with the key it tests fires (every release that reads
    the key refuses it); pinned before the check, only a row whose older releases fail otherwise."""
    row = _row(piece)
    found = _messages(_config(tmp_path, fire, pin=None))
    assert any(piece in message for message in found) == bool(row.unpinned), found
    if row.unpinned:
        assert f"every axolotl release that reads {row.unpinned}" in found[0] and f"from {row.since}" in found[0]
        (tmp_path / "clean").mkdir()
        assert _messages(_config(tmp_path / "clean", neighbour, pin=None)) == []
    if row.since in _BEFORE:
        (tmp_path / "old").mkdir()
        found = _messages(_config(tmp_path / "old", fire, pin=_BEFORE[row.since]))
        assert any(piece in message for message in found) == bool(row.before), found


def test_target_parameters_with_dropout_fails_in_peft_before_the_check(tmp_path):
    settings = {**_LORA, "lora_target_parameters": ["mlp.experts.gate_up_proj"], "lora_dropout": 0.05}
    found = _messages(_config(tmp_path, settings, pin="0.12.0"))
    assert len(found) == 1 and "ParamWrapper does not work with lora_dropout" in found[0], found
    (tmp_path / "older").mkdir()  # 0.11.x does not read lora_target_parameters: PEFT never sees it
    assert _messages(_config(tmp_path / "older", settings, pin="0.11.0")) == []


@pytest.mark.parametrize("piece, fire, neighbour, inside", DROPPED, ids=[piece for piece, *_ in DROPPED])
def test_dropped_check_fires_only_while_axolotl_had_it(tmp_path, piece, fire, neighbour, inside):
    row = _row(piece)
    found = _messages(_config(tmp_path, fire, pin=inside))
    assert any(piece in message for message in found) and f"dropped in {row.until}" in found[0], found
    for name, settings, pin in (("clean", neighbour, inside), ("after", fire, row.until), ("head", fire, "0.18.0"),
                                ("before", fire, _BEFORE[row.since])):
        (tmp_path / name).mkdir()
        assert not any(piece in message for message in _messages(_config(tmp_path / name, settings, pin=pin))), name


def test_bettertransformer_without_bf16_refused_from_the_auto_default(tmp_path):
    """bf16 left out: the schema's default "auto" (v0.5.0 on) is AMP to check_better_transformers;
    v0.4.0's DictDefault reads None; `bf16: false` passes; unpinned it is not judged."""
    assert _messages(_config(tmp_path, {"flash_optimum": True}, pin=None)) == []  # unpinned: not judged
    for name, settings, pin, fires in (("head", {"flash_optimum": True}, "0.18.0", True),
                                       ("first", {"flash_optimum": True}, "0.5.0", True),
                                       ("old", {"flash_optimum": True}, "0.4.0", False),
                                       ("off", {"flash_optimum": True, "bf16": False}, "0.18.0", False)):
        (tmp_path / name).mkdir()
        found = _messages(_config(tmp_path / name, settings, pin=pin))
        assert any("BetterTransformer" in m for m in found) == fires and len(found) == fires, name


@pytest.mark.parametrize("settings, torch, fires", [
    ({"optimizer": "adopt_adamw"}, "2.5.0", True), ({"optimizer": "adopt_adamw"}, "2.5.1", False),
    ({"flex_attention": True}, "2.5.1", True), ({"attn_implementation": "flex_attention"}, "2.5.1", True),
    ({"flex_attention": True}, "2.6.0", False),
    ({"qat": {"weight_dtype": "int8"}}, "2.5.1", True), ({"qat": {"weight_dtype": "int8"}}, "2.6.0", False),
    ({"fsdp_version": 2, "fsdp_config": {"reshard_after_forward": True}}, "2.6.0", True),
    ({"fsdp_version": 2, "fsdp_config": {"reshard_after_forward": True}}, "2.7.0", False),
    ({"fsdp_version": 2, "fsdp_config": {"reshard_after_forward": True}}, None, False),  # torch unknown
])
def test_torch_floors(tmp_path, settings, torch, fires):
    path = _config(tmp_path, settings)
    if torch:
        (tmp_path / "requirements.txt").write_text(f"axolotl==0.18.0\ntorch=={torch}\n")
    found = [m for m in _messages(path) if "torch version" in m]
    assert len(found) == fires, found


def test_torch_floors_by_release(tmp_path):
    """attn_implementation flex_attention counts from 0.17.0 (0.8.1 to 0.16.x test the flag); each floor only
    from its check's release."""
    for name, settings, pin, fires in (("flag", {"flex_attention": True}, "0.8.1", True),
                                       ("impl", {"attn_implementation": "flex_attention"}, "0.16.0", False),
                                       ("before", {"flex_attention": True}, "0.8.0", False),
                                       ("adopt", {"optimizer": "adopt_adamw"}, "0.5.2", False),
                                       ("fsdp2", {"fsdp_version": 2, "fsdp_config": {"x": 1}}, "0.11.0", False)):
        (tmp_path / name).mkdir()
        path = _config(tmp_path / name, settings, pin=pin)
        (tmp_path / name / "requirements.txt").write_text(f"axolotl=={pin}\ntorch==2.4.0\n")
        assert any("torch version" in m for m in _messages(path)) == fires, name


def test_matmul_saves_need_an_adapter(tmp_path):
    settings = {"gradient_checkpointing": True, "selective_checkpointing": {"save": ["aten::addmm"]}}
    assert _messages(_config(tmp_path, settings)) == []
    (tmp_path / "lora").mkdir()
    assert any("match matmul ops" in m for m in _messages(_config(tmp_path / "lora", {**settings, **_LORA})))


def test_early_stopping_incident_caught():
    folder = FIXTURES / "incidents" / "axolotl-early-stopping-without-steps"
    found = _messages(folder / "train.yaml")
    assert len(found) == 1 and "early_stopping_patience" in found[0] and "axolotl 0.3.0" in found[0]


def test_yaml_no_strategy_stays_silent(tmp_path):
    """An unquoted `no` reads False, which Axolotl's check skips; a quoted one it refuses: undecided."""
    path = _config(tmp_path, {"save_steps": 100})
    path.write_text(path.read_text() + "save_strategy: no\n")
    assert _messages(path) == []


def test_plugins_that_change_the_config_leave_it_unchecked(tmp_path):
    hatchery = ["axolotl.integrations.hatchery.HatcheryPlugin"]  # its register() sets remove_unused_columns
    assert _messages(_config(tmp_path, {"rl": "kto", "plugins": hatchery})) == []
    (tmp_path / "cce").mkdir()
    plugin = ["axolotl.integrations.cut_cross_entropy.CutCrossEntropyPlugin"]
    assert len(_messages(_config(tmp_path / "cce", {"rl": "kto", "plugins": plugin}))) == 1
    (tmp_path / "third").mkdir()
    assert _messages(_config(tmp_path / "third", {"rl": "kto", "plugins": ["my_pkg.MyPlugin"]})) == []


def test_placeholders_leave_it_unchecked(tmp_path):
    assert _messages(_config(tmp_path, {"adapter": "qlora", "load_in_4bit": "${LOAD_4BIT}"})) == []


def test_test_datasets_incident_caught():
    """axolotl#1286: on 0.4.0 the eval_steps check did not exempt test_datasets (the load_best_model_at_end
    drop the thread met is reachable only from unreleased commits between #1245 and #1291)."""
    found = _messages(FIXTURES / "incidents" / "axolotl-test-datasets-drops-load-best" / "config.yml")
    assert len(found) == 1 and "test_datasets does not exempt" in found[0] and "axolotl 0.4.0" in found[0]


def test_prequantized_base_refused_without_gptq_flag(tmp_path, monkeypatch):
    """check_model_config (v0.4.0-v0.8.1): any saved quantization_config without `gptq: true`; from
    v0.5.0 a load_in_4bit config is exempt (a pre-quantized bitsandbytes upload then loads)."""
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    bnb = {"base_model": "unsloth/tinyllama-bnb-4bit", "load_in_4bit": True, "adapter": "qlora"}
    cases = (("a", bnb, "0.4.0", True), ("b", bnb, "0.5.0", False), ("c", {**bnb, "load_in_4bit": False}, "0.6.0", True),
             ("d", {"base_model": "TheBloke/Llama-2-7B-GPTQ", "load_in_8bit": True}, "0.8.1", True),
             ("e", {"base_model": "NousResearch/Llama-2-7b-hf"}, "0.4.0", False))
    for name, settings, pin, fires in cases:
        (tmp_path / name).mkdir()
        found = _messages(_config(tmp_path / name, settings, pin=pin))
        assert any("is set but `gptq` flag is not" in message for message in found) is fires, (name, found)


def test_prequantized_incident_caught():
    found = _messages(FIXTURES / "incidents" / "axolotl-prequantized-bnb-base-refused" / "config.yml")
    assert len(found) == 1 and "check_model_config" in found[0] and "axolotl 0.4.0" in found[0]


def test_legacy_attention_flag_words_pydantic_reads_as_booleans(tmp_path):
    """pydantic's lax bool takes yes/no/on/off/0/1 (any case), not other strings."""
    assert any("valid boolean" in m for m in _messages(_config(tmp_path, {"flash_attention": "maybe"}, pin="0.8.0")))
    (tmp_path / "yes").mkdir()
    assert _messages(_config(tmp_path / "yes", {"flash_attention": "Yes"}, pin="0.8.0")) == []


def test_third_audit_rows_read_the_config_as_axolotl_does(tmp_path):
    """flash_* with FSDP: an empty fsdp_config is no FSDP, fsdp_config's own fsdp_version counts; GRPO's
    batch is micro_batch_size * gradient_accumulation_steps unless generation_batch_size is written;
    SIZE_BASED_WRAP takes the fsdp_-prefixed min_num_params; a string alpha is left alone."""
    cases = (("a", {"optimizer": "flash_adamw", "fsdp_config": {}}, None),
             ("b", {"optimizer": "flash_adamw", "fsdp_config": {"fsdp_version": 2}}, None),
             ("c", {"optimizer": "flash_adamw", "fsdp": ["full_shard"], "fsdp_version": 1}, "only compatible with FSDP2"),
             ("d", {"rl": "grpo", "trl": {"num_generations": 4}, "micro_batch_size": 2, "gradient_accumulation_steps": 2},
              None),
             ("e", {"rl": "grpo", "trl": {"num_generations": 4, "generation_batch_size": 6}}, "must be divisible"),
             ("f", {"rl": "dpo", "trl": {"num_generations": 1}}, None),
             ("g", {"fsdp_config": {"auto_wrap_policy": "SIZE_BASED_WRAP", "fsdp_min_num_params": 1000}}, None),
             ("h", {"neftune_noise_alpha": "0"}, None),
             ("i", {"tensor_parallel_size": 1, "optimizer": "adamw_8bit"}, None))
    for name, settings, piece in cases:
        (tmp_path / name).mkdir()
        found = _messages(_config(tmp_path / name, settings))
        assert (any(piece in message for message in found) if piece else found == []), (name, found)


def test_fourth_audit_rows_read_the_config_as_axolotl_does(tmp_path):
    """Per-dataset jinja: only SFTDataset checks it (not DPO datasets), its own chat_template_jinja counts;
    Muon/q_galore: fsdp_config's own fsdp_version counts; context parallelism: gemma4_hybrid_attn_impl brings
    flash_attention_2; DoRA without rl is no DPO loss setting (check_dpo reads dpo_loss_type/_weights only)."""
    jinja = [{"path": "a/b", "type": "chat_template", "chat_template": "jinja"}]
    cases = (("a", {"rl": "dpo", "datasets": jinja}, None),
             ("b", {"datasets": jinja, "chat_template_jinja": "{{ messages }}"}, "set to jinja"),
             ("c", {"optimizer": "muon", "fsdp_config": {"fsdp_version": 2}}, None),
             ("d", {"optimizer": "muon", "fsdp_config": {"fsdp_version": 1}}, "only compatible with FSDP2"),
             ("e", {"context_parallel_size": 2, "gemma4_hybrid_attn_impl": True}, None),
             ("f", {**_LORA, "peft_use_dora": True}, None),
             ("g", {"streaming": True, "max_steps": 10, "sample_packing": True}, None),
             ("h", {"scaling_softmax": True, "attn_implementation": "flex_attention"}, None))
    for name, settings, piece in cases:
        (tmp_path / name).mkdir()
        found = _messages(_config(tmp_path / name, settings))
        assert (any(piece in message for message in found) if piece else found == []), (name, found)
    (tmp_path / "old").mkdir()  # 0.6.0: pydantic's union took a failing SFTDataset as a DPODataset
    assert _messages(_config(tmp_path / "old", {"datasets": jinja}, pin="0.6.0")) == []
