"""More rows of the HF Trainer refusal table (rules/trainer_arguments.py REFUSALS, same form and
bounds), from an audit of TrainingArguments.__post_init__ / _validate_args and Trainer.__init__ in
the release wheels (the last patch of every minor 4.20 to 4.57 and 5.0 to 5.24, and the .0 where a
check came or went: 4.41.0, 4.42.0, 4.47.0, 4.52.0, 5.0.0, 5.23.0). Rows that need another
package's pin (torch) read it like the accelerate rows: unknown -> the row does not apply.
"""

from __future__ import annotations

from linter.versions import older_than

from .release_table import Range
from .trainer_arguments import Refusal

_POST_INIT = "training_args.py TrainingArguments.__post_init__"
_TRAINER = "trainer.py Trainer.__init__"


def _pinned_in(facts, package: str, low: str | None, high: str | None) -> bool:
    """The `package` pinned near the file (or installed) is in [low, high); unknown: False."""
    found = facts.config.version(package)
    return found is not None and Range(package, low, high).holds(found[0])


def _torch(facts, low: str | None, high: str | None) -> bool:
    return _pinned_in(facts, "torch", low, high)


def _cpu_fp16(facts, full_eval: bool = True) -> bool:
    """fp16 (or fp16_full_eval) with use_cpu / no_cuda: the device is the CPU (_setup_devices)."""
    half = facts("precision.fp16") is True or (full_eval and facts("precision.fp16_full_eval") is True)
    return half and facts("device.cpu_only") is True


def _best_without_metric(facts) -> bool:
    """save_strategy best with no metric_for_best_model; load_best_model_at_end would default the
    metric to "loss" in __post_init__."""
    if (facts("checkpoint.save_strategy") != "best" or facts("checkpoint.best_metric_name") is not None
            or facts("checkpoint.load_best") is True):
        return False
    found = facts.config.version("transformers")  # older releases refuse the value itself (TRN053)
    return found is None or older_than(found[0], "4.47.0") is not True


# FSDP option words: trainer_utils.py FSDPOption (TrainingArguments.__post_init__ converts each word,
# 4.x to 5.9; from 5.10.0 _apply_legacy_fsdp_to_config raises "Unknown `fsdp` option" for any other
# word and takes the sharding strategies in any case). no_shard from 4.21.0, hybrid_shard and
# hybrid_shard_zero2 from 4.36.0 (release wheels).
_FSDP_WORDS = ("full_shard", "shard_grad_op", "no_shard", "hybrid_shard", "hybrid_shard_zero2", "offload", "auto_wrap")
_FSDP1_ONLY = ("no_shard", "hybrid_shard", "hybrid_shard_zero2")
_WRAP_POLICIES = ("TRANSFORMER_BASED_WRAP", "SIZE_BASED_WRAP", "NO_WRAP")


def _fsdp_words(facts, lists: bool = False) -> list[str]:
    """The option words of a written `fsdp` string (or list: 4.x converts only a string with
    FSDPOption, 5.10.0 both; a boolean is no option string)."""
    value = facts("parallel.fsdp_options")
    words = value.split() if isinstance(value, str) else value if lists and isinstance(value, (list, tuple)) else []
    return [word.lower() for word in words if isinstance(word, str)]


def _num_steps_twice(facts) -> bool:
    """accelerator_config's gradient_accumulation_kwargs.num_steps beside gradient_accumulation_steps > 1."""
    steps = facts("batch.grad_accum")
    return (facts("batch.accelerator_num_steps") is not None and isinstance(steps, int) and not isinstance(steps, bool)
            and steps > 1)


_NUM_STEPS = ("The `AcceleratorConfig`'s `num_steps` is set but `gradient_accumulation_steps` is greater than 1 in "
              "the passed `TrainingArguments`")


def _sharded_words(facts) -> list[str] | None:
    """sharded_ddp's options as TrainingArguments reads them (4.20-4.34: True is "simple", a string
    is split and converted with ShardedDDPOption); None where off or not a string / boolean."""
    value = facts("parallel.sharded_ddp")
    if value is True:
        return ["simple"]
    return value.split() or None if isinstance(value, str) else None


_TRUTHS = ("y", "yes", "t", "true", "on", "1", "n", "no", "f", "false", "off", "0")  # training_args.py str_to_bool
_SHARDED = ("simple", "zero_dp_2", "zero_dp_3", "offload", "auto_wrap")  # trainer_utils.py ShardedDDPOption
_FAIRSCALE = f"{_POST_INIT} (sharded_ddp checks, 4.20 to 4.34; 4.35.0 removed the option)"


def _positive(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0


def _negative_warmup(facts) -> bool:
    steps = facts("scheduler.warmup_steps_number")
    return isinstance(steps, (int, float)) and not isinstance(steps, bool) and steps < 0


MORE_REFUSALS = (
    # --- TRN040
    # 4.20.1-4.40.2: __post_init__ refuses fp16 / fp16_full_eval on a device that is not CUDA (NPU,
    # XPU, MLU from 4.32-4.40), whatever torch; 4.41.x only with torch < 2.3
    # (`is_torch_greater_or_equal_than_2_3`), and 4.42.0 drops the check.
    Refusal("TRN040", _cpu_fp16, "precision.fp16", "fp16 with use_cpu / no_cuda",
            "FP16 Mixed precision training with AMP or APEX (`--fp16`) and FP16 half precision evaluation "
            "(`--fp16_full_eval`) can only be used on CUDA devices",
            "train on the GPU, or drop fp16 for a CPU run", f"{_POST_INIT} (4.20 to 4.40)", until="4.41.0"),
    Refusal("TRN040", lambda a: _cpu_fp16(a) and _torch(a, None, "2.3"), "precision.fp16",
            "fp16 with use_cpu / no_cuda and torch < 2.3",
            "FP16 Mixed precision training with AMP or APEX (`--fp16`) and FP16 half precision evaluation "
            "(`--fp16_full_eval`) can only be used on CUDA or MLU devices or NPU devices or certain XPU devices",
            "CPU fp16 needs torch 2.3: upgrade torch or drop fp16", f"{_POST_INIT} (4.41.x)", since="4.41.0",
            until="4.42.0"),
    # Trainer.__init__ "Tried to use `fp16` but it is not supported on cpu": with half_precision_backend
    # auto and torch < 2.3 from 4.41.0 (any torch before; the __post_init__ check above comes first
    # there), 5.0.0 whatever the backend.
    Refusal("TRN040", lambda a: _cpu_fp16(a, full_eval=False) and _torch(a, None, "2.3")
            and a("precision.amp_backend") in (None, "auto"), "precision.fp16",
            "fp16 with use_cpu / no_cuda and torch < 2.3", "Tried to use `fp16` but it is not supported on cpu",
            "CPU fp16 needs torch 2.3: upgrade torch or drop fp16", f"{_TRAINER} (4.42.0 on)", since="4.42.0"),
    # optim adamw_torch_fused: "requires PyTorch 2.0 or higher" and, on torch 2.0.0 itself, "with --fp16
    # requires PyTorch>2.0" (4.27.0, with the optimizer, to 4.51.3; 4.52.0 has neither check).
    Refusal("TRN040", lambda a: a.optimizer() == "adamw_torch_fused" and _torch(a, None, "2.0"), "optimizer.name",
            "optim adamw_torch_fused with torch < 2.0", "--optim adamw_torch_fused requires PyTorch 2.0 or higher",
            "upgrade torch or use adamw_torch", f"{_POST_INIT} (4.27.0 to 4.51.x)", until="4.52.0"),
    Refusal("TRN040", lambda a: a.optimizer() == "adamw_torch_fused" and a("precision.fp16") is True
            and _torch(a, "2.0", "2.0.1"), "optimizer.name", "optim adamw_torch_fused with fp16 on torch 2.0.0",
            "--optim adamw_torch_fused with --fp16 requires PyTorch>2.0",
            "torch 2.0.0's fused AdamW is broken under fp16 AMP: upgrade torch or use adamw_torch",
            f"{_POST_INIT} (4.27.0 to 4.51.x)", until="4.52.0"),
    # Trainer.__init__: torch_compile with `not is_torch_compile_available()` (torch < 2.0), 4.27.0 to 4.51.3.
    Refusal("TRN040", lambda a: a("training.torch_compile") is True and _torch(a, None, "2.0"),
            "training.torch_compile", "torch_compile with torch < 2.0",
            "Using torch.compile requires PyTorch 2.0 or higher.", "upgrade torch or drop torch_compile",
            f"{_TRAINER} (4.27.0 to 4.51.x)", since="4.27.0", until="4.52.0"),
    # warmup_steps below 0: _validate_args in 5.x ("warmup_steps must be an integer or a float", 5.0.0 to
    # 5.22.x; "Got warmup_steps = ..., Expected value warmup_steps >= 0" from 5.23.0); 4.42-4.57 rows above.
    # (PyPI wheels 5.22.0 and 5.23.0: the check is the same, `self.warmup_steps < 0`).
    *(Refusal("TRN040", _negative_warmup, "scheduler.warmup_steps_number", "warmup_steps {scheduler.warmup_steps_number}",
              quote, "write 0 or a positive number of steps (or a share below 1)",
              f"training_args.py TrainingArguments._validate_args ({span})", since=since, until=until)
      for quote, span, since, until in (
          ("warmup_steps must be an integer or a float", "5.0.0 to 5.22.x", "5.0.0", "5.23.0"),
          ("Got warmup_steps = {scheduler.warmup_steps_number}, Expected value warmup_steps >= 0", "5.23.0 on",
           "5.23.0", None))),
    # --- TRN042: fsdp_config pairs, with FSDP on (4.32.0 to 5.9.x: __post_init__, _process_fsdp_args in
    # 5.x; 5.10.0 hands both to accelerate's plugin, which forces the broadcast itself).
    Refusal("TRN042", lambda a: a.fsdp and a("parallel.trainer_fsdp_ram_efficient") is True
            and a("parallel.trainer_fsdp_sync_states") is False, "parallel.trainer_fsdp_sync_states",
            "fsdp_config cpu_ram_efficient_loading true with sync_module_states false",
            '`sync_module_states` must be `"True"` if `cpu_ram_efficient_loading` is `"True"`',
            "only rank 0 loads the weights and nothing would broadcast them: set sync_module_states true",
            f"{_POST_INIT} (4.41.0 to 5.9.x)", since="4.41.0", until="5.10.0"),
    Refusal("TRN042", lambda a: a.fsdp and _positive(a("parallel.trainer_fsdp_min_params"))
            and a("parallel.trainer_fsdp_layer_classes") is True,
            "parallel.trainer_fsdp_min_params", "fsdp_config min_num_params with transformer_layer_cls_to_wrap",
            "`min_num_params` and `transformer_layer_cls_to_wrap` are mutually exclusive.",
            "the size-based and the layer-class wrap policies exclude each other: keep one",
            f"{_POST_INIT} (4.32.0 to 5.9.x)", since="4.32.0", until="5.10.0"),
    Refusal("TRN042", lambda a: any(word not in _FSDP_WORDS for word in _fsdp_words(a)), "parallel.fsdp_options",
            "fsdp {parallel.fsdp_options} (an option transformers does not have)",
            "... is not a valid FSDPOption (5.10.0 on: Unknown `fsdp` option: ...)",
            f"the options are {', '.join(_FSDP_WORDS)}", f"{_POST_INIT} (every release)"),
    Refusal("TRN042", lambda a: any(word.startswith("hybrid_shard") for word in _fsdp_words(a)),
            "parallel.fsdp_options", "fsdp {parallel.fsdp_options}", "... is not a valid FSDPOption",
            "hybrid_shard came in transformers 4.36.0: upgrade transformers or use full_shard",
            f"{_POST_INIT} (FSDPOption before 4.36.0)", until="4.36.0"),
    Refusal("TRN042", lambda a: any(word in _FSDP1_ONLY for word in _fsdp_words(a, lists=True))
            and a("parallel.fsdp_version") in (2, "2"), "parallel.fsdp_options",
            "fsdp {parallel.fsdp_options} under FSDP2 (fsdp_config version {parallel.fsdp_version})",
            "`fsdp=...` is only available with FSDP1. Set `fsdp_config['version'] = 1` to use it",
            "FSDP2 has only full_shard and shard_grad_op (reshard_after_forward)",
            "training_args.py TrainingArguments._apply_legacy_fsdp_to_config (5.10.0 on)", since="5.10.0"),
    # _process_fsdp_args under FSDP2 (fsdp_config version 2; the default from 5.10.0): reshard_after_forward
    # goes through str_to_bool, which refuses anything but y/yes/t/true/on/1 and n/no/f/false/off/0 (5.0.0,
    # 5.9.0, 5.10.0 and 5.24.0 wheels); an FSDP1 sharding strategy name there is the usual case.
    Refusal("TRN042", lambda a: a.fsdp and a("parallel.fsdp_version") in (2, "2")
            and isinstance(a("parallel.trainer_fsdp_reshard"), str) and a("parallel.trainer_fsdp_reshard") not in _TRUTHS,
            "parallel.trainer_fsdp_reshard",
            "fsdp_config reshard_after_forward {parallel.trainer_fsdp_reshard} under FSDP2 (fsdp_config version "
            "{parallel.fsdp_version})", "invalid truth value {parallel.trainer_fsdp_reshard}",
            "FSDP2 takes true (full_shard) or false (shard_grad_op); a sharding strategy name is FSDP1's (fsdp_config "
            "version 1)", "training_args.py TrainingArguments._process_fsdp_args, str_to_bool (5.0.0 on)",
            since="5.0.0"),
    # Trainer.create_accelerator_and_postprocess: accelerator_config's num_steps with
    # gradient_accumulation_steps > 1 (4.40.0 on; the kwargs are read only with accelerate >= 0.28.0
    # until 5.0.0).
    Refusal("TRN040", lambda a: _num_steps_twice(a) and _pinned_in(a, "accelerate", "0.28.0", None), "batch.accelerator_num_steps",
            "accelerator_config gradient_accumulation_kwargs.num_steps with gradient_accumulation_steps "
            "{batch.grad_accum}", _NUM_STEPS, "set the accumulation in one place",
            "trainer.py Trainer.create_accelerator_and_postprocess (4.40.0 to 4.57.x, accelerate >= 0.28.0)",
            since="4.40.0", until="5.0.0"),
    Refusal("TRN040", _num_steps_twice, "batch.accelerator_num_steps",
            "accelerator_config gradient_accumulation_kwargs.num_steps with gradient_accumulation_steps "
            "{batch.grad_accum}", _NUM_STEPS, "set the accumulation in one place",
            "trainer.py Trainer.create_accelerator_and_postprocess (5.0.0 on)", since="5.0.0"),
    # _process_fsdp_args from 5.10.0: auto_wrap_policy outside accelerate's FSDP_AUTO_WRAP_POLICY
    # (utils/constants.py: TRANSFORMER_BASED_WRAP, SIZE_BASED_WRAP, NO_WRAP).
    Refusal("TRN042", lambda a: a.fsdp and isinstance(a("parallel.trainer_fsdp_wrap_policy"), str)
            and a("parallel.trainer_fsdp_wrap_policy") not in _WRAP_POLICIES, "parallel.trainer_fsdp_wrap_policy",
            "fsdp_config auto_wrap_policy {parallel.trainer_fsdp_wrap_policy}",
            "`auto_wrap_policy` must be one of ['TRANSFORMER_BASED_WRAP', 'SIZE_BASED_WRAP', 'NO_WRAP']",
            "write one of the three policies", "training_args.py TrainingArguments._process_fsdp_args (5.10.0 on)",
            since="5.10.0"),
    # sharded_ddp (fairscale), every wheel 4.20.1-4.34.1 (4.35.0 dropped the option): ShardedDDPOption words,
    # offload alone, simple with others, zero_dp_2 with zero_dp_3, bf16; Trainer.__init__: with deepspeed / fsdp.
    Refusal("TRN042", lambda a: any(word not in _SHARDED for word in _sharded_words(a) or ()), "parallel.sharded_ddp",
            "sharded_ddp {parallel.sharded_ddp}", "... is not a valid ShardedDDPOption",
            f"the options are {', '.join(_SHARDED)}", _FAIRSCALE, since="4.20.0", until="4.35.0"),
    Refusal("TRN042", lambda a: _sharded_words(a) == ["offload"], "parallel.sharded_ddp", "sharded_ddp offload alone",
            "`--sharded_ddp offload` can't work on its own. It needs to be added to `--sharded_ddp zero_dp_2` or "
            "`--sharded_ddp zero_dp_3`.", "write \"zero_dp_2 offload\"", _FAIRSCALE, since="4.20.0", until="4.35.0"),
    Refusal("TRN042", lambda a: "simple" in (_sharded_words(a) or ()) and len(_sharded_words(a)) > 1,
            "parallel.sharded_ddp", "sharded_ddp {parallel.sharded_ddp}",
            "`--sharded_ddp simple` is not compatible with any other option.", "keep simple alone or drop it",
            _FAIRSCALE, since="4.20.0", until="4.35.0"),
    Refusal("TRN042", lambda a: {"zero_dp_2", "zero_dp_3"} <= set(_sharded_words(a) or ()), "parallel.sharded_ddp",
            "sharded_ddp with both zero_dp_2 and zero_dp_3",
            "`--sharded_ddp zero_dp_2` is not compatible with `--sharded_ddp zero_dp_3`.", "keep one", _FAIRSCALE,
            since="4.20.0", until="4.35.0"),
    Refusal("TRN042", lambda a: _sharded_words(a) is not None and a("precision.bf16") is True, "parallel.sharded_ddp",
            "sharded_ddp with bf16", "sharded_ddp is not supported with bf16", "use fp16, or FSDP / DeepSpeed",
            _FAIRSCALE, since="4.20.0", until="4.35.0"),
    Refusal("TRN043", lambda a: _sharded_words(a) is not None and (a.deepspeed is not None or a.fsdp),
            "parallel.sharded_ddp", "sharded_ddp with {sharding}",
            "Using --sharded_ddp xxx together with --deepspeed (or --fsdp) is not possible, deactivate one of those "
            "flags.", "keep one of the two", "trainer.py Trainer.__init__ (4.20 to 4.34)", since="4.20.0",
            until="4.35.0"),
    # --- TRN041
    # Trainer.__init__ (4.47.0, with SaveStrategy.BEST, to 5.24.0): save_strategy best needs the metric
    # it compares by; releases before 4.47.0 refuse the value itself (TRN053).
    Refusal("TRN041", _best_without_metric, "checkpoint.save_strategy", "save_strategy best without metric_for_best_model",
            "`args.metric_for_best_model` must be provided when using 'best' save_strategy or if "
            "`args.load_best_model_at_end` is set to `True`.",
            "name the metric the best checkpoint is chosen by (metric_for_best_model: eval_loss)",
            f"{_TRAINER} (4.47.0, with save_strategy best)"),
)
