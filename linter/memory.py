"""Per-GPU peak memory of a training run, from its config alone (MEM001, `trainlint estimate`).

The peak is the larger of two moments of a training step, on top of what lives all along
(weights, adapter weights, optimizer states):
- backward start: every stored activation, the logits and their gradients, and (full fine-tune)
  the first gradient, of lm_head;
- backward end / optimizer step: every gradient, plus the embedding's gradient temporaries.
Model states in a ZeRO run follow DeepSpeed's own estimators (deepspeed/runtime/zero/
stage_1_and_2.py estimate_zero2_model_states_mem_needs, stage3.py
estimate_zero3_model_states_mem_needs): fp32 master weights and Adam moments, partitioned from
stage 1, gradients from stage 2, weights at stage 3. Without ZeRO, torch's AdamW keeps its moments
in the parameter's dtype. bitsandbytes NF4 stores 0.5 bytes per weight plus block constants (fp32
absmax per 64 weights, 0.127 bits per weight with double quantization); what stays unquantized
(embeddings, norms) is cast to fp32 by peft's prepare_model_for_kbit_training.

The per-token coefficients below were measured, not derived: bench/memory_validation.md compares
this estimator with torch.cuda.max_memory_reserved() on an H100 (84 rows: Llama-3.2 1B/3B shapes
plus held-out TinyLlama, Qwen2.5-1.5B and eager-attention rows; LoRA, QLoRA and full
fine-tuning; bf16 and fp16; two batch sizes; checkpointing on and off; sequence 1024-4096);
bench/memory_validation.py produced it.
"""

from __future__ import annotations

from .ir import Run
from .models import Dimensions, dimensions_of

GIB = 2**30
CUDA_CONTEXT_GIB = 0.6  # measured on an H100 (CUDA 13, torch 2.11): 0.60 GiB
ALLOCATOR_OVERHEAD = 0.10  # reserved / allocated: 1.01-1.60 measured, 1.10 median
_LINEAR_MODULES = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
# Stored activations per token per layer, in bytes, as (x hidden size, x intermediate size), with
# 16-bit autocast and SDPA attention. LoRA adds its dropout copies of each adapted module's input;
# QLoRA's 4-bit matmuls keep more of the MLP.
_ACTIVATIONS = {"full": (22.7, 7.4), "lora": (31.1, 9.1), "qlora": (31.1, 15.5)}
# Logits: 16-bit logits, their fp32 upcast, log-softmax and its gradient: bytes per token per
# vocabulary entry (measured 12.4-13.4 with checkpointing).
_LOGIT_BYTES = 12.4


class Estimate:
    """A per-GPU estimate: (component, GiB) rows and what was assumed."""

    def __init__(self, model: str):
        self.model = model
        self.components: list[tuple[str, float]] = []  # (component, GiB)
        self.assumptions: list[str] = []
        self.sharded_unknown = False  # ZeRO/FSDP without a world size: the per-GPU share is unknown
        self.unmodeled: str | None = None  # what the estimate cannot account for (a memory-efficient optimizer)
        # Batches may be shorter than the sequence length used (no packing, or a guessed length):
        # the activation and logits rows are then an upper bound.
        self.tokens_upper_bound = False
        self.certain_gib = 0.0  # the peak without activations and logits: needed whatever the batches hold

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
    embedding_params = dims.vocab * dims.hidden * (1 if dims.tied_embeddings else 2)
    bits = run.value("quantization.bits")
    modes = {config.mode() for config in run.configs} - {None, "fp32"}
    automatic = any("auto" in (config.value("precision.fp16"), config.value("precision.bf16")) for config in run.configs)
    load_dtype = run.value("model.load_dtype")
    if load_dtype == "float32":
        weight_bytes = 4  # mixed precision over fp32 weights: autocast computes in 16-bit
    elif modes or automatic or load_dtype in ("float16", "bfloat16", "auto"):
        weight_bytes = 2  # "auto" precision always resolves to bf16 or fp16
    else:
        weight_bytes = 4
    stage = run.value("parallel.zero_stage") or 0
    kind = run.value("adapter.kind")
    full = kind is None and run.first("adapter.kind") is not None
    method = "full" if full else "qlora" if bits == 4 else "lora"

    # Weights.
    if bits == 4:
        quantized = params - embedding_params
        double_quant = run.value("quantization.double_quant") is not False
        constants = quantized * (0.127 if double_quant else 0.5) / 8
        result.add("weights (4-bit NF4 + block constants)", quantized * 0.5 + constants)
        result.add("embeddings and lm_head (fp32, prepare_model_for_kbit_training)", embedding_params * 4)
    elif bits == 8:
        result.add("weights (8-bit)", (params - embedding_params) * 1 + embedding_params * 2)
    else:
        result.add(f"weights ({8 * weight_bytes}-bit)", params * weight_bytes)

    # Trainable parameters: the adapter, or everything.
    if full:
        layers = run.value("adapter.trainable_layers")  # freeze tuning: only the last N layers train
        share = min(layers, dims.layers) / dims.layers if isinstance(layers, int) and layers > 0 else 1.0
        trainable = params * share if share == 1.0 else (params - embedding_params) * share
        gradient_bytes = 2 if stage >= 1 and weight_bytes == 2 else weight_bytes
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

    # Optimizer states, partitioned by ZeRO and moved off by offload.
    if (stage >= 1 or run.value("parallel.fsdp") is True) and world_size is None:
        result.sharded_unknown = True
        result.assumptions.append("sharded (ZeRO/FSDP) with the world size unknown: computed for 1 GPU; "
                                  "give --world-size for a per-GPU figure")
    optimizer = str(run.value("optimizer.name") or "adamw").lower()
    efficient = run.value("optimizer.memory_efficient") or next(
        (name for name in ("galore", "apollo", "lomo", "badam") if name in optimizer), None)
    if efficient:
        result.unmodeled = str(efficient)
        result.assumptions.append(f"{efficient} keeps less optimizer state (or trains fewer parameters at a time) "
                                  "than computed here: the estimate is an upper bound")
    if "8bit" in optimizer:
        state_bytes = 2
    elif stage >= 1:
        state_bytes = 8 + (4 if full and weight_bytes == 2 else 0)  # DeepSpeed: fp32 moments (+ master weights)
    else:
        moments = 1 if "sgd" in optimizer or "adafactor" in optimizer else 2
        state_bytes = moments * (weight_bytes if full else 4)  # torch keeps them in the parameter's dtype
    optimizer_gpu = state_bytes * trainable
    if run.value("parallel.offload_optimizer") is True:
        optimizer_gpu = 0
    elif stage >= 1:
        optimizer_gpu /= world
    result.add(f"optimizer states ({optimizer}{', ZeRO-%d' % stage if stage else ''})", optimizer_gpu)
    if stage == 3 and full:
        weights = result.components[0]
        result.components[0] = (weights[0] + f" / {world} GPUs (ZeRO-3)", weights[1] / world)
    gradients = trainable * gradient_bytes / (world if stage >= 2 else 1)

    # Activations and logits.
    micro = run.value("batch.micro")
    if not isinstance(micro, int) or isinstance(micro, bool):
        result.assumptions.append(f"micro batch {micro!r}: assumed 1")
        micro = 1
    sequence = run.value("sequence.max_length")
    if not isinstance(sequence, int) or isinstance(sequence, bool):
        result.assumptions.append("sequence length not given: assumed 2048")
        sequence = 2048
        result.tokens_upper_bound = True
    elif run.value("sequence.packing") is not True:
        result.assumptions.append(f"no packing: batches are as long as their longest sample, at most {sequence} "
                                  "tokens; activations and logits are for full-length batches")
        result.tokens_upper_bound = True
    tokens = micro * sequence
    per_hidden, per_intermediate = _ACTIVATIONS[method]
    per_layer = tokens * (per_hidden * dims.hidden + per_intermediate * dims.intermediate)
    if run.value("attention.implementation") == "eager":
        per_layer += 5 * dims.heads * sequence * tokens  # the attention scores SDPA never stores
    checkpointing = run.value("memory.gradient_checkpointing")
    if checkpointing is None:
        # Unknown: assume the cheaper case, so that an error means "does not fit" for certain.
        result.assumptions.append("gradient checkpointing not given: assumed on")
    # The residual stream is fp32 over fp32 weights, and in QLoRA (prepare_model_for_kbit_training
    # casts the norms to fp32).
    residual_bytes = 4 if weight_bytes == 4 or method == "qlora" else 2
    if checkpointing is not False:
        activations = ("activations (checkpointed: layer inputs + one layer)",
                       dims.layers * tokens * dims.hidden * residual_bytes + per_layer)
    else:
        activations = ("activations", dims.layers * per_layer)
    backward_start = [activations]
    if run.value("memory.fused_cross_entropy") is True:
        result.assumptions.append("fused linear cross entropy: the logits are never materialised")
    else:
        backward_start.append(("logits and loss (16-bit logits, fp32 log-softmax and gradient)",
                               tokens * dims.vocab * _LOGIT_BYTES))
    per_token = len(backward_start)
    if weight_bytes == 4 and modes | ({"fp16"} if automatic else set()):
        backward_start.append(("16-bit weight copies (autocast cache)", params * 2))
    elif method == "qlora":
        backward_start.append(("16-bit copy of the fp32 lm_head (autocast cache)", dims.vocab * dims.hidden * 2))
    if full:
        backward_start.append(("first gradients (lm_head)", dims.vocab * dims.hidden * gradient_bytes))
        backward_end = [("gradients", gradients),
                        ("embedding gradient temporaries", 2 * dims.vocab * dims.hidden * gradient_bytes)]
    else:
        backward_start.append(("gradients", gradients))
        backward_end = []
    if sum(size for _, size in backward_end) > sum(size for _, size in backward_start):
        result.assumptions.append("peak at the optimizer step: every gradient alive, activations freed")
        chosen_phase = backward_end
    else:
        chosen_phase = backward_start
        if backward_end:
            result.assumptions.append("peak at the start of the backward pass: activations and logits alive, "
                                      f"gradients ({gradients / GIB:.2f} GiB) not yet")
    persistent = sum(gib for _, gib in result.components) * GIB
    for component, size in chosen_phase:
        result.add(component, size)

    result.add("CUDA context", CUDA_CONTEXT_GIB * GIB)
    without_tokens = max(sum(size for _, size in backward_start[per_token:]), sum(size for _, size in backward_end))
    result.certain_gib = (persistent + without_tokens + CUDA_CONTEXT_GIB * GIB) * (1 + ALLOCATOR_OVERHEAD) / GIB
    result.components.append((f"allocator overhead ({ALLOCATOR_OVERHEAD:.0%})", result.total_gib * ALLOCATOR_OVERHEAD))
    return result
