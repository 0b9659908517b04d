"""A LoRA on a layer of a tied embedding matrix (lm_head / embed_tokens in target_modules); the
modules_to_save path is MOD004's (rules/embeddings.py)."""

from __future__ import annotations

from linter.fixes import Applicability
from linter.registry import WARNING, Rule, register

from .embeddings import _last
from .models import _model

# peft/tuners/tuners_utils.py BaseTuner._check_tied_modules: ensure_weight_tying ties a LoRA on a tied layer named in
# target_modules (lm_head then shares embed_tokens' LoRA, transposed) from 06f042cf4 (#2879), first in v0.19.0; in
# 0.18.x (d0fa97413, #2803) it ties modules_to_save only. LoraConfig.ensure_weight_tying defaults to False.
_TIES_TARGETS = "0.19.0"
# With the LoRA tied, merge_and_unload still merges each tied layer: peft/tuners/lora/layer.py Embedding.merge and
# Linear.merge each add get_delta_weight to base_layer.weight.data, the one shared Parameter, so the matrix gets the update
# twice. Measured (tiny tied LlamaForCausalLM, init_lora_weights=False) on PEFT 0.19.0, 0.20.0, 0.21.2 with transformers
# 4.57.6 and 5.24.0: merged == W + 2*delta on both sides while the unmerged adapter computes W + delta. Without
# ensure_weight_tying (every release, 0.18.1 to 0.21.2, both transformers) the merged matrix is W + delta on both sides,
# and save_pretrained writes embed_tokens only, so a reload keeps it. 393e8edd7 (#3126, v0.19.0) resets
# tie_word_embeddings only when the two tensors already differ (a checkpoint storing both, loaded untied by transformers 5).
_DOUBLED = "0.19.0 to 0.21.2"
_SIDES = {"lm_head": ("output head", "input embeddings change"),
          "embed_tokens": ("input embeddings", "output head changes")}


def _tied_targets(config) -> list[str]:
    """lm_head / embed_tokens among a LoRA's target_modules list (PEFT matches a name as the key's last
    components); a string target (a regular expression PEFT matches against full keys) is not judged."""
    targets = config.value("adapter.target_modules")
    if config.value("adapter.kind") not in ("lora", "qlora") or not isinstance(targets, list) \
            or config.get("adapter.target_string") is not None or config.value("training.enabled") is False:
        return []
    # Unsloth's get_peft_model moves embed_tokens to modules_to_save and, in later releases, lm_head too.
    if config.value("file.kind") == "unsloth" or config.value("model.unsloth") is True:
        return []
    return [name for name in _SIDES if name in _last(targets)]


@register
class LoraTargetTiedEmbeddings(Rule):
    """MOD014 lora-target-tied-embeddings

    ## What it does
    Flags a LoRA whose `target_modules` name `lm_head` or `embed_tokens` (PEFT
    `adapter_config.json`, TRL `lora_target_modules`, LLaMA-Factory `lora_target`, Axolotl
    `lora_target_modules`, Ludwig `adapter.target_modules`) on a model whose input and output
    embeddings are one tied matrix (`tie_word_embeddings: true`: Gemma, Llama 3.2 1B/3B, Qwen2.5
    0.5B-3B, Qwen3 0.6B-4B...), with or without `ensure_weight_tying`. The tie is read from the
    checkpoint's config.json or the checkpoint table; an unknown model, and a target written as
    one regular expression, are never judged.

    ## Why is this bad?
    On a tied model `lm_head.weight` is the `embed_tokens.weight` tensor. A LoRA on `lm_head`
    trains an update of the output head only; `merge_and_unload` (LLaMA-Factory's export,
    Axolotl's merge, Ludwig's merge_adapter_into_base_model) adds it in place to the shared
    matrix, so the merged model's input embeddings change too, though no step was trained with
    them (a LoRA on `embed_tokens` changes the output head the same way), with no error
    (huggingface/peft#2018, on every release; measured on PEFT 0.18.1, 0.19.0 and 0.21.2 with
    transformers 4.57.6 and 5.24.0: the two stay one tensor, both equal W + delta, and
    `save_pretrained` writes `embed_tokens` only). PEFT only warns: "Model with
    `tie_word_embeddings=True` and the tied_target_modules=['lm_head'] are part of the adapter"
    (from 0.13.0). From 0.19.0 `ensure_weight_tying=True` trains one update shared by both
    layers, but `merge_and_unload` then merges it from each tied layer into the one matrix: the
    merged model holds W + 2*delta where the adapter computed W + delta (measured on PEFT
    0.19.0, 0.20.0 and 0.21.2), so it is right only while the adapter stays unmerged.

    ## Example
    `adapter_config.json`:
        {"peft_type": "LORA", "base_model_name_or_path": "google/gemma-2-2b-it",
         "r": 8, "lora_alpha": 16, "target_modules": ["q_proj", "v_proj", "lm_head"]}
    Use instead (drop the tied layer, or untie the checkpoint before training):
        {"peft_type": "LORA", "base_model_name_or_path": "google/gemma-2-2b-it",
         "r": 8, "lora_alpha": 16, "target_modules": ["q_proj", "v_proj"]}

    ## Fix safety
    Display-only: dropping the layer changes what trains, and untying the checkpoint (PEFT's
    warning shows how) is the author's choice; `ensure_weight_tying` (PEFT >= 0.19.0) is right
    only for an adapter that is never merged.

    ## References
    - peft/tuners/lora/layer.py Linear.merge / Embedding.merge (`base_layer.weight.data +=
      delta_weight`); peft/tuners/tuners_utils.py _check_merge_allowed (the warning: 679bcd877,
      huggingface/peft#2025, first in v0.13.0) and _check_tied_modules
    - peft/tuners/lora/model.py _add_targets_to_tie, LoraConfig.ensure_weight_tying for
      target_modules (06f042cf4, huggingface/peft#2879, first in v0.19.0; default False);
      docs/source/developer_guides/lora.md "Weight tying" (9e86c043f)
    - peft/tuners/tuners_utils.py _unload_and_optionally_merge (393e8edd7, huggingface/peft#3126,
      first in v0.19.0): sets tie_word_embeddings=False only when the two tensors already differ;
      huggingface/peft#2972 (auto-untie on merge) was closed unmerged
    - huggingface/peft#2018, #2244, #2777, #1750
    - linter/data/models.json (tied_embeddings, each checkpoint with its config.json)
    """

    code = "MOD014"
    name = "lora-target-tied-embeddings"
    severity = WARNING
    triggers = ("adapter.target_modules",)
    fix_applicability = Applicability.DISPLAY_ONLY

    def check(self, run, context):
        from linter.models import tied_embeddings
        from linter.versions import older_than

        candidates = [(config, names) for config in run.configs if (names := _tied_targets(config))]
        model = _model(run) if candidates else None
        tied = tied_embeddings(*model) if model else None
        if tied is None or tied[0] is not True:
            return
        for config, names in candidates:
            field = config.get("adapter.target_modules")
            setting = config.written_as("adapter.ensure_weight_tying")
            drop = f"drop {' and '.join(names)} from the targets, or untie the checkpoint before training"
            if config.value("adapter.ensure_weight_tying") is True:
                old = context.version_before("peft", _TIES_TARGETS, config, self.code)
                if old is not None:
                    what, remedy = self._untied(names), (
                        f"{setting} ties target_modules only from PEFT {_TIES_TARGETS}; PEFT {old[0]} ({old[1]}) "
                        f"ties modules_to_save only; {drop}")
                else:  # PEFT >= 0.19.0, or unknown: merging is wrong either way
                    what = (f"{' and '.join(names)} with {setting}: true, which (PEFT >= {_TIES_TARGETS}) trains one "
                            f"update shared by both tied layers, but merge_and_unload merges it from each of them into "
                            f"the one matrix, so the merged model carries it twice (measured on PEFT {_DOUBLED})")
                    unknown = config.version("peft") is None
                    remedy = ((f"before PEFT {_TIES_TARGETS} it ties modules_to_save only and merging changes the "
                               "other side; " if unknown else "") + f"keep the adapter unmerged, or {drop}")
            elif config.get("adapter.ensure_weight_tying") is not None:
                pinned = config.version("peft")
                upgrade = (f"upgrade PEFT {pinned[0]} ({pinned[1]}) to {_TIES_TARGETS} and "
                           if pinned is not None and older_than(pinned[0], _TIES_TARGETS) else "")
                what, remedy = self._untied(names), (
                    f"{upgrade}set {setting}: true (PEFT >= {_TIES_TARGETS}) to train one shared update and keep "
                    f"the adapter unmerged (merging then adds that update twice), or {drop}")
            else:
                what, remedy = self._untied(names), (
                    f"this config has no setting for PEFT's ensure_weight_tying (PEFT >= {_TIES_TARGETS}): {drop}")
            yield self.finding(
                config, field.origin.span,
                f"{model[0]} ties its input and output embeddings ({tied[1]}), and the LoRA targets {what} (no error; "
                f"PEFT only warns); {remedy}",
                fix=self.fix("Drop the layer from the targets, or untie the checkpoint before training"))

    @staticmethod
    def _untied(names):
        if len(names) == 2:
            return ("both lm_head and embed_tokens: PEFT trains two separate updates of the one matrix, and "
                    "merging adds both to it, so each side carries the other's update")
        own, other = _SIDES[names[0]]
        return (f"{names[0]}: the update trains the {own} only, but merging the adapter adds it to the one "
                f"shared matrix, so the merged model's {other} too")
