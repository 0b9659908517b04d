"""Pinned releases of the HF training stack that break what a config runs, as one table.

Each row: the affected releases of every package involved (from `first`, up to but not including
`fixed`, both read in the projects' history with `git tag --contains` of the commit that brought
the bug and of the fix, or in the release wheels), what the config must run, the IR key the
finding points at, and what happens. A row fires only where every package's version is known
(an exact pin near the config, or the installed package) and in its range; unknown -> silent,
with a --verbose note. The rules of rules/release_bug_rules.py report the rows of their own code,
through the table mechanism of rules/release_table.py.
"""

from __future__ import annotations

from .facts import GRPO_LIKE, read_by_repository_script
from .release_bug_cases import (
    BNB_LION, LM_HEAD_SHARD, VISION_WORDS, accelerate_fp8, accelerate_wrap_unread, bfd_packing, bnb_lion_32bit, chunked_nll_zero3,
    grpo_curriculum, grpo_liger_zero3, lora_embedding_scaled, ludwig_default_generation_short, preference_liger_zero3,
    sft_file, trainable_tokens_scaled, truncated_still_counted, zero3_bf16_lora,
)
from .axolotl_release_rows import AXOLOTL_ROWS
from .release_table import ARGUMENT_FILES, Range, ReleaseTable, Row, fill


def _whole(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _no_sync_under_zero(f) -> bool:
    """Trainer arguments with gradient_accumulation_steps > 1 in a multi-GPU run whose DeepSpeed
    config (a linked JSON, or an accelerate config's written deepspeed_config.zero_stage)
    partitions gradients (ZeRO stage 2 or 3)."""
    steps = f("batch.grad_accum")
    world = f.world
    if not f.arguments() or not _whole(steps) or steps < 2 or world is None or world < 2:
        return False  # one process: accelerate's no_sync is a null context (use_distributed false)
    return any(stage >= 2 for stage in f.zero_stages())


def _fsdp2_trainer(f) -> bool:
    """An accelerate FSDP2 config in a run with a Trainer arguments file."""
    return f.fsdp2() and any(other.value("file.kind") in ARGUMENT_FILES and other.value("arguments.project_parser")
                             is not True for other in f.others())


def _padding_free_unpacked(f) -> bool:
    """SFTConfig padding_free true, packing not true, max_length not null (default 1024)."""
    if not sft_file(f) or f("sequence.padding_free") is not True or f("sequence.packing") is True:
        return False
    length = f.config.get("sequence.max_length")
    if length is not None and length.value is None:
        return False  # written null: nothing to enforce
    name = str(f("model.name") or "").lower()
    if f("model.multimodal") is True or any(word in name for word in VISION_WORDS):
        return False  # an image dataset skips the check (sft_trainer.py _is_vision_dataset)
    return not read_by_repository_script(f.config)


# Metrics a TRL trainer's log() adds (prefixed eval_ in evaluation) and evaluate() does not return
# before TRL 1.5.0: GRPOTrainer (grpo_trainer.py, v0.14.0-v1.4.x) and SFTTrainer (sft_trainer.py:
# mean_token_accuracy from v0.15.0, num_tokens from v0.16.0).
_GRPO_METRICS = ("reward", "reward_std", "kl", "completion_length", "frac_reward_zero_std", "entropy", "num_tokens")
_GRPO_PREFIXES = ("rewards/", "completions/", "clip_ratio", "sampling/")
_SFT_METRICS = ("mean_token_accuracy", "num_tokens")


def _best_metric(f) -> str | None:
    """metric_for_best_model without the eval_ prefix, where a checkpoint save follows an
    evaluation (the Trainer looks the metric up in what evaluate() returned)."""
    metric = f("checkpoint.best_metric_name")
    if f("file.kind") != "trl" or not isinstance(metric, str) or read_by_repository_script(f.config):
        return None  # a repository script may pass compute_metrics
    name = metric.strip()
    name = name[len("eval_"):] if name.startswith("eval_") else name
    evaluate, save = f("checkpoint.eval_strategy"), f("checkpoint.save_strategy")
    if f("checkpoint.load_best") is True and evaluate in ("steps", "epoch"):
        return name  # TrainingArguments makes the two schedules line up
    if evaluate == "epoch":
        return name if save == "epoch" else None
    every, step = f("checkpoint.save_steps"), f("checkpoint.eval_steps")
    aligned = (evaluate == "steps" and save in (None, "steps") and isinstance(every, (int, float))
               and isinstance(step, (int, float)) and step >= 1 and every >= 1 and every % step == 0)
    return name if aligned else None


def _grpo_metric(f) -> bool:
    # RLOOTrainer (0.22.0 to 1.4.x) has GRPOTrainer.log's `logs = {**logs, **metrics}` too, fixed in 1.5.0 with it
    candidates = set(f("training.trainer_candidates") or ())
    grpo = f("training.trainer") == "grpo" or f("training.trainer") is None and candidates and candidates <= GRPO_LIKE
    name = _best_metric(f) if grpo else None
    return name is not None and (name in _GRPO_METRICS or name.startswith(_GRPO_PREFIXES))


def _sft_metric(f) -> bool:
    return sft_file(f) and _best_metric(f) in _SFT_METRICS


def _peft_label_smoothing(f) -> bool:
    """label_smoothing_factor > 0 in a TRL SFT file that trains a LoRA adapter."""
    smoothing = f("training.label_smoothing")
    return (sft_file(f) and isinstance(smoothing, (int, float)) and not isinstance(smoothing, bool)
            and smoothing > 0 and f("adapter.kind") in ("lora", "qlora"))


def _dpo_keep_end(f) -> bool:
    """A DPO file (DPO-only keys or `trl dpo` launches) with truncation_mode keep_end (its default)
    and a max_length (default 1024), without padding_free."""
    length = f.config.get("sequence.max_length")
    return (f("file.kind") == "trl" and f("training.trainer") == "dpo"
            and f("sequence.truncation_mode") in (None, "keep_end") and f("sequence.padding_free") is not True
            and not (length is not None and length.value is None))


# transformers OptimizerNames that build bitsandbytes' 8-bit AdamW (trainer.py get_optimizer_cls_and_kwargs):
# two optimizer states, the second quantized with the unsigned dynamic map.
_BNB_8BIT_ADAM = ("adamw_bnb_8bit", "adamw_8bit")


def _bnb_8bit_adam(f) -> bool:
    return str(f("optimizer.name") or "").lower() in _BNB_8BIT_ADAM


def _bnb_paged_8bit_adam(f) -> bool:
    """paged_adamw_8bit: bitsandbytes' PagedAdamW8bit (44d68ff2, first tagged 0.39.1)."""
    return str(f("optimizer.name") or "").lower() == "paged_adamw_8bit"


# What and why of the two bitsandbytes rows (what, failure, reference).
_BNB_MAP = ("optim {optimizer.name} (bitsandbytes 8-bit AdamW)",
            "the second-moment state is quantized with a broken map whose largest value is 0.093 instead of 1, so "
            "the updates are inflated and the loss goes NaN within the first steps",
            "bitsandbytes-foundation/bitsandbytes#227, #152; fixed by 3c9aca91 (0.41.1)")


def _evaluates(f) -> bool:
    return f("checkpoint.eval_strategy") in ("steps", "epoch")


def _loss_maximised(f) -> bool:
    """load_best_model_at_end comparing by a metric_for_best_model whose name ends in "loss" but is
    not exactly loss / eval_loss (a per-dataset eval_<name>_loss, a custom eval_nll_loss),
    greater_is_better unwritten (None: TrainingArguments.__post_init__ infers it from the name)."""
    metric = f("checkpoint.best_metric_name")
    return (f.arguments() and f("checkpoint.load_best") is True and _evaluates(f) and isinstance(metric, str)
            and metric.endswith("loss") and metric not in ("loss", "eval_loss")
            and f("checkpoint.greater_is_better") is None)


def _plateau_logged(f) -> bool:
    """lr_scheduler_type reduce_lr_on_plateau (with the evaluation it needs), logging not off, and
    no DeepSpeed config (whose own scheduler section would replace the Trainer's)."""
    return (f.arguments() and f("scheduler.type") == "reduce_lr_on_plateau" and _evaluates(f)
            and f("logging.strategy") not in ("no", False)
            and not any(link.kind == "deepspeed" for link in f.config.links))


def _all_linear_seq_cls(f) -> bool:
    return (f("file.kind") == "peft" and f("adapter.task_type") == "SEQ_CLS"
            and str(f("adapter.target_shorthand") or "").lower() == "all-linear")


ROWS = (
    # DeepSpeedEngine.no_sync (fc4e73370, #6675, v0.16.0) asserts "no_sync context manager is
    # incompatible with gradient partitioning logic of ZeRO stage N" for ZeRO >= 2. The Trainer
    # reaches it on every micro-batch but the last of a window: through accelerator.accumulate
    # (transformers 4.31.0-4.46.1 wheels) or accelerator.no_sync (4.46.2-4.47.0); 4.47.1 (#35157)
    # skips it under DeepSpeed, accelerate 1.9.0 (175fe915, #3656) in its own no_sync.
    Row("TRN073", (Range("deepspeed", "0.16.0", None), Range("transformers", "4.31.0", "4.47.1"),
                   Range("accelerate", None, "1.9.0")), _no_sync_under_zero, "batch.grad_accum",
        "gradient_accumulation_steps with a ZeRO-2/3 DeepSpeed config",
        "the Trainer skips the gradient sync of each accumulation micro-batch with no_sync, which DeepSpeed "
        "asserts against under ZeRO stage 2 and 3, so every rank dies on the first training step",
        "deepspeedai/DeepSpeed#6793, huggingface/transformers#34984; fixed by transformers 4.47.1 (#35157) "
        "or accelerate 1.9.0 (#3656)"),
    # accelerator.py prepare: "When using FSDP2, a model and optimizer must be passed together to
    # `Accelerator.prepare()`" (d7c741a6, #3394, v1.6.0). transformers trainer.py _inner_training_loop
    # sets delay_optimizer_creation for any FSDP run and prepares the model alone (4.36.0-4.50.3
    # wheels); 4.51.0 (#37147) turns it off for fsdp_version 2.
    Row("TRN073", (Range("accelerate", "1.6.0", None), Range("transformers", "4.36.0", "4.51.0")),
        _fsdp2_trainer, "parallel.fsdp_version", "fsdp_version 2 for a Trainer run",
        "the Trainer prepares the model alone before creating its optimizer, which accelerate refuses under "
        "FSDP2 (\"a model and optimizer must be passed together to `Accelerator.prepare()`\"), so every rank "
        "dies when training starts",
        "huggingface/accelerate#3476; fixed by transformers 4.51.0 (#37147)"),
    # accelerate utils/dataclasses.py FullyShardedDataParallelPlugin.set_mixed_precision (c93b3eb5, #522, v0.11.0)
    # maps fp16/bf16/fp32 only and raises for anything else; state.py AcceleratorState calls it with the launch's
    # mixed_precision under FSDP. fp8 became a launch choice in v0.17.0 (1bfde6b9, #1086; before, launch's
    # PrecisionType() refuses it); from b0528392 (#2232, v0.26.0) a GPU below compute capability 8.9 falls back to
    # fp16 first. a452327e (#2983, v0.34.0) maps fp8 to bf16 (huggingface/accelerate#2615).
    Row("TRN073", (Range("accelerate", None, "0.34.0"),), accelerate_fp8("FSDP"), "precision.fp8",
        "mixed_precision fp8 with distributed_type FSDP",
        "accelerate's FSDP plugin cannot build a mixed-precision policy for fp8, so every rank dies when the "
        "Accelerator is created (\"Unknown mixed precision value: fp8\"; before 0.17 the launcher refuses fp8 itself, "
        "and 0.26 to 0.33 on a GPU below compute capability 8.9 fall back to fp16 instead)",
        "huggingface/accelerate#2615; FSDP with fp8 from accelerate 0.34.0 (#2983)"),
    # sft_trainer.py SFTTrainer.__init__: 3822674de (#5359, v1.0.0, still at v1.9.0) raises when
    # padding_free and not packing and max_length is not None (SFTConfig.max_length default 1024).
    Row("TRN073", (Range("trl", "1.0.0", None),), _padding_free_unpacked, "sequence.padding_free",
        "padding_free without packing, max_length not null",
        "SFTTrainer refuses it after loading the model (\"When `padding_free=True` without packing, `max_length` "
        "is not enforced ...\"); set max_length: null, enable packing, or drop padding_free",
        "huggingface/trl#5923; trl sft_trainer.py, 3822674de (#5359)"),
    # grpo_trainer.py GRPOTrainer.log: `logs = {**logs, **metrics}` (v0.14.0-v1.4.x) leaves the trainer's
    # metrics out of the dict evaluate() returns; 4711a21d6 (#5811, v1.5.0) updates it in place.
    Row("TRN073", (Range("trl", "0.14.0", "1.5.0"),), _grpo_metric, "checkpoint.best_metric_name",
        "metric_for_best_model naming a metric GRPOTrainer logs",
        "GRPOTrainer logs its own eval metrics but does not return them from evaluate(), so the Trainer does "
        "not find the metric and raises KeyError at the first evaluation followed by a save",
        "huggingface/trl#3384; fixed in TRL 1.5.0 (#5811); use eval_loss or upgrade TRL"),
    Row("TRN073", (Range("trl", "0.16.0", "1.5.0"),), _sft_metric, "checkpoint.best_metric_name",
        "metric_for_best_model naming a metric SFTTrainer logs",
        "SFTTrainer logs its own eval metrics but does not return them from evaluate(), so the Trainer does "
        "not find the metric and raises KeyError at the first evaluation followed by a save",
        "huggingface/trl#5811; fixed in TRL 1.5.0; use eval_loss or upgrade TRL"),
    # accelerate utils/fsdp_utils.py fsdp2_prepare_model put "ignored_params" into fully_shard's kwargs
    # unconditionally from a7d6f28f (#3731, v1.11.0); torch's fully_shard takes it only from 2.7.0, and
    # accelerate runs FSDP2 from torch 2.6.0 (constants.py FSDP2_PYTORCH_VERSION). 8ec83c8a (#3924,
    # v1.13.0) passes it only on torch >= 2.7.0 with ignored_modules set.
    Row("TRN073", (Range("accelerate", "1.11.0", "1.13.0"), Range("torch", "2.6.0", "2.7.0")),
        lambda f: f.fsdp2(), "parallel.fsdp_version", "fsdp_version 2",
        "accelerate passes ignored_params to torch's fully_shard, which torch 2.6 does not take, so every rank dies "
        "with \"TypeError: fully_shard() got an unexpected keyword argument 'ignored_params'\" when the model is "
        "prepared", "huggingface/accelerate#3923; fixed in accelerate 1.13.0 (#3924), or use torch >= 2.7"),
    # DeepSpeed #8066 (b919284ab, v0.19.2) stopped casting the whole module to bf16 in
    # engine._configure_distributed_model, so PEFT's fp32-upcast adapters (get_peft_model
    # autocast_adapter_dtype=True, from PEFT 0.12.0, ae1ae20b7, #1706; earlier releases cast the adapter
    # to the base weight's dtype) stay fp32 next to bf16 weights, and partition_parameters.py
    # _allgather_params_coalesced allocated every output buffer in the first parameter's dtype; fixed by
    # #8073 (b5b3fded4, v0.19.3). TRL passes autocast_adapter_dtype=False under ZeRO-3 from 1.7.0 (#6091).
    Row("TRN073", (Range("deepspeed", "0.19.2", "0.19.3"), Range("trl", None, "1.7.0"), Range("peft", "0.12.0", None)),
        zero3_bf16_lora, "adapter.kind", "a LoRA adapter (use_peft) in bf16 under ZeRO-3",
        "PEFT keeps the adapter weights in fp32 beside the bf16 base weights and DeepSpeed gathers them into "
        "buffers of one dtype, so the first step dies with \"TypeError: output tensor must have the same type as "
        "input tensor\" in _allgather_params_coalesced",
        "deepspeedai/DeepSpeed#8072, huggingface/trl#6089; fixed in DeepSpeed 0.19.3 (#8073) and TRL 1.7.0 (#6091)"),
    # trainer_pt_utils.py _get_learning_rate logs `lr_scheduler.get_last_lr()[0]` whatever the
    # schedule in the 4.29.0-4.29.2 wheels (reduce_lr_on_plateau came in 4.29.0, SchedulerType and
    # optimization.py get_reduce_on_plateau_schedule: torch's ReduceLROnPlateau); 4.30.0 (#23944)
    # reads the optimizer's lr for it. torch's ReduceLROnPlateau derived from `object`, without
    # get_last_lr, until pytorch/pytorch#108464 (merged 2023-09-04, after the 2.1 release branch:
    # 2.1.0 still lacks it, pytorch/pytorch#110776), so every torch before 2.2.0 lacks it.
    Row("TRN073", (Range("transformers", "4.29.0", "4.30.0"), Range("torch", None, "2.2.0")), _plateau_logged,
        "scheduler.type", "lr_scheduler_type reduce_lr_on_plateau",
        "the Trainer logs the learning rate with lr_scheduler.get_last_lr(), which torch's ReduceLROnPlateau "
        "does not have, so the run dies with AttributeError the first time it logs (logging_steps, 500 by "
        "default)", "huggingface/transformers#23934; fixed in transformers 4.30.0 (#23944)"),
    # training_args.py TrainingArguments.__post_init__: greater_is_better None is set to
    # `metric_for_best_model not in ["loss", "eval_loss"]` in every wheel up to 4.41.2 (4.20.1 ...
    # 4.41.0, 4.41.2); 4.42.0 reads `not metric_for_best_model.endswith("loss")` (#31142).
    Row("TRN074", (Range("transformers", None, "4.42.0"),), _loss_maximised, "checkpoint.best_metric_name",
        "load_best_model_at_end with metric_for_best_model {checkpoint.best_metric_name} and no greater_is_better",
        "only the exact names loss and eval_loss count as lower-is-better, so the Trainer takes the checkpoint "
        "with the HIGHEST loss as the best one and loads it at the end, silently (set greater_is_better: false)",
        "huggingface/transformers#31142; fixed in transformers 4.42.0"),
    # trainer.py compute_loss with a label smoother shifts the labels only for a model class named in
    # MODEL_FOR_CAUSAL_LM_MAPPING_NAMES: a PEFT model is 'PeftModelForCausalLM' (4.31.0 wheel) and
    # 'LoraModel' (4.32-4.35.2 wheels); 4.36.0 reads the base model's own class name.
    Row("TRN074", (Range("transformers", None, "4.36.0"),), _peft_label_smoothing, "training.label_smoothing",
        "label_smoothing_factor with a LoRA adapter",
        "the Trainer's smoothed loss does not shift the labels of a PEFT-wrapped causal LM, so each position "
        "is trained to predict its own input token and the adapter learns to copy, silently",
        "huggingface/transformers#27161, #25044; fixed in transformers 4.36.0"),
    # dpo_trainer.py concatenated_forward: flush_left() then input_ids[:, -max_length:] for keep_end
    # (fe4b5efe4, #2551, v0.14.0; DPOConfig max_length 1024, truncation_mode "keep_end"); 8e8e62b38
    # (#3398, v0.18.0) flushes right before keeping the end.
    Row("TRN074", (Range("trl", "0.14.0", "0.18.0"),), _dpo_keep_end, "sequence.max_length",
        "DPO with truncation_mode keep_end (the default) and a max_length",
        "in every batch with a pair longer than max_length the trainer keeps the last max_length columns after "
        "pushing each row's tokens to the left, so the shorter rows keep only padding and an empty loss mask: "
        "they drop out of the loss and their logged logits turn NaN",
        "huggingface/trl#3382; fixed in TRL 0.18.0 (#3398); set truncation_mode keep_start or upgrade TRL"),
    # bitsandbytes functional.py create_dynamic_map (rewritten in 2f2063ba, first in 0.36.0) builds the
    # unsigned map Optimizer8bit uses for Adam's second state with 524 entries instead of 256; fixed
    # by 3c9aca91 (2023-08-03, released as 0.41.1).
    Row("TRN074", (Range("bitsandbytes", "0.36.0", "0.41.1"),), _bnb_8bit_adam, "optimizer.name", *_BNB_MAP),
    Row("TRN074", (Range("bitsandbytes", "0.39.1", "0.41.1"),), _bnb_paged_8bit_adam, "optimizer.name", *_BNB_MAP),
    # bitsandbytes csrc/kernels.cu kOptimizer32bit1State folds weight decay into the gradient for every
    # 1-state optimizer, Lion included (Lion since 7247cb45, first in 0.38.0; PagedLion first in 0.39.1),
    # before the sign of Lion's update; ab9709a5 (#1993, 0.50.0) decays Lion's weights decoupled.
    Row("TRN074", (Range("bitsandbytes", "0.38.0", "0.50.0"),), lambda f: bnb_lion_32bit(f, "lion_32bit"),
        "optimizer.name", *BNB_LION),
    Row("TRN074", (Range("bitsandbytes", "0.39.1", "0.50.0"),), lambda f: bnb_lion_32bit(f, "paged_lion_32bit"),
        "optimizer.name", *BNB_LION),
    # Axolotl's GRPO trainers (ffae8d6a9, #2307, v0.7.0) take TRL GRPOTrainer's shuffling sampler
    # (shuffle_dataset, default True, which Axolotl never sets) or, with sequence parallelism,
    # SequenceParallelRepeatRandomSampler(shuffle=True) (core/trainers/grpo/trainer.py); only the latter
    # honours curriculum_sampling from 5a0dc637e (#3707, v0.18.0), so every release before shuffles.
    Row("TRN074", (Range("axolotl", "0.7.0", "0.18.0"),), grpo_curriculum, "training.curriculum_sampling",
        "curriculum_sampling with rl: grpo",
        "the GRPO trainer draws the prompts through a shuffling sampler whatever curriculum_sampling says, so the "
        "curriculum order is lost and the run trains on a random order, silently",
        "axolotl-ai-cloud/axolotl#2376; the sequence-parallel sampler honours it from 0.18.0 (#3707)"),
    # peft tuners/trainable_tokens/layer.py TrainableTokensLayer.forward (v0.15.0) looks the tokens up
    # with F.embedding whenever the base layer is an nn.Embedding, which Gemma3TextScaledWordEmbedding is,
    # skipping its forward and embed_scale; lora/layer.py Embedding adds its delta unscaled. 9b8cf2a0c
    # (#2825, v0.18.0) applies the base layer's embed_scale (_get_embed_scale) to both.
    Row("TRN074", (Range("peft", "0.15.0", "0.18.0"),), trainable_tokens_scaled, "adapter.kind adapter.trainable_token_layers",
        "trainable tokens (token_indices or LoRA trainable_token_indices) on the scaled word embedding of {model.name}",
        "PEFT looks the embeddings up itself without the model's sqrt(hidden_size) embedding scale, so every input "
        "embedding reaches the first layer far too small and training starts from a broken model (high loss and "
        "gradient norm), silently", "huggingface/peft#2809; fixed in PEFT 0.18.0 (#2825)"),
    Row("TRN074", (Range("peft", None, "0.18.0"),), lora_embedding_scaled, "adapter.target_modules",
        "LoRA on embed_tokens, the scaled word embedding of {model.name}",
        "PEFT adds the adapter's embedding delta without the model's sqrt(hidden_size) embedding scale, so the "
        "adapter's update reaches the model scaled down by that factor (the base embedding is scaled) and trains "
        "differently from the same adapter merged, silently", "huggingface/peft#2809; fixed in PEFT 0.18.0 (#2825)"),
    # accelerate state.py AcceleratorState sets _mixed_precision "no" under DEEPSPEED, and DeepSpeedPlugin.
    # set_mixed_precision enables fp16 / bf16 only for those names ("auto" and absent blocks become false), so fp8
    # (a launch choice from 1bfde6b9, #1086, v0.17.0) reaches neither DeepSpeed nor Transformer Engine, whose
    # conversion only prepare_model applies; a452327e (#2983, v0.34.0) enables bf16 and fp8 for it.
    Row("TRN074", (Range("accelerate", "0.17.0", "0.34.0"),), accelerate_fp8("DEEPSPEED"), "precision.fp8",
        "mixed_precision fp8 with distributed_type DEEPSPEED",
        "accelerate hands DeepSpeed neither fp8 nor a 16-bit mode: no layer runs in fp8, and the model trains in "
        "fp32 unless the DeepSpeed config itself enables bf16, with no error (from 0.19, without "
        "transformer_engine or MS-AMP installed, the Accelerator refuses fp8 at creation instead)",
        "accelerate DeepSpeedPlugin.set_mixed_precision; DeepSpeed with fp8 from accelerate 0.34.0 (#2983)"),
    # accelerate utils/dataclasses.py FullyShardedDataParallelPlugin.set_auto_wrap_policy (c93b3eb5, #522, v0.11.0)
    # compares FSDP_AUTO_WRAP_POLICY with TRANSFORMER_BASED_WRAP / SIZE_BASED_WRAP as written and leaves
    # auto_wrap_policy None for anything else; 3bde6156 (#2998, v0.34.0) takes any case and refuses the rest (TRN110).
    Row("TRN074", (Range("accelerate", "0.11.0", "0.34.0"),), accelerate_wrap_unread,
        "parallel.accelerate_fsdp_wrap_policy", "fsdp_auto_wrap_policy {parallel.accelerate_fsdp_wrap_policy}",
        "accelerate's FSDP plugin knows only TRANSFORMER_BASED_WRAP and SIZE_BASED_WRAP as written, so it wraps no "
        "layer: the whole model is one FSDP unit whose parameters every rank gathers in full for each forward and "
        "backward, silently (far more memory, no overlap)",
        "accelerate set_auto_wrap_policy; other spellings refused from 0.34.0 (3bde6156, #2998)"),
    # peft tuners_utils.py _maybe_include_all_linear_layers ("all-linear", cbd783b4d, #1295, v0.8.0) drops
    # only get_output_embeddings(), which a *ForSequenceClassification model lacks; 1a5d0f815 (#2033,
    # v0.13.0) also drops the classifier head for task_type SEQ_CLS.
    Row("PEF011", (Range("peft", "0.8.0", "0.13.0"),), _all_linear_seq_cls, "adapter.target_modules",
        "target_modules all-linear with task_type SEQ_CLS",
        "PEFT wraps the classification head with LoRA and also trains it as a modules_to_save copy (double "
        "wrapped), so the trained adapter cannot be loaded back after training",
        "huggingface/peft#2027, #1485; fixed in PEFT 0.13.0 (#2033)"),
    # grpo_trainer.py compute_liger_loss passes unwrapped_model.lm_head.weight to LigerFusedLinearGRPOLoss
    # (793735a69, #3184, v0.17.0); f298ae33a (#5891, v1.6.0) gathers it under ZeRO-3.
    Row("TRN073", (Range("trl", "0.17.0", "1.6.0"),), grpo_liger_zero3,
        "training.liger_loss memory.fused_cross_entropy",
        "the fused liger GRPO loss under DeepSpeed ZeRO-3", f"GRPOTrainer.compute_liger_loss {LM_HEAD_SHARD}",
        "huggingface/trl#3368; fixed in TRL 1.6.0 (#5891)"),
    # dpo_trainer.py _compute_loss_liger (`weight = lm_head.weight`, v0.29.0-v1.8.0) and kto_trainer.py
    # (`lin_weight=lm_head.weight`, v1.8.0); 0d8154ebe (#6372, v1.9.0) gathers them under ZeRO-3.
    Row("TRN073", (Range("trl", "0.29.0", "1.9.0"),), preference_liger_zero3("dpo"), "memory.fused_cross_entropy",
        "use_liger_kernel in a DPO run under DeepSpeed ZeRO-3", f"DPOTrainer's fused liger loss {LM_HEAD_SHARD}",
        "huggingface/trl#4544; fixed in TRL 1.9.0 (#6372)"),
    Row("TRN073", (Range("trl", "1.8.0", "1.9.0"),), preference_liger_zero3("kto"), "memory.fused_cross_entropy",
        "use_liger_kernel in a KTO run under DeepSpeed ZeRO-3", f"KTOTrainer's fused liger loss {LM_HEAD_SHARD}",
        "huggingface/trl#4544; fixed in TRL 1.9.0 (#6372)"),
    # sft_trainer.py _chunked_cross_entropy_loss / _chunk (loss_type chunked_nll, 9bcf72943, #5575, v1.4.0)
    # multiplies by lm_head.weight directly; c207b9f06 (#5873, v1.6.0) gathers it under ZeRO-3.
    Row("TRN073", (Range("trl", "1.4.0", "1.6.0"),), chunked_nll_zero3, "training.loss_type",
        "SFT loss_type chunked_nll under DeepSpeed ZeRO-3", f"the chunked cross-entropy {LM_HEAD_SHARD}",
        "huggingface/trl#5873; fixed in TRL 1.6.0"),
    # grpo_trainer.py _generate: num_items_in_batch = the gathered count of ALL completion tokens, taken before
    # mask_truncated_completions zeroes the truncated rows of completion_mask; compute_loss divides the masked
    # sum by it for dapo (2324245ca, #3938, v0.22.0), cispo and vespo. 7c1fa85ad (#6439, v1.9.0) counts the mask.
    Row("TRN074", (Range("trl", "0.22.0", "1.9.0"),), truncated_still_counted, "generation.mask_truncated",
        "mask_truncated_completions with a loss normalised by num_items_in_batch (loss_type dapo, the default, "
        "cispo or vespo)",
        "truncated completions leave the loss sum but their tokens still count in its normaliser "
        "(num_items_in_batch), so every step's loss and gradient shrink by the share of truncated tokens, silently",
        "huggingface/trl#6369; fixed in TRL 1.9.0 (#6439)"),
    # data_utils.py _pack_bfd (packing_strategy "bfd", SFTConfig's default): ec70ef2fc (#4632, v0.27.0) cuts
    # every example longer than max_length into max_length fragments packed as separate sequences;
    # a558fba8a (#5076, v0.29.0) truncates again and moves the split to an opt-in "bfd-requeue".
    Row("TRN074", (Range("trl", "0.27.0", "0.29.0"),), bfd_packing, "sequence.packing",
        "packing with packing_strategy bfd (the default)",
        "every example longer than max_length is cut into max_length pieces, each packed and trained on as its "
        "own sequence: the tail of a long conversation starts mid-answer with no prompt before it (before 0.27 "
        "and from 0.29 the overflow is truncated)",
        "huggingface/trl#5075; fixed in TRL 0.29.0 (#5076)"),
    # Ludwig LLM evaluation and predict generate generation.max_new_tokens (default 32) as is up to v0.8.5;
    # cb1f7d9d1 (#3713, v0.8.6) sets it from the output's max_sequence_length when left at 32.
    Row("TRN074", (Range("ludwig", "0.8", "0.8.6"),), ludwig_default_generation_short, "data.output_max_length",
        "a text output feature with max_sequence_length {data.output_max_length} and no generation.max_new_tokens",
        "evaluation after each epoch and predict generate the default 32 new tokens, so longer answers are cut off "
        "and the evaluation metrics underreported, silently; set generation.max_new_tokens",
        "ludwig-ai/ludwig#3713; fixed in Ludwig 0.8.6"),
)


class ReleaseBug(ReleaseTable):
    """Base of TRN073, TRN074 and PEF011: the rows of ROWS (and of rules/axolotl_release_rows.py) with
    the rule's code. A row marked `unpinned` (every release from its first fails) fires on an
    unknown version too."""

    rows = ROWS + AXOLOTL_ROWS

    def unpinned_message(self, row, facts) -> str:
        part = row.ranges[0]
        return (f"{fill(row.what, facts)} (every {part.package} release from {part.first}): {row.failure} "
                f"({row.reference})")
