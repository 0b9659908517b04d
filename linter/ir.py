"""The framework-neutral representation rules see (SPEC §5.3).

A `ConfigIR` holds what one file says, as `Field`s under dotted IR keys, each with its origin:
a span in the file, or a framework default naming the upstream file that sets it. A `Run` is a
primary config plus the configs it links (a trainer YAML and its DeepSpeed JSON).

IR keys (value types in brackets; "auto" is a value the launcher resolves later):
  model.name [str]                 model.family [str]          model.load_dtype [float16|bfloat16|float32]
  precision.fp16 [bool|"auto"]     precision.bf16 [bool|"auto"]
  precision.tf32 [bool]            precision.fp8 [bool]
  quantization.bits [int]          quantization.quant_type [str]   quantization.compute_dtype [dtype]
  quantization.double_quant [bool] quantization.quant_storage [dtype]
  adapter.kind [str|None]          adapter.r [int]   adapter.alpha [num]
  adapter.target_modules [list]    adapter.modules_to_save [list]
  optimizer.name [str]  optimizer.lr [num]  optimizer.weight_decay [num]  optimizer.grad_clip [num]
  loss_scale.loss_scale [num]  loss_scale.initial_scale_power [int]  loss_scale.min_loss_scale [num]
  parallel.zero_stage [int]  parallel.offload_optimizer [bool]  parallel.offload_param [bool]
  parallel.offload_ratio [num]  parallel.fsdp [bool]
  batch.micro [int|"auto"]  batch.grad_accum [int|"auto"]  batch.global [int|"auto"]
  batch.world_size [int] (GPUs in the job, where a launcher config says: accelerate num_processes)
  sequence.max_length [int]  sequence.packing [bool]
  attention.implementation [str]   memory.gradient_checkpointing [bool]
  memory.fused_cross_entropy [bool] (liger / cut-cross-entropy: the logits are never materialised)
  optimizer.memory_efficient [str] (GaLore, APOLLO, BAdam, LISA, Adam-mini, Muon: states not modelled)
  training.enabled [bool] (False: the config predicts or evaluates only)
  Memory facts (issue 17): adapter.target_linear [bool] (every linear layer adapted)
  parallel.fsdp_sharding [FULL_SHARD|SHARD_GRAD_OP|HYBRID_SHARD|NO_SHARD]
  memory.activation_offload [bool]  memory.chunked_loss [int] (chunks of the fp32 loss terms)
  training.remote_backend [str] (training runs on a remote service: Axolotl hatchery backend)
  model.default_dtype [dtype] (the weights' dtype when the config names none: TRL ModelConfig "float32")
  parallel.unmodeled [str] (expert/tensor/context/Megatron parallelism, KTransformers: not estimated)
A rule may ask for the pseudo-key `precision.mode` ("bf16", "fp16", "fp32"): each adapter renders
it in its own keys. `ConfigIR.mode()` derives it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from .value import Value

if TYPE_CHECKING:
    from .adapters import Adapter
    from .document import Document


class Span(Value):
    __slots__ = ("path", "start", "end", "line", "column", "end_line", "end_column")

    def __init__(self, path: Path, start: int, end: int, line: int, column: int, end_line: int, end_column: int):
        self.path = path
        self.start = start
        self.end = end
        self.line = line
        self.column = column
        self.end_line = end_line
        self.end_column = end_column


class Origin(Value):
    """Where a value comes from: a span in a file, or a framework default.

    A default has no span of its own; `span` then points at the place a person would look (the
    parent key the default lives under), and `default_source` names the upstream file.
    """

    __slots__ = ("span", "default_source")

    def __init__(self, span: Span | None, default_source: str | None = None):
        self.span = span
        self.default_source = default_source

    @property
    def is_default(self) -> bool:
        return self.default_source is not None


class Field(Value):
    __slots__ = ("value", "origin")

    def __init__(self, value: Any, origin: Origin):
        self.value = value
        self.origin = origin

    @property
    def span(self) -> Span | None:
        return self.origin.span


class Link(Value):
    """A file a config references (its DeepSpeed JSON), as the framework would resolve it.

    `candidates` are the paths the framework would try, in its order. A name for a config the
    framework ships (XTuner's `deepspeed_zero2`) has no file here: `builtin` holds its IR values
    and `builtin_source` the upstream file they come from.
    """

    __slots__ = ("kind", "text", "span", "candidates", "builtin", "builtin_source")

    def __init__(self, kind: str, text: str, span: Span, candidates: tuple[Path, ...] = (),
                 builtin: dict[str, Any] | None = None, builtin_source: str | None = None):
        self.kind = kind  # "deepspeed"
        self.text = text  # as written in the referencing file
        self.span = span
        self.candidates = candidates
        self.builtin = builtin
        self.builtin_source = builtin_source


class Located:
    """Where a key path sits in the file: the key (None for a list item), the value, and the
    value's text as written and whether it was written unquoted (plain)."""

    __slots__ = ("key_span", "value_span", "text", "plain")

    def __init__(self, key_span: Span | None, value_span: Span, text: str, plain: bool):
        self.key_span, self.value_span, self.text, self.plain = key_span, value_span, text, plain


class KeyTree:
    """Every key of a file as plain values (what the framework's loader reads), for schema rules;
    `locate` maps a key path back to the file. Built by the adapter; rules never see the parser's
    nodes. (Plain classes: a dataclass costs about a millisecond at import, on every lint.)"""

    __slots__ = ("value", "format", "locate")

    def __init__(self, value: Any, format: str, locate: "Callable[[tuple], Located | None]"):
        self.value = value
        self.format = format  # "yaml" or "json": which literal spellings mean what
        self.locate = locate


class ConfigIR:
    # No __slots__: rules cache per-config results in its __dict__ (rules/schema.py).

    def __init__(self, path: Path, framework: str, document: "Document | None", adapter: "Adapter",
                 fields: dict[str, Field] | None = None, file_span: Span | None = None,
                 links: list[Link] | None = None, schema: str = "", _key_tree: "KeyTree | None" = None):
        self.path = path
        self.framework = framework
        self.document = document  # None for a framework's built-in config (no file to edit)
        self.adapter = adapter
        self.fields = fields if fields is not None else {}
        self.file_span = file_span  # the first line: where file-level findings point
        self.links = links if links is not None else []
        # The schema this file is validated against (schemas/<schema>.schema.json): the adapter's
        # name, or a finer kind where one adapter reads several formats (hf: trl, accelerate, peft).
        self.schema = schema
        self._key_tree = _key_tree

    def key_tree(self) -> "KeyTree | None":
        """The file's keys for schema validation (None for files without a document tree)."""
        if self._key_tree is None and self.document is not None:
            self._key_tree = self.adapter.key_tree(self)
        return self._key_tree

    def get(self, key: str) -> Field | None:
        return self.fields.get(key)

    def value(self, key: str, default: Any = None) -> Any:
        found = self.fields.get(key)
        return default if found is None else found.value

    def span(self, *keys: str) -> Span | None:
        """The span of the first of `keys` that is present, else the file's first line."""
        for key in keys:
            found = self.fields.get(key)
            if found is not None and found.span is not None:
                return found.span
        return self.file_span

    def mode(self) -> str | None:
        """The training precision: "bf16", "fp16", "fp32", "both", or None where unresolved."""
        fp16, bf16 = self.value("precision.fp16"), self.value("precision.bf16")
        if "auto" in (fp16, bf16):
            return None
        if fp16 and bf16:
            return "both"
        if bf16:
            return "bf16"
        if fp16:
            return "fp16"
        if fp16 is None and bf16 is None:
            return None
        return "fp32"


class Run:
    """A primary config and the configs it links; a file linted alone is a run of its own."""

    __slots__ = ("primary", "linked", "missing")

    def __init__(self, primary: ConfigIR, linked: list[ConfigIR] | None = None, missing: list[Link] | None = None):
        self.primary = primary
        self.linked = linked if linked is not None else []
        self.missing = missing if missing is not None else []  # links whose file does not exist (LNK001)

    @property
    def configs(self) -> list[ConfigIR]:
        return [self.primary, *self.linked]

    def value(self, key: str) -> Any:
        """The first value any config of the run gives for `key` (None where none does)."""
        for config in self.configs:
            found = config.value(key)
            if found is not None:
                return found
        return None

    def first(self, key: str) -> tuple[ConfigIR, Field] | None:
        """The first config in the run that sets `key`, with its field."""
        for config in self.configs:
            found = config.get(key)
            if found is not None:
                return config, found
        return None


_DTYPES = {
    "float16": "float16", "fp16": "float16", "half": "float16", "torch.float16": "float16",
    "bfloat16": "bfloat16", "bf16": "bfloat16", "torch.bfloat16": "bfloat16",
    "float32": "float32", "fp32": "float32", "float": "float32", "torch.float32": "float32",
    "auto": "auto",
}


def canonical_dtype(value: Any) -> Any:
    """The canonical dtype name for the spellings frameworks accept; other values unchanged."""
    if isinstance(value, str):
        return _DTYPES.get(value.strip().lower(), value)
    return value
