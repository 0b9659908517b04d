"""Build linter/data/peft_default_targets.json from a huggingface/peft git mirror.

For every release tag (pre-releases skipped) it reads the dict literal PEFT assigns to
TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING (src/peft/mapping.py up to v0.2.0,
src/peft/utils/other.py v0.3.0-v0.6.2, src/peft/utils/constants.py from v0.7.0) and records, for
each transformers model_type, the releases whose table holds it. With `target_modules` None, PEFT
looks the model_type up in that table and raises "Please specify `target_modules` in
`peft_config`" where it is absent (LoraModel._prepare_adapter_config; BaseTuner's from v0.18.0).

    python bench/peft_default_targets.py [MIRROR] [--wheel=peft-X.Y.Z-py3-none-any.whl ...] [--write]

MIRROR defaults to /work/.mirror/huggingface+peft/repo (a bare clone: `git clone --mirror
https://github.com/huggingface/peft`). Releases newer than the mirror's tags are read from their
PyPI wheels (`pip download peft==X.Y.Z --no-deps`); the shipped table was built with the mirror
(tags v0.0.1-v0.20.0) and the wheels of 0.21.0, 0.21.1 and 0.21.2. Without --write it prints the JSON.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path

MIRROR = Path("/work/.mirror/huggingface+peft/repo")
OUTPUT = Path(__file__).resolve().parent.parent / "linter" / "data" / "peft_default_targets.json"
NAME = "TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING"
_RELEASE = re.compile(r"^v(\d+)\.(\d+)\.(\d+)$")


def _git(mirror: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(mirror), *args], check=True, capture_output=True, text=True).stdout


def _release_key(wheel: Path) -> tuple[int, ...]:
    return tuple(int(part) for part in wheel.name.split("-")[1].split("."))


def releases(mirror: Path) -> list[str]:
    tags = [tag for tag in _git(mirror, "tag").split() if _RELEASE.match(tag)]
    return sorted(tags, key=lambda tag: tuple(int(part) for part in _RELEASE.match(tag).groups()))


def table(mirror: Path, tag: str) -> tuple[str, list[str]]:
    """(the file defining the mapping at `tag`, its model types)."""
    found = _git(mirror, "grep", "-l", f"^{NAME} = {{", tag, "--", "src/peft").split()
    if len(found) != 1:
        raise SystemExit(f"{tag}: {NAME} defined in {found}")
    path = found[0].split(":", 1)[1]
    return path, _keys(_git(mirror, "show", f"{tag}:{path}"))


def _keys(source: str) -> list[str]:
    keys: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Assign):
            continue
        for target in node.targets:
            if isinstance(target, ast.Name) and target.id == NAME and isinstance(node.value, ast.Dict):
                keys |= {key.value for key in node.value.keys if isinstance(key, ast.Constant)}
            elif (isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) and target.value.id == NAME
                  and isinstance(target.slice, ast.Constant)):
                keys.add(target.slice.value)
    return sorted(keys)


def wheel_table(wheel: Path) -> tuple[str, str, list[str]]:
    """(release, the file defining the mapping, its model types) of a peft wheel."""
    version = wheel.name.split("-")[1]
    with zipfile.ZipFile(wheel) as archive:
        for name in archive.namelist():
            if name.startswith("peft/") and name.endswith(".py"):
                text = archive.read(name).decode("utf-8")
                if re.search(rf"^{NAME} = {{", text, re.M):
                    return version, "src/" + name, _keys(text)
    raise SystemExit(f"{wheel}: no {NAME}")


def build(mirror: Path, wheels: list[Path] = ()) -> dict:
    tags = releases(mirror)
    read = [(tag[1:], *table(mirror, tag)) for tag in tags]
    known = {version for version, _, _ in read}
    read += [found for found in map(wheel_table, wheels) if found[0] not in known]
    files: dict[str, list[str]] = {}
    holders: dict[str, list[str]] = {}
    for version, path, keys in read:
        files.setdefault(path, []).append(version)
        for key in keys:
            holders.setdefault(key, []).append(version)
    versions = [version for version, _, _ in read]
    model_types = {}
    for key in sorted(holders):
        held = holders[key]
        first = versions.index(held[0])
        # Contiguous from its first release to the newest one read: only `since` is written.
        model_types[key] = {"since": held[0]} if held == versions[first:] else {"releases": held}
    return {
        "description": (
            "PEFT's default LoRA target modules: for each transformers model_type, the PEFT releases whose "
            f"{NAME} holds it. With target_modules None, LoraModel._prepare_adapter_config (BaseTuner's from "
            "v0.18.0) looks the model's config.model_type up there and raises \"Please specify `target_modules` in "
            "`peft_config`\" (from v0.17.0 only without target_parameters) where it is absent. Generated by "
            "bench/peft_default_targets.py from huggingface/peft's release tags; `since` means every release read "
            "from that one on."),
        "source": {path: f"v{held[0]}-v{held[-1]}" for path, held in files.items()},
        "releases": versions,
        "model_types": model_types,
    }


def main(argv: list[str]) -> int:
    args = [arg for arg in argv if not arg.startswith("--")]
    wheels = [Path(arg.split("=", 1)[1]) for arg in argv if arg.startswith("--wheel=")]
    mirror = Path(args[0]) if args else MIRROR
    text = json.dumps(build(mirror, sorted(wheels, key=_release_key)), indent=1) + "\n"
    if "--write" in argv:
        OUTPUT.write_text(text, "utf-8")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
