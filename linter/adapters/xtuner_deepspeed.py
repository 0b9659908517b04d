"""The DeepSpeed config of an XTuner run (linter/adapters/xtuner.py reads the rest): a name for a
config XTuner ships (`--deepspeed deepspeed_zero2`), and the DeepSpeedStrategy of a config that
already runs DeepSpeed, as mmengine dumps it into the work_dir.

A dumped run config. `xtuner train cfg.py --deepspeed NAME` (xtuner/tools/train.py main, v0.1.7 to
b934f46) rewrites the config before it builds the runner: `strategy = dict(type=DeepSpeedStrategy,
config=ds_cfg, gradient_accumulation_steps=..., train_micro_batch_size_per_gpu=...,
gradient_clipping=..., exclude_frozen_parameters=..., sequence_parallel_size=...)`, with ds_cfg the
JSON after auto_dtype_of_deepspeed_config (fp16/bf16 "auto" already decided), `optim_wrapper =
dict(type="DeepSpeedOptimWrapper", optimizer=...)` and `runner_type = "FlexibleRunner"`; mmengine's
Runner then writes that config into work_dirs (Config.dump), where it is trained again with
`xtuner train dump.py` — and train.py ignores a `--deepspeed` given then ("Deepspeed training is
already enabled in your config"). mmengine/_strategy/deepspeed.py DeepSpeedStrategy.__init__
(from mmengine 0.8.0, PR #1183; unchanged at 2543429): `config` is a dict or a path to a JSON;
each of zero_optimization, gradient_clipping, fp16, bf16, amp, activation_checkpointing, aio,
train_micro_batch_size_per_gpu and gradient_accumulation_steps given (not None) replaces that
key; gradient_accumulation_steps defaults to 1. Only a FlexibleRunner builds a strategy
(train.py: `RUNNERS.build(cfg)` where `runner_type` is set; mmengine's Runner takes no strategy).

DeepSpeed then casts the model to the precision the config switches on (deepspeed/runtime/
engine.py _configure_distributed_model: `module.half()` under fp16, `module.bfloat16()` under
bf16): the config's torch_dtype no longer says what trains. Under bf16 the 4-bit compute dtype
depends on bitsandbytes (nn/modules.py Linear4bit): before 0.41.0 the input is cast to the
compute dtype given; from 0.41.0 (412fd0e7, set_compute_type) the first forward replaces it with
a bf16 or fp32 input's dtype; from 0.47.0 (812ef06a, `compute_type_is_set = compute_dtype is not
None`) a compute dtype given (transformers always passes one) is kept again. So the written
compute dtype holds under bf16 only with bitsandbytes pinned below 0.41 or from 0.47.
"""

from __future__ import annotations

import ast
import json

from ..ir import ConfigIR, Field, Link, Origin
from ..python_index import call_name, imported_name
from ..python_reader import UNKNOWN, PythonDocument, is_open
from ..versions import older_than
from . import span_of

# The DeepSpeed configs XTuner ships (xtuner/configs/deepspeed/*.json at b934f46): ZeRO stage,
# offloaded optimizer, offloaded parameters. Every one has fp16 {"enabled": "auto",
# "initial_scale_power": 16}, bf16 {"enabled": "auto"} and "zero_allow_untested_optimizer": true;
# the offload ones (deepspeed_zero2_offload from 6c25fbb13, v0.1.4; deepspeed_zero3_offload from
# v0.1.0) also "zero_force_ds_cpu_optimizer": false, in every release that ships them.
SHIPPED = {"deepspeed_zero1": (1, False, False), "deepspeed_zero2": (2, False, False),
           "deepspeed_zero2_offload": (2, True, False), "deepspeed_zero3": (3, False, False),
           "deepspeed_zero3_offload": (3, True, True)}
# DeepSpeedStrategy's keywords that replace a key of its `config` when given (not None).
_OVERRIDES = ("zero_optimization", "gradient_clipping", "fp16", "bf16", "amp", "activation_checkpointing", "aio",
              "train_micro_batch_size_per_gpu", "gradient_accumulation_steps")
_STRATEGY = "mmengine/_strategy/deepspeed.py (DeepSpeedStrategy: the run's DeepSpeed config, as written here)"
_MAX_DEPTH = 20


def shipped_values(name: str) -> dict | None:
    """The IR values of a DeepSpeed config XTuner ships under `name`."""
    shipped = SHIPPED.get(name)
    if shipped is None:
        return None
    stage, offload_optimizer, offload_param = shipped
    values = {"parallel.zero_stage": stage, "loss_scale.initial_scale_power": 16,
              "parallel.zero_allow_untested_optimizer": True}
    if offload_optimizer:
        values["parallel.offload_optimizer"] = True
        values["parallel.force_ds_cpu_optimizer"] = False
    if offload_param:
        values["parallel.offload_param"] = True
    # fp16/bf16 stay "auto" as shipped: an mmengine run decides them from the GPU
    # (auto_dtype_of_deepspeed_config), an HF-framework run from training_args, which this
    # config already states.
    values["precision.fp16"] = values["precision.bf16"] = "auto"
    return values


def record_optimizer(document: PythonDocument, config: ConfigIR, wrapper: dict[str, ast.expr]) -> None:
    """Under DeepSpeed, mmengine builds optim_wrapper's optimizer itself and DeepSpeedStrategy hands
    it to deepspeed.initialize (mmengine/_strategy/deepspeed.py _wrap_model: `optimizer=self.
    optim_wrapper.optimizer`; train.py's --deepspeed keeps `optimizer=cfg.optim_wrapper.optimizer`):
    a client optimizer, whatever the DeepSpeed config's optimizer block says. Its class, where the
    config's imports name it (`optim_type = PagedAdamW32bit` after `from bitsandbytes.optim import
    PagedAdamW32bit`); a registry string is left unknown."""
    if "optimizer" not in wrapper:
        return
    origin = Origin(span_of(document, *document.span(wrapper["optimizer"])),
                    "mmengine/_strategy/deepspeed.py (DeepSpeedStrategy passes optim_wrapper.optimizer)")
    config.set("trainer.client_optimizer", Field(True, origin))
    kind = document.resolve(_keywords(document, wrapper["optimizer"]).get("type"))
    name = imported_name(document, kind) if isinstance(kind, (ast.Name, ast.Attribute)) else None
    if name is not None:
        config.set("optimizer.class", Field(name, Origin(span_of(document, *document.span(kind)))))


def _plain(document: PythonDocument, node: ast.expr | None, depth: int = 0):
    """A literal value with its `dict(...)` calls and `{...}` displays as dicts; UNKNOWN where
    any part is computed or could be added to (`**other`)."""
    node = document.resolve(node)
    if depth > _MAX_DEPTH or node is None:
        return UNKNOWN
    items = None
    if isinstance(node, ast.Call) and call_name(node) == "dict" and isinstance(node.func, ast.Name) and not node.args:
        if any(item.arg is None for item in node.keywords):
            return UNKNOWN
        items = [(item.arg, item.value) for item in node.keywords]
    elif isinstance(node, ast.Dict):
        if not all(isinstance(key, ast.Constant) and isinstance(key.value, str) for key in node.keys):
            return UNKNOWN
        items = [(key.value, value) for key, value in zip(node.keys, node.values)]
    if items is not None:
        found = {key: _plain(document, value, depth + 1) for key, value in items}
        return UNKNOWN if any(value is UNKNOWN for value in found.values()) else found
    if isinstance(node, (ast.List, ast.Tuple)):
        found = [_plain(document, item, depth + 1) for item in node.elts]
        return UNKNOWN if any(value is UNKNOWN for value in found) else found
    value = document.literal(node)
    return value if value is None or isinstance(value, (bool, int, float, str)) else UNKNOWN


def _strategy_config(document: PythonDocument, strategy: dict[str, ast.expr]):
    """The DeepSpeed config DeepSpeedStrategy hands deepspeed.initialize, as a plain dict; UNKNOWN
    where any part is computed or read from a file."""
    config = _plain(document, strategy["config"]) if "config" in strategy else {}
    if not isinstance(config, dict):
        return UNKNOWN  # a path (opened from the launch directory) or a computed value
    for name in _OVERRIDES:
        if name in strategy:
            value = _plain(document, strategy[name])
            if value is UNKNOWN:
                return UNKNOWN
            if value is not None:
                config[name] = value
    config.setdefault("gradient_accumulation_steps", 1)
    return config


def _deepspeed_values(config: dict, path) -> dict:
    """The IR values DeepSpeed's own adapter reads from `config` (its bindings and defaults)."""
    from ..json_reader import parse_json
    from ..source import Source
    from .deepspeed import DeepSpeedAdapter

    parsed = DeepSpeedAdapter().parse(parse_json(Source(path, json.dumps(config))))
    return {key: field.value for key, field in parsed.fields.items() if key != "file.kind"}


def record_strategy(document: PythonDocument, config: ConfigIR, strategy: dict[str, ast.expr]) -> None:
    """A config that already trains with DeepSpeed (optim_wrapper DeepSpeedOptimWrapper, a
    FlexibleRunner and a DeepSpeedStrategy): its DeepSpeed config becomes a link of the run, and
    the dtypes DeepSpeed casts away are left out (see the module docstring). The caller has
    checked the optim_wrapper, the runner and the strategy's type."""
    plain = _strategy_config(document, strategy)
    if plain is UNKNOWN:
        fp16 = bf16 = None
        # Its ZeRO stage and offload are unknown too: the memory estimate must not assume none.
        config.set("parallel.unmodeled", Field("a DeepSpeed strategy whose config is not written here",
                                               Origin(span_of(document, *document.span(strategy["type"])))))
    else:
        values = _deepspeed_values(plain, config.path)
        fp16, bf16 = values.get("precision.fp16"), values.get("precision.bf16")
        span = span_of(document, *document.span(strategy["type"]))
        config.links.append(Link("deepspeed", f"{config.path}:strategy", span, builtin=values, builtin_source=_STRATEGY,
                                 builtin_spans=_spans(document, strategy, values)))
    casts = fp16 is not False or bf16 is not False  # unknown: it may
    for key, dropped in (("model.load_dtype", casts),
                         ("quantization.compute_dtype", bf16 is not False and not _keeps_compute_dtype(config))):
        if dropped:
            config.fields.pop(key, None)


def _keywords(document: PythonDocument, node: ast.expr | None) -> dict[str, ast.expr]:
    node = document.resolve(node)
    if isinstance(node, ast.Call) and call_name(node) == "dict":
        return {item.arg: item.value for item in node.keywords if item.arg}
    if isinstance(node, ast.Dict):
        return {key.value: value for key, value in zip(node.keys, node.values)
                if isinstance(key, ast.Constant) and isinstance(key.value, str)}
    return {}


def _spans(document: PythonDocument, strategy: dict[str, ast.expr], values: dict) -> dict:
    """Where the strategy writes each value the DeepSpeed adapter read (its bindings' key paths,
    in the keyword that replaces a key of `config`, else in `config`), so that a finding points
    at `bf16=dict(enabled=True)`, not at the strategy."""
    from .deepspeed import DeepSpeedAdapter

    paths = {binding.key: binding.paths for binding in DeepSpeedAdapter.bindings}
    for key, name in (("parallel.offload_param", "offload_param"), ("parallel.offload_optimizer", "offload_optimizer")):
        paths[key] = (("zero_optimization", name),)
    config = _keywords(document, strategy.get("config"))
    found = {}
    for key in values:
        for path in paths.get(key, ()):
            override = strategy.get(path[0])
            node = override if override is not None and document.literal(override) is not None else config.get(path[0])
            for name in path[1:]:
                node = _keywords(document, node).get(name) if node is not None else None
            if node is not None:
                found[key] = span_of(document, *document.span(document.resolve(node)))
                break
    return found


def _keeps_compute_dtype(config: ConfigIR) -> bool:
    """Does Linear4bit keep the compute dtype given under a bf16 input (the module docstring)?"""
    if config.get("quantization.compute_dtype") is None:
        return True  # nothing to drop
    version = config.version("bitsandbytes")
    return version is not None and (older_than(version[0], "0.41.0") is True
                                    or older_than(version[0], "0.47.0") is False)


def runs_strategy(document: PythonDocument, wrapper: dict[str, ast.expr]) -> dict[str, ast.expr] | None:
    """The DeepSpeedStrategy keywords of a config that trains with DeepSpeed already, else None."""
    if "type" not in wrapper or call_name(wrapper["type"]) != "DeepSpeedOptimWrapper":
        return None
    runner = document.resolve(document.constants.get("runner_type"))
    if runner is None or call_name(runner) != "FlexibleRunner":
        return None
    node = document.resolve(document.constants.get("strategy"))
    if not (isinstance(node, ast.Call) and call_name(node) == "dict" and not node.args) or is_open(node):
        return None
    strategy = {item.arg: item.value for item in node.keywords if item.arg}
    if "type" not in strategy or call_name(document.resolve(strategy["type"])) != "DeepSpeedStrategy":
        return None
    return strategy
