"""Per-GPU peak memory of a training run, from its config alone (MEM001, `trainlint estimate`).

Model states follow DeepSpeed's own estimators (deepspeed/runtime/zero/stage_1_and_2.py
estimate_zero2_model_states_mem_needs, stage3.py estimate_zero3_model_states_mem_needs):
16-bit weights 2 bytes/param, 16-bit gradients 2, fp32 master weights 4 and Adam moments 8, with
the optimizer states partitioned from ZeRO stage 1, gradients from stage 2 and weights at stage 3.
Activations follow Korthikanti et al. 2022 ("Reducing Activation Recomputation in Large
Transformer Models"): about 34*s*b*h bytes per layer without the attention-score term (SDPA and
FlashAttention never store it; eager attention adds 5*a*s^2*b), only the 2*s*b*h layer input per
layer with gradient checkpointing plus one layer recomputed. bitsandbytes NF4 stores 0.5 bytes per
weight plus its block constants (fp32 absmax per 64 weights, 0.127 bits per weight with double
quantization); embeddings and lm_head stay in 16-bit. Not yet validated on a GPU: see the notes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .ir import Run
from .models import Dimensions, dimensions_of

GIB = 2**30
CUDA_CONTEXT_GIB = 0.5  # CUDA context and kernels: a few hundred MiB on current drivers
ALLOCATOR_OVERHEAD = 0.08  # PyTorch caching-allocator fragmentation, as a share of the rest
_LINEAR_MODULES = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


@dataclass
class Estimate:
    model: str
    components: list[tuple[str, float]] = field(default_factory=list)  # (component, GiB)
    assumptions: list[str] = field(default_factory=list)
    sharded_unknown: bool = False  # ZeRO/FSDP without a world size: the per-GPU share is unknown

    @property
    def total_gib(self) -> float:
        return sum(gib for _, gib in self.components)

    def add(self, name: str, bytes_: float) -> None:
        self.components.append((name, bytes_ / GIB))


def _linear_shapes(dims: Dimensions) -> dict[str, int]:
    """in + out features of each linear module of a Llama-style layer (LoRA adds r*(in+out))."""
    head_dim = dims.hidden // dims.heads
    kv = dims.kv_heads * head_dim
    return {"q_proj": 2 * dims.hidden, "k_proj": dims.hidden + kv, "v_proj": dims.hidden + kv,
            "o_proj": 2 * dims.hidden, "gate_proj": dims.hidden + dims.intermediate,
            "up_proj": dims.hidden + dims.intermediate, "down_proj": dims.hidden + dims.intermediate}


def estimate(run: Run, world_size: int | None = None) -> Estimate | None:
    """The per-GPU peak estimate, or None when the model's dimensions are unknown."""
    name = run.value("model.name")
    dims = dimensions_of(name, run.primary.path.parent) if isinstance(name, str) else None
    if dims is None:
        return None
    result = Estimate(name)
    world = world_size or 1
    params = dims.params_b * 1e9
    embedding_params = dims.vocab * dims.hidden * 2  # embed_tokens + lm_head, never quantized
    bits = run.value("quantization.bits")
    modes = {config.mode() for config in run.configs} - {None, "fp32"}
    automatic = any("auto" in (config.value("precision.fp16"), config.value("precision.bf16")) for config in run.configs)
    # "auto" precision always resolves to bf16 or fp16: 16-bit weights.
    half = bool(modes) or automatic or run.value("model.load_dtype") in ("float16", "bfloat16", "auto")
    weight_bytes = 2 if half else 4

    # Weights.
    if bits == 4:
        quantized = params - embedding_params
        double_quant = run.value("quantization.double_quant") is not False
        constants = quantized * (0.127 if double_quant else 0.5) / 8
        result.add("weights (4-bit NF4 + block constants)", quantized * 0.5 + constants)
        result.add("embeddings and lm_head (16-bit)", embedding_params * 2)
    elif bits == 8:
        result.add("weights (8-bit)", (params - embedding_params) * 1 + embedding_params * 2)
    else:
        result.add(f"weights ({'16' if half else '32'}-bit)", params * weight_bytes)

    # Trainable parameters: the adapter, or everything.
    kind = run.value("adapter.kind")
    full = kind is None and run.first("adapter.kind") is not None
    if full:
        layers = run.value("adapter.trainable_layers")  # freeze tuning: only the last N layers train
        share = min(layers, dims.layers) / dims.layers if isinstance(layers, int) and layers > 0 else 1.0
        trainable = params * share if share == 1.0 else (params - embedding_params) * share
        gradient_bytes = weight_bytes
    else:
        if kind is None:
            result.assumptions.append("no adapter information: assumed LoRA")
        rank = run.value("adapter.r") or 8
        targets = run.value("adapter.target_modules")
        shapes = _linear_shapes(dims)
        if isinstance(targets, str):
            targets = [targets]
        if not targets or targets[0] in ("all-linear", "all"):  # PEFT / LLaMA-Factory spellings of "every linear"
            chosen = list(_LINEAR_MODULES) if targets else ["q_proj", "v_proj"]
            if not targets:
                result.assumptions.append("LoRA targets not given: assumed q_proj and v_proj")
        else:
            chosen = [t for t in targets if t in shapes]
        trainable = rank * sum(shapes[t] for t in chosen) * dims.layers
        result.add("adapter weights (fp32)", trainable * 4)
        gradient_bytes = 4

    # Gradients and optimizer states, partitioned by ZeRO and moved off by offload.
    stage = run.value("parallel.zero_stage") or 0
    if (stage >= 1 or run.value("parallel.fsdp") is True) and world_size is None:
        result.sharded_unknown = True
        result.assumptions.append("sharded (ZeRO/FSDP) with the world size unknown: computed for 1 GPU; "
                                  "give --world-size for a per-GPU figure")
    optimizer = str(run.value("optimizer.name") or "adamw").lower()
    state_bytes = 2 if "8bit" in optimizer else 4 if "adafactor" in optimizer or "sgd" in optimizer else 8
    master_bytes = 4 if full and half and stage >= 1 else 0  # DeepSpeed keeps fp32 master weights
    optimizer_gpu = (state_bytes + master_bytes) * trainable
    if run.value("parallel.offload_optimizer") is True:
        optimizer_gpu = 0
    elif stage >= 1:
        optimizer_gpu /= world
    gradients_gpu = trainable * gradient_bytes / (world if stage >= 2 else 1)
    result.add("gradients", gradients_gpu)
    result.add(f"optimizer states ({optimizer}{', ZeRO-%d' % stage if stage else ''})", optimizer_gpu)
    if stage == 3 and full:
        weights = result.components[0]
        result.components[0] = (weights[0] + f" / {world} GPUs (ZeRO-3)", weights[1] / world)

    # Activations.
    micro = run.value("batch.micro")
    if not isinstance(micro, int) or isinstance(micro, bool):
        result.assumptions.append(f"micro batch {micro!r}: assumed 1")
        micro = 1
    sequence = run.value("sequence.max_length")
    if not isinstance(sequence, int) or isinstance(sequence, bool):
        result.assumptions.append("sequence length not given: assumed 2048")
        sequence = 2048
    tokens = micro * sequence
    eager = run.value("attention.implementation") == "eager"
    per_layer = tokens * dims.hidden * 34 + (5 * dims.heads * sequence * tokens if eager else 0)
    checkpointing = run.value("memory.gradient_checkpointing")
    if checkpointing is None:
        # Unknown: assume the cheaper case, so that an error means "does not fit" for certain.
        result.assumptions.append("gradient checkpointing not given: assumed on")
    if checkpointing is not False:
        result.add("activations (checkpointed: layer inputs + one layer)",
                   dims.layers * tokens * dims.hidden * 2 + per_layer)
    else:
        result.add("activations", dims.layers * per_layer)
    result.add("logits and loss (16-bit logits, fp32 upcast)", tokens * dims.vocab * 6)

    result.add("CUDA context", CUDA_CONTEXT_GIB * GIB)
    result.components.append(("allocator overhead (8%)", result.total_gib * ALLOCATOR_OVERHEAD))
    return result
