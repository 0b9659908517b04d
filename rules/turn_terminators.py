"""Chat-template turn terminators that the loss mask never keeps."""

from __future__ import annotations

from linter.registry import WARNING, Rule, register
from linter.versions import older_than

# prompt_strategies/chat_template.py (the `type: chat_template` strategy) first appears in
# axolotl v0.5.0; v0.4.0 has no such strategy, so the dataset type is refused before training.
_CHAT_TEMPLATE_STRATEGY = "0.5.0"


@register
class TurnTerminatorNotTrained(Rule):
    """TRN094 turn-terminator-not-trained

    ## What it does
    Flags an Axolotl `type: chat_template` dataset whose named `chat_template` never writes the
    tokenizer's eos token, with no `eot_tokens` to name the template's own turn-ending token:
    Gemma's `<eos>` under the `gemma`, `gemma3` or `gemma3n` templates, which end each turn
    with `<end_of_turn>`.

    The template's text comes from a shipped table of Axolotl's named templates; the eos token
    from `special_tokens.eos_token` where it is set, else from the checkpoint's model_type (its
    config.json, or the shipped name table) and a table of tokenizers' eos tokens. Silent where
    `eot_tokens` is set, where a dataset brings its own template, where another tokenizer is
    named, and where the model or the template is not in the tables.

    ## Why is this bad?
    Axolotl trains the token that ends each assistant turn by looking for the turn terminators
    in the tokenized sample: `eot_tokens`, else the tokenizer's eos token (v0.9.0 on; v0.5.0 to
    v0.8.x look for the eos token id). A template that never writes that token leaves every
    turn-ending token at label -100, so the fine-tuned model never learns to stop: at inference it
    runs on into the next turn. The loss curve looks healthy, since the untrained token is never
    in the loss; Axolotl only logs "EOS token '<eos>' not found in chat_template".

    ## Example
    `config.yml`:
        base_model: google/gemma-3-1b-it
        chat_template: gemma3
        datasets:
          - path: ./train_chat.jsonl
            type: chat_template
    Use instead, in `config.yml`:
        base_model: google/gemma-3-1b-it
        chat_template: gemma3
        eot_tokens:
          - <end_of_turn>
        datasets:
          - path: ./train_chat.jsonl
            type: chat_template

    ## Fix safety
    No fix: which token ends a turn is the template's choice (Axolotl's Gemma examples name
    `<end_of_turn>`, axolotl#3756); the message lists the special tokens the template writes.

    ## References
    - axolotl src/axolotl/prompt_strategies/chat_template.py: eot_tokens default `[tokenizer.eos_token]`
      and _validate_eot_and_eos_tokens (7099343c5, #2364, v0.9.0; read at 067b021c8); v0.5.0
      find_eos_token by tokenizer.eos_token_id
    - axolotl src/axolotl/utils/chat_templates/templates/*.jinja (linter/data/chat_templates.json
      axolotl_templates); the tokenizers' eos tokens: chat_templates.json eos_tokens
    - axolotl-ai-cloud/axolotl#3754, #3756
    """

    code = "TRN094"
    name = "turn-terminator-not-trained"
    severity = WARNING
    triggers = ("data.template_names_eos",)

    def check(self, run, context):
        for config in run.configs:
            if config.value("data.template_names_eos") is not False or config.value("data.turn_terminators"):
                continue
            model = config.value("model.name")
            eos, whose = config.value("tokenizer.eos_written"), "the eos token special_tokens sets"
            if not isinstance(eos, str):
                if not isinstance(model, str):
                    continue
                from linter.chat_templates import eos_token_of
                from linter.models import model_type_of

                found = model_type_of(model, config.path.parent)
                eos, whose = (eos_token_of(found[0]) if found else None), f"{model}'s eos token"
                if found:
                    whose += f" (model_type {found[0]})"
            tokens = config.value("data.template_special_tokens") or []
            if not isinstance(eos, str) or eos in tokens:
                continue
            pinned = config.version("axolotl")
            if pinned is not None and older_than(pinned[0], _CHAT_TEMPLATE_STRATEGY):
                continue  # no chat_template strategy in that release: the dataset type is refused
            template = config.value("data.chat_template")
            yield self.finding(
                config, config.span("data.chat_template"),
                f"chat_template {template} never writes {whose}, {eos}, and eot_tokens is not set: Axolotl ends each trained turn at the eos token, finds "
                f"none, and leaves the turn-ending token at label -100, so the model never learns to stop; set "
                f"eot_tokens to the template's turn-ending token (it writes {', '.join(tokens) or 'no special token'})")
