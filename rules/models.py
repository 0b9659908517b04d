"""What the checkpoint itself is: the modules it has, and the attention it was trained with.

The checkpoint is read from its own config.json where one is on this machine (a local folder, or
the Hugging Face cache), else from linter/data/architectures.json, whose rows cite their source.
A model the table does not know leaves these rules silent.
"""

from __future__ import annotations

import re

from linter.fixes import Applicability, Change
from linter.registry import ERROR, WARNING, Rule, register

# PEFT's own shorthands and the frameworks' "every linear layer" values (peft/utils/constants.py
# INCLUDE_LINEAR_LAYERS_SHORTHAND "all-linear"; LLaMA-Factory lora_target "all"), and any name
# with regex characters (a string target_modules is a regex, re.fullmatch, peft/tuners/tuners_utils.py).
_SPECIAL_TARGETS = {"all", "all-linear"}
_PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


def _model(run):
    """(model name, the folder of the config naming it) or None."""
    found = run.first("model.name")
    if found is None or not isinstance(found[1].value, str) or not found[1].value:
        return None
    return found[1].value, found[0].path.parent


@register
class LoraTargetsMissing(Rule):
    """MOD001 lora-target-modules-missing

    ## What it does
    Flags LoRA (or other PEFT) target modules of which not one exists in the model's
    architecture: `q_proj, v_proj` on ChatGLM, GPT-NeoX, Falcon or BLOOM (`query_key_value`),
    Baichuan (`W_pack`), Qwen-1 (`c_attn`), InternLM2 (`wqkv`) or Phi-3 (`qkv_proj`); `Wqkv`
    on today's Phi-2 (`q_proj`, `k_proj`, `v_proj`, `dense`). The architecture comes from the
    checkpoint's config.json (`model_type`) where it is on this machine, else from its name;
    the module names from the modeling file that builds it.

    ## Why is this bad?
    PEFT matches each target name against the end of every module path; when none matches it
    raises "Target modules {...} not found in the base model" — after the model has been
    downloaded and loaded, often on every node of a multi-GPU job. It is the most reported
    configuration error in LLaMA-Factory's tracker.

    ## Example
        model_name_or_path: THUDM/chatglm3-6b
        lora_target: q_proj,v_proj
    Use instead:
        lora_target: query_key_value

    ## Fix safety
    Display-only: which modules to adapt is a modelling choice; the message lists the ones the
    architecture has. Shorthands (`all`, `all-linear`), regular expressions, Axolotl's
    `lora_target_linear`, and saved `adapter_config.json` files (written by a run that found its
    modules) are not checked.

    ## References
    - peft/tuners/tuners_utils.py (BaseTuner.inject_adapter: "Target modules ... not found in the base model")
    - peft/tuners/tuners_utils.py check_target_module_exists (suffix match on `.` boundaries); with
      peft 0.21.2 on a tiny GPT-NeoX, `[q_proj, v_proj]` raises NoMatchingPeftModuleError while
      `[query_key_value, v_proj]` only warns
    - hiyouga/LLaMA-Factory#1785; huggingface/peft#294
    - linter/data/architectures.json (model_types, modules: each row with its modeling file)
    """

    code = "MOD001"
    name = "lora-target-modules-missing"
    severity = ERROR
    fix_applicability = Applicability.DISPLAY_ONLY

    def check(self, run, context):
        from linter.models import model_type_of, module_names  # the table is read only when needed

        model = _model(run)
        if model is None:
            return
        for config in run.configs:
            targets = config.get("adapter.target_modules")
            if config.value("adapter.kind") is None or targets is None or config.schema == "peft" \
                    or config.value("adapter.target_linear") is True:
                continue
            names = targets.value if isinstance(targets.value, list) else None
            if not names or not all(isinstance(name, str) and _PLAIN_NAME.fullmatch(name.strip())
                                    and name.strip().lower() not in _SPECIAL_TARGETS for name in names):
                continue
            found = model_type_of(*model)
            known = module_names(found[0]) if found else None
            if known is None:
                continue
            modules, source = known
            if any(name.strip().rsplit(".", 1)[-1] in modules for name in names):
                continue
            yield self.finding(
                config, targets.span,
                f"{model[0]} has the {found[0]} architecture ({found[1]}), with no module named "
                f"{', '.join(sorted({name.strip() for name in names}))}; PEFT raises \"Target modules ... not found "
                f"in the base model\" after loading it. Its modules: {', '.join(sorted(modules))} ({source})",
                fix=self.fix(f"Target modules the {found[0]} architecture has"))


_GEMMA2_FLASH_SOFTCAP = "2.6.3"


@register
class Gemma2WithoutSoftCapping(Rule):
    """MOD002 gemma2-without-softcapping

    ## What it does
    Flags training a Gemma 2 model with an attention implementation that drops its attention
    logit soft-capping: `sdpa` (in every transformers release with Gemma 2, 4.42 onwards), or
    `flash_attention_2` with flash-attn older than 2.6.3.

    ## Why is this bad?
    Gemma 2 was trained with its attention logits capped at 50 (`attn_logit_softcapping`,
    `tanh` capping in `eager_attention_forward`). transformers' SDPA path calls
    `scaled_dot_product_attention` without it, and its FlashAttention path passes `softcap`
    only to flash-attn releases that support it; LLaMA-Factory requires flash-attn >= 2.6.3 for
    Gemma 2. Without the cap, fine-tuning computes a different attention than the model was
    trained with: the loss starts higher and the outputs degrade. Gemma 3 is not affected (its
    configs set no attention soft-capping; it uses QK-norm).

    ## Example
        model_name_or_path: google/gemma-2-9b
        flash_attn: sdpa
    Use instead:
        flash_attn: disabled   # eager, or fa2 with flash-attn >= 2.6.3

    ## Fix safety
    Unsafe for `sdpa`: eager attention materialises the attention matrix and needs more
    memory. With an old flash-attn the fix is an upgrade, shown only.

    ## References
    - transformers/models/gemma2/modeling_gemma2.py (eager_attention_forward caps the logits;
      sdpa_attention_forward does not; flash_attention_forward passes softcap only for flash-attn >= 2.6.0)
    - transformers/integrations/sdpa_attention.py (sdpa_attention_forward: no softcap argument; current main)
    - huggingface/transformers#31887 (FA2 softcapping), #32309 (wrong Gemma 2 outputs with FA2)
    - hiyouga/LLaMA-Factory#5079; llamafactory/model/model_utils/attention.py
      (configure_attn_implementation: check_version("flash_attn>=2.6.3") for Gemma 2; "SDPA does not support it")
    """

    code = "MOD002"
    name = "gemma2-without-softcapping"
    severity = WARNING
    fix_applicability = Applicability.UNSAFE

    def check(self, run, context):
        from linter.models import model_type_of

        candidates = [config for config in run.configs if config.value("training.enabled") is not False
                      and config.value("attention.implementation") in ("sdpa", "flash_attention_2")]
        model = _model(run) if candidates else None  # the checkpoint is looked up only when it matters
        found = model_type_of(*model) if model is not None else None
        if found is None or found[0] != "gemma2":
            return
        for config in candidates:
            implementation = config.get("attention.implementation")
            if implementation.value == "sdpa":
                yield self.finding(
                    config, implementation.span,
                    f"{model[0]} (Gemma 2) trained with sdpa attention: transformers' SDPA path drops Gemma 2's "
                    "attention logit soft-capping; train with eager attention (or flash_attention_2 with "
                    f"flash-attn >= {_GEMMA2_FLASH_SOFTCAP})",
                    fix=self.fix("Use eager attention (more memory)",
                                 Change(config, "attention.implementation", "eager")))
            elif implementation.value == "flash_attention_2":
                old = context.version_before("flash-attn", _GEMMA2_FLASH_SOFTCAP, config.path, self.code)
                if old is None:
                    continue
                yield self.finding(
                    config, implementation.span,
                    f"{model[0]} (Gemma 2) with flash_attention_2 and flash-attn {old[0]} ({old[1]}): "
                    f"soft-capping needs flash-attn >= {_GEMMA2_FLASH_SOFTCAP}; upgrade it or train with eager "
                    "attention",
                    fix=self.fix(f"Upgrade to flash-attn>={_GEMMA2_FLASH_SOFTCAP}",
                                 applicability=Applicability.DISPLAY_ONLY))
