"""A chat template name the framework's release does not register (TRN067)."""

from __future__ import annotations

import re

from linter.changes import SetValue
from linter.fixes import Applicability
from linter.lazy_pattern import LazyPattern
from linter.registry import ERROR, Rule, register
from linter.versions import older_than

# Which table holds the names a file kind's `template` may take, and the package whose release decides.
_PACKAGES = {"llamafactory": "llamafactory"}


@register
class UnregisteredTemplate(Rule):
    """TRN067 unregistered-template

    ## What it does
    Flags a LLaMA-Factory `template:` name that the pinned LLaMA-Factory release does not
    register, from a table of every release's registered names (data/template.py
    `register_template`, read from each release tag by bench/llamafactory_templates.py). With
    the version unknown (or a development build the table does not hold) it is silent, even for a
    name no release ever registered: new templates are registered by editing data/template.py,
    so such a name usually means a fork or a vendored copy of LLaMA-Factory reads the file
    (SkyThought and OpenThinker train with forks that register `qwen25`).

    ## Why is this bad?
    `get_template_and_fix_tokenizer` raises ValueError("Template gpt does not exist.") on every
    rank when the workflow builds the template, after the launch; templates are renamed between
    releases (the gpt-oss template was `gpt` in 0.9.4.dev0 and `gpt_oss` in 0.9.4,
    LLaMA-Factory#9759), so a name from another release's example fails.

    ## Example
    `llamafactory.yaml`:
        model_name_or_path: openai/gpt-oss-20b
        stage: sft
        do_train: true
        finetuning_type: lora
        dataset: alpaca_en_demo
        template: gpt
        output_dir: out
    `requirements.txt`:
        llamafactory==0.9.4
    Use instead:
        model_name_or_path: openai/gpt-oss-20b
        stage: sft
        do_train: true
        finetuning_type: lora
        dataset: alpaca_en_demo
        template: gpt_oss
        output_dir: out

    ## Fix safety
    No fix: the right template depends on the model and the data; the message names the
    release's closest names.

    ## References
    - hiyouga/LLaMA-Factory src/llamafactory/data/template.py register_template and
      get_template_and_fix_tokenizer ("Template {} does not exist.", in every release from 0.0.9:
      src/llmtuner/extras/template.py up to 0.2.2); the names per release tag in
      linter/data/llamafactory_templates.json (bench/llamafactory_templates.py)
    - `gpt` registered by 4dfad2490 (#8826, 0.9.4.dev0), renamed `gpt_oss` by 6ef985471 (#9638)
    - hiyouga/LLaMA-Factory#9759
    """

    code = "TRN067"
    name = "unregistered-template"
    severity = ERROR
    triggers = ("data.chat_template",)

    def check(self, run, context):
        for config in run.configs:
            package = _PACKAGES.get(config.value("file.kind"))
            found = config.get("data.chat_template") if package else None
            if found is None or not isinstance(found.value, str) or found.origin.default_source is not None:
                continue
            from linter import template_registry as registry  # the table is read only when needed

            name = found.value
            version = config.version(package)
            names = registry.registered(package, version[0]) if version is not None else None
            if names is not None:
                if name in names:
                    continue
                earlier = registry.releases_with(package, name)
                known = f" (releases {earlier[0]} to {earlier[-1]} register it)" if earlier else ""
                yield self.finding(
                    config, found.span,
                    f"template {name!r} is not registered in {package} {version[0]} ({version[1]}){known}: the "
                    f"launch fails with \"Template {name} does not exist.\"{_closest(name, names)}")
                continue
            # Unknown release: a fork or vendored copy may register the name (see the docs).
            context.notes.append(f"{config.path}: {self.code} skipped: the {package} release is unknown"
                                 + ("" if version is None else f" ({version[0]} is not in the release table)"))


def _closest(name: str, names) -> str:
    import difflib  # only when a finding is made

    close = difflib.get_close_matches(name, sorted(names), n=3, cutoff=0.6)
    prefixed = [other for other in sorted(names) if other.startswith(name) and other not in close][:3 - len(close)]
    suggestions = close + prefixed
    return f"; did you mean {', '.join(suggestions)}?" if suggestions else ""


# Axolotl releases (axolotl-ai-cloud/axolotl tags): v0.4.0 pinned fschat 0.2.34 and registered chatml; the
# 0.4.1 main branch pinned 0.2.36, then FastChat 5095615, then 27a05b04, and registered chatml_glaive and
# llama3 too; v0.5.0 is the first release after fd3b80716 (#2021), which refuses every sharegpt type.
_REFUSED_FROM = "0.5.0"


@register
class SharegptConversationUnknown(Rule):
    """TRN066 sharegpt-conversation-unknown

    ## What it does
    Flags an Axolotl dataset of a ShareGPT type that the Axolotl release cannot load:
    - with axolotl 0.5.0 or later pinned, any `type: sharegpt*` dataset (refused at validation);
    - with axolotl 0.4.x pinned, a `type: sharegpt` dataset whose `conversation` is no FastChat
      conversation template of the fschat that release pinned (nor one Axolotl registers:
      chatml, chatml_glaive, llama3), or — on the 0.4.1 branch — whose empty `conversation` is
      filled from a `chat_template` that no such template matches;
    - with the version unknown, only a `conversation` no pinned fschat ever registered, or an
      empty one filled from a `chat_template` that Axolotl accepted only after the fill existed
      (phi_3, phi_35, qwen_25, mistral_v1, ...): every release that accepts such a
      chat_template either fails at the dataset or refuses the type. v0.3.0 (September 2023,
      before FastChat conversations) ignored `conversation` and had no `chat_template`.

    ## Why is this bad?
    The sharegpt loader builds its prompter with fastchat's `get_conv_template(conversation)`;
    for an unregistered name it raises, `prompt_strategies.load()` swallows the error and
    returns None, and the run dies preparing the data with "unhandled prompt tokenization
    strategy: sharegpt" (axolotl-ai-cloud/axolotl#1683). From 0.5.0 the validation refuses the
    type: "`type: sharegpt.*` is deprecated. Please use `type: chat_template` instead."

    ## Example
    `axolotl.yaml`:
        base_model: microsoft/Phi-3-mini-4k-instruct
        chat_template: phi_3
        datasets:
          - path: mlabonne/FineTome-100k
            type: sharegpt
        micro_batch_size: 1
    Use instead:
        base_model: microsoft/Phi-3-mini-4k-instruct
        chat_template: phi_3
        datasets:
          - path: mlabonne/FineTome-100k
            type: chat_template
            field_messages: conversations
            message_property_mappings:
              role: from
              content: value
        micro_batch_size: 1

    ## Fix safety
    No fix: `type: chat_template` reads the messages under other field names, which the author
    must map.

    ## References
    - axolotl prompters.py ShareGPTPrompter (get_conv_template, from e7d3e2dbb #578),
      prompt_strategies/sharegpt.py (register_conv_template: chatml; chatml_glaive b7d8a7dc4;
      llama3 50421c8b1), prompt_strategies/__init__.py load, utils/config normalize_cfg_datasets
      (the fill, 9d4225a05 #1664, 2024-05-29); phi_3 accepted from cf64284a0 (#1582, 2024-06-04)
    - the refusal: utils/schemas/validation.py deprecate_sharegpt_datasets (fd3b80716, #2021,
      first in v0.5.0; still at 067b021c8)
    - lm-sys/FastChat fastchat/conversation.py at v0.2.34, v0.2.36, 5095615, 27a05b04 (the pins in
      Axolotl's requirements.txt); the names in linter/data/fastchat_conversations.json
      (bench/fastchat_conversations.py)
    - axolotl-ai-cloud/axolotl#1683
    """

    code = "TRN066"
    name = "sharegpt-conversation-unknown"
    severity = ERROR
    triggers = ("data.sharegpt_types",)

    def check(self, run, context):
        for config in run.configs:
            types = config.get("data.sharegpt_types")
            if types is None:
                continue
            from linter import template_registry as registry  # the tables are read only when needed

            table = registry.fastchat()
            version = config.version("axolotl")
            conversation = config.get("data.sharegpt_conversation")
            filled = config.get("data.sharegpt_filled")
            late = set(table["axolotl_chat_template_enum"]["last"]) - set(table["axolotl_chat_template_enum"]["fill"])
            if version is not None and older_than(version[0], _REFUSED_FROM) is False:
                yield self.finding(
                    config, types.span,
                    f"axolotl {version[0]} ({version[1]}) refuses {types.value[0]!r} datasets at validation "
                    "(\"`type: sharegpt.*` is deprecated. Please use `type: chat_template` instead.\"); convert the "
                    "dataset to type: chat_template")
                continue
            if version is not None and older_than(version[0], "0.4.0") is not False:
                continue  # before FastChat conversations (or not known here)
            if version is not None and older_than(version[0], "0.4.1") is True:
                names = set(table["fschat"]["0.2.34"]) | set(table["axolotl_conversations"]["v0.4.0"])
                filled, where = None, f"axolotl {version[0]} ({version[1]}, fschat 0.2.34)"
            else:
                pins = ("0.2.36", "5095615", "27a05b04") if version else tuple(table["fschat"])
                names = {name for pin in pins for name in table["fschat"][pin]} | {
                    name for found in table["axolotl_conversations"].values() for name in found}
                where = (f"axolotl {version[0]} ({version[1]})" if version else
                         "any Axolotl release that reads it (v0.4.0 on; 0.5.0 and later refuse the type)")
            if conversation is not None and conversation.value not in names:
                yield self.finding(
                    config, conversation.span,
                    f"conversation {conversation.value!r} is no FastChat conversation template in {where}: the "
                    "sharegpt loader fails (\"unhandled prompt tokenization strategy: sharegpt\") when the data is "
                    "prepared; name a FastChat template, or use type: chat_template")
            elif conversation is None and filled is not None and filled.value in late:
                yield self.finding(
                    config, filled.span,
                    f"chat_template {filled.value!r} with a type: sharegpt dataset without `conversation`: Axolotl "
                    f"copies it into the dataset's conversation, and {filled.value} is no FastChat conversation "
                    "template, so the sharegpt loader fails (\"unhandled prompt tokenization strategy: sharegpt\"); "
                    "Axolotl 0.5.0 and later refuse type: sharegpt; use type: chat_template")
            elif version is None:
                context.notes.append(f"{config.path}: {self.code} skipped: the axolotl version is unknown")


# data/template.py register_template(..., template_class=ReasoningTemplate): each name with the first
# release where it is a reasoning template in every build. None: the name was registered as one in
# the commit that added it (qwen3_vl / qwen3_omni 0761a4448 2025-09-27, qwen3_5 2b8b87147 2026-02-26,
# qwen3_6 ecca167eb 2026-04-22), so every release that knows it agrees; qwen3 (98f23c658,
# 2025-04-29) became one a day later (052ca871b #7923), first released in v0.9.3.
_REASONING_TEMPLATES = {"qwen3": "0.9.3", "qwen3_vl": None, "qwen3_omni": None, "qwen3_5": None, "qwen3_6": None}
# The release that registered each `None` template, a ReasoningTemplate from its registration
# (0761a4448: qwen3_vl, qwen3_omni, v0.9.4; 2b8b87147 qwen3_5 and ecca167eb qwen3_6, v0.9.5) in every
# tag to ff6d4d12e, with DataArguments.enable_thinking default True (9b5baa97f, v0.9.3): every
# release that reads the name trains the empty thought, so these fire with the version unknown.
_FIRST_REGISTERED = {"qwen3_vl": "0.9.4", "qwen3_omni": "0.9.4", "qwen3_5": "0.9.5", "qwen3_6": "0.9.5"}
# Checkpoints published as non-thinking only (their model cards: "supports only non-thinking mode"
# for Qwen3-*-Instruct-2507, Qwen3-Coder-*-Instruct and Qwen3-Next-*-Instruct; Qwen3-VL ships
# separate -Instruct and -Thinking checkpoints, and the Instruct chat template opens no <think>).
# Checked 2026-11-24 against mirrored copies of the Qwen3-4B-Instruct-2507 / -Thinking-2507 cards
# (the Instruct card: non-thinking mode only, no <think></think> blocks, enable_thinking=False no
# longer needed); the hybrid Qwen3-<N>B checkpoints (no suffix) think by default and stay out.
_NON_THINKING = LazyPattern(r"(^|/)Qwen3-(VL-\d+B(-A\d+B)?-Instruct|\d+B(-A\d+B)?-Instruct-2507|"
                             r"Coder-[\w.-]*Instruct|Next-\d+B-A\d+B-Instruct)(-FP8)?/?$", re.I)


@register
class ThinkingTemplateForInstructModel(Rule):
    """TRN079 thinking-template-for-instruct-model

    ## What it does
    Flags a LLaMA-Factory reasoning template (`qwen3`, `qwen3_vl`, `qwen3_omni`, `qwen3_5`,
    `qwen3_6`) with `enable_thinking` left at its default `true`, for a checkpoint published as
    non-thinking only (Qwen3-VL-*-Instruct, Qwen3-*-Instruct-2507, Qwen3-Coder-*-Instruct,
    Qwen3-Next-*-Instruct). `qwen3` only from v0.9.3 (the release where it is a reasoning
    template in every build), silent where the LLaMA-Factory version is unknown; the others fire
    with the version unknown too: every release that registers them (v0.9.4, v0.9.5 on) does so
    as reasoning templates, with `enable_thinking` true by default.

    ## Why is this bad?
    `ReasoningTemplate.encode_oneturn` / `encode_multiturn` prepend the empty thought
    (`<think>\\n\\n</think>\\n\\n`) to every response without one, inside the response ids when
    `enable_thinking` is true, so it is trained. A non-thinking checkpoint never wrote these
    tags; after fine-tuning on data without reasoning it opens every answer with an empty think
    block (LLaMA-Factory#9392, #8832, #10644). The maintainer's answer: use the `*_nothink`
    template.

    ## Example
    `llamafactory.yaml`:
        model_name_or_path: Qwen/Qwen3-VL-4B-Instruct
        stage: sft
        do_train: true
        finetuning_type: lora
        dataset: mllm_demo
        template: qwen3_vl
        output_dir: out
    `requirements.txt`:
        llamafactory==0.9.4
    Use instead:
        model_name_or_path: Qwen/Qwen3-VL-4B-Instruct
        stage: sft
        do_train: true
        finetuning_type: lora
        dataset: mllm_demo
        template: qwen3_vl_nothink
        output_dir: out

    ## Fix safety
    The fix writes the `_nothink` twin of the template where the release registers one (else
    `enable_thinking: false`, which puts the empty thought into the prompt, untrained); unsafe,
    since a dataset that does hold reasoning would then be trained without its thought tags.

    ## References
    - src/llamafactory/data/template.py ReasoningTemplate.encode_oneturn / encode_multiturn (the
      empty thought in response_ids when enable_thinking), register_template(name="qwen3_vl",
      template_class=ReasoningTemplate) and qwen3_vl_nothink (v0.9.4; unchanged at ff6d4d12e)
    - src/llamafactory/hparams/data_args.py DataArguments.enable_thinking (default True)
    - hiyouga/LLaMA-Factory#9392 (maintainer: "Please use qwen3_vl_nothink template"), #8832, #10644
    """

    code = "TRN079"
    name = "thinking-template-for-instruct-model"
    triggers = ("data.enable_thinking",)

    def check(self, run, context):
        for config in run.configs:
            template, model = config.value("data.chat_template"), config.value("model.name")
            if (_PACKAGES.get(config.value("file.kind")) != "llamafactory" or not isinstance(template, str)
                    or template not in _REASONING_TEMPLATES or not isinstance(model, str)
                    or not _NON_THINKING.search(model) or config.value("data.enable_thinking") is not True):
                continue
            found = config.version("llamafactory")
            since = _REASONING_TEMPLATES[template]
            if found is None and since is not None:
                context.notes.append(f"{config.path}: {self.code} skipped: the LLaMA-Factory version is unknown")
                continue
            if found is not None and since is not None and older_than(found[0], since) is not False:
                continue
            from linter import template_registry as registry  # the table is read only when needed

            twin = f"{template}_nothink"
            names = (found and registry.registered("llamafactory", found[0])) \
                or registry.ever_registered("llamafactory") or ()
            on = (f"LLaMA-Factory {found[0]}, {found[1]}" if found else
                  f"in every LLaMA-Factory that registers it, from {_FIRST_REGISTERED[template]}")
            advice = f"use template {twin}" if twin in names else "set enable_thinking: false"
            change = (SetValue(config, "data.chat_template", twin) if twin in names
                      else SetValue(config, "data.enable_thinking", False))
            yield self.finding(
                config, config.span("data.chat_template"),
                f"template {template} is a reasoning template ({on}) and "
                f"enable_thinking is true, but {model} is a non-thinking checkpoint: every response without a "
                "thought gets an empty <think></think> block prepended and trained, so the fine-tuned model "
                f"opens its answers with think tags; {advice}",
                fix=self.fix(advice[0].upper() + advice[1:], change, applicability=Applicability.UNSAFE),
            )
