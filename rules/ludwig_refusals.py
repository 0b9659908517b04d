"""More of Ludwig's own config refusals (issue 16), read in the newest release's schema classes
(ludwig-ai/ludwig v0.17.8): the rows TRN035 and TRN036 (rules/llm_validation.py) add for the
adapter's initialisation, the `adapters:` block and the prompt's retrieval, TRN096 for the
trainer's batch sizes, and TRN105 for model_parameters.rope_scaling.
Each raises ConfigValidationError from a schema class's __post_init__ while the config loads,
before any data or model; the release each first shipped in is `git tag --contains` of the
commit that added it.
"""

from __future__ import annotations

from linter.registry import ERROR, Rule, register
from linter.versions import older_than

from .facts import positive_int
from .validation_table import Row, TableRule, llm, lowered

_PEFT = "ludwig/schema/llms/peft.py: LoraConfig.__post_init__ (AdaloraConfig inherits it)"
_PROMPT = "ludwig/schema/llms/prompt.py: RetrievalConfig.__post_init__"
_TRAINER = "ludwig/schema/trainer.py: ECDTrainerConfig.__post_init__ (FineTuneTrainerConfig and its subclasses inherit it)"


def _init_without(method: str, block: str):
    def when(config) -> bool:
        return (llm(config) and lowered(config, "adapter.kind") in ("lora", "adalora")
                and config.value("adapter.init_weights") == method and config.value(block) is None)
    return when


# init_lora_weights, eva_config and loftq_config arrive in LoraConfig with these checks (5fe1e8701, #4146,
# v0.16.0; absent at v0.15.1, unchanged to v0.17.8): every release that reads the keys refuses the config.
_INIT = dict(since="0.16.0", unpinned="refused from Ludwig 0.16.0, the release that added init_lora_weights")
INIT_ROWS = (
    Row(_init_without("loftq", "adapter.loftq_config"), "adapter.init_weights",
        "init_lora_weights loftq without a loftq_config block",
        "`loftq_config` must be set when `init_lora_weights` is 'loftq'. "
        "Example: loftq_config: {loftq_bits: 4, loftq_iter: 1}", _PEFT, "5fe1e8701, Ludwig 0.16.0", **_INIT),
    Row(_init_without("eva", "adapter.eva_config"), "adapter.init_weights",
        "init_lora_weights eva without an eva_config block",
        "`eva_config` must be set when `init_lora_weights` is 'eva'. Example: eva_config: {rho: 2.0}",
        _PEFT, "5fe1e8701, Ludwig 0.16.0", **_INIT),
)


def _both_adapter_forms(config) -> bool:
    """`adapter:` written (a type, or a block whose type is unknown here) beside an `adapters:` block."""
    found = config.get("adapter.kind")
    return llm(config) and config.get("adapter.named_adapters") is not None and (found is None or found.value is not None)


# `adapters:` (NamedAdaptersConfig) and LLMModelConfig.__post_init__'s checks arrive together (79c226a6a, first in
# v0.15.0; read at v0.15.0 and v0.17.8); before it, pydantic / marshmallow drop `adapters:` as an unknown key.
_NAMED = dict(since="0.15.0", unpinned="refused from Ludwig 0.15.0, the release that added `adapters:` (older "
                                       "releases drop the block as an unknown key)")
_LLM = "ludwig/schema/model_types/llm.py: LLMModelConfig.__post_init__"
NAMED_ROWS = (
    Row(_both_adapter_forms, "adapter.named_adapters", "`adapter:` and `adapters:` both set",
        "Cannot set both `adapter:` and `adapters:` — use one form or the other. [...]", _LLM,
        "79c226a6a, Ludwig 0.15.0", **_NAMED),
    Row(lambda config: llm(config) and config.value("adapter.named_adapters") == [], "adapter.named_adapters",
        "an `adapters:` block with no adapters in its `adapters` map",
        "`adapters.adapters` must contain at least one entry. To disable parameter-efficient fine-tuning, "
        "remove the `adapters:` field entirely.", _LLM, "79c226a6a, Ludwig 0.15.0", **_NAMED),
)


def _retrieval(test):
    return lambda config: llm(config) and test(config.value("prompt.retrieval"), config)


def _k_without_type(kind, config) -> bool:
    k = config.value("prompt.retrieval_k")
    return kind is None and isinstance(k, int) and not isinstance(k, bool) and k != 0


# The same four checks since da0efe7a5 (#3399, "Move prompt into top-level of config", first in v0.8, the first
# release with prompt:), read at v0.8 and v0.17.8: every release that reads the keys refuses them.
_RETRIEVAL_ADDED = "da0efe7a5, Ludwig 0.8"
RETRIEVAL_ROWS = (
    Row(_retrieval(_k_without_type), "prompt.retrieval_k",
        "prompt.retrieval.k with no retrieval type (no samples are retrieved)",
        "k must be 0 if retrieval type is None.", _PROMPT, _RETRIEVAL_ADDED),
    Row(_retrieval(lambda kind, config: kind is None and config.value("prompt.retrieval_model") is not None),
        "prompt.retrieval_model", "prompt.retrieval.model_name with no retrieval type",
        "model_name must be None if retrieval type is None.", _PROMPT, _RETRIEVAL_ADDED),
    Row(_retrieval(lambda kind, config: kind == "semantic" and config.value("prompt.retrieval_model") is None),
        "prompt.retrieval", "semantic retrieval with no embedding model_name",
        "model_name must not be None if retrieval type is 'semantic'.", _PROMPT, _RETRIEVAL_ADDED),
)


def _effective(key: str, divisible: bool):
    """effective_batch_size and `key` both written as numbers (not "auto"), in a trainer that runs
    ECDTrainerConfig's checks (an ECD config, or an LLM fine-tuning trainer), and the check fails."""
    def when(config) -> bool:
        kind = config.value("model.kind")
        if kind == "llm":
            if lowered(config, "training.trainer") in (None, "none"):
                return False  # InferenceOnlyTrainerConfig: no such check
        elif kind != "ecd":
            return False
        effective, other = config.value("batch.effective"), config.value(key)
        if not positive_int(effective) or not positive_int(other):
            return False
        return effective >= other and effective % other != 0 if divisible else effective < other
    return when


# effective_batch_size and these checks arrive together (8d4c96bcf, #3533, first in v0.8.2; read at v0.8.2 and
# v0.17.8): every release that reads the key refuses them.
_BATCH = dict(since="0.8.2", unpinned="refused from Ludwig 0.8.2, the release that added effective_batch_size")
_BATCH_ADDED = "8d4c96bcf, Ludwig 0.8.2"


@register
class RefusedTrainerBatch(TableRule):
    """TRN096 ludwig-effective-batch-refused

    ## What it does
    Flags a Ludwig trainer (an ECD model's, or an LLM's `finetune`, `dpo`, `kto`, `orpo` or
    `grpo` trainer) whose written `effective_batch_size` is smaller than, or not a multiple of,
    the written `batch_size` or `gradient_accumulation_steps`.

    ## Why is this bad?
    Ludwig derives the accumulation steps from the effective batch size: an effective batch
    that the micro batch (or the accumulation) does not divide cannot be met, and Ludwig
    refuses the config while it loads ("`effective_batch_size` (...) must be divisible by
    `batch_size` (...)"). The key and the check arrived together in Ludwig 0.8.2, so every
    release that reads the key refuses it, pinned or not.

    ## Example
    `train.yaml`:
        model_type: llm
        base_model: meta-llama/Llama-2-7b-hf
        input_features:
          - name: prompt
            type: text
        output_features:
          - name: response
            type: text
        trainer:
          type: finetune
          batch_size: 3
          effective_batch_size: 32
    Use instead, in `train.yaml`:
        model_type: llm
        base_model: meta-llama/Llama-2-7b-hf
        input_features:
          - name: prompt
            type: text
        output_features:
          - name: response
            type: text
        trainer:
          type: finetune
          batch_size: 4
          effective_batch_size: 32

    ## Fix safety
    No fix: which of the two numbers to change is the author's choice.

    ## References
    - ludwig/schema/trainer.py ECDTrainerConfig.__post_init__ (8d4c96bcf, #3533, Ludwig 0.8.2);
      FineTuneTrainerConfig(ECDTrainerConfig), InferenceOnlyTrainerConfig(LLMTrainerConfig)
    """

    code = "TRN096"
    name = "ludwig-effective-batch-refused"
    triggers = ("batch.effective",)
    rows = (
        Row(_effective("batch.micro", False), "batch.effective",
            "effective_batch_size smaller than batch_size",
            "`effective_batch_size` (...) must be greater than or equal to `batch_size` "
            "(...).", _TRAINER, _BATCH_ADDED, **_BATCH),
        Row(_effective("batch.micro", True), "batch.effective",
            "effective_batch_size not a multiple of batch_size",
            "`effective_batch_size` (...) must be divisible by `batch_size` (...).",
            _TRAINER, _BATCH_ADDED, **_BATCH),
        Row(_effective("batch.grad_accum", False), "batch.effective",
            "effective_batch_size smaller than gradient_accumulation_steps",
            "`effective_batch_size` (...) must be greater than or equal to "
            "`gradient_accumulation_steps` (...).", _TRAINER, _BATCH_ADDED, **_BATCH),
        Row(_effective("batch.grad_accum", True), "batch.effective",
            "effective_batch_size not a multiple of gradient_accumulation_steps",
            "`effective_batch_size` (...) must be divisible by `gradient_accumulation_steps` "
            "(...).", _TRAINER, _BATCH_ADDED, **_BATCH),
    )


# ---- TRN105: model_parameters.rope_scaling as the pinned release reads it.
# RoPEScalingConfig (ludwig/schema/llms/model_parameters.py, f8708a3ca #3477, first in v0.8) names the method
# `type` up to v0.10.4 and `rope_type` from 86a97e521 (#4059, first in v0.11.0; unchanged at v0.17.8). The other
# spelling is dropped as an unknown key (marshmallow unknown=EXCLUDE to 0.11.x; pydantic extra="ignore" from
# 0.12.0), and __post_init__ then refuses the block for its missing method, before the factor.
_RENAMED = "0.11.0"


@register
class RefusedRopeScaling(Rule):
    """TRN105 llm-rope-scaling-refused

    ## What it does
    Flags a Ludwig LLM config whose `model_parameters.rope_scaling` block the release refuses:
    the method under the key that release does not read (`type` up to 0.10.x, `rope_type` from
    0.11.0), or no `factor`. The spelling is judged only where the Ludwig version is pinned (each
    spelling is right for some releases); a block with no method under either key, or no factor,
    is refused by every release and fires unpinned too.

    ## Why is this bad?
    `RoPEScalingConfig.__post_init__` raises ConfigValidationError while the config loads
    ("`rope_scaling`'s `rope_type` field must be one of ['linear', 'dynamic'], got None", `type`
    before 0.11.0): the key of the other spelling is dropped as unknown, so the method reads None.
    A config carried across 0.11.0 (86a97e521 renamed the key) stops loading.

    ## Example
    `train.yaml`:
        model_type: llm
        base_model: meta-llama/Llama-2-7b-hf
        input_features:
          - name: prompt
            type: text
        output_features:
          - name: response
            type: text
        model_parameters:
          rope_scaling:
            type: linear
            factor: 2.0
    `requirements.txt`:
        ludwig==0.11.0
    Use instead (0.11.0 and later):
        model_parameters:
          rope_scaling:
            rope_type: linear
            factor: 2.0

    ## Fix safety
    No fix.

    ## References
    - ludwig-ai/ludwig ludwig/schema/llms/model_parameters.py RoPEScalingConfig (f8708a3ca, #3477, v0.8;
      `type` -> `rope_type` in 86a97e521, #4059, v0.11.0; read at v0.10.4, v0.11.0 and v0.17.8),
      ludwig/schema/utils.py BaseMarshmallowConfig.Meta.unknown (EXCLUDE) and LudwigBaseConfig
      (extra="ignore", model_post_init calls __post_init__, 5c5bd9dee, v0.12.0)
    """

    code = "TRN105"
    name = "llm-rope-scaling-refused"
    severity = ERROR
    triggers = ("model.rope_scaling_keys",)

    def check(self, run, context):
        for config in run.configs:
            keys = config.value("model.rope_scaling_keys")
            if not llm(config) or keys is None:
                continue
            found = config.version("ludwig")
            span = config.span("model.rope_scaling_keys")
            if found is None:
                if not {"type", "rope_type"} & set(keys):
                    yield self.finding(config, span, "model_parameters.rope_scaling names no method (`type` to Ludwig "
                                       "0.10.x, `rope_type` from 0.11.0): every release refuses it (\"`rope_scaling`'s "
                                       "... field must be one of ['linear', 'dynamic'], got None\")")
                elif "factor" not in keys:
                    first = ("" if {"type", "rope_type"} <= set(keys) else
                             " (those that do not read its method key refuse it for that first: `type` to 0.10.x, "
                             "`rope_type` from 0.11.0)")
                    yield self.finding(config, span, _NO_FACTOR + "every release refuses it" + first)
                elif len({"type", "rope_type"} & set(keys)) == 1:
                    context.notes.append(f"{config.path}: {self.code}: rope_scaling's method key not judged: the "
                                         f"Ludwig version is unknown (`type` to 0.10.x, `rope_type` from 0.11.0)")
                continue
            older = older_than(found[0], _RENAMED)
            if older is None:
                continue
            reads, other = ("type", "rope_type") if older else ("rope_type", "type")
            on = f"Ludwig {found[0]} ({found[1]})"
            if reads not in keys:
                dropped = (f" (the `{other}` written is {'a key from 0.11.0' if older else 'the key before 0.11.0'}, "
                           "dropped as unknown)" if other in keys else "")
                yield self.finding(config, span, f"{on} reads rope_scaling's method from `{reads}`{dropped}, so it "
                                   f"refuses the block: \"`rope_scaling`'s `{reads}` field must be one of ['linear', "
                                   "'dynamic'], got None\" (ludwig/schema/llms/model_parameters.py RoPEScalingConfig."
                                   "__post_init__; renamed in 86a97e521, Ludwig 0.11.0)")
            elif "factor" not in keys:
                yield self.finding(config, span, _NO_FACTOR + f"{on} refuses it")


_NO_FACTOR = ("model_parameters.rope_scaling has no factor: \"When using `rope_scaling`, `factor` must be specified and "
              "be > 1. Got None.\" (ludwig/schema/llms/model_parameters.py RoPEScalingConfig.__post_init__); ")
