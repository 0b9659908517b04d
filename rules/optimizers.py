"""Optimizers against the sharding that hands them their parameters (issue 16 recall)."""

from __future__ import annotations

from linter.registry import ERROR, Rule, register


# Optimizers that project or reshape each weight's gradient themselves and need the parameters as
# the model holds them; DeepSpeed hands the optimizer flattened partitions instead.
_NEEDS_UNFLATTENED_PARAMETERS = {"GaLore", "APOLLO"}


@register
class GaloreWithDeepspeed(Rule):
    """TRN006 galore-with-deepspeed

    ## What it does
    Flags the GaLore or APOLLO optimizer (`use_galore`, `use_apollo`) in a config that also
    names a DeepSpeed config (`deepspeed:`), whatever its ZeRO stage.

    ## Why is this bad?
    GaLore and APOLLO project each weight matrix's gradient to a low rank, so they need the
    2-D parameters as the model holds them; DeepSpeed gives the optimizer flattened fp32
    partitions. The trainer refuses the pair before training ("GaLore and APOLLO are
    incompatible with DeepSpeed yet", since v0.6.0 for GaLore; before that the run crashed in
    the optimizer, LLaMA-Factory#2777).

    ## Example
    `llamafactory.yaml`:
        model_name_or_path: meta-llama/Meta-Llama-3-8B-Instruct
        stage: sft
        do_train: true
        finetuning_type: full
        use_galore: true
        dataset: alpaca_en_demo
        template: llama3
        output_dir: out
        deepspeed: ds_z2.json
    `ds_z2.json`:
        {"train_micro_batch_size_per_gpu": "auto", "zero_optimization": {"stage": 2}}
    Use instead (no DeepSpeed; GaLore already cuts the optimizer memory):
        model_name_or_path: meta-llama/Meta-Llama-3-8B-Instruct
        stage: sft
        do_train: true
        finetuning_type: full
        use_galore: true
        dataset: alpaca_en_demo
        template: llama3
        output_dir: out

    ## Fix safety
    No fix: dropping DeepSpeed or GaLore changes the memory the run needs; the author chooses.

    ## References
    - llamafactory/hparams/parser.py (_parse_train_args: `training_args.deepspeed is not None and
      (use_galore or use_apollo)` raises; GaLore since v0.6.0, commit ebd6bc260; APOLLO since
      its introduction, commit c2120432d)
    - hiyouga/LLaMA-Factory#2777; jiaweizzhao/GaLore#2
    """

    code = "TRN006"
    name = "galore-with-deepspeed"
    severity = ERROR

    def check(self, run, context):
        for config in run.configs:
            optimizer = config.get("optimizer.memory_efficient")
            if optimizer is None or optimizer.value not in _NEEDS_UNFLATTENED_PARAMETERS:
                continue
            # The parser checks before it looks at do_train: predict-only configs are refused too.
            link = next((link for link in config.links if link.kind == "deepspeed"), None)
            if link is None:
                continue
            yield self.finding(
                config, optimizer.span,
                f"{optimizer.value} with DeepSpeed ({link.text}): the optimizer needs unflattened weights and "
                "the trainer refuses the pair at launch; drop the deepspeed config or the "
                f"{optimizer.value} optimizer",
            )
