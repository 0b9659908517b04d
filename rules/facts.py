"""Questions several rules ask of a run's facts, answered once."""

from __future__ import annotations

# TrainingArguments / TRL argument files (what the HF Trainer itself reads).
HF_TRAINER_FILES = ("trl", "trainer")


def schema_errors(config):
    """(schema, key tree, errors) of the config against its format's schema, computed once per
    config and shared by the rules that judge keys and values (SCH001 to SCH004)."""
    cached = config.cache.get("schema_errors")
    if cached is None:
        from linter import schema as schemas

        schema = schemas.load(config.schema) if config.schema else None
        tree = config.key_tree if schema is not None else None
        cached = (schema, tree, schema.validate(tree.value) if tree is not None else [])
        config.cache["schema_errors"] = cached
    return cached


def positive_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def is_number(value) -> bool:
    """An int or a float as written (a bool is no number here)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def read_by_repository_script(config, key: str | None = None) -> bool:
    """Is `config` read by a script of its repository, into the repository's own argument classes
    (project_args) or classes it imports from another installed package (alignment-handbook's)?
    That script builds the trainer, and what it passes in code (`SFTTrainer(..., packing=True)`
    in alignment-handbook's run_sft.py) the file cannot show: a setting the file leaves out is
    not the framework's default there."""
    unseen = config.value("arguments.unseen_keys") or ()  # a training script's (adapters/hf_script.py)
    return bool(config.value("arguments.project_keys")) or bool(config.value("arguments.imported_classes")) \
        or "*" in unseen or key in unseen


def left_out(config, key: str) -> bool:
    """Does the file leave IR key `key` out, so that the framework's default applies? Not where a
    training script computes it or may pass it in **kwargs (`arguments.unseen_keys` names the IR
    key, or "*"): absent there means unknown."""
    if config.get(key) is not None:
        return False
    unseen = config.value("arguments.unseen_keys") or ()
    return "*" not in unseen and key not in unseen


def off(config, key: str) -> bool:
    """A boolean IR key written off, or left out where its default is off (left_out)."""
    return config.value(key) is False or left_out(config, key)


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


# accelerate upcasts the trainable low-precision parameters of a model FSDP wraps to float32 when
# mixed precision is on (MixedPrecision / MixedPrecisionPolicy keep bf16 or fp16 as the compute
# dtype only): FSDP2 in fsdp2_prepare_model (`model = model.to(torch.float32)`) from its first
# release (d7c741a6, PR #3394, v1.6.0); FSDP1 in Accelerator.prepare_model from PR #2674
# (9557598c, "Add Upcasting for FSDP in Mixed Precision", v0.30.0).
_FSDP1_UPCAST_FROM = "0.30.0"


def fsdp_float32_masters(run, config) -> tuple[bool, str] | None:
    """(True, why) where FSDP under mixed precision trains the run's parameters in float32 master
    weights, (False, why) where FSDP shards it under mixed precision but whether accelerate
    upcasts is not known here (FSDP1 with no accelerate version known), None otherwise."""
    from linter.versions import older_than

    if run.value("parallel.fsdp") is not True or not any(
            run.value(key) in (True, "auto") for key in ("precision.bf16", "precision.fp16")):
        return None
    version = fsdp_version(run)
    if version == 2:
        return True, "FSDP2 under mixed precision: accelerate upcasts the model to float32 (v1.6.0 on)"
    found = config.version("accelerate") if version == 1 else None
    if found is not None and not older_than(found[0], _FSDP1_UPCAST_FROM):
        return True, (f"FSDP under mixed precision with accelerate {found[0]} ({found[1]}): it upcasts trainable "
                      f"low-precision parameters to float32 (from {_FSDP1_UPCAST_FROM})")
    if found is not None:
        return None
    return False, (f"FSDP under mixed precision: accelerate {_FSDP1_UPCAST_FROM} and later upcast trainable "
                   "parameters to float32, and the accelerate version (or the FSDP version) is not known")


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


def key_releases_spec(config) -> dict | None:
    """The format's `x-trainlint.key-releases` (packages whose key history applies, with the newest
    release read, and what the reader does with a key it lacks), or None."""
    if not config.schema:
        return None
    from linter import schema as schemas

    schema = schemas.load(config.schema)
    return schema.root.get("x-trainlint", {}).get("key-releases") if schema is not None else None


def key_history(config, path: tuple, document):
    """(package, its history, the row) where key_releases.json `paths` (the releases that keep each
    key, per block) has a row judging the key at `path` of `document` (judged_row), else None."""
    spec = key_releases_spec(config)
    if spec is None:
        return None
    from linter.versions import key_releases

    for package in spec["packages"]:
        history = key_releases().get(package, {})
        row = judged_row(config, spec, package, history, path, document) if "paths" in history else None
        if row is not None:
            return package, history, row
    return None


def nested_outcome(spec: dict, history: dict, path: tuple, document, version: str) -> tuple[str, bool] | None:
    """(what the reader of release `version` does with a key it lacks at `path`, and whether it
    refuses it) where the format says so per block (`x-trainlint.key-releases.nested-outcomes`, by
    key_releases.json `refuses`), else None. For a value "auto" in a refusing block the outcome is
    not known (refused None): DeepSpeedConfigModel.__init__ drops "auto" values before validating,
    the older monitor/comms models do not, and a trainer may fill the value first."""
    outcomes = spec.get("nested-outcomes")
    if not outcomes or len(path) < 2:
        return None
    from linter.versions import refused_by

    refused = refused_by(history, path, version)
    if refused is None:
        return None
    value = document
    for step in path:
        value = value.get(step) if isinstance(value, dict) else None
    if refused and value == "auto":
        return "", None  # dropped before validation by some models, filled first by some trainers: not known
    return outcomes["refused" if refused else "ignored"], refused


def auto_value_note(config, code: str, where: str, package: str, version: str) -> str:
    """The --verbose note for a value "auto" at `where`, which `package` `version` lacks in a block
    it validates: whether the key is refused is not known (nested_outcome)."""
    return (f"{config.path}: {code}: {where} is not in {package} {version}; its value \"auto\" may be dropped "
            "or filled before the release validates the block")


def refusal_note(config, path: tuple, document) -> str:
    """"; deepspeed 0.17.1 (requirements.txt) refuses it" for a key no release has at `path`, where
    the pinned release validates that block with a model that forbids other keys (key_releases.json
    `refuses`); "" otherwise (a block read by name may read a key the schema lacks)."""
    spec = key_releases_spec(config) if len(path) > 1 else None
    if not spec or "nested-outcomes" not in spec:
        return ""
    from linter.versions import key_releases

    for package in spec["packages"]:
        found = config.version(package)
        nested = nested_outcome(spec, key_releases()[package], path, document, found[0]) if found else None
        if nested is not None and nested[1]:
            return f"; {package} {found[0]} ({found[1]}) refuses it: {nested[0]}"
    return ""


def judged_row(config, spec, package, history, path: tuple, document):
    """The `paths` row of `package`'s history that judges the key at `path` in this format, or
    None where none does: a key only a class the format's reader does not build has (the
    history's `seq2seq` keys, Seq2SeqTrainingArguments' own, unless the format's `seq2seq` lists
    the package), or a key another package the format reads with it declares too (`supplied-by`:
    TRL's configs and LLaMA-Factory's classes, parsed with TrainingArguments) in its release in
    use, or in a release not known here."""
    from linter.versions import kept_by, path_row

    row = path_row(history, path, document)
    if row is None or len(path) != 1:
        return row
    if path[0] in history.get("seq2seq", ()) and package not in spec.get("seq2seq", ()):
        return None
    for other, rows in history.get("supplied-by", {}).items():
        if other in spec["packages"] and path[0] in rows:
            found = config.version(other)
            if found is None or kept_by(rows[path[0]], found[0]) is not False:
                return None
    return row


def key_outcome(config, spec) -> tuple[str, bool]:
    """What the reader of `config` does with a key the release in use lacks, in words, and whether
    it refuses the file: the format's `x-trainlint.key-releases` `outcome` and `unknown-keys`, or
    its file kind's (`by-kind`), except where the parser named by `drops-before` drops unknown
    keys in the release in use (HfArgumentParser.parse_dict before transformers 4.22.0)."""
    from linter.versions import older_than

    kind = spec.get("by-kind", {}).get(config.value("file.kind"), {})
    outcome, unknown = kind.get("outcome", spec["outcome"]), kind.get("unknown-keys", spec.get("unknown-keys"))
    before = kind.get("drops-before", spec.get("drops-before"))
    found = config.version(before["package"]) if before else None
    if found is not None and older_than(found[0], before["release"]):
        return before["outcome"], False
    return outcome, unknown == "refused"


def change_before(row: list, version: str) -> list | None:
    """The last change of a `paths` row ([last release, first release, commit]) at or before
    `version`: the one that made the state `version` has."""
    from linter.versions import older_than

    found = None
    for change in row[1:]:
        if older_than(version, change[1]) is False:
            found = change
    return found


def dropped_by_release(config, context, code, where, package, history, row, path=None) -> tuple[str, bool] | None:
    """(the message, whether the reader refuses the file) for a key some release keeps at `where`
    (a `paths` row) and the schema's does not, where the version in use drops it; None, noted for
    --verbose, where it keeps it or is not known (a release between two read, no pin)."""
    from linter.versions import kept_by, kept_periods

    periods = kept_periods(row, history["floor"], history["newest"])
    found = config.version(package)
    kept = kept_by(row, found[0]) if found is not None else None
    if kept is not False:
        state = "keeps it" if kept else "is not known" if found is None else "is between two releases read"
        context.notes.append(f"{config.path}: {code}: {where} is kept by {package} {periods}; "
                             f"the {package} version in use {state}")
        return None
    change = change_before(row, found[0])
    how = f"; dropped from {change[1]}" + (f" ({change[2]})" if change[2] else "") if change else ""
    nested = nested_outcome(key_releases_spec(config) or {}, history, path, config.key_tree.value, found[0]) \
        if path else None
    if nested is not None and nested[1] is None:
        context.notes.append(auto_value_note(config, code, where, package, found[0]))
        return None
    if nested is not None:
        verb = "refused" if nested[1] else "ignored"
        return (f"{where} is {verb} by {package} {found[0]} ({found[1]}), which does not have it there "
                f"(kept by {package} {periods}{how}): {nested[0]}"), nested[1]
    spec = key_releases_spec(config)
    outcome, refused = ("the run goes on without the setting", False) \
        if spec.get("unknown-keys") == "dropped-silently" else key_outcome(config, spec)
    return (f"{where} is dropped by {package} {found[0]} ({found[1]}), which does not have it there "
            f"(kept by {package} {periods}{how}); {outcome}"), refused


# GRPOConfig and the configs that run its batch and reference checks: its trl/experimental subclasses
# (GFPO, PAPO, MiniLLM, GRPO-with-replay-buffer, DPPO, GMPO: linter/data/trl_config_keys.json `bases`)
# and RLOOConfig from 0.22.0 (rewritten on GRPO's model: rloo_config.py __post_init__ has GRPOConfig's
# batch checks, rloo_trainer.py its reference handling).
GRPO_LIKE = frozenset({"grpo", "rloo", "gfpo", "papo", "mini_llm", "grpo_with_replay_buffer", "dppo", "gmpo"})


def grpo_like(config) -> bool:
    """A TRL file read by GRPOTrainer, or one whose keys leave only GRPO-like trainers (between GRPO
    and RLOO >= 0.22, say: training.trainer unknown)."""
    trainer = config.value("training.trainer")
    if trainer == "grpo" or trainer == "rloo" and config.get("generation.per_prompt") is not None:
        return True  # num_generations: RLOOConfig's from 0.22.0 only
    candidates = config.value("training.trainer_candidates")
    return trainer is None and bool(candidates) and set(candidates) <= GRPO_LIKE


def removed_known_keys(config, context, code):
    """(path, message, refused) for each top-level key the format's schema knows that the pinned
    release of a package with a `paths` history dropped, where no later release read keeps it
    again (a key a later release keeps is SCH004's): TrainingArguments' fields removed in
    transformers 5.0.0 (`overwrite_output_dir`, `no_cuda`, ...). Silent where the version is
    unknown or between two releases read."""
    spec = key_releases_spec(config)
    tree = config.key_tree if spec is not None else None
    if tree is None or not isinstance(tree.value, dict) or config.value("arguments.imported_classes") \
            or config.value("arguments.extra_keys_allowed"):
        return
    from linter.versions import key_releases, kept_by, older_than

    unknown = {error.path for error in schema_errors(config)[2] if error.kind == "unknown-key"}
    own = set(config.value("arguments.project_keys") or ())
    for package in spec["packages"]:
        history = key_releases().get(package, {})
        # keys whose newest release read drops them (row[0] flipped by each change)
        dropped = [key for key in tree.value if (row := history.get("paths", {}).get(key)) is not None
                   and not (row[0] + len(row) - 1) % 2 and (key,) not in unknown and key not in own]
        found = pinned_version(config, package, code, context) if dropped else None
        for key in dropped if found is not None else ():
            row = judged_row(config, spec, package, history, (key,), tree.value)
            if row is None or kept_by(row, found[0]) is not False \
                    or any(older_than(found[0], change[1]) for change in row[1:]):
                continue
            outcome, refused = key_outcome(config, spec)
            removed = [change for change in row[1:] if older_than(found[0], change[1]) is False][-1]
            yield (key,), (f"{key} was removed in {package} {removed[1]}"
                           f"{f' ({removed[2]})' if removed[2] else ''}, the last release with it being {removed[0]}; "
                           f"{package} {found[0]} ({found[1]}) does not have it: {outcome}"), refused
