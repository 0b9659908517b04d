"""Data-parallel settings against the model's memory savers (issue 16 recall)."""

from __future__ import annotations

from linter.registry import ERROR, Rule, register

from .facts import world_size


def _sharded(run) -> bool:
    """DeepSpeed or FSDP wraps the model instead of DDP: find_unused_parameters is not used."""
    return any(config.get("parallel.zero_stage") is not None or config.value("parallel.fsdp") is True
               or any(link.kind == "deepspeed" for link in config.links) for config in run.configs)


@register
class DdpFindUnusedWithCheckpointing(Rule):
    """TRN007 ddp-find-unused-with-checkpointing

    ## What it does
    Flags `ddp_find_unused_parameters: true` together with gradient checkpointing and
    `gradient_checkpointing_kwargs: {use_reentrant: true}` in a run on more than one GPU
    (`--world-size`, or the launcher config's `num_processes`) that neither DeepSpeed nor FSDP
    wraps. Silent when the number of GPUs is unknown.

    ## Why is this bad?
    Reentrant checkpointing runs the checkpointed layers' forward without autograd, so DDP's
    unused-parameter search marks their weights unused and ready; the recomputation in the
    backward pass then produces their gradients a second time, and DDP stops on the first
    backward: "Expected to mark a variable ready only once ... Parameter at index N has been
    marked as ready twice". The Trainer turns the search off by itself when checkpointing is on
    (`find_unused_parameters = not model.is_gradient_checkpointing`), but a written `true` wins.

    ## Example
    `trl.yaml`, on 2 GPUs:
        model_name_or_path: meta-llama/Llama-2-7b-hf
        dataset_name: trl-lib/Capybara
        output_dir: out
        use_peft: true
        gradient_checkpointing: true
        gradient_checkpointing_kwargs:
          use_reentrant: true
        ddp_find_unused_parameters: true
    Use instead:
        model_name_or_path: meta-llama/Llama-2-7b-hf
        dataset_name: trl-lib/Capybara
        output_dir: out
        use_peft: true
        gradient_checkpointing: true
        gradient_checkpointing_kwargs:
          use_reentrant: true
        ddp_find_unused_parameters: false

    ## Fix safety
    No fix: `false` is right when every trainable parameter is used in each step, which only the
    author knows; `use_reentrant: false` is the other remedy.

    ## References
    - transformers/trainer.py _wrap_model (ddp_find_unused_parameters; unset: not
      is_gradient_checkpointing, PR #13961); modeling_utils.py gradient_checkpointing_enable
    - torch/nn/parallel/distributed.py (find_unused_parameters with reentrant checkpoint: "marked as ready twice")
    - huggingface/peft#313; huggingface/accelerate#2017; huggingface/transformers#23018
    """

    code = "TRN007"
    name = "ddp-find-unused-with-checkpointing"
    severity = ERROR

    def check(self, run, context):
        world = world_size(run, context)
        if world is None or world < 2 or _sharded(run):
            return
        for config in run.configs:
            find_unused = config.get("parallel.ddp_find_unused")
            if find_unused is None or find_unused.value is not True or config.value("training.enabled") is False:
                continue
            if (config.value("memory.gradient_checkpointing") is not True
                    or config.value("memory.checkpointing_reentrant") is not True):
                continue
            yield self.finding(
                config, find_unused.span,
                f"ddp_find_unused_parameters true with reentrant gradient checkpointing on {world} GPUs: DDP marks "
                "the checkpointed weights ready twice and stops at the first backward (\"Expected to mark a variable "
                "ready only once\"); set it to false, or use_reentrant to false",
            )
