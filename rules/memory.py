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
    breakdown. Off by default until validated on a GPU: `--extend-select MEM001`.

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
    """

    code = "MEM001"
    name = "estimated-oom"
    severity = ERROR
    # Off until the estimator is validated against measured peaks on a GPU: on the corpus it still
    # over-estimates memory-efficient optimizers (GaLore, APOLLO, BAdam, LISA) and runs whose world
    # size is unknown. `--extend-select MEM001` turns it on; `trainlint estimate` always works.
    default_enabled = False
    fix_applicability = Applicability.DISPLAY_ONLY
    needs_targets = True

    def check(self, run, context):
        from linter.memory import estimate

        result = estimate(run, context.world_size)
        if result is None or result.sharded_unknown:
            return  # no per-GPU figure to judge: `trainlint estimate --world-size N` gives one
        total = result.total_gib
        over = [t for t in context.targets if t.memory_gib and total > t.memory_gib]
        near = [t for t in context.targets if t.memory_gib and t not in over and total > 0.9 * t.memory_gib]
        config = run.primary
        biggest = max(result.components, key=lambda component: component[1])
        for targets, severity, verdict in ((over, ERROR, "does not fit"), (near, "warning", "is above 90% of")):
            if not targets:
                continue
            finding = self.finding(
                config, config.span("model.name"),
                f"estimated peak {total:.1f} GiB per GPU {verdict} {', '.join(f'{t.name} ({t.memory_gib:g} GiB)' for t in targets)}; "
                f"largest part: {biggest[0]} {biggest[1]:.1f} GiB (`trainlint estimate {config.path.name}` for the breakdown)",
                targets=targets, fix=self.fix("Reduce memory: QLoRA, ZeRO/offload, a smaller batch or checkpointing"))
            finding.severity = severity
            yield finding
