"""A framework feature that works only for the model types its release patches (TRN080).

One declarative table, keyed by feature, framework release and model_type. A `Feature` is one
switch of one framework: the IR key that turns it on, the package whose release decides, and
`types`, each model_type with the first release that handles it (the checked release tags are
`releases`). `closed=True`: the framework dispatches on a fixed list, so a model_type absent from
`types` is handled by no checked release; `closed=False`: only the listed model types are known to
break before their release (any other type is left alone). A later row is data, not code.

A pin is judged against the release it is, or for a development build (0.9.3.dev0) the release it
leads to: the lists only grow, so a type absent from release R is absent from every R.devN, while
a type present in R may be absent from its development builds (silent). A pin newer than the last
checked release, an unknown pin or an unknown model_type is silent.
"""

from __future__ import annotations

from linter.registry import WARNING, Rule, register
from linter.versions import older_than


class Feature:
    __slots__ = ("name", "key", "package", "types", "closed", "releases", "when", "effect", "source")

    def __init__(self, name, key, package, types, closed, releases, when, effect, source):
        self.name, self.key, self.package, self.types, self.closed = name, key, package, types, closed
        self.releases, self.when, self.effect, self.source = releases, when, effect, source


def _training(config) -> bool:
    return config.value("training.enabled") is not False


_LF_LIGER_RELEASES = ("0.9.0", "0.9.1", "0.9.2", "0.9.3", "0.9.4", "0.9.5")
FEATURES = (
    # src/llamafactory/model/model_utils/liger_kernel.py apply_liger_kernel: an if/elif chain on
    # config.model_type picks apply_liger_kernel_to_*; any other type logs "Current model does not
    # support liger kernel." and returns, and training goes on without Liger. Read at each tag.
    Feature("enable_liger_kernel", "model.liger_kernel", "llamafactory", {
        "gemma": "0.9.0", "gemma2": "0.9.0", "llama": "0.9.0", "mistral": "0.9.0", "mixtral": "0.9.0",
        "phi3": "0.9.0", "qwen2": "0.9.0", "qwen2_vl": "0.9.1", "mllama": "0.9.2", "qwen2_5_vl": "0.9.2",
        "gemma3": "0.9.3", "gemma3_text": "0.9.3", "glm4": "0.9.3", "granite": "0.9.3", "llava": "0.9.3",
        "olmo2": "0.9.3", "paligemma": "0.9.3", "qwen3": "0.9.3", "qwen3_moe": "0.9.3",  # qwen3: 994ab6424 #7966
        "glm4v": "0.9.4", "gpt_oss": "0.9.4", "glm": "0.9.5", "qwen3_next": "0.9.5", "qwen3_5": "0.9.5",
    }, True, _LF_LIGER_RELEASES, _training,
        "one warning line (\"Current model does not support liger kernel.\"), no Liger kernel is applied, and the "
        "run trains with the unfused cross-entropy and RMSNorm: the logits are materialised and the memory the "
        "config counts on is not saved",
        "src/llamafactory/model/model_utils/liger_kernel.py apply_liger_kernel"),
    # Axolotl sample packing: monkeypatch/multipack.py SUPPORTED_MULTIPACK_MODEL_TYPES covers the
    # attention layers; hybrid Gated DeltaNet (linear attention) layers need cu_seqlens from the
    # position_ids, which only loaders/patch_manager.py patch_qwen3_5_modeling_packing /
    # patch_qwen3_5_moe_modeling_packing give them (c11938233 #3442, first in v0.15.0). Open table:
    # full-attention types outside the list pack correctly through transformers' own varlen path.
    Feature("sample_packing", "sequence.packing", "axolotl", {"qwen3_5": "0.15.0", "qwen3_5_moe": "0.15.0"},
            False, ("0.14.0", "0.15.0", "0.16.0", "0.16.1", "0.17.0", "0.18.0"), _training,
            "the linear-attention (Gated DeltaNet) layers get no sequence boundaries, so the packed samples run "
            "as one recurrent sequence and leak into each other (the loss falls towards 0 with no error)",
            "src/axolotl/loaders/patch_manager.py patch_qwen3_5_modeling_packing (v0.15.0, c11938233 #3442); "
            "monkeypatch/multipack.py SUPPORTED_MULTIPACK_MODEL_TYPES"),
)


def _release_of(version: str) -> str | None:
    """The release a pin is or leads to (0.9.3.dev0 -> 0.9.3), None where it does not parse."""
    from packaging.version import InvalidVersion, Version

    try:
        return Version(version).base_version
    except InvalidVersion:
        return None


def unhandled(feature: Feature, model_type: str, version: str) -> bool | None:
    """True: no build of `version` handles the type; False: it does (or may); None: unknown."""
    release = _release_of(version)
    if release is None or older_than(release, feature.releases[0]) or older_than(feature.releases[-1], release):
        return None
    since = feature.types.get(model_type)
    if since is None:
        return True if feature.closed else False
    return older_than(release, since) is True


@register
class FeatureUnsupportedModelType(Rule):
    """TRN080 feature-unsupported-model-type

    ## What it does
    Flags a framework feature that the pinned release applies per model type, switched on for a
    base model whose model_type (its config.json, else the name table) that release does not
    handle. The table (rules/model_features.py FEATURES) holds, per feature, each model_type with
    the first release that handles it: LLaMA-Factory `enable_liger_kernel` (the model types of
    `apply_liger_kernel`, v0.9.0 to v0.9.5) and Axolotl `sample_packing` for hybrid
    linear-attention models (qwen3_5, qwen3_5_moe: patched from v0.15.0). Silent where the version,
    or the model_type, is unknown, and for a development build of the release that adds the type.

    ## Why is this bad?
    Neither framework refuses the config. LLaMA-Factory logs one line and trains without Liger,
    so the memory the config was sized for is not saved (LLaMA-Factory#7965: Qwen3 on
    0.9.3.dev0; #5528: Qwen2-VL). Axolotl before v0.15.0 packs Qwen3.5 samples into one sequence
    whose Gated DeltaNet layers see no boundaries, so the samples leak into each other and the loss
    falls towards 0 (axolotl#3453).

    ## Example
    `llamafactory.yaml`:
        model_name_or_path: Qwen/Qwen3-8B
        enable_liger_kernel: true
        stage: sft
        do_train: true
        finetuning_type: lora
        dataset: alpaca_en_demo
        template: qwen
        output_dir: out
    `requirements.txt`:
        llamafactory==0.9.2
    Use instead:
        model_name_or_path: Qwen/Qwen2.5-7B
        enable_liger_kernel: true
        stage: sft
        do_train: true
        finetuning_type: lora
        dataset: alpaca_en_demo
        template: qwen
        output_dir: out

    ## Fix safety
    No fix: the remedy is a newer release (LLaMA-Factory v0.9.3 for Qwen3's Liger kernels,
    Axolotl v0.15.0 for Qwen3.5 packing) or turning the feature off, which changes the run.

    ## References
    - LLaMA-Factory src/llamafactory/model/model_utils/liger_kernel.py apply_liger_kernel, read at
      v0.9.0-v0.9.5 (qwen3 / qwen3_moe: 994ab6424 #7966, first in v0.9.3)
    - Axolotl src/axolotl/loaders/patch_manager.py patch_qwen3_5_modeling_packing (c11938233 #3442,
      first in v0.15.0), monkeypatch/multipack.py SUPPORTED_MULTIPACK_MODEL_TYPES (v0.14.0)
    - hiyouga/LLaMA-Factory#7965, #5528; axolotl-ai-cloud/axolotl#3453; huggingface/transformers#46851
    """

    code = "TRN080"
    name = "feature-unsupported-model-type"
    severity = WARNING

    def check(self, run, context):
        for config in run.configs:
            for feature in FEATURES:
                if config.value(feature.key) is not True or not feature.when(config):
                    continue
                version = config.version(feature.package)
                name = config.value("model.name")
                if version is None or not isinstance(name, str) or not name:
                    continue
                from linter.models import model_type_of  # the table is read only when needed

                found = model_type_of(name, config.path.parent)
                if found is None or unhandled(feature, found[0], version[0]) is not True:
                    continue
                since = feature.types.get(found[0])
                first = f"first handled in {since}" if since else "handled by no release up to " + feature.releases[-1]
                yield self.finding(
                    config, config.span(feature.key),
                    f"{feature.name} for {name} (model_type {found[0]}) on {feature.package} {version[0]} "
                    f"({version[1]}), which does not handle that model type ({first}): {feature.effect} "
                    f"({feature.source})")
