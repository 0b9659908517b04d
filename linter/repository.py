"""What a config's repository holds beyond the files linted: the configs that link a file (so a
commit that stages only a DeepSpeed JSON is still checked as a run), and the launcher configs
that shard runs. Reads only text, bounded in files and bytes, cached per repository."""

from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path

from .source import checkout_of_folder, checkout_root

MAX_FILES = 3000
MAX_BYTES = 256 * 1024
_SUFFIXES = (".yaml", ".yml", ".json", ".conf", ".py")
_SKIPPED = {"node_modules", "__pycache__", "site-packages", ".git", "build", "dist"}
# accelerate configs that shard (config_args.py distributed_type), and DeepSpeed JSON.
_SHARDING = re.compile(r"^distributed_type:\s*['\"]?(?:DEEPSPEED|FSDP)\b|\"zero_optimization\"\s*:", re.M)


def root_of(path: Path) -> Path | None:
    """The checkout a file lies in: the nearest folder above it holding `.git`; None outside one."""
    if path.is_symlink():
        return checkout_root(path.resolve().parent)  # the checkout of the file it points to
    return checkout_of_folder(path.parent)


@lru_cache(maxsize=8)
def _texts(root: Path) -> tuple[tuple[Path, str], ...]:
    """(path, text) of every config-like file of the checkout, bounded; .gitignore'd folders skipped."""
    from .gitignore import ignore_matcher

    ignored = ignore_matcher(root)
    found: list[tuple[Path, str]] = []
    for directory, subdirs, files in os.walk(root):
        current = Path(directory)
        subdirs[:] = walked_folders(directory, subdirs, ignored)
        for name in sorted(files):
            path = current / name
            if not name.endswith(_SUFFIXES) or ignored.ignored(path, is_dir=False):
                continue
            text = bounded_text(path)
            if text is None:
                continue
            found.append((path, text))
            if len(found) >= MAX_FILES:
                return tuple(found)
    return tuple(found)


def walked_folders(directory: str, subdirs: list[str], ignored) -> list[str]:
    """The subfolders of `directory` a checkout walk enters, sorted: not hidden, not a build,
    cache or virtual environment, not .gitignore'd."""
    return sorted(name for name in subdirs if name not in _SKIPPED and not name.startswith(".")
                  and not os.path.exists(os.path.join(directory, name, "pyvenv.cfg"))
                  and not ignored.ignored(Path(directory, name), is_dir=True))


def bounded_text(path: Path) -> str | None:
    """A regular file's text, or None when it is not one, is over MAX_BYTES or cannot be read."""
    try:
        if not path.is_file() or path.stat().st_size > MAX_BYTES:
            return None
        return path.read_text("utf-8", errors="replace")
    except OSError:
        return None


def sharding_launchers(root: Path) -> list[Path]:
    """accelerate configs with DeepSpeed/FSDP and DeepSpeed JSON files in the checkout (a JSON
    Schema that describes `zero_optimization` names the key without launching anything)."""
    return list(_searched(root, None, lambda path, text: not path.name.endswith(".py") and _SHARDING.search(text)
                          and '"$schema"' not in text))


def mentioning(root: Path, name: str) -> list[Path]:
    """Files of the checkout whose text names `name` (a file name a config may link)."""
    return list(_searched(root, name, lambda path, text: name in text))


_SEARCHED: list = [None, None, {}]  # the last checkout's: [root, its _texts, {question: paths}]


def _searched(root: Path, question: str | None, holds) -> tuple[Path, ...]:
    """The files of the checkout's texts that `holds`, worked out once per question (None: the
    sharding launchers; a name: the files mentioning it) while the checkout's texts stay cached:
    every config of a checkout asks the same, over up to MAX_FILES texts."""
    texts = _texts(root)
    if _SEARCHED[0] != root or _SEARCHED[1] is not texts:
        _SEARCHED[:] = [root, texts, {}]
    answers = _SEARCHED[2]
    if question not in answers:
        answers[question] = tuple(path for path, text in texts if holds(path, text))
    return answers[question]


_SCRIPT_SUFFIXES = (".sh", ".slurm", ".bash", ".sbatch")
_ACCELERATE_LAUNCH = re.compile(r"accelerate\s+launch\b[^\n]*(?:\\\n[^\n]*)*?--config[_-]file", re.M)


@lru_cache(maxsize=64)
def launch_scripts(folder: Path, name: str) -> tuple[tuple[Path, str], ...]:
    """(path, text) of the shell and SLURM scripts in `folder` (not below it) that run
    `accelerate launch --config_file` and name `name`, the file they pass (directly or through a
    variable); bounded like the checkout's texts."""
    found = []
    try:
        entries = sorted(folder.iterdir())
    except OSError:
        return ()
    for path in entries[:MAX_FILES]:
        if not path.name.endswith(_SCRIPT_SUFFIXES):
            continue
        text = bounded_text(path)
        if text is not None and name in text and _ACCELERATE_LAUNCH.search(text):
            found.append((path, text))
    return tuple(found)
