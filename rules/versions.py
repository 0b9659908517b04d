"""Framework releases with a known numeric bug for a setting the config uses."""

from __future__ import annotations

from linter.fixes import Applicability
from linter.registry import WARNING, Rule, register


@register
class UnslothFp16WithoutPacking(Rule):
    """VER001 unsloth-fp16-no-packing

    ## What it does
    Flags an Unsloth run in fp16 with packing off on an Unsloth release older than 2024.11.2,
    the first PyPI release with the fix. The version comes from an exact pin near the script
    (requirements*.txt, pyproject.toml) or the installed distribution; the rule stays silent
    where it is unknown (`--verbose` says so).

    ## Why is this bad?
    Without packing every batch is padded. Unsloth adds a pad token to tokenizers that have none
    (TinyLlama), and before 2024.11.2 the embedding matrix was not grown for it: fp16 runs of
    such models showed `grad_norm` NaN from the first step and learned nothing, while packing
    (no padding), bf16 or a model with its own pad token trained (unslothai/unsloth#911).

    ## Example
    `train.py`:
        import torch
        from trl import SFTConfig, SFTTrainer
        from unsloth import FastLanguageModel

        model, tokenizer = FastLanguageModel.from_pretrained("unsloth/tinyllama-bnb-4bit", dtype=torch.float16)
        args = SFTConfig(fp16=True, packing=False, output_dir="outputs")
        trainer = SFTTrainer(model=model, tokenizer=tokenizer, args=args)
    `requirements.txt`:
        unsloth==2024.10.7
    Use instead, in `requirements.txt`:
        unsloth==2024.11.2

    ## Fix safety
    Display-only: upgrading a dependency is outside the config; bf16 (on GPUs that have it) or
    packing avoid the bug too.

    ## References
    - unslothai/unsloth#911 (opened 2024-08-13; a maintainer answered
      "should be fixed now hopefully" on 2024-10-28)
    - unslothai/unsloth commit ac8d5fc3cb "Fix pad token" (2024-10-27): post_patch grows the
      input embedding when len(tokenizer) exceeds it and passes padding_idx = pad_token_id
    - unsloth 2024.11.2 on PyPI (the release after 2024.10.7; there is no 2024.11.0, .1 or .3
      on PyPI): models/llama.py post_patch calls unsloth_zoo's patch_model_and_tokenizer and
      requires unsloth_zoo>=2024.11.1, whose tokenizer_utils.py carries that resize; 2024.10.7
      still has the old post_patch(model)
    """

    code = "VER001"
    name = "unsloth-fp16-no-packing"
    severity = WARNING
    fix_applicability = Applicability.DISPLAY_ONLY
    FIXED_IN = "2024.11.2"

    def check(self, run, context):
        config = run.primary
        if config.value("file.kind") != "unsloth":
            return
        fp16 = config.mode() == "fp16" or config.value("model.load_dtype") == "float16"
        if not fp16 or config.value("sequence.packing") is True:
            return  # SFTTrainer's packing defaults to False: unset counts as off
        found = context.version_before("unsloth", self.FIXED_IN, config, self.code)
        if found is None:
            return
        yield self.finding(
            config, config.span("sequence.packing", "precision.fp16", "model.load_dtype"),
            f"unsloth {found[0]} ({found[1]}) with fp16 and packing off: releases before {self.FIXED_IN} "
            "give grad_norm NaN for models whose pad token Unsloth adds (unslothai/unsloth#911); "
            f"upgrade to unsloth>={self.FIXED_IN}, or use bf16 or packing",
            fix=self.fix(f"Upgrade to unsloth>={self.FIXED_IN}"))
