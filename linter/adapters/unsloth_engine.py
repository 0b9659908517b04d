"""Unsloth scripts: the colocated vLLM engine, LoftQ init and merged saving, read with `ast`.

From unslothai/unsloth (bare mirror at 015bdef0d9) and unslothai/unsloth-zoo (ce232d6c):
- unsloth/models/loader.py FastLanguageModel.from_pretrained(..., full_finetuning=False, ...,
  fast_inference=False, gpu_memory_utilization=0.5, ..., max_lora_rank=64, ...): fast_inference
  loads a vLLM engine beside the model (unsloth_zoo vllm_utils.load_vllm, sized with
  max_seq_length and max_lora_rank: `max_model_len = max_seq_length` since load_vllm's first
  version, unsloth-zoo 83f5318c, 2025-02-06; it only ever lowers max_seq_length, for GPU memory); the keyword and the default 64 arrived in 144190bd06
  (#1620, __version__ 2025.2.1). FastModel (vision.py FastBaseModel.from_pretrained) has the same
  keywords and default since 51879e513a (#2975).
- unsloth/models/rl.py: a TRL trainer whose args have use_vllm gets `args.use_vllm = True` when
  the model carries a vllm_engine (GRPO): it generates with vLLM and the trained LoRA weights.
  model.fast_generate / model.load_lora do so in a script's own code.
- TRL GRPOConfig max_prompt_length / max_completion_length (trl/trainer/grpo_config.py): read as
  written only (their defaults changed: max_prompt_length 512 from 0.14, None from 0.26, removed
  in 89070d241).
- get_peft_model(..., init_lora_weights=True, ...) in llama.py and vision.py.
- SFTTrainer(args=TrainingArguments(...)) with transformers' own TrainingArguments (no SFT fields):
  recorded as trainer.sft_plain_arguments (TRL rebuilds it as an SFTConfig with its defaults).
- unsloth/save.py unsloth_save_pretrained_merged(self, save_directory, tokenizer,
  save_method="merged_16bit", ...) and unsloth_push_to_hub_merged(self, repo_id, tokenizer,
  save_method=...): save_method is the third argument after the bound model.
- trl GRPOConfig(num_generations=..., generation_batch_size=..., steps_per_generation=...)
  (grpo_config.py; the last two from TRL 0.18.0): recorded as written, with
  trainer.patched_grpo_config where the class is Unsloth's generated copy (rl.py PatchFastRL,
  run on `from unsloth import ...` since 95fb1d699d, sets trl.GRPOConfig = UnslothGRPOConfig).
"""

from __future__ import annotations

import ast
import re

from ..ir import ConfigIR, Field, Origin
from ..python_reader import PythonDocument, call_name, is_open, keyword
from . import span_of, strategy
from .trainer_arguments import EVAL_STRATEGY_DEFAULT

_ENGINE = "unsloth/models/loader.py (FastLanguageModel.from_pretrained max_lora_rank=64, 2025.2.1 and later)"
_FORCED_VLLM = ("unsloth/models/rl.py (a trainer with use_vllm gets args.use_vllm = True when the model has a "
                "vllm_engine)")
_NO_ENGINE = "unsloth/models/loader.py (FastLanguageModel.from_pretrained fast_inference=False: no vLLM engine)"
_VLLM_TRAINERS = ("GRPOTrainer", "GRPOConfig")
_SAVE_CALLS = ("save_pretrained_merged", "push_to_hub_merged")
_REFUSED_SAVE = "merged_4bit"
_SIXTEEN_BIT = "merged_16bit"
_SIXTEEN_BIT_DEFAULT = "unsloth/save.py unsloth_generic_save_pretrained_merged (save_method=\"merged_16bit\")"


def _opaque(call: ast.Call) -> bool:
    """Arguments the reader cannot see (*args, **kwargs) may carry a save_method."""
    return any(isinstance(item, ast.Starred) for item in call.args) or any(item.arg is None for item in call.keywords)


def dead_lines(document: PythonDocument) -> list[tuple[int, int]]:
    """Line ranges of branches that never run: `if False:` (or another false literal, such as a
    module constant) bodies, and the `else` of a true one; Unsloth's notebooks park their save
    variants that way. Only statements are visited, never expressions (the tree's one full walk
    is python_index's)."""
    ranges: list[tuple[int, int]] = []
    pending = list(document.tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.If):
            test = document.literal(node.test)
            if test is True or test is False or (isinstance(test, int) and not isinstance(test, bool)):
                branch = node.body if not test else node.orelse
                if branch:
                    ranges.append((branch[0].lineno, branch[-1].end_lineno or branch[-1].lineno))
        for field in ("body", "orelse", "finalbody", "handlers"):
            pending.extend(item for item in getattr(node, field, ()) if isinstance(item, ast.AST))
    return ranges


def _save_method(call: ast.Call) -> ast.expr | None:
    found = keyword(call, "save_method")
    if found is not None:
        return found.value
    if any(isinstance(item, ast.Starred) for item in call.args[:3]) or len(call.args) < 3:
        return None
    return call.args[2]


def _second_argument(call: ast.Call) -> ast.expr | None:
    """from_pretrained(model_name, max_seq_length, ...): the length when passed by position."""
    if len(call.args) < 2 or any(isinstance(item, ast.Starred) for item in call.args[:2]):
        return None
    return call.args[1]


def _whole(document: PythonDocument, node: ast.expr | None) -> bool:
    value = document.literal(node) if node is not None else None
    return isinstance(value, int) and not isinstance(value, bool)


def record_engine_and_saving(document: PythonDocument, config: ConfigIR, loader: ast.Call, peft: ast.Call | None,
                             record, default) -> None:
    full = keyword(loader, "full_finetuning")
    if full is not None:
        record("model.full_finetuning", full.value)
    fast = keyword(loader, "fast_inference")
    engine = record("generation.colocated_vllm", fast.value) if fast is not None else None
    if fast is None and not is_open(loader):
        default("generation.colocated_vllm", False, loader.func, _NO_ENGINE)
    if engine is not None and engine.value is True:
        rank = keyword(loader, "max_lora_rank")
        if rank is not None:
            record("generation.vllm_max_lora_rank", rank.value)
        elif not is_open(loader):
            default("generation.vllm_max_lora_rank", 64, loader.func, _ENGINE)
        length = keyword(loader, "max_seq_length")
        length = length.value if length is not None else _second_argument(loader)
        if _whole(document, length):
            record("generation.vllm_max_model_len", length)
        grpo = next(document.calls("GRPOConfig"), None)
        for key, name in (("generation.max_prompt_length", "max_prompt_length"),
                          ("generation.max_completion_length", "max_completion_length")):
            written = keyword(grpo, name) if grpo is not None else None
            if written is not None and _whole(document, written.value):
                record(key, written.value)
        generator = next(document.calls(*_VLLM_TRAINERS, "fast_generate", "load_lora"), None)
        if generator is not None and config.get("generation.use_vllm") is None:
            config.set("generation.use_vllm", Field(True, Origin(span_of(document, *document.span(generator.func)),
                                                                 _FORCED_VLLM)))
    # GRPOConfig(use_vllm=..., vllm_mode=...) as written, beside a GRPOTrainer call (TRL grpo_config.py).
    grpo = next(document.calls("GRPOConfig"), None)
    written = keyword(grpo, "use_vllm") if grpo is not None else None
    if written is not None and config.get("generation.use_vllm") is None \
            and next(document.calls("GRPOTrainer"), None) is not None:
        record("generation.use_vllm", written.value)
        mode = keyword(grpo, "vllm_mode")
        if mode is not None:
            record("generation.vllm_mode", mode.value)
    if peft is not None:
        init = keyword(peft, "init_lora_weights")
        if init is not None:
            record("adapter.init_weights", init.value)  # model.patched_types: unsloth_loading.py
    calls = list(document.calls(*_SAVE_CALLS))
    dead = dead_lines(document) if calls else []
    live = [call for call in calls if not any(first <= call.lineno <= last for first, last in dead)]
    methods = [(call, document.literal(_save_method(call))) for call in live if _save_method(call) is not None]
    # The refused method first: the rule asks about it, and a script may save several ways.
    methods.sort(key=lambda pair: pair[1] != _REFUSED_SAVE)
    for call, method in methods:
        if isinstance(method, str):
            record("save.merged_method", _save_method(call))
            break
    # A 16-bit merge, written or by default (unsloth/save.py unsloth_generic_save_pretrained_merged
    # and unsloth_generic_push_to_hub_merged: save_method="merged_16bit").
    sixteen = next((_save_method(call) for call, method in methods if method == _SIXTEEN_BIT), None)
    if sixteen is not None:
        record("save.merged_16bit", sixteen, lambda _: True)
    else:
        bare = next((call for call in live if _save_method(call) is None and not _opaque(call)), None)
        if bare is not None:
            default("save.merged_16bit", True, bare.func, _SIXTEEN_BIT_DEFAULT)
    # GGUF exports (unsloth/save.py patch_saving_functions binds save_pretrained_gguf /
    # push_to_hub_gguf): the arguments as written, for the signature the release binds.
    gguf = [call for call in document.calls("save_pretrained_gguf", "push_to_hub_gguf")
            if not _opaque(call) and not any(first <= call.lineno <= last for first, last in dead_lines(document))]
    if gguf:
        where = Origin(span_of(document, *document.span(gguf[0])))
        config.set("save.gguf_positional", Field(len(gguf[0].args), where))
        config.set("save.gguf_keywords", Field([item.arg for item in gguf[0].keywords], where))


def record_plain_sft_arguments(document: PythonDocument, config: ConfigIR, trainer: ast.Call | None,
                               peft: ast.Call | None = None) -> None:
    """trainer.sft_plain_arguments: SFTTrainer's `args` is transformers' TrainingArguments, written
    in the call or assigned to the name it passes; with it trainer.plain_arguments_checkpointing
    (its gradient_checkpointing, False by default) and memory.peft_checkpointing (get_peft_model's
    use_gradient_checkpointing, "unsloth" by default)."""
    found = keyword(trainer, "args") if trainer is not None and call_name(trainer) == "SFTTrainer" else None
    if found is None or not any(node.module == "transformers" and not node.level and any(
            alias.name == "TrainingArguments" and alias.asname is None for alias in node.names)
            for node in document.from_imports):
        return
    for call in document.calls("TrainingArguments"):
        assigned = document.call_assignments.get(id(call))
        if call is found.value or (isinstance(found.value, ast.Name) and assigned is not None and any(
                isinstance(target, ast.Name) and target.id == found.value.id for target in assigned.targets)):
            config.set("trainer.sft_plain_arguments",
                       Field(True, Origin(span_of(document, *document.span(found.value)), None)))
            _record_checkpointing(document, config, call, peft)
            return


_FOR_TRAINING = "transformers training_args.py (gradient_checkpointing=False)"
_PEFT_DEFAULT = "unsloth/models/llama.py get_peft_model (use_gradient_checkpointing=\"unsloth\")"


def _record_checkpointing(document: PythonDocument, config: ConfigIR, arguments: ast.Call, peft) -> None:
    written = keyword(arguments, "gradient_checkpointing")
    value = document.literal(written.value) if written is not None else None
    if written is not None and isinstance(value, bool):
        config.set("trainer.plain_arguments_checkpointing",
                   Field(value, Origin(span_of(document, *document.span(written.value)))))
    elif written is None and not is_open(arguments):
        config.set("trainer.plain_arguments_checkpointing",
                   Field(False, Origin(span_of(document, *document.span(arguments.func)), _FOR_TRAINING)))
    if peft is None or call_name(peft) != "get_peft_model":
        return
    asked = keyword(peft, "use_gradient_checkpointing")
    mode = document.literal(asked.value) if asked is not None else None
    if asked is not None and (mode in ("unsloth", True, False)):
        config.set("memory.peft_checkpointing", Field(mode, Origin(span_of(document, *document.span(asked.value)))))
    elif asked is None and not is_open(peft):
        config.set("memory.peft_checkpointing",
                   Field("unsloth", Origin(span_of(document, *document.span(peft.func)), _PEFT_DEFAULT)))


_SFT_MODULES = ("trl", "trl.trainer", "trl.trainer.sft_trainer")


def record_patched_sft(document: PythonDocument, config: ConfigIR, trainer: ast.Call | None) -> None:
    """trainer.patched_sft: the script's SFTTrainer is Unsloth's patched copy, the class `from trl
    import SFTTrainer` binds after a `from unsloth import ...` line (unsloth/models/rl.py
    PatchFastRL, run when unsloth is imported, sets trl.SFTTrainer = UnslothSFTTrainer, whose
    _prepare_dataset may be unsloth_zoo's sft_prepare_dataset: rl_replacements.py
    sft_trainer_prepare_dataset). A class imported before unsloth is TRL's own."""
    if trainer is None or call_name(trainer) != "SFTTrainer" or keyword(trainer, "args") is None:
        return
    first_unsloth = min((node.lineno for node in document.from_imports if node.module.split(".")[0] == "unsloth"),
                        default=None)
    sft = [node for node in document.from_imports if node.module in _SFT_MODULES
           and any(alias.name == "SFTTrainer" and alias.asname is None for alias in node.names)]
    if first_unsloth is None or len(sft) != 1 or sft[0].lineno < first_unsloth:
        return
    config.set("trainer.patched_sft", Field(True, Origin(span_of(document, *document.span(trainer.func)))))


_GRPO_GENERATION_KEYS = (("generation.per_prompt", "num_generations"), ("generation.batch_size", "generation_batch_size"),
                         ("generation.steps", "steps_per_generation"))


_SET_LATER = re.compile(r"\.(per_device_train_batch_size|gradient_accumulation_steps|num_generations|generation_batch_size|"
                        r"steps_per_generation)\s*=(?!=)")


def record_patched_grpo_config(document: PythonDocument, config: ConfigIR, arguments: ast.Call | None, record) -> None:
    """The GRPO keys of the script's training-argument call (the one whose batch keys unsloth.py
    records), where that call is GRPOConfig imported from trl after the first `from unsloth
    import` line and shows every keyword (no **kwargs): then it is Unsloth's generated
    UnslothGRPOConfig, whose __init__ may rewrite per_device_train_batch_size (rules read when)."""
    if arguments is None or call_name(arguments) != "GRPOConfig" or is_open(arguments):
        return
    first_unsloth = min((node.lineno for node in document.from_imports if node.module.split(".")[0] == "unsloth"),
                        default=None)
    imported = [node for node in document.from_imports if node.module in ("trl", "trl.trainer", "trl.trainer.grpo_config")
                and any(alias.name == "GRPOConfig" and alias.asname is None for alias in node.names)]
    if first_unsloth is None or len(imported) != 1 or imported[0].lineno < first_unsloth:
        return
    if _SET_LATER.search(document.source.text):
        return  # `args.per_device_train_batch_size = 4` after __init__: the values as written are not final
    config.set("trainer.patched_grpo_config", Field(True, Origin(span_of(document, *document.span(arguments.func)))))
    for key, name in _GRPO_GENERATION_KEYS:
        found = keyword(arguments, name)
        if found is not None:
            record(key, found.value)


# The evaluation schedule of the script's training-argument call. eval_strategy (evaluation_strategy
# before transformers 4.41) defaults to "no" in TrainingArguments and every TRL config (Unsloth's
# generated subclasses, rl.py, keep it); eval_steps is read only under "steps" (see adapters/__init__.py
# EVAL_STRATEGY_DEFAULT). Left unknown where the script may set it outside the call (an attribute
# assignment, setattr, TrainingArguments.set_evaluate) or may train with Unsloth's MLX trainer
# (unsloth/__init__.py from 2026.7.1, d918245834: on Apple Silicon trl.SFTConfig becomes the MLX
# config, whose trainer evaluates every eval_steps with no strategy; unsloth-zoo mlx/trainer.py).
_STRATEGY_ELSEWHERE = re.compile(r"\.\s*(?:eval_strategy|evaluation_strategy)\s*=(?!=)|[\"'](?:eval_strategy|"
                                 r"evaluation_strategy)[\"']|\bset_evaluate\b|\bmlx\b|MLX")


def record_evaluation(document: PythonDocument, config: ConfigIR, arguments: ast.Call | None, record) -> None:
    """checkpoint.eval_steps and checkpoint.eval_strategy of the training-argument call, with the
    strategy's default where the call spells out every keyword and nothing else may set it."""
    if arguments is None:
        return
    steps = keyword(arguments, "eval_steps")
    if steps is not None:
        record("checkpoint.eval_steps", steps.value)
    names = [found for found in (keyword(arguments, "eval_strategy"), keyword(arguments, "evaluation_strategy"))
             if found is not None]
    if len(names) == 1:
        record("checkpoint.eval_strategy", names[0].value, strategy)
    elif not names and not is_open(arguments) and not _STRATEGY_ELSEWHERE.search(document.source.text):
        config.set("checkpoint.eval_strategy", Field("no", Origin(
            span_of(document, *document.span(arguments.func)), EVAL_STRATEGY_DEFAULT, "eval_strategy")))
