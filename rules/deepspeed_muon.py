"""DeepSpeed's Muon optimizer (`optimizer.type: Muon`, v0.17.6 on): the ZeRO settings under which the
releases compute Muon's orthogonalized update wrongly or not at all (issue 16 recall). The refusals
of the same optimizer are DS025 rows (rules/deepspeed_releases.py).

Read in deepspeedai/DeepSpeed (mirror at edaa72212, v0.19.5 the newest tag):
- runtime/engine.py _configure_basic_optimizer builds MuonWithAuxAdam from the block (66ad27804,
  #7509, first in v0.17.6); runtime/zero/muon/muon_optimizer.py MuonWithAuxAdam.step applies
  `p.add_(p.grad, alpha=-lr)` to the Muon groups: it expects ZeRO to have put the orthogonalized
  update into the gradient. Only zero/stage_1_and_2.py get_flat_partition (called on the path
  without optimizer offload, `if self.cpu_offload is False`) and zero/stage3.py
  _apply_distributed_muon_update call muon_update (every tag through v0.19.5). So at ZeRO stage 0
  and under ZeRO-1/2 optimizer offload Muon is SGD with weight decay: no momentum, no
  Newton-Schulz (DeepSpeed#8441, fixed for stage 0 by #8442 on master after v0.19.5; ZeRO-2
  offload support 35a7f4b6a is in no tag).
- runtime/zero/utils.py adds MuonWithAuxAdam to ZERO_SUPPORTED_OPTIMIZERS from a module path that
  did not exist until 3bc882faa (#7802, v0.18.5): before it ZeRO refuses Muon as untested unless
  zero_allow_untested_optimizer (a DS025 row), so the ZeRO rows start at 0.18.5, or at 0.17.6 where
  that key is on.
- ZeRO-1/2 with reduce_scatter (zero/config.py default True) through the contiguous buckets
  (contiguous_gradients, default True): average_tensor copies each averaged slice to its owner rank
  only, while get_flat_partition runs muon_update on each parameter's whole gradient: a matrix that
  crosses a partition boundary is orthogonalized from a partly reduced, rank-specific gradient
  (DeepSpeed#7807). d714251c5 (#8090) refused it and de1846cf6 (#8141) copies the slices to every
  owning rank, both first in v0.19.3.
- ZeRO-3: stage3.py __avg_scatter_contiguous_grads calls _apply_distributed_muon_update on every
  bucket reduce, i.e. every micro-batch (956ec6fb1, #7919, first in v0.18.9; unfixed through v0.19.5,
  #8600 open): with gradient accumulation the momentum advances once per micro-batch and
  Newton-Schulz runs on partial gradients (DeepSpeed#8443).
"""

from __future__ import annotations

from linter.registry import WARNING, kinds, register

from .deepspeed_releases import DeepSpeedReleaseBug, _bug

_ZERO_LISTS_MUON = "0.18.5"  # 3bc882faa (#7802): ZERO_SUPPORTED_OPTIMIZERS finds MuonWithAuxAdam


def _zero_rows(code, applies, point, what, why, fixed, unpinned=None):
    """A ZeRO Muon bug from 0.18.5 up to `fixed`, and from 0.17.6 where zero_allow_untested_optimizer
    lets ZeRO run Muon."""
    return (_bug(code, lambda d: applies(d) and d.untested_allowed(), point, what, why, "0.17.6", _ZERO_LISTS_MUON,
                 unpinned=False),
            _bug(code, applies, point, what, why, _ZERO_LISTS_MUON, fixed, unpinned=unpinned))


_SGD = ("DeepSpeed's Muon steps the 2-D weights by the raw gradient (SGD with weight decay: no momentum, no "
        "Newton-Schulz orthogonalization), because only the ZeRO partitioning code without optimizer offload applies "
        "the Muon update (DeepSpeed#8441); the run trains, differently from Muon, with no error")

MUON_BUGS = (
    *_zero_rows("DS031", lambda d: d.muon() and d.stage() in (1, 2) and d.bucket_reduce()
                and not d.offloads_optimizer() and d.world != 1, "parallel.reduce_scatter parallel.zero_stage",
                "optimizer Muon under ZeRO stage {stage} with reduce_scatter (the default)",
                "each rank holds the averaged gradient only for its own partition, and DeepSpeed orthogonalizes every "
                "weight matrix that crosses a partition boundary from a partly reduced, rank-specific gradient, so the "
                "ranks apply different, wrong updates to those matrices with no error (DeepSpeed#7807; fixed in "
                "0.19.3, #8141); set zero_optimization.reduce_scatter false or upgrade DeepSpeed", "0.19.3"),
    *_zero_rows("DS031", lambda d: d.muon() and d.stage() in (1, 2) and d.offloads_optimizer()
                and not d.reduce_scatter(), "parallel.offload_optimizer",
                "optimizer Muon with offload_optimizer under ZeRO stage {stage}",
                f"{_SGD}; drop the optimizer offload or use AdamW", None),
    *_zero_rows("DS031", lambda d: d.muon() and d.stage() in (1, 2) and d.offloads_optimizer() and d.reduce_scatter(),
                "parallel.offload_optimizer", "optimizer Muon with offload_optimizer under ZeRO stage {stage}",
                f"{_SGD} (0.19.3 on refuses the pair instead); drop the optimizer offload or use AdamW", "0.19.3",
                unpinned=False),
    # Stage 0 (the default without a zero_optimization block): every release with Muon.
    _bug("DS031", lambda d: d.muon() and d.stage() == 0, "optimizer.name parallel.zero_stage",
         "optimizer Muon without ZeRO", f"{_SGD}; use ZeRO stage 1-3 (where DeepSpeed applies Muon) or AdamW",
         "0.17.6", None),
    # ZeRO-3 Muon needs reduce_scatter false (stage3.py refuses it otherwise: a DS025 row).
    _bug("DS032", lambda d: d.muon() and d.stage() == 3 and not d.reduce_scatter() and d.accumulates(),
         "batch.grad_accum", "optimizer Muon under ZeRO-3 with gradient_accumulation_steps {batch.grad_accum}",
         "DeepSpeed's ZeRO-3 applies Muon in the gradient reduce of every micro-batch: the momentum advances once per "
         "micro-batch and Newton-Schulz orthogonalizes partial gradients instead of the accumulated one, so the run "
         "trains differently from the same batch without accumulation, with no error (DeepSpeed#8443; unfixed, "
         "#8600); use ZeRO stage 1 or 2, or a larger micro-batch without accumulation", "0.18.9", None),
)


class _MuonBug(DeepSpeedReleaseBug):
    rows = MUON_BUGS


@register
class MuonZeroUpdateBug(_MuonBug):
    """DS031 muon-zero-update-bug

    ## What it does
    Flags DeepSpeed's Muon optimizer (`optimizer.type: Muon`, built by DeepSpeed from the file:
    a trainer or accelerate fills it, or a script passes no optimizer of its own) where the
    DeepSpeed in use computes Muon's update wrongly or not at all: under ZeRO stage 1 or 2 with
    `reduce_scatter` (the default) through the contiguous gradient buckets (`contiguous_gradients`,
    the default), no optimizer offload and more than one GPU (or an unknown count), on 0.18.5-0.19.2
    (0.17.6-0.18.4 with `zero_allow_untested_optimizer`; without it they refuse Muon under ZeRO);
    under ZeRO stage 1 or 2 with `offload_optimizer`, on every release from 0.18.5 with
    `reduce_scatter` false and up to 0.19.2 with it (0.19.3 refuses that pair, a DS025 row); and
    without ZeRO (stage 0, the default), on every release from 0.17.6.
    Rows bounded by a fix need the version (an exact pin near the config, or the installed
    package); the unfixed ones fire without it.

    ## Why is this bad?
    DeepSpeed's `MuonWithAuxAdam.step` adds the gradient to the 2-D weights as it is, trusting
    ZeRO to have replaced it by the orthogonalized momentum update; only the ZeRO-1/2 path without
    offload (`get_flat_partition`) and ZeRO-3 do. Without ZeRO and under ZeRO-1/2 offload, "Muon"
    is SGD (DeepSpeed#8441). Under ZeRO-1/2 with reduce-scatter, each rank has the averaged
    gradient only for its own partition but orthogonalizes every whole matrix it owns part of, so
    a matrix crossing a partition boundary is updated from a partly reduced gradient that differs
    per rank (DeepSpeed#7807; refused, then fixed, in 0.19.3). All train with no error.

    ## Example
    Its "auto" value says the HF Trainer hands the file to DeepSpeed, which then builds the
    optimizer it names.
    `ds_config.json`:
        {"train_micro_batch_size_per_gpu": "auto", "optimizer": {"type": "Muon", "params": {"lr": 0.02}},
         "zero_optimization": {"stage": 2}}
    `requirements.txt`:
        deepspeed==0.19.2
    Use instead:
        {"train_micro_batch_size_per_gpu": "auto", "optimizer": {"type": "Muon", "params": {"lr": 0.02}},
         "zero_optimization": {"stage": 2, "reduce_scatter": false}}

    ## Fix safety
    No fix: all-reduce costs bandwidth, and dropping offload costs GPU memory; upgrading
    DeepSpeed or another optimizer are the other choices.

    ## References
    - deepspeed/runtime/engine.py _configure_basic_optimizer (MuonWithAuxAdam, 66ad27804 #7509,
      v0.17.6); runtime/zero/muon/muon_optimizer.py MuonWithAuxAdam.step
    - deepspeed/runtime/zero/stage_1_and_2.py get_flat_partition (muon_update, only where
      cpu_offload is False), average_tensor / reduce_ipg_grads (reduce_scatter, contiguous
      buckets); d714251c5 (#8090) and de1846cf6 (#8141), both first in v0.19.3
    - deepspeed/runtime/zero/utils.py ZERO_SUPPORTED_OPTIMIZERS (Muon found from 3bc882faa #7802,
      v0.18.5)
    - deepspeedai/DeepSpeed#7807, #8441, #8442; the rows: trainlint rules/deepspeed_muon.py
    """

    code = "DS031"
    name = "muon-zero-update-bug"
    severity = WARNING
    triggers = kinds("deepspeed")


@register
class MuonZero3GradAccumulation(_MuonBug):
    """DS032 muon-zero3-grad-accumulation

    ## What it does
    Flags DeepSpeed's Muon optimizer (`optimizer.type: Muon`, built by DeepSpeed from the file)
    under ZeRO stage 3 (with `reduce_scatter: false`, which ZeRO-3 Muon requires) with gradient
    accumulation (`gradient_accumulation_steps` above 1, written or the trainer's value behind
    `"auto"`), on DeepSpeed 0.18.9 or later: every release that runs Muon under ZeRO-3 (the
    releases before refuse it), so it fires without a pin too.

    ## Why is this bad?
    ZeRO-3 applies Muon inside the gradient reduce, which runs on every micro-batch: with
    `gradient_accumulation_steps: n` the momentum advances n times per optimizer step and
    Newton-Schulz orthogonalizes each micro-batch's partial gradient instead of the accumulated
    one. ZeRO-1/2 apply Muon once, at the accumulation boundary. The run trains differently from
    the same global batch without accumulation (weights 1e-1 apart after three steps in
    DeepSpeed#8443, against 3e-4 under ZeRO-2), with no error.

    ## Example
    Its "auto" value says the HF Trainer hands the file to DeepSpeed, which then builds the
    optimizer it names.
    `ds_config.json`:
        {"train_micro_batch_size_per_gpu": "auto", "gradient_accumulation_steps": 4,
         "optimizer": {"type": "Muon", "params": {"lr": 0.02}},
         "zero_optimization": {"stage": 3, "reduce_scatter": false}}
    Use instead:
        {"train_micro_batch_size_per_gpu": "auto", "gradient_accumulation_steps": 4,
         "optimizer": {"type": "Muon", "params": {"lr": 0.02}},
         "zero_optimization": {"stage": 2, "reduce_scatter": false}}

    ## Fix safety
    No fix: ZeRO-2 needs more GPU memory, and dropping accumulation changes the batch.

    ## References
    - deepspeed/runtime/zero/stage3.py __avg_scatter_contiguous_grads ->
      _apply_distributed_muon_update (956ec6fb1 #7919, first in v0.18.9; unchanged in v0.19.5)
    - deepspeedai/DeepSpeed#8443, #8600 (the fix, open)
    """

    code = "DS032"
    name = "muon-zero3-grad-accumulation"
    severity = WARNING
    triggers = kinds("deepspeed")
