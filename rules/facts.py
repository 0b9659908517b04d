"""Questions several rules ask of a run's facts, answered once."""

from __future__ import annotations

# TrainingArguments / TRL argument files (what the HF Trainer itself reads).
HF_TRAINER_FILES = ("trl", "trainer")


def positive_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def read_by_repository_script(config) -> bool:
    """Is `config` read by a script of its repository, into the repository's own argument classes
    (project_args) or classes it imports from another installed package (alignment-handbook's)?
    That script builds the trainer, and what it passes in code (`SFTTrainer(..., packing=True)`
    in alignment-handbook's run_sft.py) the file cannot show: a setting the file leaves out is
    not the framework's default there."""
    return bool(config.value("arguments.project_keys")) or bool(config.value("arguments.imported_classes"))


def fills_deepspeed_auto(config) -> bool:
    """Does the trainer that reads `config` fill a linked DeepSpeed config's "auto" values?"""
    return config.value("trainer.fills_deepspeed_auto") is True


def training_config(run):
    """The training config of the run whose trainer fills DeepSpeed's "auto" values: not an
    accelerate launcher config (accelerate fills them in its own code, with its own history)."""
    return next((config for config in run.configs
                 if fills_deepspeed_auto(config) and config.value("file.kind") != "accelerate"), None)


def world_size(run, context):
    """GPUs in the job: `--world-size`, else a launcher config's num_processes; None when unknown."""
    world = context.world_size if context.world_size is not None else run.value("batch.world_size")
    return world if isinstance(world, int) and not isinstance(world, bool) else None


def fsdp_version(run) -> int | None:
    """The FSDP version of a run FSDP shards: 1 or 2 where every config that says agrees, 1 where
    none says (accelerate's FullyShardedDataParallelPlugin default); None where it is not known here
    (a fsdp_config file, a default an unknown transformers decides, configs that disagree)."""
    versions = {str(config.value("parallel.fsdp_version")) for config in run.configs
                if config.value("parallel.fsdp_version") is not None}
    if not versions:
        return 1
    return int(versions.pop()) if len(versions) == 1 and versions <= {"1", "2"} else None


def pinned_version(config, package: str, code: str, context):
    """(version, where it comes from) of `package` for the run of `config`, or None after noting,
    for --verbose, that rule `code` skipped the file: unknown means silent."""
    found = config.version(package)
    if found is None:
        context.unknown_version(config, package, code)
    return found


# torch.cuda.is_bf16_supported() (torch/cuda/__init__.py): from torch 1.10 (PR #63798) compute
# capability >= 8 with CUDA >= 11, else False; from torch 2.3 (PR #115924, "Try creating a bf16
# tensor as a last resort") a GPU that can hold a bf16 tensor also answers True, which pre-Ampere
# GPUs do by emulation (pytorch/pytorch#124996: False on a V100 with torch 2.2.2), and torch 2.4
# kept that as the default of its `including_emulation=True`. So below compute capability 8 the
# answer is False for torch 1.10 to 2.2 and not known here otherwise.
_BF16_EMULATED_FROM = "2.3"
_BF16_QUERY_FROM = "1.10"


def device_resolved_fp16(run, hardware, code, context):
    """(the primary config, why) where a launch that resolves the linked DeepSpeed config's "auto"
    precision from the GPU (`launch.auto_precision_by_device`) trains in fp16 on every target:
    fp16 "auto" is on wherever CUDA is, and bf16, which wins where both are on, is off — written
    off, or "auto" on GPUs below compute capability 8 with a pinned torch whose
    is_bf16_supported() says False there. None where not certain."""
    from linter.versions import older_than

    primary = run.primary
    if primary.value("launch.auto_precision_by_device") is not True or not hardware.targets:
        return None
    linked = [config for config in run.linked if config.value("precision.fp16") == "auto"]
    if len(linked) != 1 or any(config.value("precision.fp16") is True for config in run.linked):
        return None
    bf16 = linked[0].value("precision.bf16")
    if bf16 is False:
        return primary, "the DeepSpeed config's \"auto\" fp16 is on wherever CUDA is, and its bf16 is off"
    if bf16 != "auto" or hardware.lacking("bf16") != hardware.targets:
        return None
    torch = pinned_version(primary, "torch", code, context)
    if torch is None or older_than(torch[0], _BF16_QUERY_FROM) is not False \
            or older_than(torch[0], _BF16_EMULATED_FROM) is not True:
        return None
    return primary, (f"its DeepSpeed config's \"auto\" precision resolves to fp16 there: torch {torch[0]} "
                     f"({torch[1]}) answers is_bf16_supported() False below compute capability 8.0 (before torch 2.3)")
