"""A chat template name the framework's release does not register (TRN067)."""

from __future__ import annotations

import difflib

from linter.registry import ERROR, Rule, register

# Which table holds the names a file kind's `template` may take, and the package whose release decides.
_PACKAGES = {"llamafactory": "llamafactory"}


@register
class UnregisteredTemplate(Rule):
    """TRN067 unregistered-template

    ## What it does
    Flags a LLaMA-Factory `template:` name that the pinned LLaMA-Factory release does not
    register, from a table of every release's registered names (data/template.py
    `register_template`, read from each release tag by bench/llamafactory_templates.py). With
    the version unknown (or a development build the table does not hold), it flags only a name
    that no release, nor the repository's HEAD, ever registered.

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
            every = registry.ever_registered(package)
            if every is None or name in every:
                if version is None:
                    context.notes.append(f"{config.path}: {self.code} skipped: the {package} version is unknown")
                continue
            yield self.finding(
                config, found.span,
                f"template {name!r} is registered by no {package} release (nor its main branch): the launch "
                f"fails with \"Template {name} does not exist.\"{_closest(name, every)}")


def _closest(name: str, names) -> str:
    close = difflib.get_close_matches(name, sorted(names), n=3, cutoff=0.6)
    prefixed = [other for other in sorted(names) if other.startswith(name) and other not in close][:3 - len(close)]
    suggestions = close + prefixed
    return f"; did you mean {', '.join(suggestions)}?" if suggestions else ""
