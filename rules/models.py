"""What the checkpoint itself is: the modules it has, and the attention it was trained with.

The checkpoint is read from its own config.json where one is on this machine (a local folder, or
the Hugging Face cache), else from linter/data/architectures.json, whose rows cite their source.
A model the table does not know leaves these rules silent.
"""

from __future__ import annotations


from linter.changes import SetValue
from linter.fixes import Applicability
from linter.registry import ERROR, WARNING, Rule, register
from linter.lazy_pattern import LazyPattern

# PEFT's own shorthands and the frameworks' "every linear layer" values (peft/utils/constants.py
# INCLUDE_LINEAR_LAYERS_SHORTHAND "all-linear"; LLaMA-Factory lora_target "all"), and any name
# with regex characters (a string target_modules is a regex, re.fullmatch, peft/tuners/tuners_utils.py).
_SPECIAL_TARGETS = {"all", "all-linear"}
_PLAIN_NAME = LazyPattern(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


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
    `llamafactory.yaml`:
        model_name_or_path: THUDM/chatglm3-6b
        stage: sft
        do_train: true
        finetuning_type: lora
        lora_target: q_proj,v_proj
        template: chatglm3
    Use instead (ChatGLM's fused attention projection):
        model_name_or_path: THUDM/chatglm3-6b
        stage: sft
        do_train: true
        finetuning_type: lora
        lora_target: query_key_value
        template: chatglm3

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


@register
class LoraDefaultTargetsUnknown(Rule):
    """MOD007 lora-default-target-modules-unknown

    ## What it does
    Flags a LoRA adapter that names no target modules, where PEFT picks them itself, on a model
    whose architecture the pinned PEFT release has no default targets for: ChatGLM before PEFT
    0.3.0, Mistral before 0.6.0, Mixtral before 0.8.0, Gemma before 0.9.0, Qwen2 before 0.12.0,
    Qwen3 before 0.16.0; Qwen-1, Baichuan, InternLM2 and Phi-3 in every release. Read where
    `target_modules` reaches PEFT as None: a PEFT `adapter_config.json` without it, a Ludwig
    `adapter: lora` without `target_modules` (except the base models Ludwig fills them for), a
    TRL config with `use_peft` and no `lora_target_modules` / `lora_target_parameters`. The
    architecture is the model's config.json `model_type`, else its name. With no PEFT pin the
    rule judges only an architecture no release has defaults for.

    ## Why is this bad?
    With `target_modules=None`, PEFT looks the model's `model_type` up in
    TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING and raises "Please specify
    `target_modules` in `peft_config`" when it is absent — in get_peft_model, after the base
    model has been downloaded, loaded and often quantized.

    ## Example
    `train.yaml`:
        model_type: llm
        base_model: mistralai/Mistral-7B-v0.1
        adapter:
          type: lora
        input_features:
          - name: prompt
            type: text
        output_features:
          - name: response
            type: text
        trainer:
          type: finetune
    `requirements.txt`:
        ludwig==0.8.6
        peft==0.5.0
    Use instead (name the modules; or PEFT >= 0.6.0, whose table has Mistral), in `train.yaml`:
        model_type: llm
        base_model: mistralai/Mistral-7B-v0.1
        adapter:
          type: lora
          target_modules: [q_proj, v_proj]
        input_features:
          - name: prompt
            type: text
        output_features:
          - name: response
            type: text
        trainer:
          type: finetune

    ## Fix safety
    Display-only: which modules to adapt (or which PEFT to install) is the author's choice; the
    message names the first PEFT release with defaults for the architecture.

    ## References
    - peft src/peft/mapping.py _prepare_lora_config (v0.2.0), tuners/lora.py and
      tuners/lora/model.py LoraModel._prepare_adapter_config (v0.3.0-v0.17.1: from v0.17.0 only
      without target_parameters), tuners/tuners_utils.py BaseTuner._prepare_adapter_config
      (v0.18.0-v0.21.2): "Please specify `target_modules` in `peft_config`"
    - linter/data/peft_default_targets.json: the table's model types in every release v0.0.1-v0.21.2,
      generated by bench/peft_default_targets.py (mapping.py, utils/other.py from v0.3.0,
      utils/constants.py from v0.7.0); e.g. chatglm from 54b6ce2c0 (v0.3.0), mistral from
      f66c3859b (#974, v0.6.0), mixtral from 54ca31153 (#1380, v0.8.0)
    - ludwig/schema/llms/peft.py LoraConfig.to_config (target_modules=None passed through; none at
      all in v0.8); ludwig/schema/model_types/utils.py set_llm_parameters (the names Ludwig fills)
    - trl/trainer/utils.py get_peft_config (target_modules=model_args.lora_target_modules, default None)
    - ludwig-ai/ludwig#3758, #3852; mymusise/ChatGLM-Tuning#25, #149; huggingface/trl#3427
    """

    code = "MOD007"
    name = "lora-default-target-modules-unknown"
    severity = ERROR
    fix_applicability = Applicability.DISPLAY_ONLY

    def check(self, run, context):
        configs = [config for config in run.configs if config.value("adapter.peft_default_targets") is True
                   and config.value("training.enabled") is not False]
        model = _model(run) if configs else None
        if model is None:
            return
        from linter.models import model_type_of
        from linter.peft_targets import (first_release_with, has_default_targets, model_type_if, release_holding,
                                         releases_read)

        versions = [(config, config.version("peft")) for config in configs]
        if any(version and release_holding(version[0]) for _, version in versions):
            found = model_type_of(*model)
        else:  # no release known: only a type no release has defaults for can fire
            found = model_type_if(model[0], lambda model_type: first_release_with(model_type) is None, model[1])
            if found is None:
                context.notes.extend(f"{config.path}: {self.code} skipped: the peft version is unknown here"
                                     for config in configs)
                return
        if found is None:
            return
        model_type, source = found
        first = first_release_with(model_type)
        for config, version in versions:
            release = release_holding(version[0]) if version else None
            if release is None:
                if first is not None:
                    context.notes.append(f"{config.path}: {self.code} skipped: the peft version is unknown here "
                                         f"(its default LoRA targets for {model_type} start in {first})")
                    continue
                known = releases_read()
                why = f"no PEFT release ({known[0]}-{known[-1]}) has default LoRA targets for {model_type}"
            elif has_default_targets(model_type, release):
                continue
            else:
                later = f"; they start in peft {first}" if first is not None else " (nor has any release since)"
                why = f"peft {version[0]} ({version[1]}) has no default LoRA targets for {model_type}{later}"
            yield self.finding(
                config, config.span("adapter.peft_default_targets"),
                f"LoRA with no target_modules on {model[0]} ({model_type}, {source}): {why}; get_peft_model raises "
                "\"Please specify `target_modules` in `peft_config`\" after loading the model; name the modules "
                "to adapt", fix=self.fix(f"Name target_modules for {model_type}" + (
                    f", or upgrade to peft>={first}" if first is not None else "")))


_GEMMA2_FLASH_SOFTCAP = "2.6.3"
# transformers releases and Gemma 2's attention (measured: tiny Gemma2ForCausalLM built with each
# release on torch 2.13.0 CPU; logits with attn_logit_softcapping 1e-3 against None): every release
# from 4.42.4 to 5.20.2 that accepts sdpa ignores the cap there; sdpa is the default (no
# attn_implementation given) in 4.42.4-4.44.2 and 4.48.0-5.20.2, eager in 4.45.2-4.47.1 (#32865);
# from 5.21.0 sdpa is refused at load ("does not support an attention implementation through
# torch.nn.functional.scaled_dot_product_attention") and eager is the default.
_SDPA_REFUSED = "5.21.0"
_SDPA_DEFAULT = (("4.42.0", "4.45.0"), ("4.48.0", _SDPA_REFUSED))
_TRL_MODEL_CONFIG = "trl/trainer/model_config.py (ModelConfig)"


def _in_window(version: str, windows) -> bool:
    from linter.versions import older_than

    return any(older_than(version, high) is True and older_than(version, low) is False for low, high in windows)


@register
class Gemma2WithoutSoftCapping(Rule):
    """MOD002 gemma2-without-softcapping

    ## What it does
    Flags training a Gemma 2 model with an attention implementation that drops its attention
    logit soft-capping:
    - `sdpa` written in the config (transformers 4.42-5.20 compute it without the cap; 5.21 and
      later refuse sdpa for Gemma 2 at load);
    - no attention written in a TRL config, with a transformers release whose default for Gemma 2
      is sdpa (4.42-4.44 and 4.48-5.20; read from a pin or the installed package);
    - `flash_attention_2` with flash-attn older than 2.6.3.

    ## Why is this bad?
    Gemma 2 was trained with its attention logits capped at 50 (`attn_logit_softcapping`,
    `tanh` capping in `eager_attention_forward`). transformers' SDPA path calls
    `scaled_dot_product_attention` without it, and its FlashAttention path passes `softcap`
    only to flash-attn releases that support it; LLaMA-Factory requires flash-attn >= 2.6.3 for
    Gemma 2. Without the cap, fine-tuning computes a different attention than the model was
    trained with: the loss starts higher and the outputs degrade. Gemma 3 is not affected (its
    configs set no attention soft-capping; it uses QK-norm).

    ## Example
    `llamafactory.yaml`:
        model_name_or_path: google/gemma-2-9b
        stage: sft
        do_train: true
        finetuning_type: lora
        template: gemma
        flash_attn: sdpa
    Use instead (eager attention; or `fa2` with flash-attn >= 2.6.3):
        model_name_or_path: google/gemma-2-9b
        stage: sft
        do_train: true
        finetuning_type: lora
        template: gemma
        flash_attn: disabled

    ## Fix safety
    Unsafe: eager attention materialises the attention matrix and needs more memory. With an
    old flash-attn the fix is an upgrade, shown only. LLaMA-Factory's `flash_attn: auto` (it
    picks fa2 or eager for Gemma 2 itself) and Unsloth (its own soft-capped attention) are
    never flagged.

    ## References
    - transformers/models/gemma2/modeling_gemma2.py (eager_attention_forward caps the logits;
      flash_attention_forward passes softcap only for flash-attn >= 2.6.0)
    - transformers/integrations/sdpa_attention.py (sdpa_attention_forward: no softcap argument)
    - measured with transformers 4.42.4, 4.43.4, 4.44.2, 4.45.2, 4.46.3, 4.47.1, 4.48.0, 4.48.3, 4.49.0,
      4.50.3, 4.53.3, 4.57.6, 5.18.0, 5.20.0, 5.20.2, 5.21.0, 5.22.0, 5.22.1, 5.23.0 (default attention,
      sdpa with and without the cap)
    - huggingface/transformers#32865 (eager by default, 4.45), #31887 (FA2 softcapping), #32309
    - hiyouga/LLaMA-Factory#5079; llamafactory/model/model_utils/attention.py
      (configure_attn_implementation: check_version("flash_attn>=2.6.3") for Gemma 2; "SDPA does not support it")
    - trl/trainer/model_config.py (attn_implementation None: transformers' default)
    """

    code = "MOD002"
    name = "gemma2-without-softcapping"
    severity = WARNING
    fix_applicability = Applicability.UNSAFE

    def check(self, run, context):
        from linter.models import model_type_of

        candidates = [config for config in run.configs if config.value("training.enabled") is not False and (
            config.value("attention.implementation") in ("sdpa", "flash_attention_2") or _trl_default(config))]
        model = _model(run) if candidates else None  # the checkpoint is looked up only when it matters
        found = model_type_of(*model) if model is not None else None
        if found is None or found[0] != "gemma2":
            return
        for config in candidates:
            implementation = config.get("attention.implementation")
            eager = self.fix("Use eager attention (more memory)", SetValue(config, "attention.implementation", "eager"))
            if implementation is None:
                version = config.version("transformers")
                if version is None:
                    context.notes.append(f"{config.path}: {self.code} skipped: the transformers version is unknown "
                                         "(its default attention for Gemma 2 depends on it)")
                    continue
                if not _in_window(version[0], _SDPA_DEFAULT):
                    continue
                yield self.finding(
                    config, config.span("model.name"),
                    f"{model[0]} (Gemma 2) with no attention set: transformers {version[0]} ({version[1]}) defaults "
                    "to sdpa, which drops Gemma 2's attention logit soft-capping; set attn_implementation: eager",
                    fix=eager)
            elif implementation.value == "sdpa":
                version = config.version("transformers")
                refused = version is not None and _in_window(version[0], ((_SDPA_REFUSED, "999"),))
                why = (f"transformers {version[0]} ({version[1]}) refuses sdpa for Gemma 2 at load" if refused
                       else "transformers' SDPA path drops Gemma 2's attention logit soft-capping (releases up to "
                            f"5.20; from {_SDPA_REFUSED} sdpa is refused at load)")
                yield self.finding(
                    config, implementation.span,
                    f"{model[0]} (Gemma 2) trained with sdpa attention: {why}; train with eager attention (or "
                    f"flash_attention_2 with flash-attn >= {_GEMMA2_FLASH_SOFTCAP})", fix=eager)
            else:
                old = context.version_before("flash-attn", _GEMMA2_FLASH_SOFTCAP, config, self.code)
                if old is None:
                    continue
                yield self.finding(
                    config, implementation.span,
                    f"{model[0]} (Gemma 2) with flash_attention_2 and flash-attn {old[0]} ({old[1]}): "
                    f"soft-capping needs flash-attn >= {_GEMMA2_FLASH_SOFTCAP}; upgrade it or train with eager "
                    "attention",
                    fix=self.fix(f"Upgrade to flash-attn>={_GEMMA2_FLASH_SOFTCAP}",
                                 applicability=Applicability.DISPLAY_ONLY))


def _trl_default(config) -> bool:
    """A TRL config (the trl scripts load the model with ModelConfig.attn_implementation) that writes
    no attention: the hf adapter records adapter.kind, with ModelConfig as its default source, for
    TRL configs only."""
    kind = config.get("adapter.kind")
    return (config.value("file.kind") == "trl" and config.get("attention.implementation") is None
            and kind is not None and (kind.origin.default_source == _TRL_MODEL_CONFIG or not kind.origin.is_default))
