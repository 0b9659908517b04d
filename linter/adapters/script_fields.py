"""TRL ModelConfig fields the script a launch runs never reads: not bound.

trl/trainer/model_config.py ModelConfig (TRL >= 0.7.11, #1176) is a plain dataclass that no TRL
trainer receives: its fields reach the model only through the script's own code. TRL's scripts
hand them on (trl/scripts/sft.py: `attn_implementation=model_args.attn_implementation`,
`get_peft_config(model_args)`, `get_quantization_config(model_args)`, trl/trainer/utils.py); a
project script may parse the same file with TrlParser((ModelConfig, ScriptArguments, SFTConfig)) and
build its model another way (Unsloth's FastLanguageModel.from_pretrained / get_peft_model, naming
none of attn_implementation or lora_modules_to_save). A field such a script demonstrably never
reads (linter/script_reads.py: the object is only read attribute by attribute, never handed
whole to a library helper) is not bound for the run that script makes. Only where the launch
commands that name the file agree on that script (linter/runs.py).

With no launch command naming the file, the script that reads it is not known, and the file is read
as TRL's own scripts read it, with one exception. A file that sets a key only the repository's own
argument classes declare (`dataset_id_or_path` of a project ScriptArguments) is written for one of
the repository's scripts: no TRL or transformers class takes that key (HfArgumentParser.parse_dict /
parse_yaml_file refuse it, allow_extra_keys=False; TrlParser's --config refuses it since TRL 0.19,
#3543, b773a4c19, and before that drops it, so a stock script would run without the file's own
dataset). The scripts that may read it are then those whose parser call names classes defining
every one of its keys (`possible_readers`); where one of them never reads a ModelConfig field the
file sets, whether the field reaches the run depends on which script runs, which nothing in the
checkout says: the field is not bound (silent, noted under --verbose). Which script a file's name
resembles is no evidence and is not used.
"""

from __future__ import annotations

from pathlib import Path

# Every field ModelConfig has had, v0.7.11 to v1.9.0 (trl/trainer/model_config.py at each release:
# use_rslora from 0.11, use_dora 0.16, lora_target_parameters 0.21, dtype 0.23 (torch_dtype kept as
# a deprecated alias until 0.27), bnb_4bit_quant_storage 0.26; trust_remote_code gone in 1.7).
MODEL_CONFIG_FIELDS = frozenset({
    "model_name_or_path", "model_revision", "torch_dtype", "dtype", "trust_remote_code", "attn_implementation",
    "use_peft", "lora_r", "lora_alpha", "lora_dropout", "lora_target_modules", "lora_target_parameters",
    "lora_modules_to_save", "lora_task_type", "use_rslora", "use_dora", "load_in_8bit", "load_in_4bit",
    "bnb_4bit_quant_type", "use_bnb_nested_quant", "bnb_4bit_quant_storage",
})
# ModelConfig.__post_init__ reads these itself (it raises when both are true), whatever the script does.
_POST_INIT = frozenset({"load_in_8bit", "load_in_4bit"})
# One value under two names: __post_init__ copies torch_dtype into dtype (TRL 0.23 to 0.26).
_SAME = (frozenset({"torch_dtype", "dtype"}),)


def unread_keys(config, document, script: Path | None, where: str) -> tuple[list[str], str]:
    """The top-level keys of a TRL / TrainingArguments file (`document`) that `script`, the
    entry its launch commands (`where`) agree on, never reads; with `script` None (no launch
    command names the file), those that one of its possible readers never reads. With why."""
    root = getattr(document, "root", None)
    if config.value("file.kind") not in ("trl", "trainer") or not hasattr(root, "pairs"):
        return [], ""
    keys = [pair.key.value for pair in root.pairs if isinstance(pair.key.value, str)]
    if script is not None:
        unread = unread_model_config_keys(script, keys) if script.suffix == ".py" and script.is_file() else []
        return unread, f"{script.name}, which the launch commands ({where}) run, never reads {', '.join(unread)}"
    unread, scripts = [], []
    for reader in possible_readers(config.path, keys, config.value("training.trainer_candidates")):
        missing = unread_model_config_keys(reader, keys)
        if missing:
            scripts.append(reader.name)
            unread += [key for key in missing if key not in unread]
    return unread, (f"no launch command of the checkout names this file, and {', '.join(scripts)}, whose parser "
                    f"takes every key of it, never reads {', '.join(unread)}")


def possible_readers(path: Path, keys: list[str], trainers) -> list[Path]:
    """The repository's scripts that may read a file with `keys` no launch command names: none
    unless the file sets a key only the repository's own argument classes declare (a stock
    script refuses it); then those with a parser call whose classes define every key. A class
    the script defines is that one, else the repository's classes of its name; an upstream
    argument class (or a project class extending one) takes every upstream field, unless it is
    the config of a TRL trainer other than those the file's TRL keys leave (`trainers`,
    training.trainer_candidates): HfArgumentParser refuses a key no class defines. A call naming
    a class from elsewhere (its fields unknown here) is no reader that can be told."""
    from ..project_args import UPSTREAM_ARGUMENT_CLASSES, project_arguments
    from .hf_kinds import upstream_argument_fields
    from .trl_trainers import config_keys, trainer_of_class

    project = project_arguments(path)
    upstream = upstream_argument_fields() | MODEL_CONFIG_FIELDS | config_keys()  # in any release
    if not any(key not in upstream and project.defines(key) is not None for key in keys):
        return []
    readers = []
    for script, names in project.call_sites:
        fields, extends = set(), set()
        for name in names:
            named = [cls for cls in project.classes if cls.name == name and cls.path == script]
            # else the repository's classes of that name, unless the script imports TRL's /
            # transformers' own class (ScriptArguments) that another script of it redefines
            if not named and not (name in UPSTREAM_ARGUMENT_CLASSES and _imports_upstream(script, name)):
                named = [cls for cls in project.classes if cls.name == name]
            for cls in named:
                fields |= cls.fields
                extends |= cls.upstream_bases
            if not named and name not in UPSTREAM_ARGUMENT_CLASSES:
                break
            if not named:
                extends.add(name)
        else:
            configs = {trainer_of_class(name) for name in extends} - {None}
            if configs and trainers and not configs & set(trainers):
                continue
            if set(keys) <= fields | (upstream if extends else set()):
                readers.append(script)
    return readers


def _imports_upstream(script: Path, name: str) -> bool:
    from ..script_reads import imported_from, parsed_tree

    tree = parsed_tree(script)
    return tree is not None and any(imported_from(tree, name, package) for package in ("trl", "transformers"))


def unread_model_config_keys(script: Path, keys: list[str]) -> list[str]:
    """The keys of `keys` that are ModelConfig fields `script` never reads; [] where what it
    reads is not known (it parses no ModelConfig of TRL's, or uses the object whole)."""
    from ..script_reads import fields_read

    if not any(key in MODEL_CONFIG_FIELDS for key in keys):
        return []
    read = fields_read(script, "ModelConfig", "trl")
    if read is None:
        return []
    read = set(read)
    for group in _SAME:
        if read & group:
            read |= group
    return [key for key in keys if key in MODEL_CONFIG_FIELDS and key not in read and key not in _POST_INIT]
