"""The keys of a LLaMA-Factory config that only its training parser reads (read by the adapter).

src/llamafactory/hparams/parser.py parses each llamafactory-cli command's YAML with its own
dataclasses (checked from v0.7.1, ce8200ad9, the first release with llamafactory-cli, to HEAD
ff6d4d12e): `train` with _TRAIN_ARGS (ModelArguments, DataArguments, TrainingArguments,
FinetuningArguments, GeneratingArguments); `chat`, `webchat`, `api` and `export` with
_INFER_ARGS (the same without TrainingArguments); `eval` with _EVAL_ARGS (ModelArguments,
DataArguments, EvaluationArguments, FinetuningArguments). Every release parses the file strictly:
parse_yaml_file / parse_dict with allow_extra_keys False, "Some keys are not used by the
HfArgumentParser: [...]" (from 0.9.x the environment variable ALLOW_EXTRA_ARGS relaxes it).

TRAINING_ONLY: the fields of transformers' TrainingArguments / Seq2SeqTrainingArguments (the
releases LLaMA-Factory allows, as schemas/llamafactory.schema.json lists them) and LLaMA-Factory's
own re-declared overwrite_output_dir, less every name a field of LLaMA-Factory's other argument
dataclasses ever had (hparams/*.py other than training_args.py, `git log --all -p` over the whole
history: debug, use_cache, use_cpu, fsdp_config, neftune_noise_alpha, use_liger_kernel are such
names) and every EvaluationArguments field (seed and the rest). So no command but `train` accepts
one of them, in any release.
"""

from __future__ import annotations

from typing import Any

from . import Binding, as_float

_MODEL_ARGS = "llamafactory/hparams/model_args.py"
_FINETUNING_ARGS = "llamafactory/hparams/finetuning_args.py"
_DATA_ARGS = "llamafactory/hparams/data_args.py"
_TRAINING_ARGS = "transformers/training_args.py (TrainingArguments)"



TRAINING_ONLY = frozenset({
    "accelerator_config", "adafactor", "adam_beta1", "adam_beta2", "adam_epsilon", "auto_find_batch_size",
    "average_tokens_across_devices", "batch_eval_metrics", "bf16", "bf16_full_eval", "data_seed",
    "dataloader_drop_last", "dataloader_num_workers", "dataloader_persistent_workers", "dataloader_pin_memory",
    "dataloader_prefetch_factor", "ddp_backend", "ddp_broadcast_buffers", "ddp_bucket_cap_mb",
    "ddp_find_unused_parameters", "ddp_static_graph", "ddp_timeout", "deepspeed", "disable_tqdm", "do_eval",
    "do_predict", "do_train", "enable_jit_checkpoint", "eval_accumulation_steps", "eval_delay",
    "eval_do_concat_batches", "eval_on_start", "eval_steps", "eval_strategy", "eval_use_gather_object", "fp16",
    "fp16_backend", "fp16_full_eval", "fp16_opt_level", "fsdp", "fsdp_min_num_params",
    "fsdp_transformer_layer_cls_to_wrap", "full_determinism", "generation_config", "generation_max_length",
    "generation_num_beams", "gradient_accumulation_steps", "gradient_checkpointing",
    "gradient_checkpointing_kwargs", "greater_is_better", "group_by_length", "half_precision_backend",
    "hub_always_push", "hub_model_id", "hub_private_repo", "hub_revision", "hub_strategy", "hub_token",
    "ignore_data_skip", "include_for_metrics", "include_inputs_for_metrics", "include_num_input_tokens_seen",
    "include_tokens_per_second", "jit_mode_eval", "label_names", "label_smoothing_factor", "learning_rate",
    "length_column_name", "liger_kernel_config", "load_best_model_at_end", "local_rank", "log_level",
    "log_level_replica", "log_on_each_node", "logging_dir", "logging_first_step", "logging_nan_inf_filter",
    "logging_steps", "logging_strategy", "lr_scheduler_kwargs", "lr_scheduler_type", "max_grad_norm",
    "max_steps", "metric_for_best_model", "mp_parameters", "no_cuda", "num_train_epochs", "optim", "optim_args",
    "optim_target_modules", "output_dir", "overwrite_output_dir", "parallelism_config", "past_index",
    "per_device_eval_batch_size", "per_device_train_batch_size", "per_gpu_eval_batch_size",
    "per_gpu_train_batch_size", "predict_with_generate", "prediction_loss_only", "project", "push_to_hub",
    "push_to_hub_model_id", "push_to_hub_organization", "push_to_hub_token", "ray_scope",
    "remove_unused_columns", "report_to", "restore_callback_states_from_checkpoint", "resume_from_checkpoint",
    "run_name", "save_on_each_node", "save_only_model", "save_safetensors", "save_steps", "save_strategy",
    "save_total_limit", "skip_memory_metrics", "sortish_sampler", "tf32", "torch_compile",
    "torch_compile_backend", "torch_compile_mode", "torch_empty_cache_steps", "torchdynamo",
    "tpu_metrics_debug", "tpu_num_cores", "trackio_bucket_id", "trackio_space_id", "trackio_static_space_id",
    "train_sampling_strategy", "use_ipex", "use_legacy_prediction_loop", "use_mps_device", "warmup_ratio",
    "warmup_steps", "weight_decay",
})


def _names(value: Any) -> Any:
    """A comma list or a YAML list, as strings (interleave_probs `0.5,0.5` or [0.5, 0.5])."""
    if isinstance(value, str):
        return [item.strip() for item in value.split(",")]
    return [str(item) for item in value] if isinstance(value, list) else value


# The keys the argument checks read (hparams/parser.py get_train_args / _verify_model_args, the
# dataclasses' __post_init__, train/tuner.py export_model): read in every config, whatever its
# finetuning_type, with the dataclass defaults at HEAD ff6d4d12.
ARGUMENT_CHECK_BINDINGS = (
    Binding("training.stage", "stage", default="sft", source=_FINETUNING_ARGS),
    Binding("training.do_eval", "do_eval", default=False, source=_TRAINING_ARGS),
    Binding("training.do_predict", "do_predict", default=False, source=_TRAINING_ARGS),
    Binding("training.reward_model", "reward_model"),
    Binding("training.reward_model_type", "reward_model_type", default="lora", source=_FINETUNING_ARGS),
    # finetuning_args.py RLHFArguments (from 7a3a0144a, v0.3.0; default None): asserted to be None, 8 or 4
    Binding("quantization.ref_model_bits", "ref_model_quantization_bit"),
    Binding("quantization.reward_model_bits", "reward_model_quantization_bit"),
    Binding("training.loss_type", "pref_loss", default="sigmoid", source=_FINETUNING_ARGS),
    Binding("training.preference_label_smoothing", "dpo_label_smoothing", convert=as_float, default=0.0,
            source=_FINETUNING_ARGS),
    Binding("data.streaming", "streaming", default=False, source=_DATA_ARGS),
    Binding("data.val_size", "val_size", convert=as_float, default=0.0, source=_DATA_ARGS),
    Binding("data.train_sets", "dataset", convert=_names),
    Binding("data.eval_sets", "eval_dataset", convert=_names),
    Binding("data.tokenized_path", "tokenized_path"),
    Binding("data.max_samples", "max_samples"),
    Binding("data.mix_strategy", "mix_strategy", default="concat", source=_DATA_ARGS),
    Binding("data.interleave_probs", "interleave_probs", convert=_names),
    Binding("data.train_on_prompt", "train_on_prompt", default=False, source=_DATA_ARGS),
    Binding("data.mask_history", "mask_history", default=False, source=_DATA_ARGS),
    Binding("data.neat_packing", "neat_packing", default=False, source=_DATA_ARGS),
    Binding("eval.compute_accuracy", "compute_accuracy", default=False, source=_FINETUNING_ARGS),
    Binding("quantization.device_map", "quantization_device_map"),
    Binding("model.resize_vocab", "resize_vocab", default=False, source=_MODEL_ARGS),
    Binding("adapter.paths", "adapter_name_or_path", convert=_names),
    Binding("adapter.create_new", "create_new_adapter", default=False, source=_FINETUNING_ARGS),
    Binding("adapter.dora", "use_dora"),  # finetuning_args.py LoraArguments.use_dora (default False)
    Binding("adapter.pissa_init", "pissa_init", default=False, source=_FINETUNING_ARGS),
    Binding("adapter.rslora", "use_rslora", default=False, source=_FINETUNING_ARGS),
    Binding("adapter.loraplus_ratio", "loraplus_lr_ratio", convert=as_float),
    Binding("adapter.llama_pro", "use_llama_pro", default=False, source=_FINETUNING_ARGS),
    Binding("attention.shift_short", "shift_attn", default=False, source=_MODEL_ARGS),
    Binding("model.liger_kernel", "enable_liger_kernel"),  # model_args.py, default False
    Binding("model.kt", "use_kt"),  # model_args.py KTransformersArguments.use_kt (934b3084e, 0.9.4), default False
    Binding("adapter.mm_proj_only", "train_mm_proj_only"),  # finetuning_args.py, 0.8.0 to 0.9.1, default False
    Binding("model.visual_inputs", "visual_inputs"),  # model_args.py 0.7.0 to 0.8.3, default False
    Binding("data.reserved_label_len", "reserved_label_len"),  # data_args.py to 0.8.2, default 1
    Binding("adapter.pissa_convert", "pissa_convert"),  # finetuning_args.py from 0.8.2, default False
    Binding("optimizer.badam_mode", "badam_mode", default="layer", source=_FINETUNING_ARGS),
    Binding("optimizer.badam_update_ratio", "badam_update_ratio", convert=as_float),  # default 0.05
    Binding("checkpoint.resume_from", "resume_from_checkpoint"),  # transformers TrainingArguments
    Binding("inference.backend", "infer_backend", default="huggingface", source=_MODEL_ARGS),
    Binding("logging.report_to", "report_to", convert=_names),
    Binding("media.image_max_pixels", "image_max_pixels", default=768 * 768, source=_MODEL_ARGS),
    # model_args.py 0.9.0 (default 512, the longest side) and 0.9.1 (512 * 512 pixels): no default here
    Binding("media.image_resolution", "image_resolution"),
    # model_args.py 0.9.0 (default 128, the longest frame side) and 0.9.1 (128 * 128 pixels): no default here
    Binding("media.video_resolution", "video_resolution"),
    Binding("media.image_min_pixels", "image_min_pixels", default=32 * 32, source=_MODEL_ARGS),
    Binding("media.video_max_pixels", "video_max_pixels", default=256 * 256, source=_MODEL_ARGS),
    Binding("media.video_min_pixels", "video_min_pixels", default=16 * 16, source=_MODEL_ARGS),
    Binding("model.rope_scaling", "rope_scaling"),
    Binding("tokenizer.split_special_tokens", "split_special_tokens", default=False, source=_MODEL_ARGS),
    Binding("tokenizer.use_fast", "use_fast_tokenizer", default=True, source=_MODEL_ARGS),
    Binding("export.dir", "export_dir"),
    Binding("export.quantization_bit", "export_quantization_bit"),
    Binding("export.quantization_dataset", "export_quantization_dataset"),
)
