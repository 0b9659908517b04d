"""IR keys that the frameworks' own checks read when a run starts: the TrainingArguments
combinations the trainer refuses, the argument checks a trainer's parser runs, and the settings a
launcher's config schema checks together. Rows as in linter/ir_keys.py, which adds them to
IR_KEYS."""

from __future__ import annotations

CHECKED_KEYS = (
    # TrainingArguments fields whose combinations the trainer refuses at launch (written values, or
    # TrainingArguments' defaults where the binding states one)
    ("scheduler.type", "str", "the learning-rate schedule as written (lr_scheduler_type, DeepSpeed scheduler.type)"),
    ("scheduler.warmup_ratio", "num", "share of the training steps spent warming up (warmup_ratio)"),
    ("checkpoint.save_steps", "num", "steps between checkpoints (save_steps; below 1 a share of the training steps)"),
    ("checkpoint.eval_steps", "num", "steps between evaluations (eval_steps; below 1 a share of the training steps)"),
    ("scheduler.warmup_steps_number", "num", "warmup_steps as written where it is a number, int or float "
                                             "(TrainingArguments checks its type)"),
    ("data.data_seed", "int", "the seed of the data samplers, apart from the model's (data_seed), written value only"),
    ("eval.gather_object", "bool", "evaluation gathers Python objects across processes (eval_use_gather_object)"),
    ("logging.steps", "num", "steps between log entries (logging_steps; below 1 a share of the training steps)"),
    ("logging.strategy", "str", "when the trainer logs (no, steps, epoch), as written (logging_strategy)"),
    # TRL trainer configs' own checks (rules/trl_configs.py TRN076)
    ("logging.completions", "bool", "the RL trainer logs its completions (TRL GRPOConfig log_completions), as written"),
    ("logging.completions_hub_repo", "str", "the Hub repository the completions are uploaded to (TRL GRPOConfig "
                                            "log_completions_hub_repo), as written"),
    ("training.preference_label_smoothing", "num", "preference-loss label smoothing: TRL DPOConfig label_smoothing "
                                              "(cDPO / robust / EXO) as written, LLaMA-Factory dpo_label_smoothing"),
    ("training.loss_weights", "numbers", "TRL DPOConfig loss_weights: one weight per loss_type entry, as written"),
    ("training.preference_weighting", "bool", "TRL DPOConfig use_weighting (WPO weights per pair), as written"),
    ("data.sampling_strategy", "str", "the sampler of the training dataloader (train_sampling_strategy: random, "
                                      "sequential, group_by_length), as written"),
    ("training.off_policy_mask_threshold", "num", "TRL GRPOConfig off_policy_mask_threshold (off-policy sequence "
                                                  "masking), as written"),
    ("training.top_entropy_quantile", "num", "TRL GRPOConfig top_entropy_quantile (below 1: only the highest-entropy "
                                             "tokens train), as written"),
    ("training.entropy_coef", "num", "TRL GRPOConfig entropy_coef (the entropy bonus), as written"),
    ("training.two_sided_delta", "num", "TRL GRPOConfig delta (the upper clipping bound of two-sided GRPO), as "
                                        "written"),
    ("training.adaptive_entropy", "bool", "TRL GRPOConfig use_adaptive_entropy, as written"),
    ("training.vllm_is_correction", "bool", "TRL GRPOConfig vllm_importance_sampling_correction, as written"),
    ("training.vllm_is_mode", "str", "TRL GRPOConfig vllm_importance_sampling_mode (token_truncate, token_mask, "
                                     "sequence_truncate, sequence_mask), as written"),
    ("training.vllm_is_clip_min", "num", "TRL GRPOConfig vllm_importance_sampling_clip_min, as written (null too)"),
    ("training.vllm_is_clip_max", "num", "TRL GRPOConfig vllm_importance_sampling_clip_max, as written (null too)"),
    ("training.vllm_is_cap", "num", "TRL GRPOConfig vllm_importance_sampling_cap (deprecated alias of clip_max from "
                                    "1.6.0), as written"),
    ("quantization.flag_widths", "numbers", "the bit widths a file's own load_in_4bit / load_in_8bit flags both "
                                            "switch on, recorded where more than one is (TRL ModelConfig)"),
    ("precision.fp16_full_eval", "bool", "evaluation runs the model cast to fp16 (fp16_full_eval)"),
    ("precision.bf16_full_eval", "bool", "evaluation runs the model cast to bf16 (bf16_full_eval)"),
    ("precision.amp_backend", "str", "the trainer's mixed-precision backend as written (half_precision_backend: "
                                     "auto, apex, cpu_amp)"),
    ("parallel.trainer_fsdp_reshard", "str", "TrainingArguments fsdp_config reshard_after_forward as transformers "
                                             "reads it (str(value).lower()), as written"),
    ("parallel.accelerate_distributed_type", "str", "accelerate config distributed_type, upper-cased as written"),
    ("parallel.pc_dp_replicate_size", "int", "accelerate parallelism_config_dp_replicate_size as written"),
    ("parallel.pc_dp_shard_size", "int", "accelerate parallelism_config_dp_shard_size as written"),
    ("parallel.pc_tp_size", "int", "accelerate parallelism_config_tp_size as written"),
    ("parallel.pc_cp_size", "int", "accelerate parallelism_config_cp_size (context parallelism) as written"),
    ("parallel.pc_sp_size", "int", "accelerate parallelism_config_sp_size (DeepSpeed Ulysses) as written"),
    ("parallel.accelerate_num_machines", "int", "accelerate config num_machines as written (default 1)"),
    ("parallel.accelerate_gpu_ids", "str", "accelerate config gpu_ids as written when a string (\"all\" or comma-separated ids)"),
    ("parallel.pc_sp_backend", "str", "accelerate parallelism_config_sp_backend as written (default deepspeed)"),
    ("parallel.pc_cp_backend", "str", "accelerate parallelism_config_cp_backend as written (default torch)"),
    ("parallel.pc_cp_comm_strategy", "str", "accelerate parallelism_config_cp_comm_strategy as written (default "
                                            "allgather)"),
    ("parallel.pc_sp_attn", "str", "accelerate parallelism_config_sp_attn_implementation as written (default sdpa)"),
    ("parallel.accelerate_fsdp_sharding_strategy", "str", "accelerate fsdp_config fsdp_sharding_strategy as the "
                                                          "launcher exports it (str of the written value)"),
    ("parallel.accelerate_fsdp_reshard", "str", "accelerate fsdp_config fsdp_reshard_after_forward as the launcher "
                                                "exports it (str of the written value)"),
    ("parallel.accelerate_fsdp_wrap_policy", "str", "accelerate fsdp_config fsdp_auto_wrap_policy as the launcher "
                                                    "exports it (str of the written value)"),
    ("parallel.accelerate_fsdp_backward_prefetch", "str", "accelerate fsdp_config fsdp_backward_prefetch as the "
                                                          "launcher exports it (str of the written value)"),
    ("parallel.sequence_parallel", "int", "sequence-parallel degree: GPUs that split each sequence between them "
                                          "(XTuner sequence_parallel_size)"),
    ("data.sampler", "str", "the training dataloader's sampler class, by name, where the config names one"),
    ("data.sampler_shards_all_ranks", "bool", "the training sampler deals samples over every rank (global rank and "
                                              "world size), not over the data-parallel groups: the GPUs that share "
                                              "one sequence get different samples"),
    ("data.num_workers", "int", "data-loading worker processes (dataloader_num_workers; 0: the main process)"),
    ("data.prefetch_factor", "int", "batches each data-loading worker loads ahead (dataloader_prefetch_factor)"),
    ("memory.empty_cache_steps", "num", "steps between torch.cuda.empty_cache() calls (torch_empty_cache_steps)"),
    ("parallel.fsdp_options", "bool|str|list", "the trainer's FSDP options as written (full_shard, shard_grad_op, "
                                               "offload, auto_wrap, ...)"),
    ("batch.auto_find", "bool", "auto_find_batch_size: the micro batch is halved after an out-of-memory error"),
    ("optimizer.target_modules", "list|str", "the modules a low-rank optimizer (GaLore, APOLLO) projects "
                                             "(optim_target_modules)"),
    ("generation.per_prompt", "int", "completions generated per prompt (TRL GRPO num_generations)"),
    ("generation.per_prompt_eval", "int", "completions generated per prompt at evaluation, where it differs "
                                          "(TRL GRPO num_generations_eval)"),
    ("generation.batch_size", "int", "completions generated per generation round (TRL GRPO generation_batch_size)"),
    ("generation.steps", "int", "optimizer steps per generation round (TRL GRPO steps_per_generation)"),
    ("generation.predict_with_generate", "bool", "evaluation and prediction decode with generate() "
                                                 "(Seq2SeqTrainingArguments predict_with_generate), written value only"),
    ("generation.ds3_gather", "bool", "TRL ds3_gather_for_generation as written: ZeRO-3 weights gathered whole "
                                      "before generating (TRL's default: true)"),
    ("generation.use_vllm", "bool", "TRL use_vllm as written: vLLM, not the trained model, generates completions"),
    ("generation.vllm_mode", "str", "TRL vllm_mode as written: server (a separate trl vllm-serve) or colocate"),
    ("generation.vllm_server", "str", "the vLLM server a TRL trainer connects to, as written (vllm_server_base_url "
                                      "or vllm_server_host)"),
    ("training.trainer", "str", "which trainer runs the config where one framework has several (TRL: grpo, ...; "
                                   "Ludwig LLM trainer.type: none, finetune, grpo, ...)"),
    ("tokenizer.added_tokens", "list", "new tokens added to the vocabulary before training (Axolotl `tokens`)"),
    ("tokenizer.class", "str", "the transformers tokenizer class the config names to load the tokenizer with "
                               "(Axolotl tokenizer_type: getattr(transformers, name).from_pretrained)"),
    ("tokenizer.path", "str", "the checkpoint the tokenizer is loaded from (Axolotl tokenizer_config, else "
                              "base_model)"),
    ("tokenizer.transformers_below", "str", "a transformers release the run's is older than, as the framework's "
                                            "own exact pin implies (Axolotl before 0.14.0 pins transformers 4.x)"),
    ("tokenizer.fix_untrained", "bool", "untrained token embeddings are reset before training (Axolotl "
                                        "fix_untrained_tokens)"),
    ("data.chat_template", "str", "the named chat template the training samples are formatted with, as written "
                                  "(LLaMA-Factory template; Axolotl chat_template with a chat_template dataset)"),
    ("data.enable_thinking", "bool", "a reasoning chat template puts an empty thought into each trained response "
                                     "that has none (LLaMA-Factory enable_thinking, written or default)"),
    ("data.multimodal_processor", "str", "the transformers processor class a multimodal run loads (Axolotl "
                                         "processor_type): its collator builds the labels"),
    ("data.multimodal_template", "str", "the chat template name that picks the multimodal processing strategy "
                                        "(Axolotl chat_template with processor_type)"),
    ("data.assistant_only_loss", "bool", "the loss covers only the assistant tokens the chat template's "
                                         "{% generation %} markers mark (TRL SFTConfig assistant_only_loss)"),
    ("data.completion_only_loss", "bool", "the loss covers only the completion of prompt-completion samples "
                                          "(TRL SFTConfig completion_only_loss), written value only"),
    ("data.chat_template_file", "str", "a chat template (a file, a tokenizer to take it from, or the template "
                                       "text) that replaces the model's own before training (TRL SFTConfig "
                                       "chat_template_path; a recipe's chat_template, tokenizer_name_or_path)"),
    ("tokenizer.pad_is_eos", "bool", "a training script sets the pad token to the EOS token"),
    ("data.response_marker", "str", "the text that opens each response the loss is kept on; every other label is "
                                    "masked (Unsloth train_on_responses_only response_part)"),
    ("data.instruction_marker", "str", "the text that closes a kept response by opening the next instruction "
                                       "(Unsloth train_on_responses_only instruction_part)"),
    ("data.template_special_tokens", "list", "the special tokens (<|...|>, <word_word>) the chat template the "
                                             "samples are rendered with writes literally"),
    ("data.template_placeholders", "int", "how many bos/eos placeholders that chat template renders (each one "
                                          "token the tokenizer decides)"),
    ("data.template_names_eos", "bool", "the text of that chat template names eos_token (a {{ eos_token }} "
                                        "placeholder or the word), so the tokenizer's eos token may be written"),
    ("data.turn_terminators", "list", "the tokens that end a trained turn, as written (Axolotl eot_tokens)"),
    ("tokenizer.eos_written", "str", "the eos token the config sets on the tokenizer (Axolotl "
                                     "special_tokens.eos_token)"),
    ("data.collator_masks_padding", "str", "the collator (by name) that labels every pad id -100"),
    # The argument checks a trainer's own parser runs at launch (rules/argument_checks.py): the keys
    # they read, as written or with the framework's default.
    ("training.stage", "str", "the training stage: pt, sft, rm, ppo, dpo, kto (LLaMA-Factory stage)"),
    ("training.do_eval", "bool", "the run evaluates (TrainingArguments do_eval), written value or default"),
    ("training.do_predict", "bool", "the run predicts on the evaluation set (TrainingArguments do_predict)"),
    ("training.reward_model", "str", "the reward model a PPO run scores with (path or adapter)"),
    ("training.reward_model_type", "str", "how the PPO reward model is loaded: lora, oft, full, api"),
    ("data.streaming", "bool", "the dataset is streamed (an iterable dataset without a length)"),
    ("data.val_size", "num", "the share (< 1) or count (>= 1) of training examples split off for evaluation"),
    ("data.train_sets", "list", "the named training datasets"),
    ("data.eval_sets", "list", "the named evaluation datasets"),
    ("training.megatron_keys", "bool", "the file writes keys only LLaMA-Factory's Megatron trainers read (USE_MCA: "
                                       "mcore_adapter; USE_MEGATRON_BRIDGE): one of them, not the HF Trainer, may run it"),
    ("data.tokenized_path", "str", "a saved, already tokenized dataset (its splits) loaded instead of the named ones"),
    ("data.max_samples", "int", "each dataset is truncated to this many examples"),
    ("data.mix_strategy", "str", "how several datasets are mixed: concat, interleave_under, interleave_over"),
    ("data.interleave_probs", "list", "the sampling probability of each dataset, as written"),
    ("data.train_on_prompt", "bool", "the loss covers the prompt tokens too"),
    ("data.mask_history", "bool", "the loss covers the last turn only"),
    ("data.neat_packing", "bool", "packed sequences do not attend across examples"),
    ("eval.compute_accuracy", "bool", "token-level accuracy computed at evaluation (from the logits)"),
    ("quantization.device_map", "str", "the device map of a quantized model as written (auto spreads it)"),
    ("model.resize_vocab", "bool", "the embedding matrices are resized to the tokenizer"),
    ("adapter.paths", "list", "adapters loaded on top of the base model before training or export"),
    ("adapter.create_new", "bool", "a new adapter is created on top of the loaded ones"),
    ("adapter.pissa_init", "bool", "LoRA initialised with PiSSA"),
    ("adapter.rslora", "bool", "rank-stabilised LoRA scaling"),
    ("adapter.loraplus_ratio", "num", "LoRA+ learning-rate ratio of the B matrices"),
    ("adapter.llama_pro", "bool", "LLaMA Pro: only the expanded blocks train"),
    ("attention.shift_short", "bool", "LongLoRA shifted short attention (S^2-Attn)"),
    ("optimizer.badam_mode", "str", "BAdam's block switching: layer or ratio"),
    ("optimizer.badam_update_ratio", "num", "the share of parameters ratio-wise BAdam updates each step"),
    ("checkpoint.resume_from", "str|bool", "the checkpoint training resumes from, as written (a path, or true: "
                                           "the output directory's last one)"),
    ("inference.backend", "str", "the engine that generates: huggingface, vllm, sglang"),
    ("logging.report_to", "list", "the experiment trackers the run logs to, as written"),
    ("media.image_max_pixels", "int", "the most pixels an input image is resized to"),
    ("media.image_resolution", "int", "LLaMA-Factory image_resolution as written (0.9.0: the longest image side; "
                                      "0.9.1: the most pixels of an image; gone in 0.9.2)"),
    ("media.image_min_pixels", "int", "the fewest pixels an input image is resized to"),
    ("media.video_max_pixels", "int", "the most pixels a video frame is resized to"),
    ("media.video_resolution", "int", "LLaMA-Factory video_resolution as written (0.9.0: the longest side of a "
                                      "video frame; 0.9.1: the most pixels of a frame; gone in 0.9.2)"),
    ("media.video_min_pixels", "int", "the fewest pixels a video frame is resized to"),
    ("model.rope_scaling_keys", "list", "the keys a Ludwig model_parameters.rope_scaling block holds, as written "
                                        "(type, rope_type, factor)"),
    ("adapter.named_adapters", "list", "the names of a Ludwig `adapters:` block's adapters (its `adapters` map), "
                                       "as written; [] for an empty or absent map"),
    ("model.rope_scaling", "str", "the RoPE scaling method the model is loaded with (linear, dynamic, yarn, llama3)"),
    ("tokenizer.split_special_tokens", "bool", "special tokens in the text are split like plain text"),
    ("tokenizer.use_fast", "bool", "the fast (Rust) tokenizer is loaded"),
    ("export.dir", "str", "where an export run writes the merged model"),
    ("export.quantization_bit", "int", "the bits an export run quantizes the merged model to (GPTQ)"),
    ("export.quantization_dataset", "str", "the calibration dataset of an export quantization"),
    # Settings a launcher's own config schema checks together before training (rules/launch_refusals.py)
    ("launch.validated_by", "str", "the package whose config schema validates this file at launch and refuses "
                                   "combinations it does not support (its pinned version bounds each refusal)"),
    ("eval.val_set_size", "num", "the share (or count) of the training data split off for evaluation"),
    ("eval.test_datasets", "bool", "separate evaluation datasets are listed"),
    ("eval.preference_split_ignored", "list", "[first, fixed]: the releases of the package that validates this file "
                                              "(launch.validated_by), from `first` and before `fixed`, whose "
                                              "preference-training (rl) data loader ignores the eval split share and "
                                              "builds an eval set from the separate eval datasets only"),
    ("eval.table_size", "num", "how many eval samples are logged as a prediction table"),
    ("eval.sample_packing", "bool|str", "eval batches are packed, as written"),
    ("eval.per_epoch", "num", "evaluations per epoch"),
    ("eval.benchmark", "bool", "a benchmark evaluation runs with each evaluation"),
    ("checkpoint.saves_per_epoch", "num", "checkpoints saved per epoch"),
    ("checkpoint.best_metric", "bool", "a metric for the best checkpoint is named"),
    ("training.early_stopping_patience", "num", "evaluations without improvement before training stops"),
    ("batch.per_device_total", "int", "micro batch times accumulation, written as one number per device"),
    ("data.datasets", "bool", "the training datasets setting is written (any value but null)"),
    ("data.ranked_sets", "list", "the named datasets the launch reads as ranked (preference) sets: LLaMA-Factory "
                                 "dataset_info.json `ranking: true`"),
    ("data.unranked_sets", "list", "the named datasets the launch reads as unranked sets (LLaMA-Factory "
                                   "dataset_info.json `ranking` false or absent; every hub name with dataset_dir ONLINE)"),
    ("data.set_formats", "list", "`name=formatting` of each named dataset, as its registry gives it (LLaMA-Factory "
                                 "dataset_info.json `formatting`, default alpaca)"),
    ("data.set_registry", "str", "the dataset registry the named datasets' ranking flags come from (its path)"),
    ("data.media_sets", "list", "`name=images,videos` for each named dataset with media columns, as its registry "
                                "gives them (LLaMA-Factory dataset_info.json `columns` images / videos / audios)"),
    ("data.media_registry", "str", "the dataset registry the named datasets' media columns come from"),
    ("data.sharegpt_types", "list", "the types of the datasets in a ShareGPT format (Axolotl sharegpt, sharegpt:chat, "
                                    "sharegpt.load_role, ...), as written"),
    ("data.sharegpt_conversation", "str", "the FastChat conversation template the first `type: sharegpt` dataset "
                                          "names (Axolotl datasets[].conversation)"),
    ("data.sharegpt_filled", "str", "the chat_template that Axolotl copies into a `type: sharegpt` dataset without "
                                    "a conversation, as its FastChat conversation name"),
    ("data.excess_length_strategy", "str", "what data preparation does with a sample longer than the sequence "
                                           "length (Axolotl excess_length_strategy: drop, truncate, raise), lower-cased"),
    ("data.skip_prepare", "bool", "the datasets are used as loaded, without the tokenising and length filtering "
                                  "(Axolotl skip_prepare_dataset)"),
    ("data.dataset_types", "list", "each training dataset's type as written, in order: a strategy name, "
                                   "<mapping> for a `type:` mapping (a user-defined type), or empty"),
    ("training.tokens_per_second", "bool", "the trainer counts and logs tokens per second (Axolotl "
                                           "include_tokens_per_second)"),
    ("training.ebft", "bool", "an energy-based fine-tuning section is written (Axolotl `ebft:`)"),
    ("data.pretraining", "bool", "an iterable (streamed) pretraining dataset is written (any value but null)"),
    ("data.exact_dedup", "bool", "exact duplicate samples are removed while preparing the data"),
    ("data.push_to_hub", "bool", "the prepared dataset is pushed to the hub"),
    ("data.remove_unused_columns", "bool", "dataset columns the model does not take are dropped (written anything "
                                               "but false)"),
    ("hub.use_auth_token", "bool", "the hub token is used (written true)"),
    ("training.dpo_loss_mix", "bool", "a list of DPO losses (or their weights) is written"),
    ("training.unfrozen_parameters", "bool", "only the listed parameters train (the rest are frozen)"),
    ("training.deepcompile", "bool", "DeepSpeed's DeepCompile is asked for"),
    ("training.neftune", "bool", "NEFTune noise is added to the embeddings (neftune_noise_alpha)"),
    ("training.neftune_legacy", "bool", "NEFTune noise under its deprecated name (noisy_embedding_alpha)"),
    ("training.torch_compile", "bool|str", "torch.compile is on, as written"),
    ("training.torch_compile_options", "bool", "options for torch.compile are written"),
    ("adapter.merge", "bool", "the adapter is merged into the base model (a merge run, not training)"),
    ("adapter.kernels", "bool", "fused LoRA kernels (MLP, QKV or O projection) are on"),
    ("adapter.fuse_mlp", "bool", "the MLP modules are replaced by fused ones"),
    ("adapter.target_parameters", "bool", "the adapter targets parameters (not modules) by name"),
    ("adapter.peft_default_targets", "bool", "a LoRA adapter reaches PEFT with target_modules None (and no "
     "target_parameters): PEFT takes the model_type's default targets from its table or refuses"),
    ("adapter.dora_reaches_peft", "bool", "the framework hands use_dora to PEFT's LoraConfig (recorded only where a "
     "framework may drop it: False where its builder never passes it, None where the release is unknown)"),
    ("adapter.dropout", "num", "LoRA dropout"),
    ("model.visual_inputs", "bool", "the model takes images beside text (LLaMA-Factory visual_inputs, 0.7.0 to "
     "0.8.3), as written"),
    ("data.reserved_label_len", "int", "the tokens of each sample's cutoff kept for its labels (LLaMA-Factory "
     "reserved_label_len, to 0.8.2), as written"),
    ("adapter.pissa_convert", "bool", "a PiSSA adapter is converted back to LoRA when saved (LLaMA-Factory "
     "pissa_convert), as written"),
    ("model.kt", "bool", "KTransformers runs the MoE experts on the CPU (LLaMA-Factory use_kt), as written"),
    ("adapter.mm_proj_only", "bool", "only the multimodal projector of an MLLM trains (LLaMA-Factory "
     "train_mm_proj_only), as written"),
    ("optimizer.memory_efficient_all", "list", "every memory-efficient optimizer the file turns on (GaLore, "
     "APOLLO, BAdam, Adam-mini, Muon), in the file's order"),
    ("model.liger_kernel", "bool", "Liger's fused kernels are asked to be patched into the model (LLaMA-Factory "
     "enable_liger_kernel), as written"),
    ("training.unfrozen_patterns", "list", "regular expressions matched (re.match, from the start) against every "
     "parameter name of the model after the adapter has wrapped it: parameters no pattern matches are frozen "
     "(Axolotl unfrozen_parameters)"),
    ("optimizer.lr_groups", "bool", "parameter groups with their own learning rates are written"),
    ("optimizer.loraplus", "bool", "LoRA+ (a larger learning rate for the B matrices) is on"),
    ("quantization.gptq", "bool", "the base model is a GPTQ-quantized checkpoint"),
    ("quantization.ref_model_bits", "int", "the bits LLaMA-Factory quantizes the reference model in, as written"),
    ("quantization.reward_model_bits", "int", "the bits LLaMA-Factory quantizes the reward model in, as written"),
    ("quantization.bnb_on_load", "bool", "the quantization request reaches transformers' from_pretrained as a "
     "BitsAndBytesConfig whatever quantization_config the checkpoint was saved with"),
    ("quantization.model_config", "bool", "a quantization config class other than bitsandbytes is named"),
    ("model.trust_remote_code", "bool", "the model's own code from the hub is run"),
    ("model.revision", "bool", "a revision (branch, tag or commit) of the base model is named"),
    ("memory.selective_checkpointing", "bool", "only selected modules are recomputed in the backward pass"),
    ("memory.max_memory", "bool", "a per-device memory map for model loading is written"),
    ("memory.gpu_memory_limit", "bool", "a GPU memory limit for model loading is written"),
    ("parallel.deepspeed", "bool", "a DeepSpeed config is named"),
    ("attention.xformers_flag", "bool", "the legacy boolean xformers attention flag is on"),
    ("training.curriculum_sampling", "bool", "the training data is drawn in its order (a sequential sampler)"),
    ("attention.legacy_flag_written", "bool|str|num", "the first legacy boolean attention flag "
     "(xformers, flash, sdp, eager) as written"),
    ("tokenizer.chat_template_written", "str", "the chat template named at the top level, as written (Axolotl "
     "chat_template: a template name, tokenizer_default, jinja)"),
    ("tokenizer.chat_template_jinja", "bool", "a Jinja chat template string is written (Axolotl chat_template_jinja)"),
    ("tokenizer.mistral_common", "bool", "the mistral-common tokenizer replaces the Hugging Face one"),
    ("tokenizer.added_tokens_overrides", "bool", "existing tokens of the vocabulary are renamed"),
    ("tokenizer.special_tokens", "bool", "special tokens (bos, eos, pad, ...) are overridden"),
    ("model.processor_kwargs", "bool", "keyword arguments for the processor's from_pretrained are written"),
    ("attention.implementation_written", "str", "attn_implementation as written (not the legacy flags)"),
    ("attention.flash_flag", "bool", "the legacy boolean flash_attention flag is on"),
    ("attention.gemma4_hybrid", "bool", "Gemma 4's hybrid attention (FlashAttention 2 on the sliding-window layers, "
     "sdpa on the global ones) is asked for (Axolotl gemma4_hybrid_attn_impl)"),
    ("attention.legacy_flags_on", "bool", "a legacy boolean attention flag (xformers, sage, flex, flash, sdp, "
     "eager) is written true"),
    ("training.batch_flattening", "bool|str", "padding-free batches without packing (Axolotl batch_flattening: "
     "true, or auto)"),
    ("quantization.moe_experts", "bool", "the MoE expert weights are quantized too (Axolotl quantize_moe_experts)"),
    ("training.fp32_norms", "bool", "normalization layers are kept in fp32 under FSDP2 (Axolotl fp32_norms)"),
    ("parallel.fsdp_config_written", "bool", "an fsdp_config block is written (any value but null)"),
    ("parallel.fsdp_version_written", "int|str", "the top-level fsdp_version as written"),
    ("training.cross_entropy_patches", "int", "how many cross-entropy replacements are on (Axolotl "
     "cut_cross_entropy, chunked_cross_entropy, liger_cross_entropy, liger_fused_linear_cross_entropy)"),
    ("training.relora", "bool", "ReLoRA restarts (merge and reinitialise the adapter) are on (Axolotl relora)"),
    ("scheduler.jagged_restart_steps", "bool", "steps between the jagged learning-rate restarts are written"),
    ("adapter.target_modules_written", "list|str", "lora_target_modules as written (a list of names or regular "
     "expressions, or one string)"),
    ("quantization.model_config_name", "str", "the quantization config class named for loading (Axolotl "
     "model_quantization_config, e.g. Mxfp4Config)"),
    ("parallel.cpu_ram_efficient_loading", "bool|str", "FSDP loads the weights on rank 0 only and broadcasts them "
     "(fsdp_config cpu_ram_efficient_loading), as written"),
    ("parallel.cpu_offload_pin_memory", "bool|str", "FSDP2's CPU offload pins its host memory (fsdp_config "
     "cpu_offload_pin_memory), as written"),
    ("precision.fp8_all_gather", "bool", "FSDP2 all-gathers the weights in float8 (Axolotl "
     "fp8_enable_fsdp_float8_all_gather)"),
    ("eval.causal_lm", "bool", "generation metrics (sacrebleu, comet, ...) are computed at evaluation (Axolotl "
     "do_causal_lm_eval)"),
    ("training.grpo_num_generations", "num", "completions per prompt of Axolotl GRPO (trl.num_generations), as written"),
    ("training.grpo_generation_batch", "int", "the completions Axolotl GRPO generates per step: "
     "trl.generation_batch_size, else micro_batch_size * gradient_accumulation_steps"),
    ("parallel.fsdp_config_given", "bool", "an fsdp_config block is written non-empty"),
    ("parallel.auto_wrap_policy_written", "str", "the FSDP auto-wrap policy as written in fsdp_config "
     "(TRANSFORMER_BASED_WRAP, SIZE_BASED_WRAP)"),
    ("parallel.min_num_params_given", "bool", "fsdp_config names the smallest module size SIZE_BASED_WRAP wraps"),
    ("parallel.tensor_parallel_size", "num", "the tensor-parallel degree written (Axolotl tensor_parallel_size)"),
    ("training.neftune_alpha", "num", "the NEFTune noise scale as written (neftune_noise_alpha)"),
    ("checkpoint.save_safetensors_written", "bool|str", "save_safetensors as written"),
    ("data.pretrain_multipack_buffer", "bool", "the deprecated pretrain_multipack_buffer_size is written (non-zero)"),
    ("data.streaming_multipack_buffer", "bool", "streaming_multipack_buffer_size is written (non-zero)"),
    ("data.max_packed_sequence_len", "bool", "the removed max_packed_sequence_len is written (non-zero)"),
    ("training.dpo_use_logits_to_keep", "bool", "dpo_use_logits_to_keep is written (any value but null)"),
    ("training.dpo_generate_during_eval", "bool", "dpo_generate_during_eval is written (any value but null)"),
    ("training.dpo_norm_loss", "bool", "dpo_norm_loss is written (any value but null)"),
    ("training.rpo_alpha_written", "bool", "Axolotl rpo_alpha is written (any value but null)"),
    # Fourth audit (rules/refusal_rows_fourth.py), Axolotl values as written
    ("attention.scaling_softmax", "bool", "scaled softmax (SSMax) attention is on (Axolotl scaling_softmax)"),
    ("attention.flex_flag", "bool", "the legacy boolean flex_attention flag is on"),
    ("training.grpo_liger_loss", "bool", "Axolotl GRPO computes its loss with Liger's fused kernel (trl.use_liger_loss)"),
    ("parallel.context_parallel_size", "num", "the context-parallel degree written (Axolotl context_parallel_size)"),
    ("model.glm_dsa_kernels", "bool", "GLM DSA kernels with their own context-parallel attention are on (Axolotl "
     "use_glm_dsa_kernels)"),
    ("data.dataset_count", "int", "how many training datasets the file lists"),
    ("data.dataset_jinja_missing", "bool", "a dataset entry names chat_template jinja without a chat_template_jinja "
     "of its own"),
    ("training.beta", "num", "the top-level preference beta as written (Axolotl beta)"),
    ("training.trl_beta", "num", "the preference beta of the trl block as written (Axolotl trl.beta)"),
    ("adapter.peft_block", "bool", "a `peft:` block (LoftQ initialisation) is written"),
    ("model.onebitllms", "bool", "the model is trained as a 1-bit (BitNet) model (Axolotl use_onebitllms)"),
    ("training.multi_objective_aggregation", "str", "how GDPO/GRPO combine several rewards (Axolotl "
     "trl.multi_objective_aggregation), as written"),
    ("training.dpo_loss_type_given", "bool", "Axolotl dpo_loss_type is written (any value but null)"),
    ("training.dpo_loss_weights_given", "bool", "Axolotl dpo_loss_weights is written (any value but null)"),
    ("training.dpo_loss_type_count", "int", "how many DPO loss types are listed (Axolotl dpo_loss_type)"),
    ("training.dpo_loss_weights_count", "int", "how many DPO loss weights are listed (Axolotl dpo_loss_weights)"),
    ("training.ebft_mode", "str", "the EBFT trainer's mode (structured, strided), as written"),
    ("memory.activation_offloading_written", "bool|str", "activation_offloading as written (true, legacy, disk, "
     "hidden_states)"),
    ("eval.causal_lm_metrics", "list", "the generation metrics named for evaluation (Axolotl eval_causal_lm_metrics), "
     "as written"),
    ("training.torch_compile_option_names", "list", "the Inductor options named in torch_compile_options"),
    ("attention.large_head_written", "str", "the attention policy for heads too large for flash attention (Axolotl "
     "large_head_attention), lower-cased"),
    # A PEFT adapter joined with the trainer's settings (rules/peft_joins.py)
    ("adapter.generic_model", "bool", "PEFT wraps the model in the generic PeftModel (no task_type, not prompt "
                                      "learning), whose forward(*args, **kwargs) names no labels argument"),
    ("checkpoint.label_names", "list|str", "the input names the Trainer reads as labels (TrainingArguments "
                                       "label_names), written value only"),
    ("training.trainer_class", "str", "the trainer class a training script calls, where every trainer call is one "
                                      "class imported from transformers or trl (Trainer, Seq2SeqTrainer, SFTTrainer, ...)"),
    ("training.sft_use_liger", "bool", "TRL SFTConfig use_liger (0.15-0.17): the model is loaded with Liger's "
                                       "kernels and returns no logits, as written"),
)
