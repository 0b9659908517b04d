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

from ..document import Document, Mapping, RenderError, Scalar
from ..fixes import Change, Edit
from ..ir import ConfigIR
from . import Adapter, Reader, as_bool_or_auto, new_config, set_path

_CONSTANTS = "deepspeed/runtime/constants.py"
_ZERO_CONFIG = "deepspeed/runtime/zero/config.py"

_CLAIM_KEYS = {
    "zero_optimization", "fp16", "bf16", "bfloat16", "train_batch_size",
    "train_micro_batch_size_per_gpu", "gradient_accumulation_steps", "zero_allow_untested_optimizer",
}
# A file that does not parse "sniffs" as DeepSpeed when it names any key `claims` looks for
# (issue 19: a truncated config cut before `zero_optimization` was skipped silently).
_SNIFF = re.compile(r'"(?:' + "|".join(sorted(_CLAIM_KEYS)) + r')"\s*:')


def _offloaded(block) -> bool:
    """An offload block moves data unless its device is "none"."""
    if isinstance(block, dict):
        return str(block.get("device", "none")).lower() != "none"
    return bool(block)


class DeepSpeedAdapter(Adapter):
    name = "deepspeed"
    formats = ("json",)
    paths = {
        "precision.fp16": ("fp16", "enabled"),
        "parallel.zero_stage": ("zero_optimization", "stage"),
        "batch.global": ("train_batch_size",),
        "batch.micro": ("train_micro_batch_size_per_gpu",),
        "batch.grad_accum": ("gradient_accumulation_steps",),
        "optimizer.grad_clip": ("gradient_clipping",),
        "optimizer.lr": ("optimizer", "params", "lr"),
        "optimizer.betas": ("optimizer", "params", "betas"),
        "optimizer.eps": ("optimizer", "params", "eps"),
        "optimizer.weight_decay": ("optimizer", "params", "weight_decay"),
        "scheduler.warmup_max_lr": ("scheduler", "params", "warmup_max_lr"),
        "loss_scale.loss_scale": ("fp16", "loss_scale"),
    }

    def claims(self, document: Document) -> bool:
        root = document.root
        return isinstance(root, Mapping) and any(root.get(key) for key in _CLAIM_KEYS)

    def sniffs(self, text: str) -> bool:
        return bool(_SNIFF.search(text))

    def bf16_key(self, document: Document) -> str:
        root = document.root
        if isinstance(root, Mapping) and root.get("bf16") is None and root.get("bfloat16") is not None:
            return "bfloat16"
        return "bf16"

    def parse(self, document: Document) -> ConfigIR:
        config = new_config(self, document)
        read = Reader(config)
        bf16 = self.bf16_key(document)
        read.take("precision.fp16", "fp16", "enabled", convert=as_bool_or_auto,
                  default=False, default_source=_CONSTANTS)
        read.take("precision.bf16", bf16, "enabled", convert=as_bool_or_auto,
                  default=False, default_source=_CONSTANTS)
        for key, name in (("loss_scale.loss_scale", "loss_scale"),
                          ("loss_scale.initial_scale_power", "initial_scale_power"),
                          ("loss_scale.min_loss_scale", "min_loss_scale")):
            read.take(key, "fp16", name)
        stage = read.take("parallel.zero_stage", "zero_optimization", "stage",
                          default=0, default_source=_ZERO_CONFIG)
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
            read.take("parallel.offload_ratio", "zero_optimization", "offload_optimizer", "ratio")
        read.take("batch.global", "train_batch_size", convert=as_bool_or_auto)
        read.take("batch.micro", "train_micro_batch_size_per_gpu", convert=as_bool_or_auto)
        read.take("batch.grad_accum", "gradient_accumulation_steps", convert=as_bool_or_auto)
        read.take("optimizer.grad_clip", "gradient_clipping", default=0.0, default_source=_CONSTANTS)
        read.take("optimizer.name", "optimizer", "type")
        for key in ("optimizer.lr", "optimizer.eps", "optimizer.weight_decay", "scheduler.warmup_max_lr"):
            read.take(key, *self.paths[key], convert=as_bool_or_auto)
        read.take("optimizer.betas", *self.paths["optimizer.betas"],
                  convert=lambda value: value if isinstance(value, (list, str)) else None)
        return config

    def render(self, config: ConfigIR, change: Change) -> list[Edit]:
        document = config.document
        bf16 = self.bf16_key(document)
        if change.key == "precision.mode":
            fp16_on, bf16_on = {"bf16": (False, True), "fp16": (True, False), "fp32": (False, False)}[change.value]
            edits = []
            for block, wanted in (("fp16", fp16_on), (bf16, bf16_on)):
                if config.value("precision." + ("fp16" if block == "fp16" else "bf16")) == wanted:
                    continue
                if document.find(block) is None and not wanted:
                    continue
                edits.append(set_path(document, (block, "enabled"), wanted,
                                      after="fp16" if block == bf16 else bf16))
            return edits
        if change.key == "precision.bf16":
            return [set_path(document, (bf16, "enabled"), change.value, after="fp16")]
        if change.key not in self.paths:
            raise RenderError(f"DeepSpeed configs have no key for {change.key}")
        if change.key == "optimizer.betas":  # a list: replace the whole value node
            pair = document.find_pair(*self.paths[change.key])
            if pair is None or change.value != "auto":
                raise RenderError("only a present betas list can be set to \"auto\"")
            return [Edit(config.path, pair.value.start, pair.value.end, document.render_scalar("auto"))]
        return super().render(config, change)
