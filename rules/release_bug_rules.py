"""The rules of the release-bug table (rules/release_bugs.py ROWS), one per code."""

from __future__ import annotations

from linter.registry import ERROR, WARNING, register

from .release_bugs import ReleaseBug


@register
class PinnedReleaseCrash(ReleaseBug):
    """TRN073 pinned-release-crash

    ## What it does
    Flags a training config that the pinned releases of its stack (exact pins near the config or
    the installed packages; silent where any is unknown) are known to stop at launch or on the
    first steps, one row per bug, each bounded in the projects' history:

    - Trainer arguments with `gradient_accumulation_steps` above 1 and a ZeRO-2/3 DeepSpeed
      config (a linked JSON, or an accelerate config's `zero_stage`) on more than one GPU
      (`--world-size` or the launcher's `num_processes`; silent when unknown), with deepspeed >= 0.16.0, transformers 4.31.0 to
      4.47.0 and accelerate < 1.9.0: the Trainer wraps the accumulation micro-batches in
      `no_sync`, which DeepSpeed's engine asserts against under gradient partitioning.
    - An accelerate config with `fsdp_version: 2` run with a Trainer arguments file, with
      accelerate >= 1.6.0 and transformers 4.36.0 to 4.50.x: the Trainer prepares the model
      without its optimizer, which accelerate refuses under FSDP2.
    - A TRL SFT config with `padding_free: true`, packing off and `max_length` not null (its
      default is 1024) on TRL >= 1.0.0: SFTTrainer refuses it.
    - A TRL GRPO config whose `metric_for_best_model` names a metric only GRPOTrainer logs
      (`eval_reward`, `eval_rewards/<fn>/mean`, `eval_kl` ...) with evaluations followed by
      saves, on TRL 0.14.0 to 1.4.x, or a TRL SFT config naming `eval_mean_token_accuracy` /
      `eval_num_tokens` on TRL 0.16.0 to 1.4.x: the metric never reaches the Trainer (KeyError).
      Silent where a script of the repository reads the file (it may pass `compute_metrics`).
    - `lr_scheduler_type: reduce_lr_on_plateau` (with evaluation, logging not off, no DeepSpeed
      config) on transformers 4.29.x with torch < 2.2.0: the Trainer logs the learning rate with
      `get_last_lr()`, which torch's ReduceLROnPlateau does not have (AttributeError at the
      first log).
    - A fused loss that reads `lm_head.weight` directly, in a run whose DeepSpeed config (a
      linked JSON, or an accelerate config's `zero_stage`) is ZeRO-3: GRPO's liger loss
      (`use_liger_loss`, `use_liger_kernel` from TRL 0.25) on TRL 0.17.0 to 1.5.x, DPO's
      `use_liger_kernel` on 0.29.0 to 1.8.x, KTO's on 1.8.x, SFT `loss_type: chunked_nll` on
      1.4.0 to 1.5.x: the weight is the partitioned empty shard and the fused matmul fails.
      Silent where the file may also be read by a trainer without that loss (GRPO or RLOO).
    - An accelerate config with `fsdp_version: 2` on accelerate 1.11.0 to 1.12.x with torch
      2.6.x: accelerate passes `ignored_params` to torch's `fully_shard`, which torch takes
      only from 2.7.0 (TypeError when the model is prepared).
    - A TRL config training a LoRA adapter (`use_peft`, no 4/8-bit base) in bf16, in a run
      with ZeRO-3 (a linked DeepSpeed JSON, or an accelerate DeepSpeed config's `zero_stage`),
      on DeepSpeed 0.19.2 with TRL < 1.7.0 and PEFT >= 0.12.0: PEFT's fp32 adapter weights
      and the bf16 base weights are gathered into buffers of one dtype (TypeError at the
      first step). PEFT before 0.12.0 casts the adapter to the base dtype: silent there.
    - An accelerate config with `distributed_type: FSDP` and `mixed_precision: fp8` on
      accelerate < 0.34.0, in a run whose Trainer arguments (if any) turn neither bf16 nor fp16
      on: the FSDP plugin has no mixed-precision policy for fp8 and the Accelerator raises
      "Unknown mixed precision value: fp8" (before 0.17.0 the launcher refuses fp8 itself).
    - An Axolotl `rl` config with a dataset of `type: user_defined` (a string; the fields beside
      it): the RL user-defined strategies read their fields from a `type:` mapping and refuse a
      string, which the loader turns into a TypeError (every release from 0.5.0 for KTO and
      ORPO, also unpinned; pinned from 0.5.0 for DPO / IPO / SimPO). `rl: orpo` with a `type:`
      mapping fails the same way in every release (no ORPO user-defined strategy), and
      `rl: kto` with one on Axolotl 0.5.0 to 0.17.x (NameError / KeyError in the transform).

    ## Why is this bad?
    The job is queued, loads the model and dies before or at the first optimizer step (the
    GRPO row at the first evaluation, after eval_steps of training), with an assertion or a
    ValueError / KeyError that names none of the settings here.

    ## Example
    `grpo.yaml`:
        model_name_or_path: Qwen/Qwen2.5-0.5B-Instruct
        dataset_name: trl-lib/tldr
        output_dir: out
        num_generations: 8
        eval_strategy: steps
        eval_steps: 100
        save_steps: 100
        metric_for_best_model: eval_reward
    `requirements.txt`:
        trl==0.16.1
    Use instead:
        model_name_or_path: Qwen/Qwen2.5-0.5B-Instruct
        dataset_name: trl-lib/tldr
        output_dir: out
        num_generations: 8
        eval_strategy: steps
        eval_steps: 100
        save_steps: 100
        metric_for_best_model: eval_loss

    ## Fix safety
    No fix: which setting or pin to move is the author's choice (each message names the
    release that fixes it).

    ## References
    - deepspeed/runtime/engine.py DeepSpeedEngine.no_sync: fc4e73370 (#6675, v0.16.0);
      transformers trainer.py _inner_training_loop (`accelerator.accumulate(model)` in the
      4.31.0-4.46.1 wheels, `accelerator.no_sync` in 4.46.2-4.47.0, skipped under DeepSpeed in
      4.47.1, #35157); accelerate accelerator.py no_sync / accumulate (ZeRO >= 2 skipped from
      175fe915, #3656, v1.9.0); deepspeedai/DeepSpeed#6793, huggingface/transformers#34984,
      huggingface/accelerate#3481
    - accelerate accelerator.py prepare (FSDP2 check from d7c741a6, #3394, v1.6.0);
      transformers trainer.py `delay_optimizer_creation` (4.36.0-4.50.3 wheels; 4.51.0 turns it
      off for FSDP2, #37147); huggingface/accelerate#3476
    - trl/trainer/sft_trainer.py SFTTrainer.__init__ (3822674de, #5359, v1.0.0; still at
      v1.9.0); trl/trainer/sft_config.py max_length=1024; huggingface/trl#5923
    - trl/trainer/grpo_trainer.py GRPOTrainer.log (`logs = {**logs, **metrics}`, v0.14.0 to
      v1.4.x; `logs.update(metrics)` from 4711a21d6, #5811, v1.5.0); transformers trainer.py
      _determine_best_metric / _save_checkpoint; trl/trainer/sft_trainer.py SFTTrainer.log
      (mean_token_accuracy from v0.15.0, num_tokens from v0.16.0; the same fix); huggingface/trl#3384
    - transformers trainer_pt_utils.py _get_learning_rate (`lr_scheduler.get_last_lr()` in the
      4.29.0-4.29.2 wheels; 4.30.0 reads the optimizer's lr for ReduceLROnPlateau, #23944);
      torch ReduceLROnPlateau derives from LRScheduler only from pytorch/pytorch#108464 (merged
      after the 2.1 branch: 2.1.0 lacks get_last_lr, pytorch/pytorch#110776);
      huggingface/transformers#23934
    - trl/trainer/grpo_trainer.py compute_liger_loss (`lin_weight=unwrapped_model.lm_head.weight`
      from 793735a69, #3184, v0.17.0; gathered under ZeRO-3 from f298ae33a, #5891, v1.6.0);
      dpo_trainer.py _compute_loss_liger (`weight = lm_head.weight`, v0.29.0 to v1.8.0) and
      kto_trainer.py (v1.8.0), gathered from 0d8154ebe (#6372, v1.9.0); sft_trainer.py _chunk
      (chunked_nll, 9bcf72943, #5575, v1.4.0; gathered from c207b9f06, #5873, v1.6.0);
      huggingface/trl#3368, #4544
    - accelerate utils/dataclasses.py FullyShardedDataParallelPlugin.set_mixed_precision (fp16,
      bf16, fp32 only, c93b3eb5, #522, v0.11.0; "fp8" mapped to bf16 by a452327e, #2983,
      v0.34.0), state.py AcceleratorState (calls it under FSDP; fp8 falls back to fp16 below
      compute capability 8.9 from b0528392, #2232, v0.26.0); fp8 a launch choice from 1bfde6b9
      (#1086, v0.17.0); transformers TrainingArguments.__post_init__ (bf16 / fp16 replace
      ACCELERATE_MIXED_PRECISION); huggingface/accelerate#2615
    - accelerate utils/fsdp_utils.py fsdp2_prepare_model (`"ignored_params"` always passed from
      a7d6f28f, #3731, v1.11.0; only on torch >= 2.7.0 from 8ec83c8a, #3924, v1.13.0);
      constants.py FSDP2_PYTORCH_VERSION 2.6.0; huggingface/accelerate#3923
    - deepspeed/runtime/engine.py _configure_distributed_model (no blanket bf16 cast from
      b919284ab, #8066, v0.19.2); runtime/zero/partition_parameters.py
      _allgather_params_coalesced (per-parameter dtype from b5b3fded4, #8073, v0.19.3); peft
      mapping.py get_peft_model autocast_adapter_dtype (ae1ae20b7, #1706, v0.12.0); TRL
      autocast_adapter_dtype=False under ZeRO-3 from bf6a7b512 (#6091, v1.7.0);
      deepspeedai/DeepSpeed#8072, huggingface/trl#6089
    - axolotl prompt_strategies/dpo/user_defined.py and kto/user_defined.py default() (a
      `type:` mapping required since 22ae21a6c, #1640, v0.5.0; KTO transform fixed by
      fa7a66502, #3730, v0.18.0), prompt_strategies/base.py load (errors swallowed, None
      returned), utils/data/rl.py (a mapping loaded as user_defined.default; map_dataset's
      inspect.signature); prompt_strategies/orpo/ (chat_template only); axolotl-ai-cloud/axolotl#2757
    """

    code = "TRN073"
    name = "pinned-release-crash"
    severity = ERROR


@register
class PinnedReleaseSilentBug(ReleaseBug):
    """TRN074 pinned-release-silent-bug

    ## What it does
    Flags a training config that the pinned releases of its stack (exact pins near the config or
    the installed packages; silent where any is unknown) are known to train wrongly without an
    error, one row per bug:

    - `label_smoothing_factor` above 0 in a TRL SFT config that trains a LoRA adapter
      (`use_peft`), on transformers < 4.36.0: the Trainer's smoothed loss does not shift the
      labels of a PEFT-wrapped causal LM.
    - `optim` a bitsandbytes 8-bit AdamW (`adamw_bnb_8bit`, `adamw_8bit`; `paged_adamw_8bit`
      from 0.39.1, the first tag with paged optimizers) on bitsandbytes 0.36.0 to 0.41.0: the
      second-moment state is quantized with a broken map.
    - A TRL DPO config (a DPOConfig-only key, or a `trl dpo` launch) with `truncation_mode`
      keep_end (the default) and a `max_length` (default 1024) on TRL 0.14.0 to 0.17.x: rows
      shorter than the longest pair of a batch that needs truncating are cut down to padding.
    - `load_best_model_at_end` with a `metric_for_best_model` that ends in `loss` but is not
      exactly `loss` / `eval_loss` (a per-dataset `eval_<name>_loss`, a custom `eval_nll_loss`)
      and no `greater_is_better`, on transformers < 4.42.0: TrainingArguments infers
      greater_is_better from the exact names only, so the Trainer keeps and loads the checkpoint
      with the highest loss.
    - A TRL GRPO config with `mask_truncated_completions: true` and `loss_type` dapo (the
      default from 0.22.0), cispo or vespo on TRL 0.22.0 to 1.8.x: the normaliser
      (num_items_in_batch) still counts the tokens of the truncated completions the mask drops,
      so each step's loss and gradient are scaled down by the share of truncated tokens. Silent
      with the fused liger loss and where RLOO may read the file.
    - A TRL SFT config with `packing: true` and `packing_strategy` bfd (the default) on TRL
      0.27.0 to 0.28.x: every example longer than `max_length` is split into pieces packed as
      separate sequences (the tail of a conversation trained on without its prompt), instead of
      being truncated as before and after. Whether examples exceed max_length is in the data.
    - `optim: lion_32bit` (bitsandbytes >= 0.38.0) or `paged_lion_32bit` (>= 0.39.1) with
      `weight_decay` above 0 on bitsandbytes < 0.50.0 (no DeepSpeed config): the 32-bit kernel
      adds the decay to the gradient before Lion's sign instead of decaying the weights.
    - An Axolotl `rl: grpo` config with `curriculum_sampling: true` on Axolotl 0.7.0 to 0.17.x:
      the GRPO trainers draw the prompts through a shuffling sampler. (Without sequence
      parallelism Axolotl never passes it on, in any release; only the pinned range is reported.)
    - A PEFT trainable-tokens adapter (`peft_type: TRAINABLE_TOKENS`, or LoRA's dict
      `trainable_token_indices`) on PEFT 0.15.0 to 0.17.x, or LoRA targeting `embed_tokens` on
      PEFT < 0.18.0, for a Gemma 3 base model (model_type gemma3 / gemma3_text in a local
      config.json, else a `gemma-3-<size>` / `medgemma-` name), whose word embedding scales its
      output by sqrt(hidden_size): PEFT's layers leave that scale out.
    - Axolotl `excess_length_strategy: truncate` in an SFT run on Axolotl 0.12.2 to 0.14.x: the
      truncation runs as a dataset filter, so long samples reach the trainer untruncated; and
      `truncate` (or `raise`, accepted from 0.13.1) with `rl` dpo / ipo / orpo / simpo / kto on
      0.12.2 to 0.16.x: the RL loader drops the long samples whatever the option says.
    - An Axolotl `adapter: lora` / `qlora` config with `lora_model_dir` (training on from a saved
      adapter) on Axolotl <= 0.2.0: the adapter is loaded frozen, so nothing trains.
    - Axolotl `warmup_steps: 0` or `warmup_ratio: 0` (the other unset or 0; not with lr_scheduler
      constant / reduce_lr_on_plateau) on Axolotl 0.10.0 to 0.12.x: 0 reads as unset and the
      default warmup (3% of the steps, at most 100) applies.
    - An accelerate config with `distributed_type: DEEPSPEED`, `mixed_precision: fp8` and its
      own `deepspeed_config` (no `deepspeed_config_file`: DS006) on accelerate 0.17.0 to 0.33.x,
      where no Trainer arguments of the run turn bf16 or fp16 on: accelerate enables neither
      fp16 nor bf16 in the DeepSpeed config it builds and applies no fp8 layers under DeepSpeed,
      so the model trains in fp32 (from 0.19 where transformer_engine or MS-AMP is installed; without
      either, AcceleratorState refuses fp8 at creation).
    - An accelerate FSDP config whose `fsdp_auto_wrap_policy` is not exactly
      TRANSFORMER_BASED_WRAP, SIZE_BASED_WRAP or NO_WRAP (a lower-case or misspelled name) on
      accelerate 0.11.0 to 0.33.x, in a run whose Trainer arguments (if any) do not turn FSDP on:
      no layer is wrapped, and the whole model is one FSDP unit gathered in full on every rank
      (from 0.34.0 any case is taken and other names are refused: TRN110).
    - A Ludwig LLM config whose text output feature's own `max_sequence_length` is above 32 and
      that writes no `generation.max_new_tokens`, on Ludwig 0.8 to 0.8.5: evaluation and
      `predict` generate the default 32 new tokens, cutting longer answers off (Ludwig 0.8.6
      sets the default from the output length). A `global_max_sequence_length` alone is not
      enough: it bounds the prompt and the answer together.

    ## Why is this bad?
    With unshifted labels every position is trained to predict its own input token: the
    adapter learns to copy its input while the loss falls quickly (huggingface/transformers#27161).
    With the broken unsigned dynamic map (524 entries read as 256, largest 0.093 instead of 1)
    Adam's second moment is underestimated, the steps are inflated and the loss goes NaN within
    the first steps (bitsandbytes-foundation/bitsandbytes#227, #152).
    DPO's keep_end truncation from 0.14.0 to 0.17.x first pushes each row's tokens to the left
    and then keeps the last max_length columns, so a short pair batched with a long one keeps
    only padding: it drops out of the loss and its logged logits are NaN (huggingface/trl#3382).

    ## Example
    `train.yaml`:
        model_name_or_path: meta-llama/Llama-2-7b-hf
        dataset_name: timdettmers/openassistant-guanaco
        output_dir: out
        optim: adamw_bnb_8bit
    `requirements.txt`:
        bitsandbytes==0.37.0
    Use instead, in `requirements.txt`:
        bitsandbytes==0.41.1

    ## Fix safety
    No fix: upgrading a dependency is outside the config.

    ## References
    - transformers trainer.py Trainer.compute_loss (`shift_labels=True` only for a class name in
      MODEL_FOR_CAUSAL_LM_MAPPING_NAMES: the PEFT wrapper's name in the 4.31.0 and 4.35.2
      wheels, the base model's in 4.36.0); huggingface/transformers#27161, #25044
    - bitsandbytes functional.py create_dynamic_map (2f2063ba, first in 0.36.0) and
      optim/optimizer.py name2qmap["udynamic"]; fixed by 3c9aca91 "Fixed two bugs in dynamic
      data type creation" (2023-08-03, released as 0.41.1);
      bitsandbytes-foundation/bitsandbytes#227, #152
    - trl/trainer/dpo_trainer.py concatenated_forward (flush_left, then keep_end truncation:
      fe4b5efe4, #2551, v0.14.0); fixed by 8e8e62b38 (#3398, v0.18.0, flush_right first);
      trl/trainer/dpo_config.py (max_length 1024, truncation_mode "keep_end"); huggingface/trl#3382
    - transformers training_args.py TrainingArguments.__post_init__ (`greater_is_better =
      metric_for_best_model not in ["loss", "eval_loss"]` in the 4.20.1-4.41.2 wheels,
      `not metric_for_best_model.endswith("loss")` from 4.42.0); huggingface/transformers#31142
    - trl/trainer/grpo_trainer.py _generate (num_items_in_batch from all completion tokens) and
      _generate_and_score_completions (mask_truncated_completions afterwards); compute_loss
      divides dapo (2324245ca, #3938, v0.22.0), cispo (v0.26.0) and vespo (v1.0.0) by it; fixed
      by 7c1fa85ad (#6439, v1.9.0); huggingface/trl#6369
    - trl/data_utils.py _pack_bfd (splits long rows from ec70ef2fc, #4632, v0.27.0; truncates
      again from a558fba8a, #5076, v0.29.0, the split moved to "bfd-requeue"); huggingface/trl#5075
    - bitsandbytes csrc/kernels.cu kOptimizer32bit1State (coupled decay for every 1-state
      optimizer; Lion from 7247cb45, 0.38.0); fixed by ab9709a5 (#1993, 0.50.0);
      bitsandbytes-foundation/bitsandbytes#1992
    - axolotl core/trainers/grpo/trainer.py (GRPO from ffae8d6a9, #2307, v0.7.0; TRL's
      GRPOTrainer sampler with shuffle_dataset, and SequenceParallelRepeatRandomSampler
      shuffle=True until 5a0dc637e, #3707, v0.18.0); axolotl-ai-cloud/axolotl#2376
    - peft tuners/trainable_tokens/layer.py TrainableTokensLayer.forward (F.embedding for any
      nn.Embedding, v0.15.0) and tuners/lora/layer.py Embedding; fixed by 9b8cf2a0c (#2825,
      v0.18.0, tuners_utils.py _get_embed_scale); transformers models/gemma3/modeling_gemma3.py
      Gemma3TextScaledWordEmbedding; huggingface/peft#2809
    - axolotl utils/data/utils.py handle_long_seq_in_dataset (truncate_long_seq through
      dataset.filter from 0eef385b1, #3068, v0.12.2; mapped from 2b6f4a6c9, #3401, v0.15.0);
      utils/data/rl.py _load_split / _drop_long_sequences (excess_length_strategy honoured from
      63a58cfec, #3578, v0.17.0); axolotl-ai-cloud/axolotl#3401, #3547
    - axolotl src/axolotl/utils/models.py load_lora (PeftModel.from_pretrained without is_trainable,
      v0.1.0-v0.2.0); fixed by 193c73bce (#159, v0.2.1); axolotl-ai-cloud/axolotl#159
    - axolotl core/builders/base.py _configure_warmup_and_logging (falsy warmup tests from
      677885680, #2133, v0.10.0); fixed by dd78f2e0c (#3254, v0.13.0); axolotl-ai-cloud/axolotl#3254
    - accelerate utils/dataclasses.py DeepSpeedPlugin.set_mixed_precision (fp16 / bf16 enabled only
      for those names until a452327e, #2983, v0.34.0, which enables bf16 for fp8) and state.py
      AcceleratorState (`_mixed_precision = "no"` under DEEPSPEED); accelerator.py prepare (the
      Transformer Engine conversion in prepare_model only, which DeepSpeed skips)
    - accelerate utils/dataclasses.py FullyShardedDataParallelPlugin.set_auto_wrap_policy (exact
      FSDP_AUTO_WRAP_POLICY names from c93b3eb5, #522, v0.11.0; any case, others refused, from
      3bde6156, #2998, v0.34.0)
    - ludwig/schema/llms/generation.py LLMGenerationConfig.max_new_tokens (default 32);
      cb1f7d9d1 (#3713, v0.8.6) schema/model_types/utils.py _set_generation_max_new_tokens
    """

    code = "TRN074"
    name = "pinned-release-silent-bug"
    severity = WARNING


@register
class AllLinearClassifierHeadDoubleWrapped(ReleaseBug):
    """PEF011 all-linear-classifier-head-double-wrapped

    ## What it does
    Flags a PEFT adapter config with `task_type: SEQ_CLS` and `target_modules: "all-linear"`
    where the PEFT in use (a pin near the file or the installed package; silent when unknown) is
    0.8.0 to 0.12.x.

    ## Why is this bad?
    PEFT's "all-linear" expansion leaves out only the model's output embedding, which a
    sequence-classification model does not have, so the classification head (`score`,
    `classifier`) gets LoRA layers while task_type SEQ_CLS also puts it in `modules_to_save`:
    the head is wrapped twice, and the adapter saved after training cannot be loaded back
    (huggingface/peft#2027; a merged model keeps LoRA layers in the head, #1485). PEFT 0.13.0
    leaves the head out.

    ## Example
    `adapter_config.json`:
        {"peft_type": "LORA", "task_type": "SEQ_CLS", "r": 16, "target_modules": "all-linear"}
    `requirements.txt`:
        peft==0.12.0
    Use instead, in `requirements.txt`:
        peft==0.13.0

    ## Fix safety
    No fix: listing the modules by name or upgrading PEFT are the choices.

    ## References
    - peft src/peft/tuners/tuners_utils.py _maybe_include_all_linear_layers: "all-linear" from
      cbd783b4d (#1295, v0.8.0); the SEQ_CLS head exclusion from 1a5d0f815 (#2033, v0.13.0);
      f3c7c6e5c (#2028, v0.13.0) raises on a modules_to_save wrapper over a tuner layer
    - peft src/peft/peft_model.py PeftModelForSequenceClassification (classifier_module_names
      ["classifier", "score"])
    - huggingface/peft#2027, #1485, #2033
    """

    code = "PEF011"
    name = "all-linear-classifier-head-double-wrapped"
    severity = WARNING
