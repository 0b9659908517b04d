"""The argument combinations a trainer's own parser refuses at launch, one row per check.

Each row: the parser's message, where it sits, the first release (and commit) that has the check in
this wording, whether the hazard holds for every release (`always`: older releases fail later or
misbehave, or do not know one of the keys at all), the IR key the finding points at, the command
whose parser runs it, and the condition on the config's facts (a `facts` object: `facts.get(key)`,
`facts.deepspeed`, `facts.zero3`, `facts.zero3_offload`,
`facts.world`, `facts.val_size`, `facts.not_lora`, `facts.full`, see
argument_checks.py). Releases and commits from `git log -S '<message>'` on hiyouga/LLaMA-Factory
(HEAD ff6d4d12), each commit's first tag from `git tag --contains`; key introductions likewise
(`git log -S '    <key>:'` on src/*/hparams). The `llamafactory` name on PyPI starts at 0.8.0
(setup.py, dfa686b61): a pin is never older, so a row from an earlier release fires on any pin.
"""

from __future__ import annotations

from typing import Callable

_PARSER = "hparams/parser.py get_train_args"
_VERIFY = "hparams/parser.py _verify_model_args"
_DATA = "hparams/data_args.py DataArguments.__post_init__"
_FINETUNING = "hparams/finetuning_args.py FinetuningArguments.__post_init__"
_EXPORT_ARGS = "hparams/model_args.py ExportArguments.__post_init__"
_EXPORT = "train/tuner.py export_model"
_INFER = "hparams/parser.py get_infer_args"
_MULTIMODAL = "hparams/model_args.py ProcessorArguments.__post_init__"

TRAIN, ANY, EXPORT, INFER, EVAL = "train", "any", "export", "infer", "eval"


class Row:
    """One refused combination (a plain class: see incompatible_versions._Range)."""

    __slots__ = ("message", "where", "since", "commit", "always", "anchor", "command", "applies", "damage", "until",
                 "ignored")

    def __init__(self, message: str, where: str, since: str, commit: str, anchor: str | tuple[str, ...],
                 applies: Callable, damage: str | Callable, *, always: bool = False, command: str = ANY,
                 until: str | None = None, ignored: bool = False):
        # until: the first release without the check (a limitation lifted later; never `always`).
        # ignored: nothing refuses it; `message` says what the code does instead (a workflow skips a step).
        self.message, self.where, self.since, self.commit, self.until = message, where, since, commit, until
        self.ignored = ignored
        self.anchor = (anchor,) if isinstance(anchor, str) else anchor
        self.applies, self.damage, self.always, self.command = applies, damage, always, command


def _true(facts, key: str) -> bool:
    return facts.get(key) is True


def _non_sft(facts) -> bool:
    return facts.get("training.stage") not in (None, "sft")


def _no_eval_set(facts) -> bool:
    return facts.get("data.eval_sets") is None and facts.val_size < 1e-6


def _evaluates_in_training(facts) -> bool:
    return _true(facts, "training.enabled") and facts.get("checkpoint.eval_strategy") in ("steps", "epoch")


def _evaluates_without_a_set(facts) -> bool:
    """Evaluation during training with no evaluation set: every release dies at the first one (a
    tokenized_path may hold a saved evaluation split, which releases before the check use; the PPO
    workflow never evaluates, so only the check refuses it)."""
    return (_evaluates_in_training(facts) and _no_eval_set(facts) and facts.get("data.tokenized_path") is None
            and facts.get("training.stage") != "ppo")


def _vllm(facts) -> bool:
    return facts.get("inference.backend") == "vllm"


def _smaller(facts, kind: str) -> bool:
    most, fewest = facts.get(f"media.{kind}_max_pixels"), facts.get(f"media.{kind}_min_pixels")
    return isinstance(most, int) and isinstance(fewest, int) and most < fewest


def _quantized(facts) -> bool:
    return facts.get("quantization.bits") is not None


def _because(facts) -> str:
    """Names the saved-quantized checkpoint where quantization_bit does not explain the finding."""
    return "" if _quantized(facts) else f"{facts.saved_quantized()}; "


def _loaded_quantized(facts) -> bool:
    """The loaded model has `quantization_method` (what the checks after loading read): quantized on
    the fly (quantization_bit), or saved already quantized (model_name_or_path's quantization_config)."""
    return _quantized(facts) or facts.prequantized() is not None


def _fraction(facts) -> bool:
    return 1e-6 < facts.val_size < 1


def _length_differs(facts, key: str) -> bool:
    probs, sets = facts.get("data.interleave_probs"), facts.get(key)
    return probs is not None and sets is not None and len(probs) != len(sets)


def _other_loggers(facts) -> bool:
    loggers = facts.get("logging.report_to") or []
    # "all" becomes the installed trackers (transformers TrainingArguments): not decidable here.
    return any(logger not in ("wandb", "tensorboard", "trackio", "none", "all") for logger in loggers)


ROWS = (
    # ---- hparams/parser.py get_train_args ------------------------------------------------------
    # always: 0.0.9 (stage's first tag) asserted `stage == "sft" or not predict_with_generate` ("... cannot
    # be set as True at PT, RM and PPO stages."), reworded in 0.1.6 (bench/llamafactory_key_history.md).
    Row("`predict_with_generate` cannot be set as True except SFT.", _PARSER, "0.1.6", "ca719a869",
        "generation.predict_with_generate",
        lambda f: _non_sft(f) and _true(f, "generation.predict_with_generate"),
        "only the SFT trainer generates (every release refuses it, 0.0.9 to 0.1.5 in other words)", always=True,
        command=TRAIN),
    Row("`neat_packing` cannot be set as True except SFT.", _PARSER, "0.8.3", "5acaa476d", "data.neat_packing",
        lambda f: _non_sft(f) and _true(f, "data.neat_packing"),
        "neat packing is an SFT collator (every release with the key has the check)", always=True, command=TRAIN),
    Row("`train_on_prompt` or `mask_history` cannot be set as True except SFT.", _PARSER, "0.9.0", "5af32ce70",
        ("data.train_on_prompt", "data.mask_history"),
        lambda f: _non_sft(f) and (_true(f, "data.train_on_prompt") or _true(f, "data.mask_history")),
        "the prompt masks are SFT options", command=TRAIN),
    Row("Please enable `predict_with_generate` to save model predictions.", _PARSER, "0.0.9", "5f44112cf",
        "training.do_predict",
        lambda f: f.get("training.stage") == "sft" and _true(f, "training.do_predict")
        and not _true(f, "generation.predict_with_generate"),
        "SFT predictions are generated text", always=True, command=TRAIN),
    Row("RM and PPO stages do not support `load_best_model_at_end`.", _PARSER, "0.2.1", "14a38b506",
        "checkpoint.load_best",
        lambda f: f.get("training.stage") in ("rm", "ppo") and _true(f, "checkpoint.load_best"),
        "drop load_best_model_at_end (the maintainer's answer in #1626)", command=TRAIN),
    # always: PPO without do_train is refused from 0.0.9 (loader.py "PPO stage cannot be performed at
    # evaluation."), 0.1.6 ("PPO and DPO stage(s) can only be performed at training."), 0.2.1 (this check).
    Row("PPO training does not support evaluation, use the SFT stage to evaluate models.", _PARSER, "0.2.1",
        "52326870e", "training.stage",
        lambda f: f.get("training.stage") == "ppo" and not _true(f, "training.enabled"),
        "the PPO workflow only trains (every release refuses it, before 0.2.1 in other words)", always=True,
        command=TRAIN),
    Row("PPO training is incompatible with S^2-Attn.", _PARSER, "0.2.0", "e387a5047", "attention.shift_short",
        lambda f: f.get("training.stage") == "ppo" and _true(f, "attention.shift_short"),
        "drop shift_attn (every release with the key has the check)", always=True, command=TRAIN),
    Row("Unsloth does not support lora reward model.", _PARSER, "0.5.0", "d358d955e", "model.unsloth",
        lambda f: f.get("training.stage") == "ppo" and f.get("training.reward_model_type") == "lora"
        and _true(f, "model.unsloth"),
        "load the reward model in full (reward_model_type: full) or drop use_unsloth (every release with "
        "use_unsloth has the check: both 0.5.0)", always=True, command=TRAIN),
    Row("PPO only accepts wandb, tensorboard, or trackio logger.", _PARSER, "0.6.1", "9408366a3",
        "logging.report_to", lambda f: f.get("training.stage") == "ppo" and _other_loggers(f),
        "PPO logs through TRL's tracker, which takes wandb, tensorboard or trackio", command=TRAIN),
    Row("Please specify `max_steps` in streaming mode.", _PARSER, "0.1.4", "43e83548b", "data.streaming",
        lambda f: _true(f, "data.streaming") and _true(f, "training.enabled")
        and f.get("training.max_steps") in (None, -1),
        "a streamed dataset has no length to derive the steps from (transformers: \"args.max_steps must be set "
        "to a positive value if dataloader does not have a length\")", always=True, command=TRAIN),
    Row("Please specify dataset for training.", _PARSER, "0.8.3", "e4d11a117", "training.enabled",
        lambda f: _true(f, "training.enabled") and f.get("data.train_sets") is None,
        "there is nothing to train on", command=TRAIN),
    Row("Please make sure eval_dataset be provided or val_size >1e-6", _PARSER, "0.9.4", "b0d49e137",
        "checkpoint.eval_strategy", _evaluates_without_a_set,
        "older releases train until the first evaluation and die there (transformers: \"Trainer: evaluation "
        "requires an eval_dataset\")", always=True, command=TRAIN),
    Row("Please make sure eval_dataset be provided or val_size >1e-6", _PARSER, "0.9.4", "b0d49e137",
        ("training.do_predict", "training.do_eval", "generation.predict_with_generate"),
        lambda f: not _evaluates_without_a_set(f) and _no_eval_set(f) and (_evaluates_in_training(f) or any(
            _true(f, key) for key in ("training.do_eval", "training.do_predict", "generation.predict_with_generate"))),
        "there is no evaluation set (older releases predict on `dataset`, or on a saved split of tokenized_path)",
        command=TRAIN),
    Row("Cannot use `predict_with_generate` and `compute_accuracy` together.", _PARSER, "0.8.3", "8c9392195",
        "eval.compute_accuracy",
        lambda f: _true(f, "generation.predict_with_generate") and _true(f, "eval.compute_accuracy"),
        "accuracy needs the logits, generation returns tokens (every release with the key has the check)", always=True,
        command=TRAIN),
    Row("Cannot use device map for quantized models in training.", _PARSER, "0.6.3", "b638c6551",
        "quantization.device_map",
        lambda f: _true(f, "training.enabled") and f.get("quantization.device_map") == "auto",
        "a model spread over devices cannot be trained data-parallel", command=TRAIN),
    Row("Please use scripts/pissa_init.py to initialize PiSSA in DeepSpeed ZeRO-3.", _PARSER, "0.8.3", "0e88c5754",
        "adapter.pissa_init", lambda f: _true(f, "adapter.pissa_init") and f.zero3 is True,
        "PiSSA's SVD needs the whole weights, ZeRO-3 partitions them", command=TRAIN),
    Row("`pure_bf16` is incompatible with DeepSpeed ZeRO-3.", _PARSER, "0.8.3", "bf99223a8", "model.load_dtype",
        lambda f: f.get("model.load_dtype") == "bfloat16" and f.zero3_offload,
        "with ZeRO-3 offload older releases crash after loading the model (#3476)", always=True, command=TRAIN),
    Row("`pure_bf16` is incompatible with DeepSpeed ZeRO-3.", _PARSER, "0.8.3", "bf99223a8", "model.load_dtype",
        lambda f: f.get("model.load_dtype") == "bfloat16" and f.zero3 is True and not f.zero3_offload,
        "use bf16 mixed precision under ZeRO-3 instead", command=TRAIN),
    Row("Radio-based BAdam does not yet support distributed training, use layer-wise BAdam.", _PARSER, "0.8.3",
        "9fd7a410b", "optimizer.badam_mode",
        lambda f: f.get("optimizer.memory_efficient") == "BAdam" and f.get("optimizer.badam_mode") == "ratio"
        and (f.world or 0) > 1,
        "use badam_mode: layer with ZeRO-3, or one GPU", command=TRAIN),
    # always: use_badam came in 0.6.3 with "Layer-wise BAdam does not yet support distributed training"
    # (191971865, any distributed run, this case included); 0.8.3 narrowed it to runs without ZeRO-3.
    Row("Layer-wise BAdam only supports DeepSpeed ZeRO-3 training.", _PARSER, "0.8.3", "9fd7a410b",
        "optimizer.memory_efficient",
        lambda f: f.get("optimizer.memory_efficient") == "BAdam" and f.get("optimizer.badam_mode") == "layer"
        and (f.world or 0) > 1 and f.zero3 is False,
        "use a ZeRO-3 DeepSpeed config, or one GPU (every release with use_badam refuses it: 0.6.3 to 0.8.2 "
        "refused layer-wise BAdam in any distributed run)", always=True, command=TRAIN),
    Row("FP8 training is not compatible with quantization. Please disable one of them.", _PARSER, "0.9.4",
        "1c44b60e3", "precision.fp8", lambda f: _true(f, "precision.fp8") and _quantized(f),
        "drop fp8 or quantization_bit (every release with the key has the check)", always=True, command=TRAIN),
    Row("vLLM/SGLang backend is only available for API, CLI and Web.", _PARSER, "0.6.0", "7c492864e",
        "inference.backend", lambda f: f.get("inference.backend") in ("vllm", "sglang"),
        "training generates with the trained model (every release with the key has the check)", always=True, command=TRAIN),
    # ---- hparams/parser.py _verify_model_args (train, chat, export, eval) ------------------------
    Row("Adapter is only valid for the LoRA method.", _VERIFY, "0.5.2", "1955a8ea5", "adapter.paths",
        lambda f: f.get("adapter.paths") is not None and f.not_lora,
        "only LoRA adapters are loaded on top of the base model"),
    Row("Please use scripts/pissa_init.py to initialize PiSSA for a quantized model.", _VERIFY, "0.8.2", "ca67b7a56",
        "adapter.pissa_init", lambda f: _quantized(f) and _true(f, "adapter.pissa_init"),
        "PiSSA's SVD needs full-precision weights (every release with the key has the check)", always=True),
    # The same after loading (model/adapter.py init_adapter, is_trainable and model.quantization_method): a
    # pre-quantized model_name_or_path. always: pissa_init and the check both came in 0.8.2.
    Row("Cannot initialize PiSSA adapter on quantized models.", "model/adapter.py init_adapter", "0.8.2", "60d9896a7",
        ("adapter.pissa_init", "model.name"),
        lambda f: _true(f, "adapter.pissa_init") and not _quantized(f) and f.prequantized() is not None,
        lambda f: (f"{_because(f)}PiSSA's SVD needs the full-precision weights, refused after the model loads "
                   "(every release with pissa_init has the check); start from the unquantized checkpoint"),
        always=True, command=TRAIN),
    Row("Cannot resize embedding layers of a quantized model.", _VERIFY, "0.7.0", "83404c4fa", "model.resize_vocab",
        lambda f: _quantized(f) and _true(f, "model.resize_vocab"),
        "quantized embeddings cannot be resized"),
    Row("Cannot create new adapter upon a quantized model.", _VERIFY, "0.4.0", "f902b0d42", "adapter.create_new",
        lambda f: _quantized(f) and f.get("adapter.paths") is not None and _true(f, "adapter.create_new"),
        "merge the loaded adapter into the unquantized model first (every release with the key has the check)", always=True),
    Row("Quantized model only accepts a single adapter. Merge them first.", _VERIFY, "0.4.0", "f902b0d42",
        "adapter.paths", lambda f: _quantized(f) and len(f.get("adapter.paths") or ()) > 1,
        "adapters cannot be merged into quantized weights (every release with the key has the check)", always=True),
    # The same after loading (model/adapter.py, LoRA setup, model.quantization_method): a pre-quantized
    # model_name_or_path. always: adapter_name_or_path and the assertion both came in 0.4.0 (f902b0d42).
    Row("Quantized model only accepts a single adapter.", "model/adapter.py init_adapter", "0.4.0", "f902b0d42",
        "adapter.paths",
        lambda f: not _quantized(f) and not f.not_lora and len(f.get("adapter.paths") or ()) > 1
        and f.prequantized() is not None,
        lambda f: (f"{_because(f)}adapters cannot be merged into quantized weights, refused after the model "
                   "loads (every release with the key has the check)"), always=True),
    # ---- hparams/model_args.py ProcessorArguments.__post_init__ (every command) ------------------
    Row("`image_max_pixels` cannot be smaller than `image_min_pixels`.", _MULTIMODAL, "0.9.3", "93e6184cb",
        ("media.image_max_pixels", "media.image_min_pixels"), lambda f: _smaller(f, "image"),
        "no image size satisfies both bounds"),
    Row("`video_max_pixels` cannot be smaller than `video_min_pixels`.", _MULTIMODAL, "0.9.3", "93e6184cb",
        ("media.video_max_pixels", "media.video_min_pixels"), lambda f: _smaller(f, "video"),
        "no frame size satisfies both bounds"),
    # ---- hparams/parser.py get_infer_args (chat, api, webchat) ---------------------------------
    Row("vLLM engine only supports auto-regressive models.", _INFER, "0.6.0", "056d2d956", "inference.backend",
        lambda f: _vllm(f) and _non_sft(f),
        "vLLM serves causal LM heads, not value heads (every release with infer_backend has the check)", always=True,
        command=INFER),
    # always: infer_backend came in 0.6.0 (056d2d956) with "vLLM engine does not support quantization."
    # (quantization_bit), reworded in 0.7.0.
    Row("vLLM engine does not support bnb quantization (GPTQ and AWQ are supported).", _INFER, "0.7.0", "7bfbcb1fe",
        "quantization.bits", lambda f: _vllm(f) and _quantized(f),
        "serve a GPTQ or AWQ export instead (every release with infer_backend has the check)", always=True,
        command=INFER),
    Row("vLLM engine does not support RoPE scaling.", _INFER, "0.6.0", "056d2d956", "model.rope_scaling",
        lambda f: _vllm(f) and f.get("model.rope_scaling") is not None,
        "drop rope_scaling or serve with huggingface (every release with infer_backend has the check)", always=True,
        command=INFER),
    # always: 0.6.0 to 0.6.3 refused any adapter under vLLM ("vLLM engine does not support LoRA adapters.
    # Merge them first."), several included.
    Row("vLLM only accepts a single adapter. Merge them first.", _INFER, "0.7.0", "7bfbcb1fe", "adapter.paths",
        lambda f: _vllm(f) and len(f.get("adapter.paths") or ()) > 1,
        "merge the adapters first (every release with infer_backend refuses it)", always=True, command=INFER),
    # ---- hparams/data_args.py DataArguments.__post_init__ --------------------------------------
    Row("Cannot specify `val_size` if `dataset` is None.", _DATA, "0.8.3", "502555b65", "data.val_size",
        lambda f: f.get("data.train_sets") is None and f.val_size > 1e-6,
        "there is no training set to split"),
    Row("Cannot specify `val_size` if `eval_dataset` is not None.", _DATA, "0.8.3", "502555b65", "data.val_size",
        lambda f: f.get("data.eval_sets") is not None and f.val_size > 1e-6,
        "the evaluation set is either split off or named, not both (every release with eval_dataset has the check)",
        always=True),
    Row("`interleave_probs` is only valid for interleaved mixing.", _DATA, "0.8.3", "502555b65",
        "data.interleave_probs",
        lambda f: f.get("data.interleave_probs") is not None and f.get("data.mix_strategy") == "concat",
        "older releases concatenate the datasets and ignore the probabilities", always=True),
    Row("The length of dataset and interleave probs should be identical.", _DATA, "0.8.3", "502555b65",
        "data.interleave_probs", lambda f: _length_differs(f, "data.train_sets"),
        "each dataset needs one probability"),
    Row("The length of eval dataset and interleave probs should be identical.", _DATA, "0.8.3", "502555b65",
        "data.interleave_probs", lambda f: _length_differs(f, "data.eval_sets"),
        "each evaluation dataset needs one probability (every release with eval_dataset has the check)", always=True),
    Row("Streaming mode should have an integer val size.", _DATA, "0.1.6", "467d57120", "data.val_size",
        lambda f: _true(f, "data.streaming") and _fraction(f),
        "a streamed dataset has no length to take a share of (every release with val_size has the check)", always=True),
    Row("`max_samples` is incompatible with `streaming`.", _DATA, "0.1.4", "dd3f3e974", "data.max_samples",
        lambda f: _true(f, "data.streaming") and f.get("data.max_samples") is not None,
        "a streamed dataset cannot be truncated by index (0.1.4 to 0.1.8 warned and dropped max_samples, a "
        "ValueError from 0.2.0)", always=True),
    Row("`mask_history` is incompatible with `train_on_prompt`.", _DATA, "0.9.0", "5af32ce70", "data.mask_history",
        lambda f: _true(f, "data.mask_history") and _true(f, "data.train_on_prompt"),
        "one masks the earlier turns, the other trains on every prompt"),
    # ---- hparams/finetuning_args.py FinetuningArguments.__post_init__ --------------------------
    Row("`reward_model` is necessary for PPO training.", _FINETUNING, "0.5.3", "bc16c9a54", "training.stage",
        lambda f: f.get("training.stage") == "ppo" and f.get("training.reward_model") is None,
        "PPO scores its rollouts with the reward model", always=True),
    Row("`reward_model_type` cannot be lora for Freeze/Full PPO training.", _FINETUNING, "0.5.3", "bc16c9a54",
        ("training.reward_model_type", "adapter.kind"),
        lambda f: f.get("training.stage") == "ppo" and f.get("training.reward_model_type") == "lora"
        and f.not_lora,
        "a LoRA reward model is an adapter on the policy's own base model, which a freeze or full policy does "
        "not have (refused in every release: PPO was LoRA-only up to 0.2.2, then \"Lora reward model only supports "
        "lora training.\", 670ee3934's \"Freeze/Full PPO training needs `reward_model_type=full`.\"); "
        "set reward_model_type: full", always=True),
    Row("`reward_model_type` cannot be oft for Freeze/Full PPO training.", _FINETUNING, "0.9.4", "003a2acb1",
        ("training.reward_model_type", "adapter.kind"),
        lambda f: f.get("training.stage") == "ppo" and f.get("training.reward_model_type") == "oft"
        and f.get("adapter.kind") != "oft",
        "an OFT reward model is an adapter on the policy's own base model"),
    Row("`dpo_label_smoothing` is only valid for sigmoid loss function.", _FINETUNING, "0.6.1", "333642276",
        "training.preference_label_smoothing",
        lambda f: f.get("training.stage") == "dpo" and f.get("training.loss_type") != "sigmoid"
        and (f.get("training.preference_label_smoothing") or 0) > 1e-6,
        "label smoothing is defined for the sigmoid loss only (pref_loss, from 0.8.0, came after the check)",
        always=True),
    Row("`use_llama_pro` is only valid for Freeze or LoRA training.", _FINETUNING, "0.8.0", "3b28c003d",
        "adapter.llama_pro", lambda f: _true(f, "adapter.llama_pro") and f.full,
        "full fine-tuning trains every block, not only the expanded ones"),
    Row("Cannot use LoRA with GaLore, APOLLO or BAdam together.", _FINETUNING, "0.6.0", "1e6fb6c8a",
        "optimizer.memory_efficient",
        lambda f: f.get("adapter.kind") == "lora"
        and f.get("optimizer.memory_efficient") in ("GaLore", "APOLLO"),
        "the projected optimizer is for full-rank weights (every release with use_galore or use_apollo has the check)",
        always=True),
    Row("Cannot use LoRA with GaLore, APOLLO or BAdam together.", _FINETUNING, "0.9.2", "7638f1070",
        "optimizer.memory_efficient",
        lambda f: f.get("adapter.kind") == "lora" and f.get("optimizer.memory_efficient") == "BAdam",
        "BAdam trains blocks of the full weights"),
    Row("Cannot use PiSSA for current training stage.", _FINETUNING, "0.8.2", "32f45c9e9", "adapter.pissa_init",
        lambda f: _true(f, "adapter.pissa_init") and (f.get("training.stage") in ("ppo", "kto") or (
            f.get("training.stage") == "dpo" and f.get("training.loss_type") not in ("orpo", "simpo"))),
        "drop pissa_init for this stage (every release with the key has the check)", always=True),
    Row("`loraplus_lr_ratio` is only valid for LoRA training.", _FINETUNING, "0.8.0", "3b28c003d",
        "adapter.loraplus_ratio", lambda f: f.get("adapter.loraplus_ratio") is not None and f.not_lora,
        "there are no LoRA B matrices to scale"),
    Row("`use_rslora` is only valid for LoRA training.", _FINETUNING, "0.8.3", "3d219b91b", "adapter.rslora",
        lambda f: _true(f, "adapter.rslora") and f.not_lora, "there is no LoRA scaling to change"),
    Row("`use_dora` is only valid for LoRA training.", _FINETUNING, "0.8.3", "3d219b91b", "adapter.dora",
        lambda f: _true(f, "adapter.dora") and f.not_lora, "there is no LoRA update to decompose"),
    Row("`pissa_init` is only valid for LoRA training.", _FINETUNING, "0.8.3", "46f0189e8", "adapter.pissa_init",
        lambda f: _true(f, "adapter.pissa_init") and f.not_lora, "there is no LoRA to initialise"),
    # ---- export (llamafactory-cli export) ------------------------------------------------------
    Row("Quantization dataset is necessary for exporting.", _EXPORT_ARGS, "0.4.0", "296711d50",
        "export.quantization_bit",
        lambda f: f.get("export.quantization_bit") is not None and f.get("export.quantization_dataset") is None,
        "GPTQ calibrates on it (every release with the key has the check)", always=True),
    Row("Please merge adapters before quantizing the model.", _EXPORT, "0.4.0", "3a45cfb60", "export.quantization_bit",
        lambda f: f.get("export.quantization_bit") is not None and f.get("adapter.paths") is not None,
        "export the merged model first, then quantize that export (every release with the key has the check)", always=True,
        command=EXPORT),
    # export_model reads the loaded model's quantization_method: quantization_bit or a pre-quantized
    # (GPTQ/AWQ/...) model_name_or_path. always: export_dir came in 0.4.0 with this message as a warning,
    # after which 0.4.0 saved the unmerged PeftModel (its adapter only) instead of a merged model; a
    # ValueError from 0.5.0 (6fa6d4532).
    Row("Cannot merge adapters to a quantized model.", _EXPORT, "0.5.0", "393e4b0f5, 6fa6d4532",
        ("quantization.bits", "model.name"), lambda f: _loaded_quantized(f) and f.get("adapter.paths") is not None,
        lambda f: (f"{_because(f)}merge into the unquantized model (drop quantization_bit, or start from the "
                   "unquantized checkpoint); 0.4.0 only warned and exported the adapter unmerged"),
        always=True, command=EXPORT),
)

# Checks that later releases dropped (a limitation lifted): they fire only on a pinned release in
# [since, until); `commit` reads added..removed. Found by diffing the raised messages of every tag from v0.8.0 (the first
# `llamafactory` on PyPI) against HEAD; each range from the tags whose files hold the message.
LIFTED = (
    Row("`predict_with_generate` cannot be set as True while training.", _PARSER, "0.0.9", "17024ebc1..cb474c7b1",
        "generation.predict_with_generate",
        lambda f: _true(f, "training.enabled") and _true(f, "generation.predict_with_generate"),
        "generate in a separate predict run", command=TRAIN, until="0.8.3"),
    Row("Turn off mixed precision training when using `pure_bf16`.", _PARSER, "0.6.0", "e416cecf6..9103fdf86",
        "model.load_dtype",
        lambda f: f.get("model.load_dtype") == "bfloat16"
        and (_true(f, "precision.bf16") or _true(f, "precision.fp16")),
        "pure_bf16 trains without AMP: drop bf16/fp16", command=TRAIN, until="0.8.3"),
    Row("Unsloth does not support DoRA.", _PARSER, "0.5.3", "b392e6cfb..27aece94c", "adapter.dora",
        lambda f: _true(f, "model.unsloth") and _true(f, "adapter.dora"), "drop use_dora or use_unsloth",
        command=TRAIN, until="0.8.2"),
    Row("Layer-wise BAdam does not yet support distributed training, use ratio-wise BAdam.", _PARSER, "0.6.3",
        "191971865..12fcfc2b7", "optimizer.memory_efficient",
        lambda f: f.get("optimizer.memory_efficient") == "BAdam" and f.get("optimizer.badam_mode") == "layer"
        and (f.world or 0) > 1, "use badam_mode: ratio, or one GPU", command=TRAIN, until="0.8.3"),
    Row("GaLore and BAdam are incompatible with DeepSpeed yet.", _PARSER, "0.6.3", "d301f0a64..12fcfc2b7",
        "optimizer.memory_efficient",
        lambda f: f.get("optimizer.memory_efficient") == "BAdam" and f.deepspeed,
        "drop the deepspeed config or BAdam", command=TRAIN, until="0.8.3"),
    Row("Please specify which `template` to use.", _PARSER, "0.1.8", "612d97db6..2581cc844", "training.stage",
        lambda f: f.get("training.stage") != "pt" and f.get("data.chat_template") is None,
        "name the chat template the data is formatted with", command=TRAIN, until="0.9.2"),
    Row("`split_special_tokens` is only supported for slow tokenizers.", "hparams/model_args.py "
        "ModelArguments.__post_init__", "0.2.0", "27dd87c89..bf04ca6af", "tokenizer.split_special_tokens",
        lambda f: _true(f, "tokenizer.split_special_tokens") and f.get("tokenizer.use_fast") is not False,
        "set use_fast_tokenizer: false", until="0.9.5"),
)

# Whose parser: the file kind a row table belongs to, and the package whose release bounds it (the
# checks made when training starts, rules/argument_workflows.py, are added by argument_checks.py).
TABLES = {"llamafactory": ("llamafactory", ROWS + LIFTED)}
