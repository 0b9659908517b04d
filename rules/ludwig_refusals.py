"""More of Ludwig's own config refusals (issue 16), read in the newest release's schema classes
(ludwig-ai/ludwig v0.17.8): the rows TRN035 and TRN036 (rules/llm_validation.py) add for the
adapter's initialisation and the prompt's retrieval, and TRN096 for the trainer's batch sizes.
Each raises ConfigValidationError from a schema class's __post_init__ while the config loads,
before any data or model; the release each first shipped in is `git tag --contains` of the
commit that added it.
"""

from __future__ import annotations

from linter.registry import register

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


def _whole(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


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
        if not _whole(effective) or not _whole(other):
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
