"""Merged saves that Unsloth's merge cannot write for the model the script trained.

Read from unslothai/unsloth-zoo (bare mirror at ce232d6c; versions from unsloth_zoo/__init__.py
`__version__`, found with `git log -S`) and unslothai/unsloth (mirror at 015bdef0d9).
"""

from __future__ import annotations

from linter.registry import ERROR, Rule, register
from linter.versions import older_than

from .facts import pinned_version

# unsloth_zoo saving_utils.py merge_and_overwrite_lora refuses a merged_16bit merge onto a bnb
# nf4/fp4 base from e7334947 (PR #254, merged 2025-08-28 after the 2025.8.9 version bump: first
# certain in 2025.9.1); unsloth requires unsloth_zoo>=2025.9.3 from its 2025.9.2 (6e237fac7f).
_ZOO_REFUSES = "2025.9.1"
_UNSLOTH_REFUSES = "2025.9.2"
# Every key of unsloth/models/mapper.py's INT_TO_FLOAT table (the 4-bit repos whose 16-bit twin
# the merge downloads instead) sits under this namespace; another -bnb-4bit name stays as it is.
_MAPPED_NAMESPACE = "unsloth/"


def _unmapped_four_bit(name) -> bool:
    return isinstance(name, str) and name.lower().endswith("-bnb-4bit") \
        and not name.lower().startswith(_MAPPED_NAMESPACE)


@register
class MergedSixteenBitOnFourBitBase(Rule):
    """TRN038 merged-16bit-on-4bit-base

    ## What it does
    Flags a 16-bit merged save (`save_pretrained_merged` / `push_to_hub_merged` with
    `save_method="merged_16bit"`, written or by default) of a LoRA model loaded from a
    pre-quantized bitsandbytes 4-bit checkpoint that Unsloth has no 16-bit twin for: a
    `-bnb-4bit` repository outside the `unsloth/` namespace, or a local `-bnb-4bit` folder.
    Fires with unsloth_zoo 2025.9.1 or later, or Unsloth 2025.9.2 or later (which require it);
    silent when neither is pinned.

    ## Why is this bad?
    The merge does not dequantize the trained model: it reads the base weights again from
    `get_model_name(config._name_or_path, load_in_4bit=False)`, which swaps only Unsloth's own
    `unsloth/...-bnb-4bit` repos for their 16-bit twins. Any other 4-bit base is found to be nf4
    or fp4 and refused: a TypeError in the first releases, then (from #285, 2025-09-16, until
    #950, 2026-08-01) only a UserWarning "Base model should be a 16bits or mxfp4 base model for a
    16bit model merge" and nothing written, then a RuntimeError "Nothing was written". Either
    way the whole training run ends without the merged model (unslothai/unsloth#3882).

    ## Example
    `train.py`:
        from unsloth import FastLanguageModel
        model, tokenizer = FastLanguageModel.from_pretrained("my-org/llama-3-8b-bnb-4bit", max_seq_length=2048)
        model = FastLanguageModel.get_peft_model(model, r=16)
        model.save_pretrained_merged("out", tokenizer, save_method="merged_16bit")
    `requirements.txt`:
        unsloth==2025.10.1
    Use instead (train on the 16-bit base, loaded in 4 bits; or save the LoRA adapter):
        from unsloth import FastLanguageModel
        model, tokenizer = FastLanguageModel.from_pretrained("my-org/llama-3-8b", max_seq_length=2048, load_in_4bit=True)
        model = FastLanguageModel.get_peft_model(model, r=16)
        model.save_pretrained_merged("out", tokenizer, save_method="merged_16bit")

    ## Fix safety
    No fix: the 16-bit base's name, or saving the adapter (`save_method="lora"`) or
    `merged_4bit_forced`, are the author's choice.

    ## References
    - unsloth_zoo/saving_utils.py merge_and_overwrite_lora and determine_base_model_source:
      the nf4/fp4 refusal from e7334947 (#254, "fix quantized base model merging issues",
      __version__ 2025.9.1 is the first bump after it), warn-and-return from 5fdb026d (#285),
      RuntimeError from afd4a93b (#950); unchanged at ce232d6c
    - unsloth/models/loader_utils.py get_model_name and unsloth/models/mapper.py (INT_TO_FLOAT
      keys, all `unsloth/...`); unsloth/save.py patch_saving_functions (save_pretrained_merged is
      unsloth_generic_save_pretrained_merged, save_method="merged_16bit"); pyproject.toml
      unsloth_zoo>=2025.9.3 from Unsloth 2025.9.2 (6e237fac7f)
    - unslothai/unsloth#3882, unslothai/unsloth-zoo#326, unslothai/unsloth#2749
    """

    code = "TRN038"
    name = "merged-16bit-on-4bit-base"
    severity = ERROR

    def check(self, run, context):
        for config in run.configs:
            if config.value("save.merged_16bit") is not True or config.value("adapter.kind") is None:
                continue
            name = config.value("model.name")
            if not _unmapped_four_bit(name):
                continue
            found = self._refusing_release(config, context)
            if found is None:
                continue
            yield self.finding(
                config, config.span("save.merged_16bit"),
                f"save_method merged_16bit of a LoRA model whose base {name} is a bitsandbytes 4-bit checkpoint "
                f"Unsloth has no 16-bit twin for: with {found[0]} ({found[1]}) the merge refuses an nf4/fp4 base and "
                "writes no model after training (an error, or only a warning in the releases of unsloth#3882); "
                "train on the 16-bit base loaded with load_in_4bit, or save the adapter (save_method=\"lora\")")

    def _refusing_release(self, config, context):
        """(package version, where) when the merge in use refuses a 4-bit base; None when unknown."""
        zoo = config.version("unsloth_zoo")
        if zoo is not None:
            return (f"unsloth_zoo {zoo[0]}", zoo[1]) if older_than(zoo[0], _ZOO_REFUSES) is False else None
        unsloth = pinned_version(config, "unsloth", self.code, context)
        if unsloth is not None and older_than(unsloth[0], _UNSLOTH_REFUSES) is False:
            return (f"Unsloth {unsloth[0]}", unsloth[1])
        return None
