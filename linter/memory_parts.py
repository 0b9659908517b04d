"""The pieces of a memory estimate: measured per-token rows, component kinds, the Estimate
record, and the linear-layer shapes LoRA adapts (see memory.py for where each figure comes from)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .models import Dimensions

if TYPE_CHECKING:
    from .ir import Run

GIB = 2**30
CUDA_CONTEXT_GIB = 0.6  # measured on an H100 (CUDA 13, torch 2.11): 0.60 GiB
# reserved / allocated: 1.01-1.60 measured, 1.10 median. Charged on what is allocated and freed
# during a step (activations, logits, gradients, temporaries): weights and optimizer states are
# allocated once, in blocks the caching allocator fills exactly.
ALLOCATOR_OVERHEAD = 0.10
# Stored activations per token per layer, in bytes, as (x hidden size, x intermediate size), with
# 16-bit autocast and SDPA attention. LoRA adds its dropout copies of each adapted module's input;
# QLoRA's 4-bit matmuls keep more of the MLP.
ACTIVATIONS = {"full": (22.7, 7.4), "lora": (31.1, 9.1), "qlora": (31.1, 15.5)}
# Logits: 16-bit logits, their fp32 upcast, log-softmax and its gradient: bytes per token per
# vocabulary entry (measured 12.4-13.4 with checkpointing).
LOGIT_BYTES = 12.4
TOKEN_ERROR = 0.20  # the validated error band of the measured per-token rows (bench/memory_validation.md)
# Component kinds: "state" lives all step long, allocated once (no allocator overhead);
# "tokens" scales with the batch's tokens (uncertain without packing); "step" is transient;
# "paged" lives in unified memory that bitsandbytes pages out to CPU RAM when the GPU is full.
STATE, TOKENS, STEP, PAGED = "state", "tokens", "step", "paged"


class Estimate:
    """A per-GPU estimate: (component, GiB) rows and what was assumed."""

    def __init__(self, model: str):
        self.model = model
        self.components: list[tuple[str, float]] = []  # (component, GiB)
        self.kinds: list[str] = []  # one per component: STATE, TOKENS, STEP or PAGED
        self.assumptions: list[str] = []
        # Batches may be shorter than the sequence length used (no packing, or a guessed length):
        # the activation and logits rows are then an upper bound.
        self.tokens_upper_bound = False
        self.model_states_gib = 0.0  # weights + gradients + optimizer states (+ ZeRO-3 gather buffer)
        self.world_size = 1
        self.unknown_reason: str | None = None  # why MEM001 cannot judge this run (for --verbose)
        # The peak without activations and logits (needed whatever the batches hold), less the
        # pageable optimizer states.
        self.certain_resident_gib = 0.0
        self.remote: str | None = None  # why this GPU's memory does not bound the run (remote training)
        # "ZeRO-1"/"ZeRO-2" where the world size is unknown and the partitioned states are left
        # out: the estimate is then a lower bound for any world size.
        self.any_world: str | None = None

    @property
    def total_gib(self) -> float:
        return sum(gib for _, gib in self.components)

    def cannot_judge(self, reason: str, assumed: str | None = None) -> None:
        """MEM001 cannot judge this run (`reason`, for --verbose); the breakdown says what it
        assumed instead (`assumed`, else the reason itself)."""
        self.unknown_reason = reason
        self.assumptions.append(assumed or reason)

    @property
    def resident_gib(self) -> float:
        """The total less what bitsandbytes can page out to CPU RAM (paged optimizer states)."""
        return sum(gib for (_, gib), kind in zip(self.components, self.kinds) if kind != PAGED)

    def judged(self) -> tuple[float, list[tuple[str, float]]]:
        """What MEM001 compares with a GPU's memory, and the components it is made of: without
        packing, only what every batch needs; never the pageable optimizer states."""
        skip = {PAGED} | ({TOKENS} if self.tokens_upper_bound else set())
        parts = [row for row, kind in zip(self.components, self.kinds) if kind not in skip]
        return (self.certain_resident_gib if self.tokens_upper_bound else self.resident_gib), parts

    def lower_bound_gib(self) -> float:
        """The judged figure with the measured (token-dependent) rows at the low end of their
        validated error band: bench/memory_validation.md finds the per-token coefficients within
        +-20 %; weights, gradients and optimizer states are arithmetic."""
        total, parts = self.judged()
        measured = sum(gib for (name, gib), kind in zip(self.components, self.kinds)
                       if kind == TOKENS and (name, gib) in parts)
        return total - TOKEN_ERROR * measured

    def add(self, name: str, bytes_: float, kind: str = STATE) -> None:
        self.components.append((name, bytes_ / GIB))
        self.kinds.append(kind)


def linear_shapes(dims: Dimensions) -> dict[str, int]:
    """in + out features of each linear module of a layer (LoRA adds r*(in+out)); an MoE layer's
    MLP is `experts` copies of w1/w3 (hidden -> expert) and w2 (expert -> hidden), plus a router."""
    query, kv = dims.heads * dims.head_dim, dims.kv_heads * dims.head_dim
    shapes = {"q_proj": dims.hidden + query, "k_proj": dims.hidden + kv, "v_proj": dims.hidden + kv,
              "o_proj": query + dims.hidden}
    mlp = dims.hidden + dims.intermediate
    if dims.experts:
        mlp = dims.hidden + dims.expert_intermediate
        for name in ("gate_proj", "up_proj", "down_proj", "w1", "w2", "w3"):
            shapes[name] = dims.experts * mlp  # PEFT wraps each expert's linear
    else:
        shapes.update(gate_proj=mlp, up_proj=mlp, down_proj=mlp)
    return shapes


def all_linear(dims: Dimensions) -> int:
    """in + out of every linear module of a layer (PEFT "all-linear", Axolotl lora_target_linear:
    every nn.Linear but the output layer; the MoE router included)."""
    shapes = linear_shapes(dims)
    attention = sum(shapes[name] for name in ("q_proj", "k_proj", "v_proj", "o_proj"))
    if dims.experts:
        shared = 3 * (dims.hidden + dims.shared_intermediate) if dims.shared_intermediate else 0
        return attention + 3 * shapes["w1"] + (dims.hidden + dims.experts) + shared
    return attention + 3 * shapes["gate_proj"]


def world_of(run: "Run", world_size: int | None) -> int | None:
    """--world-size, else accelerate's num_processes (the total number of processes across all
    machines: accelerate/commands/launch.py "--num_processes ... The total number of processes to
    be launched in parallel"; utils/launch.py splits it by num_machines)."""
    if world_size:
        return world_size
    written = run.value("batch.world_size")
    return written if isinstance(written, int) and not isinstance(written, bool) and written > 0 else None


def fsdp_strategy(run: "Run") -> str | None:
    """FULL_SHARD, SHARD_GRAD_OP, HYBRID_SHARD or NO_SHARD when FSDP is on (full shard where
    nothing says otherwise: TrainingArguments fsdp=True and accelerate's FullyShardedDataParallelPlugin
    default to it)."""
    if run.value("parallel.fsdp") is not True:
        return None
    strategy = str(run.value("parallel.fsdp_sharding") or "FULL_SHARD").upper()
    if strategy in ("1", "FULL_SHARD"):
        return "FULL_SHARD"
    if strategy in ("2", "SHARD_GRAD_OP"):
        return "SHARD_GRAD_OP"
    if strategy in ("3", "NO_SHARD"):
        return "NO_SHARD"
    if strategy in ("4", "5", "HYBRID_SHARD", "_HYBRID_SHARD_ZERO2"):
        return "HYBRID_SHARD"
    return "FULL_SHARD"
