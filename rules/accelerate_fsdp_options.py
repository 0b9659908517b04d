"""The FSDP option strings of an accelerate config that FullyShardedDataParallelPlugin refuses to
parse, as a table of the spellings each accelerate release takes (issue 16 recall; the blind
incident accel-fsdp-sharding-strategy-zero, huggingface/accelerate#2273).

Read in huggingface/accelerate (mirror at 16cb6eb8, v1.14.0 the newest tag; first releases from
`git log -S` and `git tag --contains`). `accelerate launch` copies each `fsdp_config` key onto its
arguments (commands/launch.py _validate_launch_command, setattr: no argparse `type` or `choices`)
and utils/launch.py prepare_multi_gpu_env exports it as a string, `str(args.fsdp_x)`, for
FullyShardedDataParallelPlugin.__post_init__ (utils/dataclasses.py) to parse when the script
builds its Accelerator (or Trainer):
- FSDP_SHARDING_STRATEGY (fsdp_sharding_strategy; FSDP1 only from d7c741a6, #3394, v1.6.0):
  `ShardingStrategy(int(...))` from 0c6bdc2c (#532, v0.12.0, the key's first release) to v0.25.x;
  848ed800 (#2288, v0.26.0) also took the names of FSDP_SHARDING_STRATEGY, exactly as written
  (`FSDP_SHARDING_STRATEGY.index(...)`, digits through `int`); 3bde6156 (#2998, v0.34.0) any case,
  and torch's own member names (`ShardingStrategy[value.upper()]`). torch's ShardingStrategy counts
  from 1 (FULL_SHARD 1 ... _HYBRID_SHARD_ZERO2 5), so 0 is refused by every release.
- FSDP_RESHARD_AFTER_FORWARD under fsdp_version 2 (d7c741a6, #3394, v1.6.0, the key's first
  release): `str_to_bool(value.lower())` (utils/environment.py), a truth value or ValueError.
- FSDP_AUTO_WRAP_POLICY: from 3bde6156 (v0.34.0) "Invalid auto wrap policy" unless one of
  FSDP_AUTO_WRAP_POLICY in any case (an AttributeError while building that message until
  791055b4, #3603, v1.8.0); before, set_auto_wrap_policy compared the exact names and wrapped
  nothing for any other value (no refusal: left out).
- FSDP_BACKWARD_PREFETCH (fsdp_backward_prefetch from 848ed800, v0.26.0; fsdp_backward_prefetch_policy
  before, left out): `BackwardPrefetch(FSDP_BACKWARD_PREFETCH.index(...) + 1)` on the exact names to
  v0.33.x; from 3bde6156 any case, NO_PREFETCH, or a digit through `BackwardPrefetch(int(...))`.
- FSDP_STATE_DICT_TYPE (fsdp_state_dict_type from 0c6bdc2c, v0.12.0): `FSDP_STATE_DICT_TYPE.index`
  on the names to v0.33.x; from 3bde6156 a digit through `StateDictType(int(...))` or a name in any
  case. The IR holds the name upper-cased, so a lower-case name on 0.12-0.33 is not flagged.
- FSDP_MIN_NUM_PARAMS (fsdp_min_num_params, 0c6bdc2c, v0.12.0): `int(...)` where the policy is
  SIZE_BASED_WRAP (exactly as written to v0.33.x); always exported, the argparse default 1e8 (a
  float argparse does not convert) as "100000000.0" until c7a77460 (#3902, v1.13.0).
Only the FSDP launcher (distributed_type FSDP) exports them.
"""

from __future__ import annotations

from linter.registry import ERROR, Rule, kinds, register
from linter.versions import older_than

_SHARDING = ("FULL_SHARD", "SHARD_GRAD_OP", "NO_SHARD", "HYBRID_SHARD", "HYBRID_SHARD_ZERO2")
_TRUTHS = ("y", "yes", "t", "true", "on", "1", "n", "no", "f", "false", "off", "0")
_WRAP = ("TRANSFORMER_BASED_WRAP", "SIZE_BASED_WRAP", "NO_WRAP")
_PREFETCH = ("BACKWARD_PRE", "BACKWARD_POST", "NO_PREFETCH")
_STATE_DICT = ("FULL_STATE_DICT", "LOCAL_STATE_DICT", "SHARDED_STATE_DICT")
_PLUGIN = "src/accelerate/utils/dataclasses.py FullyShardedDataParallelPlugin"


def _number(text: str, low: int, high: int) -> bool:
    """`text` as Python's int() reads it is in [low, high]."""
    try:
        return low <= int(text) <= high
    except ValueError:
        return False


def _digits(text: str, low: int, high: int) -> bool:
    """A str.isdigit() number in [low, high] (the check from v0.26.0)."""
    return text.isdigit() and low <= int(text) <= high


class _Regime:
    """The spellings the releases from `first` up to `until` (None: the newest) take: `takes(value,
    fsdp2)` says whether one parses, `taken` names them, `error` is what the launch raises."""

    __slots__ = ("first", "until", "takes", "taken", "error")

    def __init__(self, first, until, takes, taken, error):
        self.first, self.until, self.takes, self.taken, self.error = first, until, takes, taken, error

    def holds(self, version: str) -> bool:
        return older_than(version, self.first) is False and (self.until is None or older_than(version, self.until) is True)


class _Option:
    """`when(config, version)`: the plugin reads the option at all; `default(version)`: the string the
    launch exports where the file leaves the option out, if that one is refused (else None)."""

    __slots__ = ("key", "setting", "env", "regimes", "source", "when", "default")

    def __init__(self, key, setting, env, regimes, source, when=None, default=None):
        self.key, self.setting, self.env, self.regimes, self.source = key, setting, env, regimes, source
        self.when, self.default = when, default


def _size_based(config, version) -> bool:
    """The policy is SIZE_BASED_WRAP, the one the plugin reads min_num_params for: the exact name
    before 0.34.0 (set_auto_wrap_policy compared it as written), any case from 3bde6156 (v0.34.0)."""
    policy = config.value("parallel.accelerate_fsdp_wrap_policy")
    if policy == "SIZE_BASED_WRAP":
        return True
    return isinstance(policy, str) and policy.upper() == "SIZE_BASED_WRAP" and version is not None \
        and older_than(version, "0.34.0") is False


def _min_params_default(version: str):
    """commands/launch.py `--fsdp_min_num_params` default=1e8, a float argparse leaves as it is, exported
    as "100000000.0" (utils/launch.py str(args.fsdp_min_num_params)); int(1e8) from c7a77460 (#3902, v1.13.0)."""
    return "100000000.0" if older_than(version, "1.13.0") is True else None


_STRATEGY_NAMES = "FULL_SHARD, SHARD_GRAD_OP, NO_SHARD, HYBRID_SHARD or HYBRID_SHARD_ZERO2"


def _strategy_error(other: str, parse=str.isdigit):
    """The launch's error for a sharding strategy: a number torch's enum lacks (as the release
    tells numbers: `parse`), else `other`."""
    return lambda value: (f"ValueError: {int(value)} is not a valid ShardingStrategy" if parse(value)
                          else other.replace("{value}", value))


def _is_int(text: str) -> bool:
    return _number(text, -(10 ** 30), 10 ** 30)
_OPTIONS = (
    _Option("parallel.accelerate_fsdp_sharding_strategy", "fsdp_sharding_strategy", "FSDP_SHARDING_STRATEGY", (
        _Regime("0.12.0", "0.26.0", lambda v, fsdp2: _number(v, 1, 5),
                "a number from 1 to 5 (torch's ShardingStrategy: 1 FULL_SHARD, 2 SHARD_GRAD_OP, 3 NO_SHARD, "
                "4 HYBRID_SHARD, 5 _HYBRID_SHARD_ZERO2), no name",
                _strategy_error("ValueError: invalid literal for int() with base 10: '{value}'", _is_int)),
        _Regime("0.26.0", "0.34.0", lambda v, fsdp2: _digits(v, 1, 5) or v in _SHARDING,
                f"a number from 1 to 5 or {_STRATEGY_NAMES}, in upper case",
                _strategy_error("ValueError: '{value}' is not in list (FSDP_SHARDING_STRATEGY)")),
        _Regime("0.34.0", "1.6.0", lambda v, fsdp2: _digits(v, 1, 5) or v.upper() in _SHARDING + ("_HYBRID_SHARD_ZERO2",),
                f"a number from 1 to 5 or {_STRATEGY_NAMES} in any case",
                _strategy_error("KeyError: '{value}' (ShardingStrategy[value.upper()])")),
        _Regime("1.6.0", None, lambda v, fsdp2: fsdp2 or _digits(v, 1, 5)
                or v.upper() in _SHARDING + ("_HYBRID_SHARD_ZERO2",),
                f"a number from 1 to 5 or {_STRATEGY_NAMES} in any case (FSDP1; FSDP2 does not read it)",
                _strategy_error("KeyError: '{value}' (ShardingStrategy[value.upper()])")),
    ), f"{_PLUGIN}.__post_init__ (0c6bdc2c, #532; names from 848ed800, #2288, v0.26.0; any case from 3bde6156, "
       "#2998, v0.34.0; FSDP1 only from d7c741a6, #3394, v1.6.0)"),
    _Option("parallel.accelerate_fsdp_reshard", "fsdp_reshard_after_forward", "FSDP_RESHARD_AFTER_FORWARD", (
        _Regime("1.6.0", None, lambda v, fsdp2: not fsdp2 or v.lower() in _TRUTHS,
                "under fsdp_version 2 a truth value: true (reshard, as FULL_SHARD) or false (as SHARD_GRAD_OP); "
                "the strategy names are FSDP1's",
                "ValueError: invalid truth value {lower}"),
    ), f"{_PLUGIN}.__post_init__, utils/environment.py str_to_bool (d7c741a6, #3394, v1.6.0)"),
    _Option("parallel.accelerate_fsdp_wrap_policy", "fsdp_auto_wrap_policy", "FSDP_AUTO_WRAP_POLICY", (
        _Regime("0.11.0", "0.34.0", lambda v, fsdp2: True, "any value (other than the exact names: no wrapping)", ""),
        _Regime("0.34.0", None, lambda v, fsdp2: v.upper() in _WRAP, "TRANSFORMER_BASED_WRAP, SIZE_BASED_WRAP or "
                "NO_WRAP in any case", "ValueError: Invalid auto wrap policy: {value}"),
    ), f"{_PLUGIN}.__post_init__ (3bde6156, #2998, v0.34.0)"),
    _Option("parallel.accelerate_fsdp_backward_prefetch", "fsdp_backward_prefetch", "FSDP_BACKWARD_PREFETCH", (
        _Regime("0.26.0", "0.34.0", lambda v, fsdp2: v in _PREFETCH, "BACKWARD_PRE, BACKWARD_POST or NO_PREFETCH, "
                "in upper case", "ValueError (\"{value}\" is not in FSDP_BACKWARD_PREFETCH)"),
        _Regime("0.34.0", None, lambda v, fsdp2: v.upper() in _PREFETCH or _digits(v, 1, 2),
                "BACKWARD_PRE, BACKWARD_POST or NO_PREFETCH in any case, or 1 or 2",
                "KeyError or ValueError from BackwardPrefetch (\"{value}\")"),
    ), f"{_PLUGIN}.__post_init__ (848ed800, #2288, v0.26.0; 3bde6156, #2998, v0.34.0)"),
    _Option("parallel.fsdp_state_dict_type", "fsdp_state_dict_type", "FSDP_STATE_DICT_TYPE", (
        _Regime("0.12.0", "0.34.0", lambda v, fsdp2: v.upper() in _STATE_DICT,
                "FULL_STATE_DICT, LOCAL_STATE_DICT or SHARDED_STATE_DICT, in upper case",
                "ValueError (\"{value}\" is not in FSDP_STATE_DICT_TYPE)"),
        _Regime("0.34.0", None, lambda v, fsdp2: v.upper() in _STATE_DICT or _digits(v, 1, 3),
                "FULL_STATE_DICT, LOCAL_STATE_DICT or SHARDED_STATE_DICT in any case, or 1 to 3",
                "KeyError or ValueError from StateDictType (\"{value}\")"),
    ), f"{_PLUGIN}.set_state_dict_type (0c6bdc2c, #532, v0.12.0; 3bde6156, #2998, v0.34.0)"),
    # read by `int(os.environ["FSDP_MIN_NUM_PARAMS"])` for SIZE_BASED_WRAP: set_auto_wrap_policy (0c6bdc2c,
    # #532, v0.12.0) to v0.33.x, __post_init__ from 3bde6156 (v0.34.0)
    _Option("parallel.accelerate_fsdp_min_num_params", "fsdp_min_num_params", "FSDP_MIN_NUM_PARAMS", (
        _Regime("0.12.0", None, lambda v, fsdp2: _is_int(v), "an integer, written without a decimal point or exponent",
                "ValueError: invalid literal for int() with base 10: '{value}'"),
    ), f"{_PLUGIN} int(FSDP_MIN_NUM_PARAMS) for SIZE_BASED_WRAP (0c6bdc2c, #532, v0.12.0; huggingface/accelerate#1361, "
       "#3854)", when=_size_based, default=_min_params_default),
)


@register
class AccelerateFsdpOptionRefused(Rule):
    """TRN110 accelerate-fsdp-option-refused

    ## What it does
    Flags an accelerate FSDP config (`distributed_type: FSDP`) whose `fsdp_config` option
    FullyShardedDataParallelPlugin cannot parse, by the spellings of the accelerate in use (a
    pin near the file or the installed package): `fsdp_sharding_strategy` outside 1 to 5 and the
    strategy names (names only from 0.26.0, in upper case until 0.33.x; FSDP1 only from 1.6.0),
    `fsdp_reshard_after_forward` other than a truth value under `fsdp_version: 2` (1.6.0 on),
    `fsdp_auto_wrap_policy` outside TRANSFORMER_BASED_WRAP / SIZE_BASED_WRAP / NO_WRAP (0.34.0
    on), `fsdp_backward_prefetch` outside BACKWARD_PRE / BACKWARD_POST / NO_PREFETCH (0.26.0
    on), `fsdp_state_dict_type` outside the three state dict types (digits only from 0.34.0),
    and under `fsdp_auto_wrap_policy: SIZE_BASED_WRAP` a `fsdp_min_num_params` that is no
    integer (`1e8`, `1.0e8`: `int()` of the exported string, every release), or none at all on
    0.12.0 to 1.12.x (the launch's default, the float 1e8, is exported as "100000000.0").
    With the version unknown it fires only where every release that reads the key refuses the
    value (a sharding strategy of 0, a truth-less reshard_after_forward under FSDP2, a name no
    release has); otherwise a --verbose note.

    ## Why is this bad?
    `accelerate launch` hands each option to the training processes as a string and the plugin
    turns it into torch's enum when the script builds its Accelerator: an unknown spelling
    raises (`ValueError: 0 is not a valid ShardingStrategy`, "invalid truth value full_shard",
    "Invalid auto wrap policy") on every process, after the job got its GPUs. torch's
    ShardingStrategy counts from 1 (FULL_SHARD), so 0, read as the first of a list, is never
    valid (huggingface/accelerate#2273).

    ## Example
    `accelerate.yaml`:
        distributed_type: FSDP
        num_processes: 8
        fsdp_config:
          fsdp_sharding_strategy: 0
    Use instead (1 is FULL_SHARD), in `accelerate.yaml`:
        distributed_type: FSDP
        num_processes: 8
        fsdp_config:
          fsdp_sharding_strategy: 1

    ## Fix safety
    No fix: which strategy or policy was meant is the author's to say.

    ## References
    - accelerate src/accelerate/utils/dataclasses.py FullyShardedDataParallelPlugin.__post_init__ and
      set_state_dict_type: 0c6bdc2c "enhancements and fixes for FSDP and DeepSpeed" (#532, v0.12.0),
      848ed800 "Improve FSDP config usability" (#2288, v0.26.0), 3bde6156 "Make env variables optional
      for FSDP" (#2998, v0.34.0), d7c741a6 "Initial FSDP2 support" (#3394, v1.6.0), 791055b4 (#3603, v1.8.0)
    - accelerate src/accelerate/utils/launch.py prepare_multi_gpu_env (FSDP_* = str(args.fsdp_*));
      commands/launch.py _validate_launch_command; utils/environment.py str_to_bool; utils/constants.py
      FSDP_SHARDING_STRATEGY, FSDP_AUTO_WRAP_POLICY, FSDP_BACKWARD_PREFETCH, FSDP_STATE_DICT_TYPE
    - torch torch/distributed/fsdp/api.py ShardingStrategy, BackwardPrefetch, StateDictType (auto(): from 1)
    - accelerate commands/launch.py `--fsdp_min_num_params` default=1e8 until c7a77460 (#3902, v1.13.0);
      FSDP_MIN_NUM_PARAMS read with int() (set_auto_wrap_policy, __post_init__ from 3bde6156)
    - huggingface/accelerate#2273, #1361 (invalid literal for int() with base 10: '100000000.0'), #3854
    """

    code = "TRN110"
    name = "accelerate-fsdp-option-refused"
    severity = ERROR
    triggers = kinds("accelerate")

    def check(self, run, context):
        for config in run.configs:
            if config.value("file.kind") != "accelerate" or config.value("parallel.accelerate_distributed_type") != "FSDP":
                continue
            fsdp2 = str(config.value("parallel.fsdp_version")) == "2"
            overridden = set(config.value("launch.overridden") or ())
            found = config.version("accelerate")
            for option in _OPTIONS:
                value = config.value(option.key)
                if option.key in overridden or (option.when and not option.when(config, found and found[0])):
                    continue
                if not isinstance(value, str):
                    if option.default is not None and value is None:
                        yield from self._default(config, option, found, context)
                    continue
                finding = self._option(config, option, value, fsdp2, context)
                if finding is not None:
                    yield finding

    def _option(self, config, option, value, fsdp2, context):
        span = config.span(option.key) or config.file_span
        said = f"fsdp_config {option.setting}: {value}" + (" with fsdp_version 2" if fsdp2 else "")
        found = config.version("accelerate")
        if found is None:
            taken = [regime.takes(value, fsdp2) for regime in option.regimes]
            if all(taken):
                return None
            if any(taken):
                context.notes.append(f"{config.path}: {self.code} skipped: the accelerate version is unknown "
                                     f"({option.setting} {value} parses in some releases)")
                return None
            newest = option.regimes[-1]
            return self.finding(config, span, f"{said}: every accelerate release that reads it ({option.regimes[0].first} "
                                              f"on) refuses it at launch: {_said(newest.error, value)} (it takes "
                                              f"{newest.taken}; {option.env}, {option.source})")
        regime = next((regime for regime in option.regimes if regime.holds(found[0])), None)
        if regime is None or regime.takes(value, fsdp2):
            return None
        return self.finding(config, span, f"{said}: accelerate {found[0]} ({found[1]}) refuses it at launch: "
                                          f"{_said(regime.error, value)} (it takes {regime.taken}; {option.env}, "
                                          f"{option.source})")


    def _default(self, config, option, found, context):
        """The option left out: the value the launch exports in its place, where the release refuses it."""
        if found is None:
            context.notes.append(f"{config.path}: {self.code} skipped: the accelerate version is unknown (without "
                                 f"{option.setting} the launch's default parses only from some release on)")
            return
        if older_than(found[0], option.regimes[0].first) is not False:
            return
        value = option.default(found[0])
        if value is None:
            return
        span = config.span("parallel.accelerate_fsdp_wrap_policy") or config.file_span
        yield self.finding(config, span, f"fsdp_config without {option.setting}: accelerate {found[0]} ({found[1]}) "
                                         f"exports its default as {option.env}={value!r}, which it refuses at launch: "
                                         f"{_said(option.regimes[-1].error, value)} ({option.source}; the default "
                                         f"is an integer from 1.13.0, c7a77460, #3902)")


def _said(error, value: str) -> str:
    if callable(error):
        return error(value)
    return error.replace("{value}", value).replace("{lower}", value.lower())
