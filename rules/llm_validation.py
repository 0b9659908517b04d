"""LLM configs the framework's own config validation refuses before anything loads, one table of rows
per concept (features, adapter/quantization, prompt template). The rows and their sources are in
ludwig-ai/ludwig ludwig/config_validation/checks.py (`@register_config_check` functions) and
ludwig/schema/llms/quantization.py (QuantizationConfig.validate_backend); the release each check
first shipped in was read from the repository's tags (`git tag --contains`).

Left out on purpose: check_llm_finetuning_backend_config (it tests `hasattr(config.backend, "type")`
on the backend dict, which is never true, so it never fires), check_llm_quantization_backend_incompatibility
(QNT009; unregistered since PR #3688), the adalora / adaption_prompt checks (they need the base
model's config.json model_type), and the trainer check for dpo/kto/orpo/grpo with an adapter.
"""

from __future__ import annotations

from linter.registry import register

from .ludwig_refusals import INIT_ROWS, NAMED_ROWS, RETRIEVAL_ROWS
from .validation_table import Row, TableRule, first, llm, lowered, quantized, template_refs, trainer_is, trains

_CHECKS = "ludwig/config_validation/checks.py"


def _not_one_text_input(config) -> bool:
    types = config.value("data.input_types")
    return (llm(config) and types is not None and types != ["text"]
            and config.value("model.multimodal") is not True)


def _output_not_text(*trainers: str):
    is_trainer = trainer_is(*trainers)
    return lambda config: is_trainer(config) and first(config, "data.output_types") not in (None, "text")


def _ecd_text_to_text(config) -> bool:
    return (config.value("model.kind") == "ecd" and first(config, "data.input_types") == "text"
            and first(config, "data.output_types") == "text" and bool(config.value("data.encoder_pretrained")))


@register
class RefusedFeatureTypes(TableRule):
    """TRN034 llm-feature-types-refused

    ## What it does
    Flags LLM configs whose features the framework's config validation refuses: an LLM with
    other than exactly one text input feature; LLM fine-tuning (`trainer.type: finetune`) or GRPO
    with a non-text (category, binary, ...) first output feature; and an ECD config (the default
    `model_type`) that maps a text input through a pretrained encoder to a text output.

    ## Why is this bad?
    An LLM reads one prompt and generates text: fine-tuning trains the causal-LM loss on the
    output text. With a category output, Ludwig before its check crashed at the first step
    ("IndexError: Dimension specified as 0 but tensor has no dimensions", ludwig-ai/ludwig#3430);
    since 0.8 the config is refused ("LLM finetuning requires the output feature to be a text
    feature"). A text-to-text ECD model whose first (text) input has a pretrained encoder
    (`auto_transformer` with a checkpoint, or an HF encoder type such as `bert`, whose schema
    default names one) is refused since 0.9.2 ("Please use the `model_type: llm` for text-to-text
    models."); older releases accept and train it as an ECD, an RNN generator decoder on the
    encoder's pooled output (checked on 0.8.6), so that row needs the pin.

    ## Example
    `train.yaml`:
        model_type: llm
        base_model: facebook/opt-350m
        input_features:
          - name: review
            type: text
        output_features:
          - name: label
            type: category
        trainer:
          type: finetune
    Use instead, in `train.yaml`:
        model_type: llm
        base_model: facebook/opt-350m
        input_features:
          - name: review
            type: text
        output_features:
          - name: label
            type: text
        trainer:
          type: finetune

    ## Fix safety
    No fix: the output's type and the model type decide what is trained; the author picks.

    ## References
    - ludwig/config_validation/checks.py: check_llm_exactly_one_input_text_feature (PR #3508,
      Ludwig 0.8), check_llm_finetuning_output_feature_config (PR #3493, 0.8),
      check_grpo_requires_text_output (a500c88b6, 0.15.0; GRPO itself from PR #4087),
      check_llm_text_encoder_is_not_used_with_ecd (PR #3792, 0.9.2)
    - ludwig-ai/ludwig#3430, #3791
    """

    code = "TRN034"
    name = "llm-feature-types-refused"
    rows = (
        Row(_not_one_text_input, "data.input_types",
            "an LLM config needs exactly one input feature, of type text",
            "LLM requires exactly one text input feature.",
            f"{_CHECKS}: check_llm_exactly_one_input_text_feature", "PR #3508, Ludwig 0.8"),
        Row(_output_not_text("finetune"), "data.output_types",
            "LLM fine-tuning with a non-text output feature (it trains the generated text; before the check "
            "the first step crashed)",
            "LLM finetuning requires the output feature to be a text feature. If you are trying to use a different "
            "output feature type such as category or binary, please change the output feature type to text.",
            f"{_CHECKS}: check_llm_finetuning_output_feature_config", "PR #3493, Ludwig 0.8"),
        Row(_output_not_text("grpo"), "data.output_types",
            "GRPO with a non-text output feature",
            "The GRPO trainer requires a text output feature. "
            "Set your output feature type to 'text' or use a different trainer type.",
            f"{_CHECKS}: check_grpo_requires_text_output", "a500c88b6, Ludwig 0.15.0", since="0.15.0"),
        Row(_ecd_text_to_text, "data.encoder_pretrained",
            "a text-to-text ECD model whose text input has a pretrained encoder (text generation from a "
            "pretrained model is model_type llm)",
            "Please use the `model_type: llm` for text-to-text models.",
            f"{_CHECKS}: check_llm_text_encoder_is_not_used_with_ecd", "PR #3792, Ludwig 0.9.2", since="0.9.2"),
    )


def _adapter_without_training(config) -> bool:
    return (trainer_is("none")(config) and config.value("adapter.kind") is not None
            and not config.value("adapter.pretrained_weights"))


def _quantized_without_lora(config) -> bool:
    written = config.get("adapter.kind") is not None  # absent: None; a block without a type: unknown
    return trains(config) and quantized(config) and written and lowered(config, "adapter.kind") != "lora"


def _merge_into_4bit(config) -> bool:
    return (trains(config) and lowered(config, "adapter.kind") in ("lora", "adalora")
            and config.value("adapter.merge_on_save") is True and config.value("quantization.bits") == 4)


def _backend(name: str, mode_set: bool | None = None, qat: bool = False):
    def when(config) -> bool:
        if not llm(config) or config.value("quantization.backend") != name:
            return False
        if qat:
            return config.value("quantization.qat") is True
        return (config.value("quantization.mode") is not None) is mode_set
    return when


_QUANTIZATION = "ludwig/schema/llms/quantization.py: QuantizationConfig.validate_backend"
_TORCHAO = "96a305bd3, Ludwig 0.15.0"
# quantization.backend / mode / qat and validate_backend arrive together in 0.15.0 (absent at v0.14.1; the check
# is in every tag since, read up to v0.17.8): every release that reads these keys refuses the config.
_TORCHAO_EVERY = "refused from Ludwig 0.15.0, the release that added quantization.backend, mode and qat"


@register
class RefusedAdapterTraining(TableRule):
    """TRN035 llm-adapter-quantization-refused

    ## What it does
    Flags LLM configs whose adapter, trainer and quantization the framework's config validation
    refuses: an adapter with no fine-tuning trainer (LLM `trainer.type` defaults to `none`,
    zero-shot), quantized fine-tuning without a `lora` adapter, merging the LoRA weights into a
    4-bit model at save, `quantization.mode` / `qat` written for the wrong quantization backend,
    a `loftq` / `eva` `init_lora_weights` without its `loftq_config` / `eva_config` block, and
    `adapter:` beside `adapters:` or an `adapters:` map with no adapters (0.15.0 on).

    ## Why is this bad?
    An adapter only trains under `trainer.type: finetune`; Ludwig refuses an adapter under the
    default `none` trainer unless it loads pretrained adapter weights. Quantized weights are
    frozen, so only a LoRA adapter can train them (QLoRA). A 4-bit model cannot be saved after the
    adapter is merged into it. Each is refused before the model loads: the first two since 0.8
    (every release with LLM configs), the merge since 0.8.5, the torchao keys since 0.15.0. Each
    check shipped in the release that first reads its keys (`adapter.postprocessor` in 0.8.5;
    `quantization.backend`, `mode`, `qat` in 0.15.0) and is in every release since, so the rows
    fire with no Ludwig pin too (a pin older than those releases, which never read the keys, is
    silent).

    ## Example
    `train.yaml`:
        model_type: llm
        base_model: meta-llama/Llama-2-7b-hf
        adapter:
          type: lora
        input_features:
          - name: prompt
            type: text
        output_features:
          - name: response
            type: text
    Use instead, in `train.yaml`:
        model_type: llm
        base_model: meta-llama/Llama-2-7b-hf
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

    ## Fix safety
    No fix: whether to train, which adapter, and whether to merge are the author's choices.

    ## References
    - ludwig/config_validation/checks.py: check_llm_finetuning_trainer_config (PR #3386, Ludwig 0.8;
      pretrained_adapter_weights exemption PR #3572, 0.8.3), check_qlora_requirements (PR #3492,
      0.8), check_qlora_merge_and_unload_compatibility (PR #3679, 0.8.5;
      MIN_QUANTIZATION_BITS_FOR_MERGE_AND_UNLOAD = 8 in ludwig/constants.py)
    - ludwig/schema/trainer.py: LLMTrainerDataclassField(default="none")
    - ludwig/schema/llms/quantization.py: QuantizationConfig.validate_backend (96a305bd3, 0.15.0)
    - ludwig/schema/llms/peft.py: LoraConfig.__post_init__ (5fe1e8701, #4146, 0.16.0);
      ludwig/schema/model_types/llm.py: LLMModelConfig.__post_init__ (79c226a6a, 0.15.0)
    """

    code = "TRN035"
    name = "llm-adapter-quantization-refused"
    rows = (
        Row(_adapter_without_training, "adapter.kind",
            "an adapter with the non-training LLM trainer (trainer.type none, the default): nothing would train it",
            "LLM finetuning requires trainer type to be finetune.",
            f"{_CHECKS}: check_llm_finetuning_trainer_config", "PR #3386, Ludwig 0.8"),
        Row(_quantized_without_lora, "adapter.kind",
            "fine-tuning a quantized LLM without a lora adapter (quantized weights cannot train)",
            "Fine-tuning and LLM with quantization requires using the 'lora' adapter",
            f"{_CHECKS}: check_qlora_requirements", "PR #3492, Ludwig 0.8"),
        Row(_merge_into_4bit, "adapter.merge_on_save",
            "merging the adapter into a 4-bit quantized model at save",
            "This operation will entail merging LoRA layers on a 4-bit quantized model.  Calling "
            "\"save_pretrained()\" on that model is currently unsupported. [...]",
            f"{_CHECKS}: check_qlora_merge_and_unload_compatibility", "PR #3679, Ludwig 0.8.5", since="0.8.5",
            # adapter.postprocessor (LoraPostprocessorConfig, ludwig/schema/llms/peft.py) and this check both
            # first ship in 0.8.5 and are in every release since (read at each tag up to v0.17.8): every
            # release that reads the key refuses the config, so the row fires unpinned too.
            unpinned="refused from Ludwig 0.8.5, the release that added adapter.postprocessor (every release "
                     "that reads the key)"),
        Row(_backend("torchao", mode_set=False), "quantization.backend",
            "torchao quantization with no quantization.mode",
            "`quantization.mode` is required when `quantization.backend` is 'torchao'.",
            _QUANTIZATION, _TORCHAO, since="0.15.0", unpinned=_TORCHAO_EVERY),
        Row(_backend("bitsandbytes", mode_set=True), "quantization.mode",
            "quantization.mode with the bitsandbytes quantization backend (the default)",
            "`quantization.mode` is only supported for `backend: torchao`. Remove the "
            "field or switch the backend to 'torchao'.",
            _QUANTIZATION, _TORCHAO, since="0.15.0", unpinned=_TORCHAO_EVERY),
        Row(_backend("bitsandbytes", qat=True), "quantization.qat",
            "quantization-aware training with the bitsandbytes quantization backend (the default)",
            "`quantization.qat: true` is only supported for `backend: torchao`. "
            "The bitsandbytes backend does not implement quantization-aware training.",
            _QUANTIZATION, _TORCHAO, since="0.15.0", unpinned=_TORCHAO_EVERY),
        *INIT_ROWS,
        *NAMED_ROWS,
    )


def _prompt(test):
    return lambda config: llm(config) and test(config, template_refs(config))


def _retrieval(config) -> bool:
    return bool(config.value("prompt.retrieval"))


def _refs_output(config, refs) -> bool:
    column = config.value("data.output_column")
    # Ludwig sanitizes the column name (get_sanitized_feature_name); a plain name is left as written.
    return refs is not None and isinstance(column, str) and column.isidentifier() and column in refs


_PROMPT = f"{_CHECKS}: check_prompt_requirements"
_PROMPT_ADDED = "PR #3564, Ludwig 0.8.3"
# Before 0.8.3 (from 0.8, the first release with prompt:), ludwig/data/prompt.py _validate_prompt_template
# raises the same three template checks at preprocessing ("template invalid for ... prompt"), so every
# release that reads prompt.template fails those rows; the retrieval-without-template-or-task row is not one
# of them: 0.8-0.8.2 skip a prompt with neither (preprocessing.py _has_prompt_section) and train without it.
_PREPROCESSED = dict(
    since="0.8.3",
    unpinned="refused at config validation from Ludwig 0.8.3; Ludwig 0.8 to 0.8.2 raise it at preprocessing "
             "(ludwig/data/prompt.py _validate_prompt_template)",
    before=("0.8", "raises it at preprocessing (ludwig/data/prompt.py _validate_prompt_template); Ludwig 0.8.3 and "
                   "later refuse it at config validation"))


@register
class RefusedPromptTemplate(TableRule):
    """TRN036 llm-prompt-template-refused

    ## What it does
    Flags LLM `prompt:` blocks the framework's config validation refuses: retrieval with neither
    a template nor a task; a template that leaves out `{__task__}` while a task is given, or
    `{__context__}` while retrieval is on; a template with no `{...}` reference at all (and no
    task); a template that references the output feature's column; and `prompt.retrieval`
    settings its schema refuses (`k` or `model_name` with no retrieval `type`, `semantic`
    retrieval with no `model_name`; every release that reads `prompt:`).

    ## Why is this bad?
    The template is what each training sample becomes: a template without the task, the retrieved
    context or any input column trains on a prompt that never contains them, and one that
    references the output column puts the answer into the prompt (Ludwig appends the output to
    the prompt itself at training time). Ludwig refuses each of these before loading the model
    (from 0.8.3; the output-column check from 0.9). Every release that reads `prompt:` (0.8 on) is
    hurt by all but the first, so those rows fire with no Ludwig pin, naming both behaviours:
    0.8 to 0.8.2 raise the template checks at preprocessing (`_validate_prompt_template`), and
    0.8.x renders the output column's value (the answer) into every training prompt and appends
    it again as the target, with no error. The retrieval-with-neither row needs a pin of 0.8.3 or
    later: 0.8 to 0.8.2 skip a prompt that has neither a template nor a task and train without it.

    ## Example
    `train.yaml`:
        model_type: llm
        base_model: meta-llama/Llama-2-7b-hf
        prompt:
          template: "Answer the question: {question} Answer: {answer}"
        input_features:
          - name: question
            type: text
        output_features:
          - name: answer
            type: text
        trainer:
          type: finetune
    `requirements.txt`:
        ludwig==0.10.4
    Use instead, in `train.yaml`:
        model_type: llm
        base_model: meta-llama/Llama-2-7b-hf
        prompt:
          template: "Answer the question: {question} Answer:"
        input_features:
          - name: question
            type: text
        output_features:
          - name: answer
            type: text
        trainer:
          type: finetune

    ## Fix safety
    No fix: the template's wording is the author's.

    ## References
    - ludwig/config_validation/checks.py: check_prompt_requirements (PR #3564, Ludwig 0.8.3; the
      output-column check PR #3743, 0.9)
    - ludwig/data/prompt.py: format_input_with_prompt, _validate_prompt_template (v0.8 to v0.8.6);
      ludwig/data/preprocessing.py: _has_prompt_section; ludwig/utils/llm_utils.py:
      generate_merged_ids (v0.8.6)
    - ludwig/schema/llms/prompt.py: PromptConfig, RetrievalConfig (type None: no retrieval;
      __post_init__ checks from da0efe7a5, #3399, 0.8)
    """

    code = "TRN036"
    name = "llm-prompt-template-refused"
    rows = (
        Row(_prompt(lambda config, refs: _retrieval(config) and refs is None and not config.value("prompt.task")),
            "prompt.retrieval", "a prompt with retrieval but neither a template nor a task",
            "A prompt task is required if no template is provided!", _PROMPT, _PROMPT_ADDED, since="0.8.3"),
        Row(_prompt(lambda config, refs: refs is not None and bool(config.value("prompt.task"))
                    and "__task__" not in refs),
            "prompt.template", "a prompt task that the template never places (no {__task__})",
            "When providing a task, you must make sure that the task keyword `{__task__} is "
            "present somewhere in the template string!", _PROMPT, _PROMPT_ADDED, **_PREPROCESSED),
        Row(_prompt(lambda config, refs: refs is not None and _retrieval(config) and "__context__" not in refs),
            "prompt.template", "retrieved context that the template never places (no {__context__})",
            "When providing a retrieval config, you must make sure that the task keyword `{__context__}` is "
            "present somewhere in the template string!", _PROMPT, _PROMPT_ADDED, **_PREPROCESSED),
        Row(_prompt(lambda config, refs: refs == set() and not config.value("prompt.task")),
            "prompt.template", "a prompt template that references no input column (no {...} at all)",
            "A template must contain at least one reference to a column or the sample keyword {__sample__} for "
            "a JSON-serialized representation of non-output feature columns.", _PROMPT, _PROMPT_ADDED,
            **_PREPROCESSED),
        Row(_prompt(_refs_output), "prompt.template",
            "a prompt template that references the output feature's column (the answer would be in the prompt)",
            "Prompt template should not have a reference to the output feature. The output feature is "
            "automatically added to the end of the prompt template merged with the input at training time.",
            _PROMPT, "PR #3743, Ludwig 0.9", since="0.9",
            # Ludwig 0.8.x (ludwig/data/prompt.py format_input_with_prompt at v0.8.6) renders every template
            # field from the row's dataset columns, the output column included, and the LLM model then appends
            # the target tokens after the prompt (ludwig/utils/llm_utils.py generate_merged_ids): the answer is
            # in every training prompt, with no error. Every release that reads prompt.template is hurt.
            unpinned="Ludwig 0.8.x renders the answer into every training prompt (and appends it again as the "
                     "target) without an error, and Ludwig 0.9 and later refuse the config",
            before=("0.8", "renders the answer into every training prompt (and appends it again as the target) "
                           "without an error; Ludwig 0.9 and later refuse it")),
        *RETRIEVAL_ROWS,
    )
