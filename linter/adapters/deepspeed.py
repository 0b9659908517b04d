"""DeepSpeed JSON configs.

Key names and defaults from DeepSpeed's own source (microsoft/DeepSpeed):
- deepspeed/runtime/constants.py: `fp16` (enabled default False, loss_scale 0 = dynamic,
  initial_scale_power 16, min_loss_scale 1), `bf16` with the older alias `bfloat16`,
  `train_batch_size`, `train_micro_batch_size_per_gpu`, `gradient_accumulation_steps`,
  `gradient_clipping` (default 0.0: off).
- deepspeed/runtime/zero/config.py: `zero_optimization.stage` default 0; `offload_param`,
  `offload_optimizer` ({device: cpu|nvme|none}, ratio 1.0), legacy `cpu_offload` / `cpu_offload_param`.
- deepspeed/runtime/config.py: `get_bfloat16_config` reads `bf16` first, else `bfloat16`.
  (Read at DeepSpeed 0.16.5, commit 38327e07f6cd39b63418f60cedd1651b0be3e7c3.)
"""

from __future__ import annotations

import re

from functools import lru_cache
from typing import Any

from ..changes import PRECISION_MODES
from ..document import Document, Mapping, RenderError, Scalar
from ..fixes import Edit
from ..ir import ConfigIR, Field, Origin
from . import Adapter, Binding, Reader, as_bool_or_auto, new_config, set_path

_CONSTANTS = "deepspeed/runtime/constants.py"
_ZERO_CONFIG = "deepspeed/runtime/zero/config.py"

# Top-level keys only a DeepSpeed config has (runtime/constants.py). `fp16` and `bf16` count only
# as blocks: a TrainingArguments JSON has them as booleans; gradient_accumulation_steps both have.
_EXCLUSIVE_KEYS = {
    "zero_optimization", "train_batch_size", "train_micro_batch_size_per_gpu", "zero_allow_untested_optimizer",
    "gradient_clipping", "steps_per_print", "wall_clock_breakdown", "zero_force_ds_cpu_optimizer",
    "communication_data_type", "prescale_gradients", "gradient_predivide_factor", "sparse_gradients",
    "flops_profiler", "activation_checkpointing", "aio", "comms_logger", "data_types", "amp",
}
_BLOCKS = ("fp16", "bf16", "bfloat16", "optimizer", "scheduler")
# A file that does not parse "sniffs" as DeepSpeed when it names a key only DeepSpeed has, or a
# precision block (issue 19: a truncated config cut before `zero_optimization` was skipped silently).
_SNIFF = re.compile(r'"(?:' + "|".join(sorted(_EXCLUSIVE_KEYS)) + r')"\s*:|"(?:fp16|bf16|bfloat16)"\s*:\s*\{')


def _offloaded(block) -> bool:
    """An offload block moves data unless its device is "none"."""
    if isinstance(block, dict):
        return str(block.get("device", "none")).lower() != "none"
    return bool(block)


# deepspeed/runtime/activation_checkpointing/config.py: the block's memory switches (each default
# False); number_checkpoints, synchronize_checkpoint_boundary and profile save no memory.
_ACTIVATION_OPTIONS = ("partition_activations", "cpu_checkpointing", "contiguous_memory_optimization")


def _activation_options(block: Any) -> Any:
    """The memory switches an activation_checkpointing block turns on (true as written)."""
    if not isinstance(block, dict):
        return None
    return [name for name in _ACTIVATION_OPTIONS if block.get(name) is True]


def _betas(value: Any) -> Any:
    return value if isinstance(value, (list, str)) else None


def _auto_keys(tree) -> list[str]:
    """The dotted paths of the values written as the string "auto" (the launchers compare with
    == "auto": accelerate DeepSpeedPlugin.fill_match, transformers HfTrainerDeepSpeedConfig.fill_match).
    Iterative: a deeply nested file cannot exhaust the stack."""
    found = []
    pending = [("", tree)] if isinstance(tree, dict) else []
    while pending:
        prefix, mapping = pending.pop()
        for key, value in mapping.items():
            if value == "auto":
                found.append(f"{prefix}{key}")
            elif isinstance(value, dict):
                pending.append((f"{prefix}{key}.", value))
    return sorted(found)


def _mostly_known(root: Mapping) -> bool:
    """Is this a file DeepSpeed reads at all? DeepSpeedConfig._initialize_params
    (deepspeed/runtime/config.py) looks up its own keys and ignores every other one, so a real
    config may carry a few stale or misspelt keys (SCH001 reports them), but at least half its
    top-level keys are ones DeepSpeed reads (the deepspeed schema, written from that function;
    keys starting with '_' are comments). A file sharing one name with DeepSpeed among many it
    does not read, such as transformers' saved Trainer state (`trainer_state.json`, written by
    TrainerState.save_to_json in transformers/trainer_callback.py: log_history, global_step,
    best_metric, ... and a top-level train_batch_size), is another program's file; the same test
    as the Hugging Face argument files (hf_kinds.argument_file)."""
    keys = [pair.key.value for pair in root.pairs if isinstance(pair.key.value, str)]
    known = sum(key in _schema_keys() or key.startswith("_") for key in keys)
    return 2 * known >= len(keys)


@lru_cache(maxsize=1)
def _schema_keys() -> frozenset[str]:
    from ..schema import load

    schema = load("deepspeed")
    return frozenset(schema.root.get("properties", ())) if schema is not None else frozenset()


class DeepSpeedAdapter(Adapter):
    name = "deepspeed"
    bindings = (
        Binding("precision.fp16", "fp16.enabled", convert=as_bool_or_auto, default=False, source=_CONSTANTS),
        # get_bfloat16_config reads `bf16` first, else the older `bfloat16`.
        Binding("precision.bf16", "bf16.enabled", "bfloat16.enabled", convert=as_bool_or_auto, default=False,
                source=_CONSTANTS, after="fp16"),
        # get_amp_enabled: `amp.enabled`, default False (AMP_ENABLED_DEFAULT).
        Binding("precision.amp", "amp.enabled", default=False, source=_CONSTANTS),
        Binding("loss_scale.loss_scale", "fp16.loss_scale"),
        Binding("loss_scale.initial_scale_power", "fp16.initial_scale_power"),
        Binding("loss_scale.min_loss_scale", "fp16.min_loss_scale"),
        Binding("loss_scale.window", "fp16.loss_scale_window"),
        Binding("parallel.zero_stage", "zero_optimization.stage", default=0, source=_ZERO_CONFIG),
        # ZERO_FORCE_DS_CPU_OPTIMIZER_DEFAULT = True (DeepSpeed >= 0.8.3, PR #2971).
        Binding("parallel.force_ds_cpu_optimizer", "zero_force_ds_cpu_optimizer", default=True, source=_CONSTANTS),
        # runtime/config.py get_zero_allow_untested_optimizer (default False): written value only.
        Binding("parallel.zero_allow_untested_optimizer", "zero_allow_untested_optimizer"),
        # runtime/zero/config.py legacy_stage1 (v0.4.0, default False): written value only.
        Binding("parallel.zero_legacy_stage1", "zero_optimization.legacy_stage1"),
        Binding("parallel.offload_ratio", "zero_optimization.offload_optimizer.ratio"),
        # zero/offload_config.py: device default "none", nvme_path default None (written values only).
        Binding("parallel.offload_param_device", "zero_optimization.offload_param.device"),
        Binding("parallel.offload_optimizer_device", "zero_optimization.offload_optimizer.device"),
        Binding("parallel.offload_param_nvme_path", "zero_optimization.offload_param.nvme_path"),
        Binding("parallel.offload_optimizer_nvme_path", "zero_optimization.offload_optimizer.nvme_path"),
        # Written value only: unset means stage == 3 (zero/config.py, overlap_comm_valid).
        Binding("parallel.overlap_comm", "zero_optimization.overlap_comm"),
        # runtime/zero/config.py reduce_scatter and contiguous_gradients (both default True, v0.1.0 on):
        # written values only; unset means True (rules/deepspeed_facts.py says so where asked).
        Binding("parallel.reduce_scatter", "zero_optimization.reduce_scatter"),
        Binding("parallel.contiguous_gradients", "zero_optimization.contiguous_gradients"),
        # Written values only (runtime/zero/config.py zero_hpz_partition_size default 1; runtime/config.py
        # data_types.grad_accum_dtype default None; runtime/precision_config.py immediate_grad_update).
        Binding("parallel.hpz_partition_size", "zero_optimization.zero_hpz_partition_size"),
        # runtime/zero/config.py zero_quantized_weights (ZeRO++, v0.10.0) and
        # zero_quantized_nontrainable_weights (v0.10.2): both default False, written values only.
        Binding("parallel.zero_quantized_weights", "zero_optimization.zero_quantized_weights"),
        Binding("parallel.zero_quantized_nontrainable_weights", "zero_optimization.zero_quantized_nontrainable_weights"),
        Binding("precision.grad_accum_dtype", "data_types.grad_accum_dtype"),
        # runtime/tensor_parallel/config.py TPTrainingConfig.autotp_size (v0.16.4, default 0: off) and
        # runtime/config.py get_fp16_master_weights_and_grads_enabled (default False): written values only.
        Binding("parallel.autotp_size", "tensor_parallel.autotp_size"),
        Binding("precision.fp16_master_weights", "fp16.fp16_master_weights_and_grads"),
        # runtime/precision_config.py DeepSpeedBF16Config (v0.18.3; extra keys forbidden before).
        Binding("precision.bf16_master_weights", "bf16.bf16_master_weights_and_grads",
                "bfloat16.bf16_master_weights_and_grads"),
        Binding("precision.bf16_optimizer_states", "bf16.bf16_optimizer_states", "bfloat16.bf16_optimizer_states"),
        # runtime/compiler.py get_compile_config (v0.14.0: `compile.enabled`, the engine compiles itself).
        Binding("training.deepspeed_compile", "compile.enabled"),
        Binding("parallel.communication_data_type", "communication_data_type"),  # written only (engine.py)
        # runtime/constants.py PRESCALE_GRADIENTS (default False, v0.1.0) and GRADIENT_PREDIVIDE_FACTOR
        # (default 1.0, v0.2.0): written values only.
        Binding("parallel.prescale_gradients", "prescale_gradients"),
        Binding("parallel.gradient_predivide_factor", "gradient_predivide_factor"),
        Binding("precision.bf16_immediate_grad_update", "bf16.immediate_grad_update", "bfloat16.immediate_grad_update"),
        # Written value only (DeepSpeedZeroConfig.prefetch_bucket_size: int, default 5e7, alias
        # stage3_prefetch_bucket_size); "auto" is left for the trainer to fill.
        Binding("parallel.prefetch_bucket_size", "zero_optimization.stage3_prefetch_bucket_size",
                convert=as_bool_or_auto),
        # DeepSpeedZeroConfig.gather_16bit_weights_on_model_save: default False, alias
        # stage3_gather_16bit_weights_on_model_save (populate_by_name accepts the field name too);
        # stage3_gather_fp16_weights_on_model_save is its deprecated name (before 0.7.0).
        Binding("parallel.gather_16bit_on_save", "zero_optimization.stage3_gather_16bit_weights_on_model_save",
                "zero_optimization.gather_16bit_weights_on_model_save",
                "zero_optimization.stage3_gather_fp16_weights_on_model_save", default=False, source=_ZERO_CONFIG,
                anchor="zero_optimization"),
        Binding("batch.global", "train_batch_size", convert=as_bool_or_auto),
        Binding("batch.micro", "train_micro_batch_size_per_gpu", convert=as_bool_or_auto),
        Binding("batch.grad_accum", "gradient_accumulation_steps", convert=as_bool_or_auto),
        Binding("optimizer.grad_clip", "gradient_clipping", default=0.0, source=_CONSTANTS),
        Binding("optimizer.name", "optimizer.type"),
        Binding("scheduler.type", "scheduler.type"),  # runtime/lr_schedules.py VALID_LR_SCHEDULES
        Binding("optimizer.lr", "optimizer.params.lr", convert=as_bool_or_auto),
        Binding("optimizer.eps", "optimizer.params.eps", convert=as_bool_or_auto),
        Binding("optimizer.weight_decay", "optimizer.params.weight_decay", convert=as_bool_or_auto),
        Binding("scheduler.warmup_max_lr", "scheduler.params.warmup_max_lr", convert=as_bool_or_auto),
        Binding("scheduler.total_steps", "scheduler.params.total_num_steps", convert=as_bool_or_auto),
        Binding("optimizer.betas", "optimizer.params.betas", convert=_betas),
        # engine.py _configure_basic_optimizer refuses it (every release): written value only.
        Binding("optimizer.param_max_grad_norm", "optimizer.params.max_grad_norm", convert=as_bool_or_auto),
        # Read only by deepspeed.checkpointing.configure, which the engine never calls.
        Binding("memory.deepspeed_activation_checkpointing", "activation_checkpointing", convert=_activation_options),
    )

    def evidence(self, document: Document) -> int:
        root = document.root
        if not isinstance(root, Mapping):
            return 0
        keys = sum(root.get(key) is not None for key in _EXCLUSIVE_KEYS)
        blocks = sum(isinstance(root.value(key), Mapping) for key in _BLOCKS)
        if not keys and not any(isinstance(root.value(key), Mapping) for key in ("fp16", "bf16", "bfloat16")):
            return 0  # an optimizer or scheduler block alone says nothing
        if not _mostly_known(root):
            return 0
        return keys + blocks

    def sniffs(self, text: str) -> bool:
        return bool(_SNIFF.search(text))

    def parse(self, document: Document) -> ConfigIR:
        config = new_config(self, document)
        read = Reader(config, document)
        read.bind(self.bindings)
        stage = config.get("parallel.zero_stage")
        zero = read.node("zero_optimization")
        if isinstance(zero, Scalar) and stage is not None and stage.origin.is_default:
            # Legacy boolean form: `"zero_optimization": true` means stage 1 (zero/config.py).
            read.set("parallel.zero_stage", 1 if zero.value is True else 0, "zero_optimization")
        if isinstance(zero, Mapping):
            for key, names in (("parallel.offload_param", ("offload_param", "cpu_offload_param")),
                               ("parallel.offload_optimizer", ("offload_optimizer", "cpu_offload"))):
                for name in names:
                    node = zero.value(name)
                    if node is not None:
                        read.set(key, _offloaded(node.plain()), "zero_optimization", name)
                        break
        root = document.root
        if isinstance(root, Mapping) and not any(pair.key.value == "zero_optimization" for pair in root.pairs):
            # accelerate DeepSpeedPlugin.__post_init__: `"zero_optimization" not in config` raises
            config.set("parallel.zero_block_missing", Field(True, Origin(config.file_span)))
        auto = _auto_keys(config.key_tree.value if config.key_tree is not None else None)
        if auto:
            config.set("file.auto_keys", Field(auto, Origin(config.file_span)))
        return config

    def render_precision(self, document: Document, config: ConfigIR, mode: str) -> list[Edit]:
        """Each block's `enabled` set where it does not already read right; an absent block that
        should stay off is left absent."""
        bf16 = self.binding(config, "precision.bf16").path_in(document)[0]
        edits = []
        for block, key, wanted in (("fp16", "precision.fp16", PRECISION_MODES[mode][0]),
                                   (bf16, "precision.bf16", PRECISION_MODES[mode][1])):
            if config.value(key) == wanted or (document.find(block) is None and not wanted):
                continue
            edits.append(set_path(document, (block, "enabled"), wanted, after="fp16" if block == bf16 else bf16))
        return edits

    def render_value(self, document: Document, config: ConfigIR, key: str, value: Any) -> list[Edit]:
        if key == "optimizer.betas":  # a list: replace the whole value node
            pair = document.find_pair(*self.binding(config, key).paths[0])
            if pair is None or value != "auto":
                raise RenderError("only a present betas list can be set to \"auto\"")
            return [Edit(config.path, pair.value.start, pair.value.end, document.render_scalar("auto"))]
        return super().render_value(document, config, key, value)
