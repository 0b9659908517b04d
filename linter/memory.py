"""Per-GPU peak memory of a training run, from its config alone (MEM001, `trainlint estimate`).

The peak is the larger of two moments of a training step, on top of what lives all along
(weights, adapter weights, optimizer states):
- backward start: every stored activation, the logits and their gradients, and (full fine-tune)
  the first gradient, of lm_head;
- backward end / optimizer step: every gradient, plus the embedding's gradient temporaries.

Model states (weights, gradients, optimizer states: `model_states_gib`) follow, per sharding:
- DeepSpeed ZeRO, DeepSpeed's own estimators exactly (deepspeedai/DeepSpeed @edaa722,
  deepspeed/runtime/zero/stage_1_and_2.py estimate_zero2_model_states_mem_needs: 2P + 18P/N bytes,
  "18 = 2_grads_16bit + 4_grads_32bit + 4_params_32bit + 8_optimizer_states_32bit", 2P with
  optimizer offload; stage3.py estimate_zero3_model_states_mem_needs: 4L + 18P/N, 4L + 2P/N with
  optimizer offload, 4L with optimizer and parameter offload, L = the largest module's own
  parameters). Stage 1 partitions only the fp32 states (4P + 16P/N); stage 0 is stage 1 on one GPU.
  ZeRO-3 partitions frozen and quantized weights too (zero.Init partitions every parameter).
- FSDP: accelerate upcasts trainable parameters to fp32 when mixed precision is on (FSDP1:
  accelerate/accelerator.py prepare_model "Upcasted low precision parameters"; FSDP2:
  accelerate/utils/fsdp_utils.py fsdp2_prepare_model), so full shard holds 16P/N (fp32 weights,
  fp32 gradients, fp32 Adam moments) plus the gathered 16-bit units (the current one and the one
  prefetched); shard-grad-op (FSDP2 reshard_after_forward: false) also keeps the gathered 16-bit
  weights from forward to backward; no-shard is DDP; CPU offload keeps only gathered units on the
  GPU (torch/distributed/fsdp/api.py ShardingStrategy, CPUOffload).
- Otherwise torch's AdamW keeps its moments in the parameter's dtype.
bitsandbytes NF4 stores 0.5 bytes per weight plus block constants (fp32 absmax per 64 weights,
0.127 bits per weight with double quantization); what stays unquantized (embeddings, norms) is
cast to fp32 by peft's prepare_model_for_kbit_training.

The per-token coefficients below were measured, not derived: bench/memory_validation.md compares
this estimator with torch.cuda.max_memory_reserved() for 47 Llama-3.2 1B/3B runs on an H100
(LoRA, QLoRA and full fine-tuning; bf16 and fp16; micro batch 1 and 4; checkpointing on and off;
SDPA attention; sequence length 2048) and checked on held-out shapes; bench/memory_validation.py
produced it. Nothing at multi-GPU scale has been measured: the sharded rows are DeepSpeed's and
torch's arithmetic, checked in tests/test_memory.py.
"""

from __future__ import annotations

import re

from .ir import Run
from .models import Dimensions, dimensions_of

GIB = 2**30
CUDA_CONTEXT_GIB = 0.6  # measured on an H100 (CUDA 13, torch 2.11): 0.60 GiB
# reserved / allocated: 1.01-1.60 measured, 1.10 median. Charged on what is allocated and freed
# during a step (activations, logits, gradients, temporaries): weights and optimizer states are
# allocated once, in blocks the caching allocator fills exactly.
ALLOCATOR_OVERHEAD = 0.10
_LINEAR_MODULES = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
# Stored activations per token per layer, in bytes, as (x hidden size, x intermediate size), with
# 16-bit autocast and SDPA attention. LoRA adds its dropout copies of each adapted module's input;
# QLoRA's 4-bit matmuls keep more of the MLP.
_ACTIVATIONS = {"full": (22.7, 7.4), "lora": (31.1, 9.1), "qlora": (31.1, 15.5)}
# Logits: 16-bit logits, their fp32 upcast, log-softmax and its gradient: bytes per token per
# vocabulary entry (measured 12.4-13.4 with checkpointing).
_LOGIT_BYTES = 12.4
TOKEN_ERROR = 0.20  # the validated error band of the measured per-token rows (bench/memory_validation.md)
# Component kinds: "state" lives all step long, allocated once (no allocator overhead);
# "tokens" scales with the batch's tokens (uncertain without packing); "step" is transient;
# "paged" lives in unified memory that bitsandbytes pages out to CPU RAM when the GPU is full.
_STATE, _TOKENS, _STEP, _PAGED = "state", "tokens", "step", "paged"


class Estimate:
    """A per-GPU estimate: (component, GiB) rows and what was assumed. A plain class: this module
    loads on every lint (MEM001), and each dataclass costs about a millisecond to create."""

    def __init__(self, model: str):
        self.model = model
        self.components: list[tuple[str, float]] = []  # (component, GiB)
        self.kinds: list[str] = []  # one per component: _STATE, _TOKENS, _STEP or _PAGED
        self.assumptions: list[str] = []
        self.sharded_unknown = False  # ZeRO/FSDP without a world size: the per-GPU share is unknown
        self.unmodeled: str | None = None  # what the estimate cannot account for (a memory-efficient optimizer)
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

    @property
    def total_gib(self) -> float:
        return sum(gib for _, gib in self.components)


    @property
    def resident_gib(self) -> float:
        """The total less what bitsandbytes can page out to CPU RAM (paged optimizer states)."""
        return sum(gib for (_, gib), kind in zip(self.components, self.kinds) if kind != _PAGED)

    def judged(self) -> tuple[float, list[tuple[str, float]]]:
        """What MEM001 compares with a GPU's memory, and the components it is made of: without
        packing, only what every batch needs; never the pageable optimizer states."""
        skip = {_PAGED} | ({_TOKENS} if self.tokens_upper_bound else set())
        parts = [row for row, kind in zip(self.components, self.kinds) if kind not in skip]
        return (self.certain_resident_gib if self.tokens_upper_bound else self.resident_gib), parts

    def lower_bound_gib(self) -> float:
        """The judged figure with the measured (token-dependent) rows at the low end of their
        validated error band: bench/memory_validation.md finds the per-token coefficients within
        +-20 %; weights, gradients and optimizer states are arithmetic."""
        total, parts = self.judged()
        measured = sum(gib for (name, gib), kind in zip(self.components, self.kinds)
                       if kind == _TOKENS and (name, gib) in parts)
        return total - TOKEN_ERROR * measured

    def add(self, name: str, bytes_: float, kind: str = _STATE) -> None:
        self.components.append((name, bytes_ / GIB))
        self.kinds.append(kind)


def _linear_shapes(dims: Dimensions) -> dict[str, int]:
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


def _all_linear(dims: Dimensions) -> int:
    """in + out of every linear module of a layer (PEFT "all-linear", Axolotl lora_target_linear:
    every nn.Linear but the output layer; the MoE router included)."""
    shapes = _linear_shapes(dims)
    attention = sum(shapes[name] for name in ("q_proj", "k_proj", "v_proj", "o_proj"))
    if dims.experts:
        shared = 3 * (dims.hidden + dims.shared_intermediate) if dims.shared_intermediate else 0
        return attention + 3 * shapes["w1"] + (dims.hidden + dims.experts) + shared
    return attention + 3 * shapes["gate_proj"]


def _world(run: Run, world_size: int | None) -> int | None:
    """--world-size, else accelerate's num_processes (the total number of processes across all
    machines: accelerate/commands/launch.py "--num_processes ... The total number of processes to
    be launched in parallel"; utils/launch.py splits it by num_machines)."""
    if world_size:
        return world_size
    written = run.value("batch.world_size")
    return written if isinstance(written, int) and not isinstance(written, bool) and written > 0 else None


def _fsdp_strategy(run: Run) -> str | None:
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


_LAUNCH_COMMENT = re.compile(r"#.*\b(?:accelerate launch|torchrun|deepspeed)\b.*?--(?:config_file|deepspeed)[ =](\S+)")


def _launcher_comment(run: Run) -> str | None:
    """The sharding launcher config a comment of the file runs it with (LLaMA-Factory's
    examples/ascend/*_fsdp2.yaml start "# accelerate launch --config_file
    examples/accelerate/fsdp2_config.yaml src/train.py ..."), when that config's name says FSDP or
    ZeRO. The file alone is then not the whole run: a comment is the author's word on how it runs."""
    document = getattr(run.primary, "document", None)
    text = document.source.text if document is not None else ""
    if "#" not in text:
        return None
    for line in text.splitlines():
        found = _LAUNCH_COMMENT.search(line)
        if found and re.search(r"fsdp|zero|ds_z|deepspeed", found.group(1), re.I):
            return found.group(1)
    # A multi-line command: the --config_file on a continuation line of a commented launch.
    commented = "\n".join(line for line in text.splitlines() if line.lstrip().startswith("#"))
    if re.search(r"accelerate launch", commented):
        found = re.search(r"--config_file[ =](\S+)", commented)
        if found and re.search(r"fsdp|zero|ds_z|deepspeed", found.group(1), re.I):
            return found.group(1)
    return None


def estimate(run: Run, world_size: int | None = None) -> Estimate | None:
    """The per-GPU peak estimate, or None when the model's dimensions are unknown."""
    name = run.value("model.name")
    dims = dimensions_of(name, run.primary.path.parent) if isinstance(name, str) else None
    if dims is None:
        return None
    result = Estimate(name)
    backend = run.value("training.remote_backend")
    if isinstance(backend, str) and backend:
        # Axolotl's hatchery plugin hands training to a remote service (backend: tinker).
        result.remote = f"training runs on the {backend} service, not on this GPU"
        result.assumptions.append(result.remote)
    unmodeled = run.value("parallel.unmodeled")
    if isinstance(unmodeled, str) and unmodeled:
        result.unknown_reason = f"{unmodeled} places the model in a way the estimate does not model"
        result.assumptions.append(result.unknown_reason + ": computed as if on one GPU")
    world = _world(run, world_size)
    launcher = _launcher_comment(run) if world is None else None
    result.world_size = world or 1
    gpus = world or 1
    framework = run.primary.framework
    params = dims.params_b * 1e9
    if dims.experts:
        result.assumptions.append(f"mixture of experts: all {dims.params_b:g}B parameters resident, "
                                  f"{dims.active_params_b:.1f}B active per token ({dims.active_experts} of "
                                  f"{dims.experts} experts: activations scale with those)")
    embedding_params = dims.vocab * dims.hidden * (1 if dims.tied_embeddings else 2)
    bits = run.value("quantization.bits")
    modes = {config.mode() for config in run.configs} - {None, "fp32"}
    automatic = any("auto" in (config.value("precision.fp16"), config.value("precision.bf16")) for config in run.configs)
    load_dtype = run.value("model.load_dtype") or run.value("model.default_dtype")
    if load_dtype == "float32":
        weight_bytes = 4  # mixed precision over fp32 weights: autocast computes in 16-bit
    elif modes or automatic or load_dtype in ("float16", "bfloat16", "auto"):
        weight_bytes = 2  # "auto" precision always resolves to bf16 or fp16
    elif framework == "llamafactory":
        # LLaMA-Factory loads in bf16, else fp16, whatever bf16/fp16 say (model/patcher.py:
        # compute_dtype = infer_optim_dtype(...), extras/misc.py: fp32 only without half support).
        weight_bytes = 2
        result.assumptions.append("LLaMA-Factory loads the model in bf16 or fp16 (infer_optim_dtype)")
    else:
        weight_bytes = 4
    if run.value("model.load_dtype"):
        result.assumptions.append(f"weights loaded as {run.value('model.load_dtype')} (the config's own setting)")
    elif run.value("model.default_dtype"):
        result.assumptions.append(f"weights loaded as {run.value('model.default_dtype')} (the launcher's default: the config names no dtype)")
    elif framework != "llamafactory":
        result.assumptions.append(f"weights loaded in {8 * weight_bytes}-bit (no load dtype given: "
                                  + ("16-bit with mixed precision on)" if weight_bytes == 2 else "fp32, from_pretrained's default)"))
    stage = run.value("parallel.zero_stage")
    deepspeed = isinstance(stage, int) and not isinstance(stage, bool)
    stage = stage if deepspeed else 0
    fsdp = None if deepspeed else _fsdp_strategy(run)
    offload_optimizer = deepspeed and stage >= 1 and run.value("parallel.offload_optimizer") is True
    offload_param = (deepspeed and stage == 3 or fsdp is not None) and run.value("parallel.offload_param") is True
    kind = run.value("adapter.kind")
    full = kind is None and run.first("adapter.kind") is not None
    if kind is None and run.first("adapter.kind") is None and framework == "hf" and not run.value("quantization.bits"):
        # A TrainingArguments / TRL YAML with no PEFT config trains every parameter (Trainer and
        # SFTTrainer wrap the model in PEFT only when given a peft_config: trl/scripts/sft.py
        # get_peft_config returns None unless use_peft).
        full = True
        result.assumptions.append("no adapter configured: a full fine-tune (every parameter trains)")
    elif full and framework == "hf":
        result.assumptions.append("no adapter configured (use_peft not set): a full fine-tune")
    method = "full" if full else "qlora" if bits == 4 else "lora"
    sharded = (deepspeed and stage >= 1) or fsdp not in (None, "NO_SHARD")
    if launcher and not sharded:
        result.sharded_unknown = True
        result.unknown_reason = (f"its own comment launches it with {launcher}, which shards it over a number of GPUs "
                                 "this file does not give")
        result.assumptions.append(result.unknown_reason + ": computed for 1 GPU without sharding")
    if sharded and world is None:
        result.sharded_unknown = True
        result.unknown_reason = "sharded (ZeRO/FSDP) with the world size unknown"
        result.assumptions.append("sharded (ZeRO/FSDP) with the world size unknown: computed for 1 GPU; "
                                  "give --world-size for a per-GPU figure")
    if deepspeed:
        result.assumptions.append(f"DeepSpeed ZeRO-{stage} on {gpus} GPU(s)"
                                  + (", optimizer offloaded" if offload_optimizer else "")
                                  + (", parameters offloaded" if offload_param else ""))
    elif fsdp:
        result.assumptions.append(f"FSDP {fsdp.lower()} on {gpus} GPU(s)" + (", CPU offload" if offload_param else ""))
        if fsdp == "HYBRID_SHARD":
            result.assumptions.append("hybrid shard splits the model within a node only: computed as if over every GPU "
                                      "(a lower bound)")
    # LLaMA-Factory casts trainable parameters to fp32 unless pure_bf16, BAdam, or (unquantized)
    # ZeRO-3 (src/llamafactory/model/adapter.py init_adapter: cast_trainable_params_to_fp32).
    llamafactory_upcast = (framework == "llamafactory" and load_dtype != "bfloat16"
                           and not (deepspeed and stage == 3 and not bits)
                           and "badam" not in str(run.value("optimizer.memory_efficient") or "").lower())
    if llamafactory_upcast and full:
        result.assumptions.append("LLaMA-Factory upcasts the trainable parameters to fp32 (no pure_bf16)")

    # Which parameters train, and how many.
    if full:
        layers = run.value("adapter.trainable_layers")  # freeze tuning: only the last N layers train
        share = min(layers, dims.layers) / dims.layers if isinstance(layers, int) and layers > 0 else 1.0
        trainable = params * share if share == 1.0 else (params - embedding_params) * share
        frozen = params - trainable
    else:
        if kind is None:
            result.assumptions.append("no adapter information: assumed LoRA")
        rank = run.value("adapter.r") or 8
        targets = run.value("adapter.target_modules")
        shapes = _linear_shapes(dims)
        if isinstance(targets, str):
            targets = [targets]
        if run.value("adapter.target_linear") is True or (targets and targets[0] in ("all-linear", "all")):
            width = _all_linear(dims)  # PEFT / LLaMA-Factory / Axolotl spellings of "every linear"
        elif not targets:
            width = shapes["q_proj"] + shapes["v_proj"]
            result.assumptions.append("LoRA targets not given: assumed q_proj and v_proj")
        else:
            width = sum(shapes[t] for t in set(targets) if t in shapes)
        trainable = rank * width * dims.layers
        frozen = params

    # peft's prepare_model_for_kbit_training casts every unquantized weight (embeddings, lm_head,
    # norms) to fp32. Axolotl calls it for quantized adapters (src/axolotl/utils/models.py imports
    # and applies it); TRL's SFTTrainer no longer does (trl/trainer/sft_trainer.py casts only the
    # trainable parameters to bf16) and LLaMA-Factory never did (it upcasts norms only with
    # upcast_layernorm); for Ludwig, XTuner and Unsloth it is not verified here, so the smaller
    # 16-bit figure is used.
    kbit_fp32 = bits in (4, 8) and framework == "axolotl"
    if bits == 4 and not kbit_fp32:
        result.assumptions.append("embeddings and norms stay 16-bit (no prepare_model_for_kbit_training known for "
                                  f"{framework})")
    # Frozen weights: quantized, or in the load dtype; partitioned by ZeRO-3 and FSDP.
    frozen_share = gpus if (deepspeed and stage == 3) or fsdp in ("FULL_SHARD", "HYBRID_SHARD") else 1
    split = f" / {gpus} GPUs" if frozen_share > 1 else ""
    if offload_param:
        split = " (offloaded to CPU)"
    frozen_bytes = 0.0
    if frozen:
        if bits == 4:
            quantized = frozen - embedding_params
            double_quant = run.value("quantization.double_quant") is not False
            constants = quantized * (0.127 if double_quant else 0.5) / 8
            frozen_rows = [(f"weights (4-bit NF4 + block constants{split})", quantized * 0.5 + constants),
                           (f"embeddings and lm_head (fp32, prepare_model_for_kbit_training{split})", embedding_params * 4)
                           if kbit_fp32 else (f"embeddings and lm_head (16-bit{split})", embedding_params * 2)]
        elif bits == 8:
            frozen_rows = [(f"weights (8-bit{split})", (frozen - embedding_params) * 1 + embedding_params * 2)]
        else:
            frozen_weight_bytes = 2 if deepspeed and weight_bytes == 2 else weight_bytes
            frozen_rows = [(f"{'frozen ' if full else ''}weights ({8 * frozen_weight_bytes}-bit{split})",
                            frozen * frozen_weight_bytes)]
        for row, size in frozen_rows:
            size = 0.0 if offload_param else size / frozen_share
            frozen_bytes += size
            result.add(row, size)

    # Trainable parameters: weights, gradients and optimizer states by sharding.
    optimizer = str(run.value("optimizer.name") or "adamw").lower()
    efficient = run.value("optimizer.memory_efficient") or next(
        (name for name in ("galore", "apollo", "lomo", "badam") if name in optimizer), None)
    if efficient:
        result.unmodeled = str(efficient)
        result.unknown_reason = f"{efficient} keeps optimizer state the estimate does not model"
        result.assumptions.append(f"{efficient} keeps less optimizer state (or trains fewer parameters at a time) "
                                  "than computed here: the estimate is an upper bound")
    moments = 1 if "sgd" in optimizer or "adafactor" in optimizer else 2
    state_kind = _PAGED if "paged" in optimizer else _STATE
    if state_kind == _PAGED:
        result.assumptions.append("paged optimizer: bitsandbytes keeps its states in unified memory and pages "
                                  "them to CPU RAM when the GPU is full (not counted against the GPU's memory)")
    gather = 0.0
    if deepspeed:
        # DeepSpeed casts the module to 16-bit (bf16/fp16 enabled) and keeps fp32 master weights.
        half = weight_bytes == 2
        weight_b, grad16_b, grad32_b = (2, 2, 4) if half else (4, 4, 0)
        states_b = (12 if half else 8) if "8bit" not in optimizer else (6 if half else 2)
        if stage == 3:
            grad16_b = 0  # stage 3 reduce-scatters 16-bit gradients straight into the fp32 partition
        params_n = gpus if stage == 3 else 1
        grads_n = gpus if stage >= 2 else 1
        states_n = gpus if stage >= 1 else 1
        trainable_weights = 0.0 if offload_param else trainable * weight_b / params_n
        gradients = trainable * (grad16_b / grads_n + grad32_b / states_n)
        optimizer_gpu = trainable * states_b / states_n
        if offload_optimizer:
            gradients = optimizer_gpu = 0.0  # partitioned gradients go to pinned CPU buffers
        if stage == 3:
            gather = 4 * dims.largest_module_params  # DeepSpeed's largest_layer_memory
        optimizer_label = f"optimizer states ({optimizer}, fp32 master + moments, ZeRO-{stage}"
        optimizer_label += ", offloaded)" if offload_optimizer else ")"
    elif fsdp:
        precision = 4 if modes or automatic or weight_bytes == 4 else weight_bytes  # accelerate's fp32 upcast
        shard = 1 if fsdp == "NO_SHARD" else gpus
        trainable_weights = trainable * precision / shard
        gradients = trainable * precision / shard
        optimizer_gpu = trainable * (2 if "8bit" in optimizer else moments * precision) / shard
        if fsdp == "SHARD_GRAD_OP":
            trainable_weights += trainable * 2  # gathered 16-bit weights kept from forward to backward
        if offload_param:
            trainable_weights = gradients = optimizer_gpu = 0.0
        if fsdp != "NO_SHARD":
            gather = 2 * 2 * max(dims.layer_params(), dims.vocab * dims.hidden)  # current + prefetched unit, 16-bit
        optimizer_label = f"optimizer states ({optimizer}, FSDP {fsdp.lower()})"
    else:
        own_bytes = 4 if not full or llamafactory_upcast else weight_bytes  # PEFT keeps adapters in fp32
        trainable_weights = trainable * own_bytes
        gradients = trainable * own_bytes
        optimizer_gpu = trainable * (2 if "8bit" in optimizer else moments * own_bytes)  # torch: the param's dtype
        optimizer_label = f"optimizer states ({optimizer})"
    if full:
        label = "weights" if not frozen else "trainable weights"
        if offload_param:
            detail = "offloaded to CPU"
        elif deepspeed and stage == 3 or fsdp in ("FULL_SHARD", "HYBRID_SHARD", "SHARD_GRAD_OP"):
            detail = f"sharded over {gpus} GPUs"
        else:
            detail = f"{8 * round(trainable_weights / trainable) if trainable else 16}-bit"
        result.add(f"{label} ({detail})", trainable_weights)
    else:
        result.add("adapter weights (fp32)" if not deepspeed else "adapter weights", trainable_weights)
    if gather:
        result.add("gathered layer buffer (ZeRO-3 largest layer)" if deepspeed else "gathered FSDP units (16-bit)",
                   gather, _STEP)
    result.add(optimizer_label, optimizer_gpu, state_kind)
    result.model_states_gib = (frozen_bytes + trainable_weights + gradients + optimizer_gpu + gather) / GIB

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
    per_layer = tokens * (per_hidden * dims.hidden + per_intermediate * dims.mlp_width)
    if run.value("attention.implementation") == "eager":
        per_layer += 5 * dims.heads * sequence * tokens  # the attention scores SDPA never stores
    checkpointing = run.value("memory.gradient_checkpointing")
    if checkpointing is None:
        # Unknown: assume the cheaper case, so that an error means "does not fit" for certain.
        result.assumptions.append("gradient checkpointing not given: assumed on")
    # The residual stream is fp32 over fp32 weights, and in QLoRA (prepare_model_for_kbit_training
    # casts the norms to fp32).
    residual_bytes = 4 if weight_bytes == 4 or (method == "qlora" and kbit_fp32) else 2
    if run.value("memory.activation_offload") is True:
        result.assumptions.append("activation offloading: checkpointed layer inputs live in CPU RAM")
        activations = ("activations (offloaded checkpoints: one layer on the GPU)", per_layer)
    elif checkpointing is not False:
        activations = ("activations (checkpointed: layer inputs + one layer)",
                       dims.layers * tokens * dims.hidden * residual_bytes + per_layer)
    else:
        activations = ("activations", dims.layers * per_layer)
    backward_start = [activations]
    chunked = run.value("memory.chunked_loss")
    if run.value("memory.fused_cross_entropy") is True:
        result.assumptions.append("fused linear cross entropy: the logits are never materialised")
    elif isinstance(chunked, int) and not isinstance(chunked, bool) and chunked > 1:
        # Axolotl's chunked cross entropy (monkeypatch/loss/chunked.py) skips the fp32 upcast of the
        # whole logits: the 16-bit logits and their gradient stay whole (4 bytes), the fp32 upcast,
        # log-softmax and gradient go one chunk at a time.
        result.assumptions.append(f"chunked loss: the fp32 loss terms are computed in {chunked} chunks")
        backward_start.append((f"logits and loss (16-bit logits whole, fp32 terms in {chunked} chunks)",
                               tokens * dims.vocab * (4 + (_LOGIT_BYTES - 4) / chunked)))
    else:
        backward_start.append(("logits and loss (16-bit logits, fp32 log-softmax and gradient)",
                               tokens * dims.vocab * _LOGIT_BYTES))
    per_token = len(backward_start)
    if weight_bytes == 4 and modes | ({"fp16"} if automatic else set()) and not deepspeed:
        backward_start.append(("16-bit weight copies (autocast cache)", params * 2 / frozen_share))
    elif llamafactory_upcast and full and not deepspeed and not fsdp:
        backward_start.append(("16-bit weight copies (autocast cache)", trainable * 2))
    elif method == "qlora" and kbit_fp32:
        backward_start.append(("16-bit copy of the fp32 lm_head (autocast cache)", dims.vocab * dims.hidden * 2))
    grad_bytes_each = gradients / trainable if trainable else 0.0
    if full:
        backward_start.append(("first gradients (lm_head)", dims.vocab * dims.hidden * grad_bytes_each))
        backward_end = [("gradients", gradients),
                        ("embedding gradient temporaries", 2 * dims.vocab * dims.hidden * grad_bytes_each)]
    else:
        backward_start.append(("gradients", gradients))
        backward_end = []
    if sum(size for _, size in backward_end) > sum(size for _, size in backward_start):
        result.assumptions.append("peak at the optimizer step: every gradient alive, activations freed")
        chosen_phase, token_rows = backward_end, 0
    else:
        chosen_phase, token_rows = backward_start, per_token
        if backward_end:
            result.assumptions.append("peak at the start of the backward pass: activations and logits alive, "
                                      f"gradients ({gradients / GIB:.2f} GiB) not yet")
    for index, (component, size) in enumerate(chosen_phase):
        result.add(component, size, _TOKENS if index < token_rows else _STEP)
    result.add("CUDA context", CUDA_CONTEXT_GIB * GIB)
    transient = sum(gib for (_, gib), kind in zip(result.components, result.kinds) if kind in (_TOKENS, _STEP))
    result.add(f"allocator overhead ({ALLOCATOR_OVERHEAD:.0%} of transient memory)",
               transient * ALLOCATOR_OVERHEAD * GIB, _TOKENS)
    # Whatever the batches hold: the resident states, and the larger of the two moments without
    # their token rows (short batches can move the peak to the optimizer step).
    resident = sum(gib for (_, gib), kind in zip(result.components, result.kinds) if kind == _STATE)
    step = max(sum(size for _, size in backward_start[per_token:]), sum(size for _, size in backward_end)) / GIB
    result.certain_resident_gib = resident + (gather / GIB + step) * (1 + ALLOCATOR_OVERHEAD)
    return result


_BAR_WIDTH = 60
# Colours for the bar's parts (ANSI): weights, trainable states, optimizer, gathered buffers,
# activations and logits, gradients and temporaries, fixed costs.
_PALETTE = (("weights", "34", "W"), ("embeddings", "34", "W"), ("adapter", "36", "A"), ("trainable", "36", "A"),
            ("optimizer", "35", "O"), ("gather", "33", "B"), ("activations", "32", "a"), ("logits", "32", "l"),
            ("gradient", "31", "g"), ("16-bit", "33", "c"), ("CUDA", "90", "C"), ("allocator", "90", "."))


def memory_bars(components: list[tuple[str, float]], targets: list[tuple[str, float]], colour: bool) -> list[str]:
    """The breakdown as one horizontal bar per target, scaled to that target's memory (or to the
    estimate where it is larger, with a '|' where the memory ends); plain letters without colour."""
    lines = []
    total = sum(gib for _, gib in components)
    if total <= 0:
        return lines
    legend = {}
    for target, capacity in targets or [("estimate", total)]:
        scale = _BAR_WIDTH / max(capacity, total)
        cells, used = [], 0.0
        for name, gib in components:
            code, letter = next(((code, letter) for key, code, letter in _PALETTE if key in name), ("37", "#"))
            used += gib
            count = round(used * scale) - len(cells)
            cells.extend([(code, letter)] * max(count, 0))
            if count > 0:
                legend[letter] = next(key for key, c, l in _PALETTE if l == letter) if letter != "#" else "other"
        limit = round(capacity * scale)
        text = ""
        for index in range(max(len(cells), limit)):
            code, letter = cells[index] if index < len(cells) else ("", " ")
            if index == limit and limit < len(cells):
                text += "|"
            text += f"\x1b[{code}m{'█' if letter != ' ' else ' '}\x1b[0m" if colour and code else letter
        lines.append(f"  {target:>12} [{text}{']' if limit >= len(cells) else ''} {total:.1f} / {capacity:g} GiB")
    if not colour:
        lines.append("  key: " + ", ".join(f"{letter}={name}" for letter, name in legend.items()))
    return lines
