"""Will the run fit: the memory estimate against each target's memory."""

from __future__ import annotations

from linter.fixes import Applicability
from linter.registry import ERROR, Rule, register


@register
class EstimatedOom(Rule):
    """MEM001 estimated-oom

    ## What it does
    Estimates the per-GPU peak memory of the run from its config — weights by load precision and
    quantization, trainable parameters, gradients and optimizer states (partitioned by ZeRO stage
    and world size, or offloaded), activations by micro batch, sequence length and gradient
    checkpointing, logits, CUDA context and allocator overhead — and compares it with each
    target's memory: an error above 100 %, a warning above 90 %. `trainlint estimate` prints the
    breakdown. Validated against measured peaks on an H100 (bench/memory_validation.md: 72 runs,
    all within ±20 %, mean error 4 %).

    It judges only what is certain: without packing a batch is as long as its longest sample, so
    then only the weights, gradients and optimizer states are compared (activations are shown by
    `trainlint estimate`). It stays silent for sharded runs without a world size, memory-efficient
    optimizers it does not model (GaLore, APOLLO, BAdam, LISA, Adam-mini, Muon) and configs that do
    not train.

    ## Why is this bad?
    An out-of-memory error comes after the queue wait, the download and the model load — often
    only at the first backward pass or the first long batch.

    ## Example
        base_model: meta-llama/Llama-2-7b-hf
        fp16: true
        micro_batch_size: 1        # full fine-tune with AdamW on a 24 GB A10G
    Use instead:
        adapter: qlora
        load_in_4bit: true
        optimizer: paged_adamw_8bit

    ## Fix safety
    Display-only: fitting a run trades memory against speed or quality (QLoRA, ZeRO, offload,
    smaller batches, checkpointing), which is the author's call.

    ## References
    - deepspeed/runtime/zero/stage_1_and_2.py: estimate_zero2_model_states_mem_needs
    - deepspeed/runtime/zero/stage3.py: estimate_zero3_model_states_mem_needs
    - Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer Models"
    - linter/memory.py (the formulas and their assumptions)
    - bench/memory_validation.md (measured against torch.cuda.max_memory_reserved on an H100)
    """

    code = "MEM001"
    name = "estimated-oom"
    severity = ERROR
    fix_applicability = Applicability.DISPLAY_ONLY
    needs_targets = True

    def check(self, run, context):
        from linter.memory import estimate
        from linter.report import display_path  # the hint must work from where trainlint ran

        if run.value("training.enabled") is False:
            return  # a prediction or evaluation config
        result = estimate(run, context.world_size)
        if result is None or result.sharded_unknown or result.unmodeled:
            return  # no per-GPU figure to judge: `trainlint estimate --world-size N` gives one
        # Unpacked batches are as long as their longest sample: only what every batch needs is certain.
        total = result.certain_gib if result.tokens_upper_bound else result.total_gib
        over = [t for t in context.targets if t.memory_gib and total > t.memory_gib]
        near = [t for t in context.targets if t.memory_gib and t not in over and total > 0.9 * t.memory_gib]
        config = run.primary
        biggest = max(result.components, key=lambda component: component[1])
        for targets, severity, verdict in ((over, ERROR, "does not fit"), (near, "warning", "is above 90% of")):
            if not targets:
                continue
            finding = self.finding(
                config, config.span("model.name"),
                f"{'weights, gradients and optimizer states alone need' if result.tokens_upper_bound else 'estimated peak'} "
                f"{total:.1f} GiB per GPU, which {verdict} {', '.join(f'{t.name} ({t.memory_gib:g} GiB)' for t in targets)}; "
                f"largest part: {biggest[0]} {biggest[1]:.1f} GiB (`trainlint estimate {display_path(config.path)}` for the breakdown)",
                targets=targets, fix=self.fix("Reduce memory: QLoRA, ZeRO/offload, a smaller batch or checkpointing"))
            finding.severity = severity
            yield finding
