"""The `ranking` flag of each dataset a LLaMA-Factory config names, as its dataset registry says.

src/llamafactory/data/parser.py get_dataset_list (hiyouga/LLaMA-Factory, read at ff6d4d12e and at
the tags v0.6.2, v0.7.1, v0.8.0): the registry is `os.path.join(dataset_dir, "dataset_info.json")`,
opened relative to the working directory of the launch (DataArguments.dataset_dir, default "data");
a name it lacks is "Undefined dataset {name} in dataset_info.json." and an unreadable file "Cannot
open ...", both before anything else reads the datasets. DatasetAttr.join sets `ranking` from the
entry (`attr.get("ranking", False)`). `dataset_dir: ONLINE` (from 0.6.2, 7468f2535) reads no
registry: every name is a hub dataset whose DatasetAttr keeps the default ranking False.
`REMOTE:<repo>` (0.8.3) downloads the registry: unknown here.

The working directory is not in the file: the candidates are the config's folder and each folder
above it in its checkout (adapters.working_directory_candidates). A name is recorded only where
every candidate registry that exists and defines it gives the same boolean flag: a launch from a
folder whose registry lacks the name, or has none, fails before the flag is read, so the flag the
launch reads is that one whatever the working directory. No registry found: nothing is recorded.
"""

from __future__ import annotations

import json
import os

from ..ir import Field, Origin
from . import templated, working_directory_candidates

_PARSER = "llamafactory/data/parser.py get_dataset_list (dataset_info.json `ranking`, default false)"
_MEDIA = ("images", "videos", "audios")
# The media columns of the built-in multimodal datasets in LLaMA-Factory's data/dataset_info.json
# (hiyouga/LLaMA-Factory, read at HEAD ff6d4d12e; mllm_demo has had its `images` column since it was
# added with visual_inputs in 0.7.0, read at 73d4a8e65).
_SHIPPED_MEDIA = {
    **dict.fromkeys(("mllm_demo", "llava_1k_en", "llava_1k_zh", "llava_150k_en", "llava_150k_zh", "pokemon_cap",
                     "mllm_pt_demo", "rlhf_v", "vlfeedback", "rlaif_v"), ("images",)),
    "mllm_audio_demo": ("audios",), "mllm_video_demo": ("videos",), "mllm_video_audio_demo": ("videos", "audios"),
}


def record_dataset_ranking(config, read) -> None:
    """data.ranked_sets / data.unranked_sets: the names in `dataset` and `eval_dataset` whose
    registry entry the launch reads with ranking true / false; data.set_formats: `name=formatting`
    for each whose registries agree on its `formatting` (default alpaca)."""
    names = []
    for key in ("data.train_sets", "data.eval_sets"):
        value = config.value(key)
        if isinstance(value, list):
            names += [name for name in value if isinstance(name, str) and name and name not in names]
    if not names:
        return
    node = read.node("dataset_dir")
    if node is None:
        directory = "data"  # hparams/data_args.py DataArguments.dataset_dir
    elif templated(node) or not isinstance(getattr(node, "value", None), str):
        return
    else:
        directory = node.value.strip()
    span = read.key_span("dataset") or read.key_span("eval_dataset") or config.file_span
    if directory == "ONLINE":
        at = read.key_span("dataset_dir") or span
        config.set("data.unranked_sets", Field(names, Origin(at, None, "dataset_dir")))
        config.set("data.set_registry", Field(
            "dataset_dir ONLINE: no dataset_info.json, so DatasetAttr's default ranking false", Origin(at)))
        return
    if not directory or directory.startswith("REMOTE:"):
        return
    found: dict[str, set] = {}
    formats: dict[str, set] = {}
    media: dict[str, set] = {}
    where: dict[str, str] = {}
    registries = 0
    for candidate in working_directory_candidates(config.path, os.path.join(directory, "dataset_info.json")):
        try:
            with open(candidate, encoding="utf-8") as handle:
                registry = json.load(handle)
        except (OSError, ValueError):
            continue  # a launch from there stops with "Cannot open ..."
        if not isinstance(registry, dict):
            continue
        registries += 1
        for name in names:
            entry = registry.get(name)
            if isinstance(entry, dict):
                found.setdefault(name, set()).add(_flag(entry.get("ranking", False)))
                formats.setdefault(name, set()).add(entry.get("formatting", "alpaca") if isinstance(
                    entry.get("formatting", "alpaca"), str) else None)
                columns = entry.get("columns") if isinstance(entry.get("columns"), dict) else {}
                media.setdefault(name, set()).add(tuple(column for column in _MEDIA if columns.get(column)))
                where.setdefault(name, os.path.relpath(candidate, config.path.resolve().parent))
    _record_media(config, names, media, where, span, directory == "data")
    if not registries:
        return
    files = set()
    for key, flag in (("data.ranked_sets", True), ("data.unranked_sets", False)):
        chosen = [name for name in names if found.get(name) == {flag}]
        if chosen:
            files.update(where[name] for name in chosen)
            config.set(key, Field(chosen, Origin(span, None, "dataset")))
    # DatasetAttr.join: formatting = attr.get("formatting", "alpaca"); a name whose registries agree
    formatted = [f"{name}={next(iter(formats[name]))}" for name in names
                 if len(formats.get(name, ())) == 1 and None not in formats[name]]
    if formatted:
        files.update(where[item.rpartition("=")[0]] for item in formatted)
        config.set("data.set_formats", Field(formatted, Origin(span, None, "dataset")))
    if files:
        config.set("data.set_registry", Field(", ".join(sorted(files)), Origin(span)))


def _record_media(config, names, media, where, span, shipped: bool) -> None:
    """data.media_sets: `name=images,videos` for each named dataset with media columns, where the
    registries agree (a name no registry here defines: the shipped registry's, with the default
    dataset_dir); data.media_registry: where they come from."""
    chosen, files = [], set()
    for name in names:
        if name in media:
            if len(media[name]) != 1:
                continue
            columns, source = next(iter(media[name])), where[name]
        elif shipped and name in _SHIPPED_MEDIA:
            columns, source = _SHIPPED_MEDIA[name], "LLaMA-Factory's own data/dataset_info.json"
        else:
            continue
        if columns:
            chosen.append(f"{name}={','.join(columns)}")
            files.add(source)
    if chosen:
        config.set("data.media_sets", Field(chosen, Origin(span, None, "dataset")))
        config.set("data.media_registry", Field(", ".join(sorted(files)), Origin(span)))


def _flag(value):
    """The flag as the loader tests it (`ranking is True` / `ranking is False`); any other value
    neither (a marker that never equals a bool)."""
    return value if isinstance(value, bool) else "other"
