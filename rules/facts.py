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
        from linter.versions import unknown_version_reason

        context.notes.append(f"{config.path}: {code} skipped: the {package} version is unknown "
                             f"({unknown_version_reason(package, config.path)})")
    return found
