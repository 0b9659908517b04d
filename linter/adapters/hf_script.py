"""Plain transformers / TRL / PEFT training scripts (which, and how their calls are read:
hf_script_calls.py). What they record: the argument call through hf.py's trainer reading, the model load and its
BitsAndBytesConfig as TRL's `model_init_kwargs` (model_init.py: the keywords SFTTrainer itself
hands to from_pretrained), the trained PEFT config (script_peft.py: LoraConfig, AdaLoraConfig, the
prompt-learning configs) through PEFT's adapter_config bindings (peft_facts.py), and
the padding facts any script shows (script_padding.py).

- transformers/utils/quantization_config.py BitsAndBytesConfig: bnb_4bit_compute_dtype None
  becomes torch.float32 (the compute dtype of a 4-bit model whose config names none); from
  BitsAndBytesConfig(load_in_4bit=True) the model loads in 4 bits (modeling_utils.py
  from_pretrained, quantization_config=...).
- from_pretrained's own `load_in_4bit=True` / `load_in_8bit=True` (read from transformers 4.30.0 /
  4.22.0, the wheels): modeling_utils.py builds the BitsAndBytesConfig itself from them and the
  other BitsAndBytesConfig keywords the call gives (4.57.6: `BitsAndBytesConfig.from_dict(config_dict,
  return_unused_kwargs=True, **kwargs)`), so they are read as that config. 5.0.0 removed them
  (huggingface/transformers PR #41287): the keyword reaches the model's __init__, which refuses it.
- peft/tuners/lora/config.py LoraConfig and the other PEFT config classes script_peft.py reads: the
  keywords of adapter_config.json (PeftConfig.to_dict writes the fields under the same names).
"""

from __future__ import annotations

from ..document import Document, Mapping, Pair, RenderError, Scalar, Sequence
from ..ir import ConfigIR, Field, Origin
from ..python_reader import PythonDocument, call_name, is_open
from . import Adapter, new_config, span_of
from .hf_kinds import _written_only
from .hf_script_calls import RUNTIME, CallReader, Script, class_of, call_mapping, runtime
from .model_init import record_model_init_kwargs
from .peft_facts import PEFT_BINDINGS, record_peft_facts
from .script_calls import record_trainer_calls
from .script_padding import record_padding
from .script_peft import record_script_peft

_MODEL_KEYS = ("model.name", "model.load_dtype", "attention.implementation")
_DTYPES = {"float16", "bfloat16", "float32"}
# BitsAndBytesConfig.__init__'s parameters (transformers 4.57.6 utils/quantization_config.py).
_BNB_KEYWORDS = {"load_in_8bit", "load_in_4bit", "llm_int8_threshold", "llm_int8_skip_modules",
                 "llm_int8_enable_fp32_cpu_offload", "llm_int8_has_fp16_weight", "bnb_4bit_compute_dtype",
                 "bnb_4bit_quant_type", "bnb_4bit_use_double_quant", "bnb_4bit_quant_storage"}
_LOAD_IN = {"load_in_8bit": "4.22.0", "load_in_4bit": "4.30.0"}  # the first release whose from_pretrained reads it
_LOAD_IN_REMOVED = "5.0.0"
_BNB = ("transformers/utils/quantization_config.py (BitsAndBytesConfig: bnb_4bit_compute_dtype None "
        "becomes torch.float32)")


def _facade(document: PythonDocument, mapping: Mapping) -> Document:
    return Document(document.source, mapping, "python")


def read_script(script: Script, config: ConfigIR) -> None:
    from .hf import _QLORA_BINDINGS, _TRAINER_BINDINGS, HFAdapter

    document, call = script.document, script.arguments
    # The constructor's own keywords, as written (a keyword the class lacks raises TypeError there).
    config.set("arguments.class", Field(script.class_name, Origin(span_of(document, *document.span(call.func)))))
    arguments = call_mapping(document, call, first="output_dir")
    # Keys set on the object later, or that a trainer call receives itself: unknown.
    hidden = set(script.later) | {item.arg for trainer in script.trainers for item in trainer.keywords
                                  if item.arg not in (None, "args")}
    span = document.span(call.func)
    arguments.pairs = [pair for pair in arguments.pairs if pair.key.value not in hidden] + \
        [runtime(name, span) for name in sorted(hidden)]
    arguments._index = {}
    open_call = not script.closed() or any(is_open(trainer) for trainer in script.trainers)
    unseen = {"*"} if open_call else hidden | {pair.key.value for pair in arguments.pairs if _computed(pair.value)}
    for binding in _TRAINER_BINDINGS:  # every spelling of a key whose value is unknown, and its IR key
        names = {".".join(path) for path in binding.paths}
        if names & unseen:
            unseen |= names | {binding.key}
    if unseen:
        config.set("arguments.unseen_keys", Field(sorted(unseen), Origin(span_of(document, *span))))
    read = CallReader(config, _facade(document, arguments), open_call)
    HFAdapter()._trainer(read, is_trl=script.kind == "trl", script=True)
    if unseen & {"*", "fp16", "bf16"}:  # one flag computed: the other's default says nothing of the precision
        for key in ("precision.fp16", "precision.bf16"):
            if config.get(key) is not None and config.get(key).origin.is_default:
                del config.fields[key]
    if script.trainer is not None:
        trainer = next(item for item in script.trainers)
        origin = Origin(span_of(document, *document.span(trainer.func)),
                        f"{script.class_name} passed to {call_name(trainer)}")
        config.set("training.trainer", Field(script.trainer, origin))
        config.set("training.trainer_candidates", Field([script.trainer], origin))
    classes = {class_of(document, item) for item in script.trainers}
    if len(classes) == 1 and None not in classes:  # every trainer call is one class of transformers / trl
        package, name = classes.pop()
        trainer = script.trainers[0]
        config.set("training.trainer_class", Field(name, Origin(span_of(document, *document.span(trainer.func)),
                                                                f"{name} imported from {package}")))
    _model(document, script, config, [b for b in _TRAINER_BINDINGS if b.key in _MODEL_KEYS], _QLORA_BINDINGS)
    record_script_peft(document, script, config, [binding for binding in PEFT_BINDINGS if binding.key not in
                       ("model.name", "adapter.kind")], record_peft_facts)
    record_padding(document, config)
    record_trainer_calls(script, config, read)
    # Last: peft_facts reads a key tree as an adapter_config.json's, which a script has none of.
    config.key_tree = HFScriptAdapter().key_tree(_facade(document, call_mapping(document, call)))


def _computed(node) -> bool:
    """A value the script computes, or a list / mapping holding one."""
    if isinstance(node, Scalar):
        return node.value == RUNTIME
    children = node.items if isinstance(node, Sequence) else [pair.value for pair in node.pairs]
    return any(_computed(child) for child in children)


def _recast(document: PythonDocument) -> bool:
    """Does the script change a model's dtype after loading (`.half()`, `.bfloat16()`,
    `.to(torch.bfloat16)`)?"""
    for call in document.calls("half", "bfloat16", "to"):
        if call_name(call) != "to":
            if not call.args and not call.keywords:
                return True
        elif any(document.literal(value) in _DTYPES for value in (*call.args, *(k.value for k in call.keywords))):
            return True
    return False


def _model(document: PythonDocument, script: Script, config: ConfigIR, bindings, qlora_bindings) -> None:
    load = script.model_load()
    if load is None:
        return
    bnb = script.reaching("transformers", "BitsAndBytesConfig", (load,), "quantization_config")
    quantization = call_mapping(document, bnb) if bnb is not None else None
    model = call_mapping(document, load, first="model_name_or_path")
    if quantization is None and _loads_in_bits(model, config):  # from_pretrained's own load_in_4bit=True
        bnb = load
        quantization = Mapping([pair for pair in model.pairs if pair.key.value in _BNB_KEYWORDS], model.start, model.end,
                               flow=True)
    if quantization is not None:
        model.pairs = [pair for pair in model.pairs if bnb is not load or pair.key.value not in _BNB_KEYWORDS]
        model.pairs = [pair for pair in model.pairs if pair.key.value != "quantization_config"] + \
            [Pair(Scalar("quantization_config", quantization.start, quantization.start), quantization)]
        model._index = {}
    if _recast(document):
        model.pairs = [pair for pair in model.pairs if pair.key.value not in ("dtype", "torch_dtype")]
        model.pairs += [runtime("dtype", document.span(load.func))]
        model._index = {}
    # The same keywords under model_init_kwargs, where model_init.py reads them.
    kwargs = Mapping(list(model.pairs), model.start, model.end, flow=True)
    root = Mapping([*model.pairs, Pair(Scalar("model_init_kwargs", *document.span(load.func)), kwargs)],
                   model.start, model.end, flow=True)
    read = CallReader(config, _facade(document, root), is_open(load))
    read.bind(bindings)
    record_model_init_kwargs(read)  # from_pretrained's keywords are SFTTrainer's model_init_kwargs
    bits = config.get("quantization.bits")
    if bits is None or quantization is None:
        return
    config.set("quantization.bnb_on_load", Field(True, bits.origin))
    if bits.value != 4:
        return
    CallReader(config, _facade(document, quantization), is_open(bnb)).bind(
        [_written_only(binding) for binding in qlora_bindings])
    written = quantization.get("bnb_4bit_compute_dtype")
    if written is None and not is_open(bnb) and config.get("quantization.compute_dtype") is None:
        config.set("quantization.compute_dtype", Field("float32", Origin(span_of(document, *document.span(bnb.func)),
                                                                         _BNB, "bnb_4bit_compute_dtype")))


def _loads_in_bits(model: Mapping, config: ConfigIR) -> bool:
    """Does from_pretrained load in 4 or 8 bits through its own `load_in_4bit=True` / `load_in_8bit=True`
    (no quantization_config beside it: ValueError), in a transformers that reads it (or one not known)?"""
    from ..versions import older_than

    written = [name for name in _LOAD_IN if (pair := model.get(name)) is not None and isinstance(pair.value, Scalar)
               and pair.value.value is True]
    if len(written) != 1 or model.get("quantization_config") is not None:
        return False
    found = config.version("transformers")
    return found is None or (older_than(found[0], _LOAD_IN_REMOVED) is True
                             and older_than(found[0], _LOAD_IN[written[0]]) is False)


class HFScriptAdapter(Adapter):
    name = "hf"

    def evidence(self, document) -> int:
        return int(isinstance(document, PythonDocument) and Script(document).arguments is not None)

    def sniffs(self, text: str) -> bool:
        return "Trainer(" in text and ("Arguments(" in text or "Config(" in text)

    def parse(self, document: PythonDocument) -> ConfigIR:
        script = Script(document)
        config = new_config(self, document, script.kind)
        config.schema = None  # keywords are checked by Python itself (a TypeError), not a key schema
        if script.arguments is not None:
            read_script(script, config)
        return config

    def render(self, document, config: ConfigIR, change) -> list:
        raise RenderError("a training script: edit the call by hand")
