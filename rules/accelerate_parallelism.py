"""accelerate's ParallelismConfig (the accelerate config's `parallelism_config` block): the checks
ParallelismConfig.__post_init__ / _validate_accelerator and Accelerator._prepare_cp make, and the FSDP2
state dict types FullyShardedDataParallelPlugin refuses, as a table (issue 16 recall).

Read in huggingface/accelerate (mirror at 16cb6eb8, v1.14.0 the newest tag; first releases from
`git log -S` and `git tag --contains`): ParallelismConfig arrived in 9359a019 (#3682, v1.10.0), whose
__post_init__ reads the launcher's PARALLELISM_CONFIG_* variables (every size defaults to 1) and
whose _validate_accelerator (called from Accelerator.__init__) compares the sizes with the job.
Only the multi-GPU launcher (utils/launch.py prepare_multi_gpu_env: MULTI_* and FSDP) exports the
sizes from the config; DeepSpeed and single-process launches are left out. Left out too: checks on
handlers and device meshes a script passes.
"""

from __future__ import annotations

from linter.registry import ERROR, Rule, kinds, register
from linter.versions import older_than

_SIZES = {"dp_replicate": "parallel.pc_dp_replicate_size", "dp_shard": "parallel.pc_dp_shard_size",
          "tp": "parallel.pc_tp_size", "cp": "parallel.pc_cp_size", "sp": "parallel.pc_sp_size"}
_WHERE = "src/accelerate/parallelism_config.py ParallelismConfig"
_SP_CONFIG = "src/accelerate/utils/dataclasses.py DeepSpeedSequenceParallelConfig.__post_init__"
_SP_ATTN = ("flash_attention_2", "flash_attention_3", "sdpa")


class _Sizes:
    def __init__(self, config):
        self.config = config
        self.size = {}
        for name, key in _SIZES.items():
            value = config.value(key)
            self.size[name] = value if isinstance(value, int) and not isinstance(value, bool) else 1
        self.total = 1
        for value in self.size.values():
            self.total *= value
        self.kind = config.value("parallel.accelerate_distributed_type")
        self.fsdp2 = self.kind == "FSDP" and str(config.value("parallel.fsdp_version")) == "2"
        self.state_dict = str(config.value("parallel.fsdp_state_dict_type") or "")
        world = config.value("batch.world_size")
        self.world = world if isinstance(world, int) and not isinstance(world, bool) else None
        # ParallelismConfig.__post_init__ checks dp_replicate, dp_shard, tp, cp, then sp (sp from 1.12.0)
        small = next(((name, self.size[name]) for name in ("dp_replicate", "dp_shard", "tp", "cp", "sp")
                      if self.size[name] < 1), (None, None))
        self.written = {"small_name": small[0], "small_size": small[1],
                        "sp_backend": config.value("parallel.pc_sp_backend"),
                        "cp_backend": config.value("parallel.pc_cp_backend"),
                        "cp_comm_strategy": config.value("parallel.pc_cp_comm_strategy"),
                        "sp_attn": config.value("parallel.pc_sp_attn")}
        # the multi-GPU launcher (MULTI_*, FSDP) runs a parallelism_config from 1.10.0, the DeepSpeed
        # launcher from 1.12.0 (utils/launch.py prepare_deepspeed_cmd_env, c7e59dd7, #3817)
        self.legacy = self.fsdp2 or (self.total > 1 and (self.kind == "FSDP" or str(self.kind).startswith("MULTI_")))

    def exports(self, version) -> bool:
        """Does the launch of this release hand the parallelism_config to the job?"""
        kind = str(self.kind)
        return kind == "FSDP" or kind.startswith("MULTI_") or (
            kind == "DEEPSPEED" and older_than(version, "1.12.0") is False)

    def torch_below(self, release) -> bool:
        """Is the torch pinned (or installed) for this file older than `release`? (unknown: no)"""
        found = self.config.version("torch")
        return found is not None and older_than(found[0], release) is True

    def deepspeed_below(self, release) -> bool:
        """Is the DeepSpeed pinned (or installed) for this file older than `release`? (unknown: no)"""
        found = self.config.version("deepspeed")
        return found is not None and older_than(found[0], release) is True

    def named(self, name, accepted) -> bool:
        """A value written for `name` that is not one of `accepted`."""
        value = self.written[name]
        return isinstance(value, str) and value not in accepted


class _Row:
    __slots__ = ("when", "at", "message", "source", "since", "until", "why", "any_launch")

    def __init__(self, when, at, message, source, since, until=None, why="", any_launch=False):
        # any_launch: `when` asks s.exports(v) itself (sizes of 1 and the DeepSpeed launcher count);
        # the other rows hold only where the sizes exceed 1 under FSDP2 or the multi-GPU launcher.
        self.when, self.at, self.message, self.source = when, at, message, source
        self.since, self.until, self.why, self.any_launch = since, until, why, any_launch


_ROWS = (
    _Row(lambda s, v: s.total > 1 and s.world is not None and s.total != s.world
         and not (s.size["sp"] > 1 and older_than(v, "1.12.0") is False),
         "parallel.pc_dp_shard_size", "ParallelismConfig total_size ({total}) does not match num_processes ({world})",
         f"{_WHERE}._validate_accelerator (9359a019, #3682)", "1.10.0",
         why="the product of the parallelism sizes must equal the number of processes"),
    _Row(lambda s, v: s.total > 1 and s.kind == "FSDP" and not s.fsdp2,
         "parallel.accelerate_distributed_type",
         "ParallelismConfig is only compatible DistributedType.FSDP (version 2) or DistributedType.Multi{{Device}}",
         f"{_WHERE}._validate_accelerator (9359a019, #3682; DEEPSPEED accepted from c7e59dd7, #3817, v1.12.0)",
         "1.10.0", why="distributed_type {kind}{fsdp1} cannot run a parallelism_config"),
    # FSDP2's torch floor: Accelerator.__init__ (d7c741a6, #3394, v1.6.0; FSDP2_PYTORCH_VERSION 2.5.1), then
    # FullyShardedDataParallelPlugin.__post_init__ with 2.6.0 (ee4cab96, #3499, v1.7.0; unchanged to v1.14.0)
    _Row(lambda s, v: s.fsdp2 and s.torch_below("2.5.1"), "parallel.fsdp_version",
         "FSDP2 requires PyTorch >= 2.5.1", "src/accelerate/accelerator.py Accelerator.__init__ (d7c741a6, #3394)",
         "1.6.0", until="1.7.0", why="fsdp_version 2 with torch {torch}"),
    _Row(lambda s, v: s.fsdp2 and s.torch_below("2.6.0"), "parallel.fsdp_version",
         "FSDP2 requires PyTorch >= 2.6.0",
         "src/accelerate/utils/dataclasses.py FullyShardedDataParallelPlugin.__post_init__ (ee4cab96, #3499)",
         "1.7.0", why="fsdp_version 2 with torch {torch}"),
    # FullyShardedDataParallelPlugin.set_state_dict_type (utils/dataclasses.py), run from __post_init__
    # with the launcher's FSDP_STATE_DICT_TYPE: FSDP2 took only SHARDED_STATE_DICT in 1.6.x (d7c741a6,
    # #3394); 8fb07353 (#3527, v1.7.0) accepted FULL_STATE_DICT and kept refusing LOCAL_STATE_DICT.
    _Row(lambda s, v: s.fsdp2 and s.state_dict in ("FULL_STATE_DICT", "LOCAL_STATE_DICT", "1", "2"),
         "parallel.fsdp_state_dict_type", "FSDP2 only supports SHARDED_STATE_DICT for now.",
         "src/accelerate/utils/dataclasses.py FullyShardedDataParallelPlugin.set_state_dict_type (d7c741a6, #3394)",
         "1.6.0", until="1.7.0", why="fsdp_state_dict_type {state_dict} with fsdp_version 2"),
    _Row(lambda s, v: s.fsdp2 and s.state_dict in ("LOCAL_STATE_DICT", "2"),
         "parallel.fsdp_state_dict_type", "FSDP2 does not support LOCAL_STATE_DICT.",
         "src/accelerate/utils/dataclasses.py FullyShardedDataParallelPlugin.set_state_dict_type (8fb07353, #3527)",
         "1.7.0", why="fsdp_state_dict_type {state_dict} with fsdp_version 2"),
    # __post_init__'s size checks (9359a019, #3682, v1.10.0; sp_size from c7e59dd7, #3817, v1.12.0): the
    # launcher exports each written size, int() of it
    _Row(lambda s, v: s.exports(v) and s.written["small_name"] is not None
         and (s.written["small_name"] != "sp" or older_than(v, "1.12.0") is False),
         "parallel.pc_{small_name}_size", "{small_name}_size must be at least 1, but got {small_size}",
         f"{_WHERE}.__post_init__ (9359a019, #3682)", "1.10.0",
         why="parallelism_config_{small_name}_size {small_size}", any_launch=True),
    _Row(lambda s, v: (s.size["tp"] > 1 or s.size["cp"] > 1) and s.size["dp_replicate"] > 1 and s.size["dp_shard"] == 1,
         "parallel.pc_dp_replicate_size",
         "Tensor/Context parallelism (tp/cp_size > 1) cannot be used with pure data parallelism",
         f"{_WHERE}.__post_init__ (9359a019, #3682)", "1.10.0",
         why="tp/cp compose with FSDP (dp_shard_size > 1), not with replicated data parallelism"),
    _Row(lambda s, v: s.size["cp"] > 1 and s.size["sp"] > 1, "parallel.pc_cp_size",
         "Context Parallelism (CP) and Sequence Parallelism (SP) are mutually exclusive",
         f"{_WHERE}.__post_init__ (b923f65a, #3858)", "1.13.0", why="cp_size and sp_size are both above 1"),
    # c7e59dd7 (#3817, v1.12.0) returned early from Accelerator._prepare_cp when sp_backend is
    # "deepspeed", its default and only valid value, so _cp_context was never set and the first
    # `accelerator.maybe_context_parallel` raised; b923f65a (#3858, v1.13.0) removed the check.
    _Row(lambda s, v: s.size["cp"] > 1 and s.size["sp"] <= 1, "parallel.pc_cp_size",
         "AttributeError: 'Accelerator' object has no attribute '_cp_context'",
         "src/accelerate/accelerator.py Accelerator._prepare_cp (c7e59dd7, #3817; fixed by b923f65a, #3858)",
         "1.12.0", until="1.13.0",
         why="accelerate 1.12 skips building the context-parallel context (sp_backend defaults to \"deepspeed\") "
             "and the first training step fails (huggingface/accelerate#3856, #3867)"),
    # The backends' and handlers' own checks (read at v1.10.0, v1.12.0, v1.13.0, v1.14.0): the launcher
    # exports each parallelism_config_* value as written (launch.py copies the config's block onto its
    # arguments without argparse's `choices`; utils/launch.py prepare_extend_env_parallelism_config).
    _Row(lambda s, v: s.exports(v) and s.named("sp_backend", ("deepspeed",)), "parallel.pc_sp_backend",
         "sp_backend must be one of ['deepspeed'], but got {sp_backend}", f"{_WHERE}.__post_init__ (c7e59dd7, #3817)",
         "1.12.0", why="parallelism_config_sp_backend {sp_backend}", any_launch=True),
    _Row(lambda s, v: s.exports(v) and s.named("cp_backend", ("torch",)), "parallel.pc_cp_backend",
         "cp_backend must be one of ['torch'], but got {cp_backend}", f"{_WHERE}.__post_init__ (c7e59dd7, #3817)",
         "1.12.0", why="parallelism_config_cp_backend {cp_backend}", any_launch=True),
    # TorchContextParallelConfig (built when cp_size > 1), 6891c570 (#3700, v1.10.0)
    _Row(lambda s, v: s.exports(v) and s.size["cp"] > 1 and s.named("cp_comm_strategy", ("allgather", "alltoall")),
         "parallel.pc_cp_comm_strategy",
         "Invalid cp_comm_strategy: {cp_comm_strategy}. Must be one of 'allgather' or 'alltoall'.",
         "src/accelerate/utils/dataclasses.py TorchContextParallelConfig.__post_init__ (6891c570, #3700)", "1.10.0",
         why="parallelism_config_cp_comm_strategy {cp_comm_strategy}", any_launch=True),
    # DeepSpeedSequenceParallelConfig (built when sp_size > 1): c7e59dd7 (#3817, v1.12.0) took the three
    # built-in names; f317f824 (#3959, v1.14.0) also a hub kernel ("/" and "flash-attn" in the name).
    _Row(lambda s, v: s.exports(v) and s.size["sp"] > 1 and s.named("sp_attn", _SP_ATTN), "parallel.pc_sp_attn",
         "Invalid sp_attn_implementation: {sp_attn}. Must be one of 'flash_attention_2', 'flash_attention_3' "
         "or 'sdpa'.",
         f"{_SP_CONFIG} (c7e59dd7, #3817)", "1.12.0", until="1.14.0",
         why="parallelism_config_sp_attn_implementation {sp_attn}", any_launch=True),
    _Row(lambda s, v: s.exports(v) and s.size["sp"] > 1 and s.written["sp_attn"] in ("eager", "flex_attention"),
         "parallel.pc_sp_attn", "Invalid sp_attn_implementation: {sp_attn}. 'eager' and 'flex_attention' are not "
         "supported with sequence parallelism.", f"{_SP_CONFIG} (f317f824, #3959)", "1.14.0",
         why="parallelism_config_sp_attn_implementation {sp_attn}", any_launch=True),
    _Row(lambda s, v: s.exports(v) and s.size["sp"] > 1 and s.named("sp_attn", _SP_ATTN + ("eager", "flex_attention"))
         and not ("/" in s.written["sp_attn"] and "flash-attn" in s.written["sp_attn"]), "parallel.pc_sp_attn",
         "Invalid sp_attn_implementation: {sp_attn}. Must be one of ['flash_attention_2', 'flash_attention_3', "
         "'sdpa'] or a hub-hosted flash attention kernel (e.g. 'kernels-community/flash-attn2').",
         f"{_SP_CONFIG} (f317f824, #3959)", "1.14.0", why="parallelism_config_sp_attn_implementation {sp_attn}",
         any_launch=True),
    # Accelerator._prepare_deepspeed (c7e59dd7, #3817, v1.12.0; unchanged to v1.14.0): Ulysses needs
    # DeepSpeed >= 0.18.2 (its runtime/sequence_parallel/ulysses_sp.py UlyssesSPAttentionHF).
    _Row(lambda s, v: s.exports(v) and s.kind == "DEEPSPEED" and s.size["sp"] > 1 and s.deepspeed_below("0.18.2"),
         "parallel.pc_sp_size", "Deepspeed ALST/Ulysses requires deepspeed>=0.18.2.",
         "src/accelerate/accelerator.py Accelerator._prepare_deepspeed (c7e59dd7, #3817)", "1.12.0",
         why="sequence parallelism with deepspeed {deepspeed}", any_launch=True),
)


@register
class AccelerateParallelismRefused(Rule):
    """TRN063 accelerate-parallelism-refused

    ## What it does
    Flags an accelerate config whose `parallelism_config` sizes the accelerate in use (a pin
    near the file or the installed package) refuses or breaks on, from 1.10.0 where
    ParallelismConfig arrived (with the version unknown, only the checks every release from
    1.10.0 to the newest makes: each release before 1.10.0 refuses the `parallelism_config`
    key itself): sizes whose product is not `num_processes`; sizes
    above 1 under FSDP1 (only FSDP2 and the MULTI_* types take them); tensor or context parallelism with pure replication (`dp_replicate_size` > 1,
    `dp_shard_size` 1); from 1.13.0 context and sequence parallelism together; and on 1.12.x
    any context parallelism (`parallelism_config_cp_size` > 1). With `fsdp_version: 2` it also
    flags the state dict types FullyShardedDataParallelPlugin refuses: anything but
    SHARDED_STATE_DICT on 1.6.x, LOCAL_STATE_DICT from 1.7.0. The backends' and handlers' own
    checks are rows too, for the multi-GPU launcher and, from 1.12.0, the DeepSpeed launcher
    (which hands the block over from then): `parallelism_config_sp_backend` other than deepspeed
    and `parallelism_config_cp_backend` other than torch (from 1.12.0); with `cp_size` > 1 a
    `parallelism_config_cp_comm_strategy` other than allgather or alltoall (from 1.10.0); with
    `sp_size` > 1 a `parallelism_config_sp_attn_implementation` other than flash_attention_2,
    flash_attention_3 or sdpa (1.12.0 to 1.13.x; from 1.14.0 a hub flash-attn kernel is taken
    too, eager and flex_attention never); and DeepSpeed sequence parallelism with a DeepSpeed
    pinned below 0.18.2 (from 1.12.0); a size below 1 (from 1.10.0; `sp_size` from 1.12.0);
    `fsdp_version: 2` with a torch pinned (or installed) below 2.5.1 on 1.6.x, below 2.6.0 from
    1.7.0 (FSDP2's own floor). It
    also checks the process layout
    `accelerate launch` reads: with `num_machines` above 1 under a MULTI_* type, FSDP or
    MEGATRON_LM, a `num_processes` below `num_machines` (every release: num_processes is the
    total, and each node gets num_processes // num_machines = 0 processes); and from 0.17.0
    `distributed_type: MULTI_GPU` on one machine with a single id in `gpu_ids`.

    ## Why is this bad?
    `Accelerator.__init__` validates the ParallelismConfig it builds from the launcher's
    variables and raises ValueError with the messages the findings quote, before training.
    accelerate 1.12.0 returns early from `_prepare_cp` when `sp_backend` is "deepspeed" — its
    default and only valid value — so the context-parallel context is never built and the
    first training step dies with "'Accelerator' object has no attribute '_cp_context'"
    (huggingface/accelerate#3856, fixed in 1.13.0 by #3858). `accelerate launch` starts torchrun
    with `--nproc_per_node num_processes // num_machines`, so `num_processes: 1` on two machines
    (the per-machine GPU count) starts no process at all (huggingface/accelerate#2818); a
    MULTI_GPU config with one gpu id is refused with "Less than two GPU ids were configured"
    (huggingface/accelerate#1316).

    ## Example
    `accelerate.yaml`:
        distributed_type: FSDP
        num_processes: 2
        fsdp_config:
          fsdp_version: 2
        parallelism_config:
          parallelism_config_cp_size: 2
    `requirements.txt`:
        accelerate==1.12.0
    Use instead accelerate 1.13.0 or later, in `requirements.txt`:
        accelerate==1.13.0

    ## Fix safety
    No fix: the sizes, the distributed type or the accelerate pin are the author's to change.

    ## References
    - accelerate src/accelerate/parallelism_config.py ParallelismConfig.__post_init__ and
      _validate_accelerator: 9359a019 "Parallelism config + TP + HSDP + BYODM" (#3682,
      v1.10.0); c7e59dd7 "Deepspeed Ulysses/ALST integration" (#3817, v1.12.0); b923f65a
      (#3858, v1.13.0)
    - accelerate src/accelerate/accelerator.py Accelerator._prepare_cp
    - accelerate src/accelerate/commands/config/config_args.py BaseConfig.from_yaml_file: "had
      unknown keys" from cec5ae8e (#1935, v0.23.0), `cls(**config_dict)` (a TypeError) before;
      ClusterConfig.parallelism_config from 6891c570 (#3700, v1.10.0)
    - accelerate src/accelerate/utils/dataclasses.py TorchContextParallelConfig.__post_init__ (6891c570,
      #3700, v1.10.0) and DeepSpeedSequenceParallelConfig.__post_init__ (c7e59dd7, #3817, v1.12.0; hub
      kernels from f317f824, #3959, v1.14.0); commands/launch.py _validate_launch_command copies the
      config's parallelism_config block onto the launch arguments without argparse's `choices`;
      utils/launch.py prepare_extend_env_parallelism_config (the DeepSpeed launcher calls it from
      c7e59dd7); accelerator.py Accelerator._prepare_deepspeed ("requires deepspeed>=0.18.2", c7e59dd7)
    - accelerate src/accelerate/utils/dataclasses.py FullyShardedDataParallelPlugin.set_state_dict_type:
      d7c741a6 "Initial FSDP2 support" (#3394, v1.6.0), 8fb07353 "[FSDP2] Enable FULL_STATE_DICT"
      (#3527, v1.7.0)
    - accelerate src/accelerate/utils/launch.py prepare_multi_gpu_env (nproc_per_node = num_processes //
      num_machines; commands/launch.py multi_gpu_launcher from v0.1.0, moved in v0.17.0)
    - accelerate src/accelerate/commands/launch.py _validate_launch_command: the single-gpu-id refusal
      from 9b5877d1 "Fix multinode with GPU ids when each node has 1" (#1127, v0.17.0; before it
      silently set multi_gpu False)
    - huggingface/accelerate#3856, #3867, #2818, #2521, #1316
    """

    code = "TRN063"
    name = "accelerate-parallelism-refused"
    severity = ERROR
    triggers = kinds("accelerate")

    def check(self, run, context):
        for config in run.configs:
            if config.value("file.kind") != "accelerate":
                continue
            yield from self._layout(config, context)
            sizes = _Sizes(config)
            if not sizes.legacy and not any(value is not None for value in sizes.written.values()) \
                    and not (sizes.kind == "DEEPSPEED" and sizes.size["sp"] > 1):
                continue  # only the multi-GPU launcher exports the sizes (utils/launch.py prepare_multi_gpu_env)
            found = config.version("accelerate")
            if found is None:
                if sizes.legacy:
                    yield from self._unpinned(config, sizes, context)
                else:
                    context.notes.append(f"{config.path}: {self.code} skipped: the accelerate version is unknown")
                continue
            for row in _ROWS:
                if not row.any_launch and not sizes.legacy:
                    continue
                version = found[0]
                if older_than(version, row.since) is not False:
                    continue
                if row.until is not None and older_than(version, row.until) is not True:
                    continue
                if not row.when(sizes, version):
                    continue
                why, message, span = _described(config, row, sizes)
                yield self.finding(config, span,
                                   f"{why}: accelerate {version} ({found[1]}) fails: \"{message}\" ({row.source})")

    def _unpinned(self, config, sizes, context):
        """With the version unknown: a check every accelerate from 1.10.0 to the newest makes, on a
        `parallelism_config` with a size above 1. Every release before 1.10.0 refuses the file too:
        ClusterConfig has no `parallelism_config` field, so from_yaml_file raises "had unknown keys"
        (cec5ae8e, #1935, v0.23.0) or, before, `cls(**config_dict)` a TypeError."""
        if sizes.total <= 1:
            context.notes.append(f"{config.path}: {self.code} skipped: the accelerate version is unknown")
            return
        for row in _ROWS:
            if row.since != "1.10.0" or row.until is not None or not all(
                    row.when(sizes, version) for version in _RELEASES_SINCE_1_10):
                continue
            why, message, span = _described(config, row, sizes)
            yield self.finding(config, span,
                               f"{why}: every accelerate that reads the file fails: from 1.10.0 \"{message}\" "
                               f"({row.source}); before 1.10.0 `parallelism_config` itself is an unknown key "
                               f"(ClusterConfig.from_yaml_file: \"had unknown keys\", a TypeError before 0.23.0)")

    def _layout(self, config, context):
        """The process layout accelerate launch reads from the config (rows of _LAYOUT)."""
        kind = str(config.value("parallel.accelerate_distributed_type") or "")
        machines = config.value("parallel.accelerate_num_machines")
        machines = 1 if machines is None else machines  # ClusterConfig.num_machines defaults to 1
        processes = config.value("batch.world_size")
        processes = processes if isinstance(processes, int) and not isinstance(processes, bool) else None
        ids = config.value("parallel.accelerate_gpu_ids")
        overridden = set(config.value("launch.overridden") or ())
        found = config.version("accelerate")
        for row in _LAYOUT:
            if not row.when(kind, machines, processes, ids) or overridden & set(row.reads):
                continue
            message = row.message.format(kind=kind, machines=machines, processes=processes, ids=ids)
            span = config.span(row.at) or config.file_span
            if row.since is None:  # every release
                yield self.finding(config, span, f"every accelerate release fails on this config: {message} "
                                                 f"({row.source})")
            elif found is None:
                context.notes.append(f"{config.path}: {self.code} skipped: the accelerate version is unknown "
                                     f"(the process layout matches a launch check from {row.since})")
            elif older_than(found[0], row.since) is False:
                yield self.finding(config, span, f"accelerate {found[0]} ({found[1]}) refuses this config at "
                                                 f"launch: {message} ({row.source}; from {row.since})")


def _described(config, row, sizes):
    """(why, the refusal's message, the span) of a _ROWS row that holds for `sizes`."""
    deepspeed = sizes.config.version("deepspeed")
    torch = sizes.config.version("torch")
    why = row.why.format(kind=sizes.kind, fsdp1=" (FSDP1)" if sizes.kind == "FSDP" else "",
                         torch=torch and f"{torch[0]} ({torch[1]})",
                         state_dict=sizes.state_dict, deepspeed=deepspeed and f"{deepspeed[0]} ({deepspeed[1]})",
                         **sizes.written)
    message = row.message.format(total=sizes.total, world=sizes.world, **sizes.written)
    span = config.span(row.at.format(**sizes.written))
    return why, message, span or config.span("parallel.pc_cp_size") or config.file_span


# accelerate launch's handling of the config's process layout (read at 16cb6eb8; `git log -S`, `git tag
# --contains`). num_processes is the total over all machines: utils/launch.py prepare_multi_gpu_env (the
# launcher of MULTI_*, FSDP and MEGATRON_LM) starts torchrun with nproc_per_node = num_processes //
# num_machines when num_machines > 1 — in commands/launch.py since v0.1.0 (multi_gpu_launcher), moved to
# utils/launch.py in v0.17.0, unchanged since — so fewer processes than machines starts 0 per node
# (huggingface/accelerate#2818, confirmed by the maintainer; #2521). DEEPSPEED is left out: its default pdsh
# multinode launcher passes --num_gpus instead unless an include/exclude filter is set.
# commands/launch.py _validate_launch_command refuses MULTI_GPU on one machine with a single gpu id from
# 9b5877d1 (#1127, v0.17.0); before, it silently ran one process (args.multi_gpu = False).
class _Layout:
    __slots__ = ("when", "at", "reads", "message", "source", "since")

    def __init__(self, when, at, reads, message, source, since=None):
        self.when, self.at, self.reads, self.message, self.source, self.since = when, at, reads, message, source, since


_LAYOUT = (
    _Layout(lambda kind, machines, processes, ids: machines > 1 and processes is not None and 0 < processes < machines
            and (kind.startswith("MULTI_") or kind in ("FSDP", "MEGATRON_LM")),
            "batch.world_size", ("batch.world_size",),
            "num_processes is the total over all machines, and accelerate launch starts torchrun with "
            "--nproc_per_node num_processes // num_machines = {processes} // {machines} = 0, so no training "
            "process starts on any node (set num_processes to machines x GPUs per machine)",
            "src/accelerate/utils/launch.py prepare_multi_gpu_env; commands/launch.py multi_gpu_launcher before "
            "v0.17.0"),
    _Layout(lambda kind, machines, processes, ids: kind == "MULTI_GPU" and machines <= 1 and ids is not None
            and ids.strip() != "all" and len(ids.split(",")) < 2,
            "parallel.accelerate_gpu_ids", ("parallel.accelerate_gpu_ids",),
            "\"Less than two GPU ids were configured and tried to run on multiple GPUs\" (distributed_type "
            "MULTI_GPU on one machine with gpu_ids '{ids}': list two or more ids, gpu_ids all, or distributed_type NO "
            "for one GPU)",
            "src/accelerate/commands/launch.py _validate_launch_command, 9b5877d1, #1127", since="0.17.0"),
)


# The releases whose conditions differ (the conditions compare with 1.12.0 only), to the newest.
_RELEASES_SINCE_1_10 = ("1.10.0", "1.12.0", "1.14.0")
