"""target_modules entries that name no module of the model, beside entries that do (issue 16 recall).

PEFT (peft/tuners/tuners_utils.py BaseTuner.inject_adapter) raises only when no module at all
matched; an entry that matches nothing while others match is dropped without a word. Measured with
tiny Llama models: peft 0.12.0 (transformers 4.43.1) and 0.21.2 (transformers 5.24.0) adapt
q/k/v/o/up/down_proj for `[q_proj, k_proj, v_proj, o_proj, gate_prj, up_proj, down_proj]`, warn
nothing, and save `gate_prj` in adapter_config.json; in 0.21.2 the only warnings after a match are
for exclude_modules, rank_pattern / alpha_pattern keys, tied layers and state_dict mismatches.
"""

from __future__ import annotations

from linter.fixes import Applicability
from linter.registry import WARNING, Rule, register

from .models import _PLAIN_NAME, _SPECIAL_TARGETS, _model

# The newest PEFT release read (pypi peft 0.21.2, tuners_utils.py inject_adapter): a later release
# may warn about unmatched entries, so a pin above it leaves the rule silent.
_LAST_READ = "0.21.2"
# Heads that task models other than *ForCausalLM add (transformers modeling_llama.py
# LlamaForSequenceClassification / LlamaForTokenClassification `score`, LlamaForQuestionAnswering
# `qa_outputs`; BERT-style `classifier`; trl/models/modeling_value_head.py ValueHead `summary`,
# AutoModelForCausalLMWithValueHead `v_head`): an entry naming one may match there.
_TASK_HEADS = frozenset({"score", "qa_outputs", "classifier", "summary", "v_head"})


def _last(name: str) -> str:
    return name.strip().rsplit(".", 1)[-1]


@register
class TargetModuleEntryMatchesNothing(Rule):
    """PEF017 target-module-entry-matches-nothing

    ## What it does
    Flags each `target_modules` entry that names no module of the model's architecture while
    other entries of the list do: `gate_prj` beside `q_proj` and `up_proj` on Llama, `q_proj`
    beside `dense` on GPT-NeoX. Read wherever the adapter's target list is written (a PEFT
    `adapter_config.json`, LLaMA-Factory `lora_target`, Axolotl `lora_target_modules`, TRL
    `lora_target_modules`, Ludwig, XTuner, Unsloth's `get_peft_model`), for the architectures
    whose full module list is known (linter/data/architectures.json: the transformers-native
    types; remote-code models and unknown checkpoints are never judged).

    ## Why is this bad?
    PEFT adapts every module whose name is an entry or ends in "." + entry, and raises "Target
    modules ... not found in the base model" only when nothing matched at all. A misspelt entry
    beside valid ones is skipped without an error or a warning (every release through 0.21.2),
    so the modules it meant, in every layer, train no adapter: the run trains fewer parameters
    than configured and nothing says so (huggingface/peft#1959, #3554).

    ## Example
    `axolotl.yaml`:
        base_model: meta-llama/Meta-Llama-3-8B
        adapter: lora
        lora_r: 16
        lora_alpha: 32
        lora_target_modules:
          - q_proj
          - v_proj
          - gate_prj
    Use instead:
        base_model: meta-llama/Meta-Llama-3-8B
        adapter: lora
        lora_r: 16
        lora_alpha: 32
        lora_target_modules:
          - q_proj
          - v_proj
          - gate_proj

    ## Fix safety
    Display-only: the message names the closest module of the architecture, but which module was
    meant is the author's to say. Shorthands (`all`, `all-linear`), regular expressions, Axolotl's
    `lora_target_linear`, LLaMA Pro (substring matching), entries that end another module's name
    (PEFT before 0.5 matched bare suffixes), names of task heads (`score`, `classifier`...) and
    non-causal-LM PEFT task types are not judged, nor is an `adapter_config.json` that PEFT saved
    (`inference_mode: true`, written by save_pretrained): its run is over, perhaps on an earlier
    revision of the checkpoint whose module names differed. A PEFT pin newer than 0.21.2 leaves
    it silent.

    ## References
    - peft src/peft/tuners/tuners_utils.py BaseTuner.inject_adapter (NoMatchingPeftModuleError only
      when nothing matched; at 5d602fdbf and in the 0.21.2 wheel) and check_target_module_exists
    - measured: tiny LlamaForCausalLM, peft 0.12.0 + transformers 4.43.1 and peft 0.21.2 +
      transformers 5.24.0: `gate_prj` skipped, no warning, kept in the saved adapter_config.json
    - huggingface/peft#1959 ("Incorrect target modules does not error"); #3554 and its docs PR #3603
      ("when some match and some don't, the non-matching names are silently skipped")
    - peft src/peft/peft_model.py PeftModel.save_pretrained (`peft_config.inference_mode = True`)
    - linter/data/architectures.json modules (names, other: every module name of tiny models built
      with transformers 4.43.1 and 5.24.0)
    """

    code = "PEF017"
    name = "target-module-entry-matches-nothing"
    severity = WARNING
    triggers = ("adapter.target_modules",)
    fix_applicability = Applicability.DISPLAY_ONLY

    def check(self, run, context):
        from linter.models import model_type_of, module_names  # the tables are read only when needed
        from linter.peft_targets import unadaptable_names
        from linter.version_order import older_than

        model = _model(run)
        if model is None:
            return
        for config in run.configs:
            targets = config.get("adapter.target_modules")
            names = targets.value if targets is not None and isinstance(targets.value, list) else None
            if not names or config.value("adapter.kind") is None or config.value("adapter.target_linear") is True \
                    or config.value("adapter.llama_pro") is True or config.value("adapter.target_string") is not None \
                    or config.value("adapter.task_type") not in (None, "CAUSAL_LM"):
                continue
            if config.schema == "peft" and config.value("adapter.inference_mode") is not False:
                continue  # saved by a finished run (save_pretrained writes inference_mode true), maybe on another revision
            if not all(isinstance(name, str) and _PLAIN_NAME.fullmatch(name.strip())
                       and name.strip().lower() not in _SPECIAL_TARGETS for name in names):
                continue
            found = model_type_of(*model)
            known = module_names(found[0]) if found else None
            other = unadaptable_names(found[0]) if found else None
            if known is None or other is None:
                continue
            modules = known[0]
            every = modules | other | _TASK_HEADS
            matched = [name.strip() for name in names if _last(name) in modules]
            missing = [name.strip() for name in names if _last(name) not in every
                       and not any(module.endswith(_last(name)) for module in every)]
            if not matched or not missing:
                continue
            version = config.version("peft")
            if version is not None and older_than(_LAST_READ, version[0]) is True:
                context.notes.append(f"{config.path}: {self.code} skipped: peft {version[0]} is newer than the last "
                                     f"release read ({_LAST_READ})")
                continue
            on = f"peft {version[0]}, {version[1]}" if version else f"every peft release through {_LAST_READ}"
            for name in dict.fromkeys(missing):
                closest = _closest(_last(name), modules)
                yield self.finding(
                    config, targets.span,
                    f"target_modules entry {name!r} names no module of {model[0]} (the {found[0]} architecture, "
                    f"whose adaptable modules are {', '.join(sorted(modules))}): PEFT adapts the entries that match "
                    f"and drops this one without an error or a warning ({on}), so no layer gets an adapter for "
                    f"it{closest}",
                    fix=self.fix("Name a module the architecture has"))


def _closest(name: str, modules) -> str:
    import difflib  # only when a finding is made

    close = difflib.get_close_matches(name, sorted(modules), n=1, cutoff=0.75)
    return f"; did you mean {close[0]}?" if close else ""
