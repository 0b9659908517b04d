"""trainlint's built-in rule pack, one module per topic, named in the `trainlint.rules` entry-point
group like any third-party pack. Importing it imports no rule: linter.registry imports the
modules of MODULES, every one to list or document the rules, and for a check only those whose
rules can fire (Rule.triggers; rules/manifest.json lists the modules a check may skip)."""

MODULES = (  # every module with rules: add a new one here
    "accelerate_fsdp_options", "accelerate_parallelism", "adapters", "argument_checks", "attention", "auto_values",
    "batches",
    "compile_sharding", "data", "deepspeed", "deepspeed_muon", "deepspeed_offload", "deepspeed_zero_block", "deepspeed_release_rules",
    "deepspeed_schedule", "embeddings", "evaluation", "generation_servers", "incompatible_versions", "launch_refusals",
    "launchers", "llm_validation", "loader_modes", "peft_joins", "loss_masks", "ludwig_adapter_keys", "ludwig_refusals",
    "memory", "model_features", "model_layers", "model_loading", "models", "multimodal_data", "image_caps", "numerics",
    "optimizer_sharding", "optimizers", "parallelism",
    "patched_models", "peft_configs", "peft_layers", "peft_methods", "peft_patterns", "precision",
    "prequantized", "quantization", "quantized_weights", "reference_sync", "release_bug_rules", "rl_losses",
    "rl_trainers", "schema", "script_trainers", "sft_lengths", "sharding", "syntax", "target_entries", "template_names",
    "tied_targets", "turn_terminators", "tokenizers",
    "trainer_hazards", "trainer_names", "trainer_schedules", "trainer_refusals", "trainers", "training",
    "training_length", "trl_configs", "trl_trainer_paths", "unsloth_grpo", "unsloth_targets", "unsloth_saves", "unsloth_scripts", "version_bounds", "versions",
    "yaml_misread",
)


# Checked by linter.registry: the import name `rules` is shared with other PyPI packages.
TRAINLINT_BUILTIN_PACK = True
