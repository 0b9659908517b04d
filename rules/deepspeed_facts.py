"""The questions the DeepSpeed release table (rules/deepspeed_releases.py BUGS) asks of a DeepSpeed
config: its precision, ZeRO stage, the optimizer and scheduler the engine builds from it, and the
names DeepSpeed and torch give those (read in DeepSpeed's runtime/engine.py, runtime/config.py,
runtime/lr_schedules.py and runtime/zero/utils.py)."""

from __future__ import annotations

from .release_table import Facts

_FP32 = {"fp32", "float32", "float", "torch.float32"}  # runtime/config_utils / inference/config.py DtypeEnum
_BF16 = {"bf16", "bfloat16", "bfloat", "torch.bfloat16"}
_FP16 = {"fp16", "float16", "half", "torch.float16"}
# runtime/lr_schedules.py VALID_LR_SCHEDULES (WarmupCosineLR from v0.12.3, 4388a605f #4563).
_DS_SCHEDULES = frozenset(("LRRangeTest", "OneCycle", "WarmupLR", "WarmupDecayLR", "WarmupCosineLR"))
# The scheduler classes of torch/optim/lr_scheduler.py (any torch release): engine.py
# _scheduler_from_config falls back to getattr(torch.optim.lr_scheduler, type) for them.
_TORCH_SCHEDULES = frozenset((
    "LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR", "LinearLR", "ExponentialLR",
    "SequentialLR", "CosineAnnealingLR", "ChainedScheduler", "ReduceLROnPlateau", "CyclicLR",
    "CosineAnnealingWarmRestarts", "OneCycleLR", "PolynomialLR", "LRScheduler"))
_SCHEDULE_SPELLINGS = frozenset(name.lower() for name in _DS_SCHEDULES | _TORCH_SCHEDULES)
# Every name runtime/config.py DEEPSPEED_OPTIMIZERS has had (lower-cased by DeepSpeedConfig).
_DS_OPTIMIZERS = frozenset(("adam", "adamw", "lamb", "onebitadam", "zerooneadam", "onebitlamb", "adagrad", "lion",
                            "muadam", "muadamw", "musgd", "muon", "deepspeed_adam"))
# Optimizers the config names whose class is never in runtime/zero/utils.py ZERO_SUPPORTED_OPTIMIZERS
# (every release): DeepSpeed's own Lamb (FusedLamb) and the mup ones (case-insensitive: DeepSpeedConfig
# lower-cases its own names), and torch.optim classes other than Adam, AdamW and Adagrad (exact
# spelling: getattr(torch.optim, type)).
_UNTESTED_DS = frozenset(("lamb", "muadam", "muadamw", "musgd"))
_UNTESTED_TORCH = frozenset(("SGD", "RMSprop", "Adamax", "NAdam", "RAdam", "Adadelta", "ASGD", "Rprop", "SparseAdam",
                             "LBFGS", "Adafactor"))


class DeepSpeedFacts(Facts):
    """The questions the DeepSpeed rows ask of a DeepSpeed config (`trainer`: the run's training
    config, whose trainer fills the file's "auto" values)."""

    __slots__ = ()

    def bf16(self) -> bool:
        """bf16 on: written true, or "auto" filled from a trainer's bf16."""
        value = self("precision.bf16")
        if value == "auto" and self.trainer is not None:
            value = self.trainer.value("precision.bf16")
        return value is True

    def stage(self) -> int:
        stage = self("parallel.zero_stage")
        return stage if isinstance(stage, int) and not isinstance(stage, bool) else 0

    def fp32_accumulation(self) -> bool:
        return self.accum_dtype() == "fp32"

    def non_fp16_accumulation(self) -> bool:
        """data_types.grad_accum_dtype written as fp32 or bf16 (inference/config.py DtypeEnum spellings)."""
        return self.accum_dtype() in ("fp32", "bf16")

    def accumulates(self) -> bool:
        """gradient_accumulation_steps above 1: written, or "auto" filled from the trainer."""
        steps = self("batch.grad_accum")
        if steps == "auto" and self.trainer is not None:
            steps = self.trainer.value("batch.grad_accum")
        return isinstance(steps, int) and not isinstance(steps, bool) and steps > 1

    def fp16(self) -> bool:
        """fp16 on: written true, or "auto" filled from a trainer's fp16."""
        value = self("precision.fp16")
        if value == "auto" and self.trainer is not None:
            value = self.trainer.value("precision.fp16")
        return value is True

    def hf_filled(self) -> bool:
        """A Hugging Face trainer or accelerate builds the engine (a training config links the file, or
        it holds "auto" values only they fill): a DeepSpeedEngine, never a PipelineEngine."""
        return self.trainer is not None or bool(self("file.auto_keys"))

    def optimizer(self) -> str:
        """The DeepSpeed optimizer.type (lower-cased, as DeepSpeedConfig does for its own names) that
        the engine builds, where it is known to build it: a client optimizer passed to
        deepspeed.initialize replaces the block (engine.py _configure_optimizer), so only an HF
        trainer (it passes none when the file has an optimizer block), accelerate (DummyOptim) or
        a script seen passing none say so; otherwise ""."""
        configs = self.run.configs
        if any(config.value("trainer.client_optimizer") is True for config in configs):
            return ""
        if not (self.hf_filled() or any(config.value("trainer.client_optimizer") is False
                                        or config.value("trainer.deepspeed_reader") == "accelerate"
                                        for config in configs)):
            return ""
        return str(self("optimizer.name") or "").lower()

    def static_fp16_scale(self) -> bool:
        """fp16 on with a static loss scale (fp16.loss_scale above 0; 0, the default, is dynamic)."""
        scale = self("loss_scale.loss_scale")
        return self.fp16() and isinstance(scale, (int, float)) and not isinstance(scale, bool) and scale > 0

    def untested_allowed(self) -> bool:
        """zero_allow_untested_optimizer truthy (the engine asserts on its truth value)."""
        return bool(self("parallel.zero_allow_untested_optimizer"))

    def untested_optimizer(self) -> bool:
        """The optimizer DeepSpeed builds from the file is of a class ZeRO never lists as tested."""
        name = self.optimizer()
        return name in _UNTESTED_DS or (name != "" and self("optimizer.name") in _UNTESTED_TORCH)

    def has_optimizer(self) -> bool:
        """deepspeed.initialize gets an optimizer (engine.py `has_optimizer`: it then builds the ZeRO
        optimizer and the scheduler): an optimizer block, a trainer (it always passes one), or a
        script seen passing its own."""
        return (self("optimizer.name") is not None or self.hf_filled()
                or any(config.value("trainer.client_optimizer") is True for config in self.run.configs))

    def schedule(self) -> str:
        """What the engine makes of scheduler.type, where DeepSpeed builds the block (the script is not
        seen passing an lr_scheduler of its own, and an optimizer is configured: the block, a trainer,
        or a client one): "deepspeed" (runtime/lr_schedules.py), "torch" (a torch.optim.lr_scheduler
        class), "unknown" (a spelling of one of those or of a Trainer schedule that neither module
        has), else ""."""
        name = self("scheduler.type")
        configs = self.run.configs
        if not isinstance(name, str) or any(config.value("trainer.client_scheduler") is True for config in configs):
            return ""
        if not self.has_optimizer():
            return ""
        if name in _DS_SCHEDULES:
            return "deepspeed"
        if name in _TORCH_SCHEDULES:
            return "torch"
        from .trainer_names import SCHEDULERS  # transformers SchedulerType: neither module has these names

        return "unknown" if name.lower() in _SCHEDULE_SPELLINGS or name in SCHEDULERS else ""

    def trainer_optimizer_name(self) -> bool:
        """optimizer.type is a transformers OptimizerNames value (as written, all lower case) that is no
        DeepSpeed optimizer name: torch.optim has no lower-case class either."""
        name = self("optimizer.name")
        if self.optimizer() == "" or not isinstance(name, str) or name.lower() in _DS_OPTIMIZERS:
            return False
        from .trainer_names import OPTIMIZERS

        return name in OPTIMIZERS

    def wrapper(self) -> str:
        """The engine's optimizer wrapper, which is no torch.optim.Optimizer (runtime/zero,
        fp16/fused_optimizer.py: subclasses of `object` in every release): "" when none is known."""
        if self.stage() >= 1:
            return f"ZeRO stage {self.stage()}"
        return "fp16" if self.fp16() and self("precision.amp") is not True else ""

    def comm_dtype(self) -> str:
        """communication_data_type as DeepSpeed compares it (runtime/config.py
        get_communication_data_type lower-cases it); "" when unwritten or not a string."""
        value = self("parallel.communication_data_type")
        return value.lower() if isinstance(value, str) else ""

    def muon(self) -> bool:
        """DeepSpeed builds its Muon (runtime/engine.py _configure_basic_optimizer: MuonWithAuxAdam,
        v0.17.6 on) from the file's optimizer block."""
        return self.optimizer() == "muon"

    def reduce_scatter(self) -> bool:
        """ZeRO reduces gradients into their owners' partitions: zero_optimization.reduce_scatter not
        written false (runtime/zero/config.py: default True)."""
        return self("parallel.reduce_scatter") is not False

    def bucket_reduce(self) -> bool:
        """ZeRO-1/2 reduce through the contiguous buckets, where reduce_scatter applies
        (stage_1_and_2.py reduce_ipg_grads -> average_tensor; with contiguous_gradients false,
        buffered_reduce_fallback all-reduces every gradient): default True (zero/config.py)."""
        return self.reduce_scatter() and self("parallel.contiguous_gradients") is not False

    def offloads_optimizer(self) -> bool:
        """offload_optimizer to cpu or nvme (stage_1_and_2.py cpu_offload: any device but "none")."""
        return self("parallel.offload_optimizer") is True

    def autotp(self) -> int:
        size = self("parallel.autotp_size")
        return size if isinstance(size, int) and not isinstance(size, bool) else 0

    def hpz(self) -> bool:
        size = self("parallel.hpz_partition_size")
        return self.stage() == 3 and isinstance(size, int) and not isinstance(size, bool) and size > 1

    def model_dtype(self) -> str:
        """The dtype engine.py get_data_types gives the model: "fp16", "bf16" or "fp32" (neither
        enabled); "" where an "auto" value no trainer fills leaves it open."""
        if self.fp16():
            return "fp16"
        if self.bf16():
            return "bf16"
        known = all(self(key) in (False, None) or (self(key) == "auto" and self.trainer is not None)
                    for key in ("precision.fp16", "precision.bf16"))
        return "fp32" if known else ""

    def accum_dtype(self) -> str:
        """data_types.grad_accum_dtype as DtypeEnum reads it ("fp16", "bf16", "fp32"); "" unwritten."""
        value = str(self("precision.grad_accum_dtype") or "").lower()
        return next((name for name, spellings in (("fp32", _FP32), ("bf16", _BF16), ("fp16", _FP16))
                     if value in spellings), "")

    def zero_optimizer(self) -> bool:
        """The engine builds ZeRO's optimizer (zero/stage_1_and_2.py or stage3.py): ZeRO on and an
        optimizer to wrap, except bf16 with fp32 accumulation at ZeRO-1 without optimizer offload,
        which goes to the BF16 optimizer (engine.py _do_optimizer_sanity_check, 0.8.1 on)."""
        bf16_optimizer = (self.stage() == 1 and self.bf16() and self.fp32_accumulation()
                          and not self.offloads_optimizer())
        return self.stage() >= 1 and self.has_optimizer() and not bf16_optimizer

    def rescaled_reduction(self) -> str:
        """The reduction settings ZeRO's reduce-scatter refuses: "prescale_gradients" (written true) or
        "gradient_predivide_factor" (written, not 1.0); else ""."""
        if self("parallel.prescale_gradients") is True:
            return "prescale_gradients"
        factor = self("parallel.gradient_predivide_factor")
        if isinstance(factor, (int, float)) and not isinstance(factor, bool) and factor != 1:
            return "gradient_predivide_factor"
        return ""

    def master_weights(self) -> str:
        """The 16-bit master weights the ZeRO optimizer keeps (fp16.fp16_master_weights_and_grads with
        fp16, bf16.bf16_master_weights_and_grads without bf16_optimizer_states), which it refuses
        without optimizer offload to DeepSpeedCPUAdam; "" when none."""
        if self.fp16() and self("precision.fp16_master_weights") is True:
            return "fp16_master_weights_and_grads"
        if self("precision.bf16_master_weights") is True and self("precision.bf16_optimizer_states") is not True:
            return "bf16_master_weights_and_grads"
        return ""

    def no_cpu_adam(self) -> bool:
        """The ZeRO optimizer's inner optimizer is no DeepSpeedCPUAdam: no optimizer offload, or a
        DeepSpeed optimizer other than Adam/AdamW built from the block (engine.py
        _configure_basic_optimizer builds DeepSpeedCPUAdam for those two under offload)."""
        return not self.offloads_optimizer() or self.optimizer() not in ("", "adam", "adamw")

    def loss_scale_setting(self, key: str):
        """fp16's `key` setting (loss_scale.*) as a number, None where unwritten or not a number."""
        value = self(key)
        return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None

    def dynamic_fp16_scale(self) -> bool:
        """fp16 on with dynamic loss scaling (fp16.loss_scale 0, the default)."""
        return self.fp16() and self.loss_scale_setting("loss_scale.loss_scale") in (None, 0)
