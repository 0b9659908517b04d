"""The embedding matrices beside an adapter: tied input/output embeddings and new tokens (issue 16 recall)."""

from __future__ import annotations

from linter.changes import SetValue
from linter.fixes import Applicability
from linter.registry import ERROR, WARNING, Rule, register

from .models import _model


# peft/tuners/tuners_utils.py _unload_and_optionally_merge: from 393e8edd7 (huggingface/peft#3126, first in v0.19.0)
# merge_and_unload sets the merged model's tie_word_embeddings to False where its input and output embeddings no
# longer share one tensor (ModulesToSaveWrapper unloads to each trained copy), so the trained lm_head is kept.
_MERGE_UNTIES = "0.19.0"


def _last(names) -> set[str]:
    return {name.strip().rsplit(".", 1)[-1] for name in names if isinstance(name, str)}


@register
class TiedEmbeddingsModulesToSave(Rule):
    """MOD004 tied-embeddings-modules-to-save

    ## What it does
    Flags `embed_tokens` and `lm_head` both trained in full beside a LoRA adapter
    (`modules_to_save`: PEFT `adapter_config.json`, LLaMA-Factory `additional_target`, Axolotl
    `lora_modules_to_save`, TRL `lora_modules_to_save`) on a model whose input and output
    embeddings are one tied matrix (`tie_word_embeddings: true`: Llama 3.2 1B/3B, Qwen2.5 0.5B-3B,
    Qwen3 0.6B-4B, Gemma, SmolLM2...), where PEFT before 0.19.0 is pinned or installed, unless
    PEFT is told to keep them tied (`ensure_weight_tying`, PEFT >= 0.18, Axolotl
    `peft_ensure_weight_tying`). The tie is read from the checkpoint's config.json or the
    checkpoint table; an unknown model, or an unknown PEFT version, is never judged.

    ## Why is this bad?
    PEFT wraps each listed module in its own ModulesToSaveWrapper with its own trainable copy, so
    the two halves of the tied matrix train apart. The adapter saves both, but merging it
    (`merge_and_unload`, LLaMA-Factory's export) writes a model whose config still says
    `tie_word_embeddings: true`: on load transformers ties `lm_head` back to `embed_tokens` and
    the trained output head is discarded — new special tokens are then never produced. PEFT
    warns "Model has `tie_word_embeddings=True` and a tied layer is part of the adapter, but
    `ensure_weight_tying` is not set to True" (on loading a saved adapter too). From PEFT 0.19.0
    merge_and_unload sets the merged model's `tie_word_embeddings` to false when the two no
    longer share a tensor, and the trained head is kept.

    A saved `adapter_config.json` (save_pretrained writes `inference_mode: true`) holds the two
    trained copies already: merging it with such a PEFT loses the head, and setting
    `ensure_weight_tying` on it then only picks which trained copy both sides load; merge it
    with PEFT >= 0.19.0 or use it unmerged.

    Dropping `lm_head` from the list does not help: PEFT's copy of `embed_tokens` is then
    trained while the model's own `lm_head` keeps the frozen original, and a merged model ties
    the head back to the trained embedding, a head no step was trained with (PEFT's warning
    fires for a tied layer in the adapter either way, and Axolotl requires both for new tokens).
    Where the config format has no `ensure_weight_tying` setting (LLaMA-Factory, TRL's
    ModelConfig) the message says so: the untie is then the author's informed choice.

    ## Example
    `axolotl.yaml`:
        base_model: meta-llama/Llama-3.2-3B-Instruct
        adapter: lora
        lora_target_linear: true
        lora_modules_to_save:
          - embed_tokens
          - lm_head
    `requirements.txt`:
        peft==0.18.1
    Use instead (PEFT >= 0.18 keeps one tied matrix):
        base_model: meta-llama/Llama-3.2-3B-Instruct
        adapter: lora
        lora_target_linear: true
        lora_modules_to_save:
          - embed_tokens
          - lm_head
        peft_ensure_weight_tying: true

    ## Fix safety
    Display-only: `ensure_weight_tying` needs PEFT >= 0.18, and where the framework does not
    expose it (or the adapter is already trained) the remedy is outside the config.

    ## References
    - peft/utils/other.py ModulesToSaveWrapper (one trainable copy per wrapped module)
    - peft/tuners/lora/config.py LoraConfig.ensure_weight_tying (default False; added in PEFT
      0.18.0, huggingface/peft#2803, commit d0fa974); the tied-layer warning in peft/tuners/tuners_utils.py
    - huggingface/peft#2777 and #2972 (merge_and_unload of a tied model loses the trained lm_head);
      peft/tuners/tuners_utils.py _unload_and_optionally_merge unties the merged config (393e8edd7,
      huggingface/peft#3126, first in v0.19.0); peft/peft_model.py save_pretrained (inference_mode true)
      unslothai/unsloth#9331 (measured on Qwen2.5-0.5B-Instruct: merged head differs from the trained one
      without ensure_weight_tying, equal with it)
    - hiyouga/LLaMA-Factory#6446, #6749
    - axolotl/utils/schemas/peft.py peft_ensure_weight_tying; axolotl/loaders/adapter.py
    - linter/data/models.json (tied_embeddings, each checkpoint with its config.json)
    """

    code = "MOD004"
    name = "tied-embeddings-modules-to-save"
    severity = WARNING
    triggers = ("adapter.modules_to_save",)
    fix_applicability = Applicability.DISPLAY_ONLY

    def check(self, run, context):
        from linter.models import tied_embeddings

        candidates = [config for config in run.configs if config.value("adapter.kind") is not None
                      and isinstance(config.value("adapter.modules_to_save"), list)
                      and {"embed_tokens", "lm_head"} <= _last(config.value("adapter.modules_to_save"))
                      and config.value("adapter.ensure_weight_tying") is not True]
        model = _model(run) if candidates else None
        tied = tied_embeddings(*model) if model else None
        if tied is None or tied[0] is not True:
            return
        for config in candidates:
            old = context.version_before("peft", _MERGE_UNTIES, config, self.code)
            if old is None:
                continue  # PEFT >= 0.19.0 keeps the trained head on merging, or unknown
            field = config.get("adapter.modules_to_save")
            setting = config.written_as("adapter.ensure_weight_tying")
            if config.schema == "peft" and config.value("adapter.inference_mode") is not False:
                remedy = (f"this adapter is saved, its two copies trained: merge it with PEFT >= {_MERGE_UNTIES} or use "
                          f"it unmerged (setting {setting}: true now only picks which copy both sides load)")
            elif config.get("adapter.ensure_weight_tying") is not None:
                remedy = f"set {setting}: true (PEFT >= 0.18), or merge with PEFT >= {_MERGE_UNTIES}"
            else:
                remedy = ("this config has no setting for PEFT's ensure_weight_tying (PEFT >= 0.18), so the two "
                          f"copies stay untied in training; merge with PEFT >= {_MERGE_UNTIES} (dropping lm_head does "
                          "not keep them tied either)")
            yield self.finding(
                config, field.origin.span,
                f"{model[0]} ties its input and output embeddings ({tied[1]}), and embed_tokens and lm_head are "
                "both trained as modules_to_save: PEFT trains two separate copies of the one matrix, and a model "
                f"merged with PEFT {old[0]} ({old[1]}) loads lm_head tied back to embed_tokens, discarding the "
                f"trained output head; {remedy}",
                fix=self.fix("Keep the tied matrix tied (ensure_weight_tying, PEFT >= 0.18)"))


# axolotl/loaders/utils.py get_linear_embedding_layers: the modules axolotl requires per model_type.
_EMBEDDING_LAYERS = {"gpt_neox": ("embed_in", "embed_out"), "falcon": ("word_embeddings", "lm_head"),
                     "nemotron_h": ("embeddings", "lm_head")}
_DEFAULT_LAYERS = ("embed_tokens", "lm_head")


@register
class AdapterNewTokensUntrained(Rule):
    """MOD005 adapter-new-tokens-untrained

    ## What it does
    Flags new tokens added to the vocabulary (Axolotl `tokens`) under a LoRA or QLoRA adapter
    whose `lora_modules_to_save` does not train the embedding layers (`embed_tokens` and
    `lm_head`; `embed_in`/`embed_out` for GPT-NeoX, `word_embeddings`/`lm_head` for Falcon).

    ## Why is this bad?
    A new token gets a freshly initialised row in the input and output embeddings; under an
    adapter those matrices are frozen, so the row is never trained and the model can neither
    read nor produce the token. Axolotl refuses the config since v0.4.0 (#787): "`lora_modules_to_save`
    not properly set when adding new tokens. Please include [`embed_tokens`, `lm_head`] in
    `lora_modules_to_save`" — after the model has been loaded. Earlier releases trained with the
    rows frozen at their initial values.

    ## Example
    `axolotl.yaml`:
        base_model: meta-llama/Meta-Llama-3-8B
        adapter: lora
        lora_target_linear: true
        tokens:
          - <|im_start|>
          - <|im_end|>
    Use instead:
        base_model: meta-llama/Meta-Llama-3-8B
        adapter: lora
        lora_target_linear: true
        lora_modules_to_save:
          - embed_tokens
          - lm_head
        tokens:
          - <|im_start|>
          - <|im_end|>

    ## Fix safety
    Unsafe: training the two embedding matrices in full is what Axolotl asks for, but it adds
    their full size to the trained parameters, the optimizer state and the saved adapter. The
    key is written only where it is missing and the architecture is known; with an unknown
    model only a missing `lora_modules_to_save` is flagged (the required names depend on the
    architecture), and the fix is shown, not applied. Changed `special_tokens` are not judged: whether Axolotl refuses them
    depends on the tokenizer's vocabulary (loaders/tokenizer.py: a value that encodes to more
    than two tokens; `pad_token` exempt since v0.5.1, #2059).

    ## References
    - axolotl/loaders/utils.py check_model_config (the ValueError), get_linear_embedding_layers
      (module names per model_type); before the v0.6 refactor in utils/config/__init__.py validate_config
    - axolotl-ai-cloud/axolotl#787 (commit 1ffa386, Dec 2023, first released in v0.4.0), #1570, #1659
    - huggingface/peft#334 (new tokens need the embeddings in modules_to_save)
    """

    code = "MOD005"
    name = "adapter-new-tokens-untrained"
    severity = ERROR
    triggers = ("tokenizer.added_tokens",)
    fix_applicability = Applicability.UNSAFE

    def check(self, run, context):
        from linter.models import model_type_of

        candidates = [config for config in run.configs if config.value("adapter.kind") is not None
                      and config.value("tokenizer.added_tokens")]
        model = _model(run) if candidates else None
        found = model_type_of(*model) if model else None
        required = _EMBEDDING_LAYERS.get(found[0], _DEFAULT_LAYERS) if found else None
        for config in candidates:
            saved = config.value("adapter.modules_to_save")
            listed = saved if isinstance(saved, list) else []
            if listed and (required is None or set(required) <= _last(listed)):
                continue
            needed = required or _DEFAULT_LAYERS
            missing = [name for name in needed if name not in _last(listed)]
            tokens = config.get("tokenizer.added_tokens")
            what = f"Train {', '.join(missing)} in full (larger adapter and optimizer state)"
            # A missing key is inserted when the architecture (so the names) is known; an existing list is
            # left to the user (a sequence is not rewritten).
            fix = (self.fix(what, SetValue(config, "adapter.modules_to_save", list(needed)))
                   if saved is None and required is not None
                   else self.fix(what, applicability=Applicability.DISPLAY_ONLY))
            yield self.finding(
                config, tokens.origin.span,
                f"new tokens are added under a {config.value('adapter.kind')} adapter, but lora_modules_to_save "
                f"does not train {', '.join(missing)}: Axolotl (>= 0.4.0) stops with \"lora_modules_to_save not "
                "properly set when adding new tokens\"; older releases leave the new embedding rows untrained",
                fix=fix)


@register
class BaseModelUntrainedTemplateTokens(Rule):
    """MOD006 base-model-untrained-template-tokens

    ## What it does
    Flags a LoRA or QLoRA run that formats its samples with a chat template whose special tokens
    the checkpoint never trained — Llama 3 / 3.1 base (Meta-Llama-3-8B, Llama-3.1-70B...) or
    Hermes 3 (a Llama 3.1 base fine-tune trained on ChatML) with the Llama 3 template (`llama3`
    in LLaMA-Factory and Axolotl; Unsloth's `get_chat_template` names `llama-3`, `llama-3.1`...,
    matched by the tokens they write) — while the embeddings stay frozen (no `embed_tokens` and
    `lm_head` in modules_to_save, or for Unsloth in get_peft_model's target_modules) and nothing
    resets the untrained rows (Axolotl `fix_untrained_tokens`). Only checkpoints whose untrained
    tokens are documented are listed (linter/data/untrained_tokens.json); others are never judged.

    ## Why is this bad?
    `<|start_header_id|>`, `<|end_header_id|>` and `<|eot_id|>` are in the Llama 3 base
    vocabulary but were only trained in the Instruct models: their embedding and output rows
    are untrained. Under LoRA those rows stay frozen, so the fine-tuned model barely learns to
    produce `<|eot_id|>`: it does not stop at the end of its turn, or emits stray reserved
    tokens instead of the header tokens. Unsloth's patched TRL trainers check for such rows
    before training and raise "Untrained tokens ... found" when embed_tokens or lm_head is frozen
    (Llama 3 base in every release; Llama 3.1 base and its fine-tunes from 2024.8, every PyPI
    release; a streaming dataset skips the check); older source installs train silently.

    ## Example
    `llamafactory.yaml`:
        model_name_or_path: meta-llama/Meta-Llama-3-8B
        stage: sft
        do_train: true
        finetuning_type: lora
        template: llama3
    Use instead (the Instruct model, which trained these tokens):
        model_name_or_path: meta-llama/Meta-Llama-3-8B-Instruct
        stage: sft
        do_train: true
        finetuning_type: lora
        template: llama3

    ## Fix safety
    Display-only: start from the Instruct model (for Hermes 3: its own ChatML format), train
    `embed_tokens` and `lm_head` in full, reset the untrained rows (Axolotl
    `fix_untrained_tokens`), or use a template without these tokens — each changes the run
    differently. LLaMA-Factory's `use_unsloth` is not judged (its trainers are not the ones
    Unsloth patches). An Unsloth script is judged only where get_peft_model's target_modules are a
    literal list and the samples are rendered with apply_chat_template before the trainer is built.

    ## References
    - unslothai/unsloth#915 (maintainer: Llama 3 / 3.1 base "those tokens are actually untrained"),
      #658 (the ValueError on Llama 3 base), #1024 (Hermes 3 with the llama-3.1 template; "you'll
      need to use Hermes's prompt format")
    - unsloth/tokenizer_utils.py fix_untrained_tokens (5cff582cc, #548, 2024-05-29, before every tag;
      Llama 3.1 rows from a3eee645f, #929, first in the August-2024 release, __version__ 2024.8) and
      the SFTTrainer/DPOTrainer/KTOTrainer train() patch; unsloth_zoo/tokenizer_utils.py at ce232d6c
    - unsloth/models/llama.py get_peft_model (embed_tokens / lm_head in target_modules go to
      modules_to_save, August-2024); unsloth/chat_templates.py CHAT_TEMPLATES
    - meta-pytorch/torchtune#2429 (<|eot_id|> at probability 0.05 after fine-tuning Llama 3 base on chat data)
    - hiyouga/LLaMA-Factory#5834; llamafactory/data/template.py (the llama3 template: <|start_header_id|>,
      <|end_header_id|>, <|eot_id|> in every turn)
    - axolotl/train.py fix_untrained_tokens (#1771, July 2024)
    - https://huggingface.co/NousResearch/Hermes-3-Llama-3.1-8B (base_model Meta-Llama-3.1-8B, ChatML)
    """

    code = "MOD006"
    name = "base-model-untrained-template-tokens"
    severity = WARNING
    triggers = ("data.chat_template",)
    fix_applicability = Applicability.DISPLAY_ONLY

    def check(self, run, context):
        from linter.model_tokens import untrained_template_tokens

        model = _model(run)
        if model is None:
            return
        for config in run.configs:
            template = config.get("data.chat_template")
            if template is None or not isinstance(template.value, str) or config.value("adapter.kind") is None \
                    or config.value("training.enabled") is False or config.value("model.unsloth") is True \
                    or config.value("tokenizer.fix_untrained") is True:
                continue
            unsloth = config.value("file.kind") == "unsloth"
            saved = config.value("adapter.modules_to_save")
            if unsloth:  # get_peft_model moves embed_tokens / lm_head named in target_modules to modules_to_save
                targets = config.value("adapter.target_modules")
                if not isinstance(targets, list) or config.get("adapter.modules_to_save") is None \
                        or {"embed_tokens", "lm_head"} <= _last(targets) | _last(saved or []):
                    continue
            elif isinstance(saved, list) and {"embed_tokens", "lm_head"} & _last(saved):
                continue
            written = config.value("data.template_special_tokens") if unsloth else None
            found = untrained_template_tokens(model[0], template.value, written if isinstance(written, list) else None)
            if found is None:
                continue
            outcome = _unsloth_outcome(config, found) if unsloth else \
                "the adapter keeps their embeddings frozen: the model barely learns to end its turn"
            yield self.finding(
                config, template.origin.span,
                f"{model[0]} is {found.kind} whose {template.value} chat-template tokens ({', '.join(found.tokens)}) "
                f"were never trained, and {outcome}; {found.instead}, or train embed_tokens and lm_head",
                fix=self.fix(f"{found.instead[0].upper()}{found.instead[1:]}, or train embed_tokens and lm_head"))


_UNSLOTH_CHECK = ("Unsloth's untrained-token check (fix_untrained_tokens) stops the trainer before the first step "
                  "with ValueError \"Unsloth: Untrained tokens ... found\" (\"embed_tokens & lm_head not trainable\")")
_FROZEN = "the adapter trains with their embeddings frozen: the model barely learns to end its turn"


def _unsloth_outcome(config, found) -> str:
    """What an Unsloth script does with the untrained rows: its patched TRL trainers run
    fix_untrained_tokens first (unsloth/tokenizer_utils.py, the train() patch; unsloth_zoo at
    ce232d6c) and raise where embed_tokens or lm_head is frozen, from the release that detects the
    checkpoint's rows; before it, and under any other trainer, training goes on with them frozen."""
    from linter.version_order import older_than

    since = found.unsloth_detects_from
    if config.value("trainer.patched_sft") is not True:
        when = f"from unsloth {since}" if since else "in every release"
        return f"{_FROZEN} (Unsloth's patched TRL trainers refuse to start instead, {when})"
    version = config.version("unsloth")
    if version is None:
        if since is None:
            return f"in every Unsloth release {_UNSLOTH_CHECK}"
        return (f"from unsloth {since} (every PyPI release) {_UNSLOTH_CHECK}; earlier source installs do not detect "
                f"these rows and {_FROZEN.replace('the adapter trains', 'train')}")
    if since is not None and older_than(version[0], since) is True:
        return f"unsloth {version[0]} ({version[1]}) does not detect these rows (its check finds them from {since}): {_FROZEN}"
    return f"with unsloth {version[0]} ({version[1]}) {_UNSLOTH_CHECK}"
