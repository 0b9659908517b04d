"""ZeRO optimizer offload: the optimizers that cannot step the partitions it moves to the CPU (DS033),
and ZeRO-3 partial optimizer offload ("ZeRO-Offload++", offload_optimizer.ratio below 1.0): the
settings the hybrid CPU/GPU optimizer cannot run with (DS029) (issue 16 recall).

Read in deepspeedai/DeepSpeed (mirror at edaa72212, v0.19.5 the newest tag):
- runtime/zero/offload_config.py DeepSpeedZeroOffloadOptimizerConfig.ratio (Field(1.0, ge=0, le=1),
  "Percentage of offloaded optimizer states to CPU Adam. Only valid with ZeRO Stage 3"), added by
  b1cb0dfc4 (#4636, first in v0.12.3). Earlier releases refuse the key (DeepSpeedConfigModel,
  extra="forbid"), so a ratio below 1.0 fails on every release; the version only picks the message.
- runtime/zero/config.py DeepSpeedZeroConfig.offload_ratio_check: the stage-3 assertion (DS004).
- runtime/zero/stage3.py DeepSpeedZeroOptimizer_Stage3.__init__: with partial offload it builds a
  GPU torch.optim.AdamW backup after `assert type(init_optimizer) == DeepSpeedCPUAdam, 'Hybrid
  Optimizer Only Supports DeepSpeedCPUAdam'`; _create_fp32_partitions assigns each sub-group to
  'cpu' or the accelerator (subgroup_to_device), with no NVMe swapping for the split.
- runtime/engine.py _configure_basic_optimizer: with ZeRO offload the config's "Adam"/"AdamW" become
  DeepSpeedCPUAdam, "Adagrad" DeepSpeedCPUAdagrad and "Lion" DeepSpeedCPULion (config.py lowers
  the names DeepSpeed knows).
"""

from __future__ import annotations

from linter.registry import ERROR, Rule, register

_PARTIAL_OFFLOAD = "0.12.3"  # b1cb0dfc4 (#4636)
_NOT_CPU_ADAM = {"adagrad": "DeepSpeedCPUAdagrad", "lion": "DeepSpeedCPULion"}


def _ratio(config):
    ratio = config.value("parallel.offload_ratio")
    return ratio if isinstance(ratio, (int, float)) and not isinstance(ratio, bool) else None


@register
class PartialOffloadRefused(Rule):
    """DS029 partial-offload-needs-cpu-adam

    ## What it does
    Flags a ZeRO-3 partial optimizer offload (`zero_optimization.offload_optimizer.ratio`
    below 1.0) that DeepSpeed's hybrid CPU/GPU optimizer cannot run: with
    `offload_optimizer.device: nvme`, or with a DeepSpeed `optimizer.type` that offload turns
    into another CPU optimizer than `DeepSpeedCPUAdam` ("Adagrad", "Lion"). (A ratio below
    1.0 under stage 0-2 is DS004's.)

    ## Why is this bad?
    Partial offload keeps a share of the optimizer sub-groups on the GPU with a torch AdamW
    "backup" optimizer and steps the rest with `DeepSpeedCPUAdam` in CPU memory. It splits
    between the CPU and the GPU only: with NVMe swapping the optimizer fails when it starts
    (DeepSpeed#4872: "RuntimeError: expected input to be on cuda"; the maintainer: the
    device must be cpu). With another CPU optimizer DeepSpeed asserts at
    `deepspeed.initialize` ("Hybrid Optimizer Only Supports DeepSpeedCPUAdam"). The key
    exists from DeepSpeed 0.12.3; earlier releases refuse it as an unknown field, so the
    config fails on every release and fires without a pin.

    ## Example
    `ds_config.json`:
        {"optimizer": {"type": "Adam", "params": {"lr": 1e-4}},
         "zero_optimization": {"stage": 3, "offload_optimizer": {"device": "nvme", "nvme_path": "/mnt/nvme", "ratio": 0.5}}}
    Use instead:
        {"optimizer": {"type": "Adam", "params": {"lr": 1e-4}},
         "zero_optimization": {"stage": 3, "offload_optimizer": {"device": "cpu", "ratio": 0.5}}}

    ## Fix safety
    No fix: CPU memory instead of NVMe, a full offload (ratio 1.0) or Adam are the author's
    choice.

    ## References
    - deepspeed/runtime/zero/offload_config.py DeepSpeedZeroOffloadOptimizerConfig.ratio;
      b1cb0dfc4 "Guanhua/partial offload rebase v2" (#4636, v0.12.3)
    - deepspeed/runtime/zero/stage3.py DeepSpeedZeroOptimizer_Stage3.__init__ (the hybrid
      assertion, backup_optimizer) and _create_fp32_partitions (subgroup_to_device)
    - deepspeed/runtime/engine.py _configure_basic_optimizer (CPU optimizers under offload)
    - deepspeedai/DeepSpeed#4872
    """

    code = "DS029"
    name = "partial-offload-needs-cpu-adam"
    severity = ERROR
    triggers = ("parallel.zero_stage",)

    def check(self, run, context):
        for config in run.configs:
            ratio = _ratio(config)
            if ratio is None or ratio >= 1.0 or config.value("file.kind") != "deepspeed":
                continue
            if config.value("parallel.zero_stage") != 3 or config.value("parallel.offload_optimizer") is not True:
                continue  # stages 0-2: DS004; no offload device: the ratio is not read
            found = config.version("deepspeed")
            if found is not None and context.version_before("deepspeed", _PARTIAL_OFFLOAD, config, self.code):
                continue  # the release refuses the key itself
            where = f" (DeepSpeed {found[0]}, {found[1]})" if found else ""
            device = str(config.value("parallel.offload_optimizer_device") or "").lower()
            if device == "nvme":
                yield self.finding(
                    config, config.span("parallel.offload_optimizer_device"),
                    f"partial optimizer offload (offload_optimizer.ratio {ratio}) with device nvme{where}: "
                    "DeepSpeed splits the optimizer between DeepSpeedCPUAdam in CPU memory and a GPU optimizer "
                    "only, so the optimizer fails when it starts (DeepSpeed#4872); use device cpu or ratio 1.0")
            name = str(config.value("optimizer.name") or "").lower()
            if name in _NOT_CPU_ADAM:
                yield self.finding(
                    config, config.span("optimizer.name"),
                    f"partial optimizer offload (offload_optimizer.ratio {ratio}) with optimizer {name}{where}: "
                    f"offload makes it {_NOT_CPU_ADAM[name]} and deepspeed.initialize asserts \"Hybrid Optimizer "
                    "Only Supports DeepSpeedCPUAdam\" (runtime/zero/stage3.py); use Adam/AdamW or ratio 1.0")


# transformers trainer.py get_optimizer_cls_and_kwargs (trainer_optimizer.py from 5.x): the OptimizerNames built from
# bitsandbytes.optim (AdamW, Lion, RMSprop, AdEMAMix with optim_bits 8 or 32, paged or not).
BNB_OPTIM_NAMES = frozenset({"adamw_bnb_8bit", "adamw_8bit", "paged_adamw_32bit", "paged_adamw_8bit", "ademamix",
                        "ademamix_8bit", "paged_ademamix_32bit", "paged_ademamix_8bit", "lion_32bit", "lion_8bit",
                        "paged_lion_32bit", "paged_lion_8bit", "rmsprop_bnb", "rmsprop_bnb_8bit", "rmsprop_bnb_32bit"})
# bitsandbytes 45bd3146 (#1901, first in 0.50.0): CPU kernels for optimizer_update_32bit / _8bit_blockwise, is_on_gpu
# accepts all-CPU tensors, get_state_buffer falls back to unpaged CPU state. Before it every update checks is_on_gpu
# ("All input tensors need to be on the same GPU, but found some tensors to not be on a GPU") and a paged state of
# a CPU tensor has page_deviceid None (prefetch_tensor: c_int32(None), TypeError).
_BNB_STEPS_CPU = "0.50.0"
_DEEPSPEED_REFUSES_CLIENT = "0.8.3"  # engine.py _configure_optimizer ZeRORuntimeException, 457850dc5 (#2971)
_DEEPSPEED_LAZY_STEP = "0.13.2"  # zero/stage_1_and_2.py stepped at init until 18179807f (#5104)
_TRANSFORMERS_OWN_REFUSAL_ENDS = "4.9.0"  # "ZeRO Offload can only work with DeepSpeed optimizers" (4.8.2)
_TRANSFORMERS_THROUGH_ACCELERATE = "4.30.0"


def _bnb_optimizer(config):
    """(field, name) of the bitsandbytes optimizer the trainer of `config` builds, else None: a class its
    imports name (an XTuner config), or an HF Trainer `optim` name (TRL, LLaMA-Factory, Axolotl)."""
    found = config.get("optimizer.class")
    if found is not None and str(found.value).startswith("bitsandbytes."):
        return found, str(found.value).rsplit(".", 1)[-1]
    found = config.get("optimizer.name")
    if found is not None and config.value("trainer.fills_deepspeed_auto") is True \
            and str(found.value).lower() in BNB_OPTIM_NAMES:
        return found, str(found.value)
    return None


@register
class BnbOptimizerWithZeroOffload(Rule):
    """DS033 bnb-optimizer-with-zero-cpu-offload

    ## What it does
    Flags a bitsandbytes optimizer (an XTuner config's `PagedAdamW32bit`, `AdamW8bit`, ...; an HF
    Trainer `optim` such as `paged_adamw_8bit`, `adamw_bnb_8bit`, `lion_32bit` in TRL, Axolotl or
    LLaMA-Factory) that reaches DeepSpeed together with ZeRO optimizer offload
    (`offload_optimizer.device` cpu or nvme, or the legacy `cpu_offload`), where bitsandbytes is
    pinned below 0.50.0. The optimizer reaches DeepSpeed where DeepSpeed does not refuse or replace
    it first: `zero_force_ds_cpu_optimizer: false` (XTuner's and Axolotl's offload configs ship it),
    or a DeepSpeed older than 0.8.3; under the HF Trainer also only without an `optimizer` block in
    the DeepSpeed config (DeepSpeed then builds its own) and, with `zero_force_ds_cpu_optimizer`
    true, where accelerate does not swap it (transformers 4.9-4.29, or the legacy spelling). Silent
    where bitsandbytes' version is unknown.

    ## Why is this bad?
    Under optimizer offload ZeRO keeps the fp32 master weights, gradients and optimizer states in
    CPU memory and calls the client optimizer's `step()` on them. bitsandbytes' optimizers run CUDA
    kernels only before 0.50.0: each update checks that every tensor is on a GPU and raises
    "All input tensors need to be on the same GPU, but found some tensors to not be on a GPU", and a
    paged state of a CPU tensor fails with "TypeError: 'NoneType' object cannot be interpreted as an
    integer" (InternLM/xtuner#118, #236). The run dies at its first optimizer step; DeepSpeed before
    0.13.2 steps once in `deepspeed.initialize` already. XTuner's maintainers replaced
    PagedAdamW32bit with torch.optim.AdamW in the shipped configs (InternLM/xtuner#318).

    ## Example
    `train.py` (an XTuner config):
        from bitsandbytes.optim import PagedAdamW32bit
        from xtuner.model import SupervisedFinetune
        model = dict(type=SupervisedFinetune, llm=dict(pretrained_model_name_or_path="HuggingFaceH4/zephyr-7b-beta"))
        optim_wrapper = dict(type=AmpOptimWrapper, optimizer=dict(type=PagedAdamW32bit, lr=2e-4))
    `train.sh`:
        xtuner train train.py --deepspeed deepspeed_zero2_offload
    `requirements.txt`:
        bitsandbytes==0.45.0
    Use instead, in `train.py`:
        from torch.optim import AdamW
        from xtuner.model import SupervisedFinetune
        model = dict(type=SupervisedFinetune, llm=dict(pretrained_model_name_or_path="HuggingFaceH4/zephyr-7b-beta"))
        optim_wrapper = dict(type=AmpOptimWrapper, optimizer=dict(type=AdamW, lr=2e-4))

    ## Fix safety
    No fix: torch's AdamW needs four times an 8-bit optimizer's state memory (in CPU memory here),
    dropping offload needs GPU memory, and bitsandbytes 0.50 steps on the CPU; the author chooses.

    ## References
    - bitsandbytes/functional.py is_on_gpu, get_paged / prefetch_tensor (0.41.0-0.49.2);
      45bd3146 "Enable CPU Optimizer Support for bitsandbytes" (#1901, 0.50.0)
    - deepspeed/runtime/engine.py _configure_optimizer (zero_force_ds_cpu_optimizer, 457850dc5,
      #2971, 0.8.3) and _do_optimizer_sanity_check (zero_allow_untested_optimizer);
      runtime/zero/stage_1_and_2.py initialize_optimizer_states (init step until 18179807f, #5104)
    - mmengine/_strategy/deepspeed.py DeepSpeedStrategy._wrap_model (optimizer=optim_wrapper.optimizer);
      xtuner/configs/deepspeed/deepspeed_zero2_offload.json (6c25fbb13, #94)
    - transformers integrations/deepspeed.py deepspeed_optim_sched (the trainer's optimizer,
      zero_allow_untested_optimizer true); accelerate/accelerator.py _prepare_deepspeed
      (DeepSpeedCPUAdam only with offload_optimizer.device and zero_force_ds_cpu_optimizer true);
      axolotl deepspeed_configs/zero3_bf16_cpuoffload_all.json
    - InternLM/xtuner#236, #118, #318
    """

    code = "DS033"
    name = "bnb-optimizer-with-zero-cpu-offload"
    severity = ERROR
    triggers = ("parallel.offload_optimizer",)

    def check(self, run, context):
        for trainer in run.configs:
            found = _bnb_optimizer(trainer) if trainer.value("file.kind") != "deepspeed" else None
            if found is None or trainer.value("training.enabled") is False:
                continue
            for deepspeed in run.configs:
                if deepspeed.value("file.kind") != "deepspeed" or deepspeed.value("parallel.offload_optimizer") is not True:
                    continue
                if deepspeed.value("parallel.zero_stage") not in (1, 2, 3):
                    continue
                how = self._reaches(trainer, deepspeed, context)
                if how is None:
                    continue
                old = context.version_before("bitsandbytes", _BNB_STEPS_CPU, trainer, self.code)
                if old is None:
                    continue
                field, name = found
                yield self.finding(
                    trainer, field.span,
                    f"{name} (bitsandbytes {old[0]}, {old[1]}) with optimizer offload in {deepspeed.path.name}: "
                    f"{how}, which bitsandbytes before {_BNB_STEPS_CPU} cannot (CUDA kernels only: \"All input tensors "
                    "need to be on the same GPU\"), so the run fails at its first optimizer step (in "
                    f"deepspeed.initialize before DeepSpeed {_DEEPSPEED_LAZY_STEP}); use torch.optim.AdamW, drop "
                    f"optimizer offload, or bitsandbytes >= {_BNB_STEPS_CPU}")
                break

    @staticmethod
    def _reaches(trainer, deepspeed, context):
        """How the bitsandbytes optimizer reaches the offloaded ZeRO optimizer; None where it does not,
        or where that is not known (DeepSpeed refuses a client optimizer first: DS009's)."""
        from linter.versions import older_than

        hands = "DeepSpeed steps it on the fp32 partitions it keeps in CPU memory"
        forced = deepspeed.value("parallel.force_ds_cpu_optimizer") is not False
        if forced:
            found = deepspeed.version("deepspeed") or trainer.version("deepspeed")
            if found is None or older_than(found[0], _DEEPSPEED_REFUSES_CLIENT) is not True:
                return None  # 0.8.3 on (or unknown) refuses a client optimizer under offload first
        if trainer.value("trainer.client_optimizer") is True:
            if not deepspeed.value("parallel.zero_allow_untested_optimizer"):
                return None  # the engine asserts "untested ZeRO Optimizer" first
            return f"the trainer passes it to deepspeed.initialize as its own optimizer and {hands}"
        if deepspeed.get("optimizer.name") is not None:
            return None  # the HF Trainer passes DummyOptim: DeepSpeed builds its block's optimizer
        transformers = trainer.version("transformers")
        if transformers is not None and older_than(transformers[0], _TRANSFORMERS_OWN_REFUSAL_ENDS):
            return None  # transformers refuses offload without a DeepSpeed optimizer (DS009)
        legacy = "cpu_offload" in (deepspeed.written_as("parallel.offload_optimizer") or "")
        if forced and not legacy and (transformers is None
                                      or older_than(transformers[0], _TRANSFORMERS_THROUGH_ACCELERATE) is not True):
            return None  # accelerate swaps it for DeepSpeedCPUAdam (DS010), or may
        why = "zero_force_ds_cpu_optimizer false" if not forced else f"DeepSpeed {found[0]}"
        return f"the HF Trainer hands it to DeepSpeed ({why}) and {hands}"
