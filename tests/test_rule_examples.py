"""Every rule's documented Example runs: the example config fires the rule, "Use instead" does not.

The "## Example" section of a rule's docstring (what `trainlint rule CODE` prints) is a sequence
of code blocks, each indented by four spaces and introduced by a line ending in ":" that names
the file in backticks, and the target GPUs where they matter:

    ## Example
    `axolotl.yaml`, on a V100:
        base_model: ...
    `requirements.txt`:
        peft==0.11.1
    Use instead (on a V100):
        base_model: ...

The first file is the one linted; the others are its context (a linked DeepSpeed JSON, a
requirements pin). "Use instead" blocks replace the example's file of the same name (the first
file where they name none); files they do not mention are kept. "on a V100" / "on an A100"
names the target (`--gpu`), "on 2 GPUs" the world size; "Use instead" inherits both unless it
says otherwise. Lines that do not end in ":" are prose. An example with a shell script (`train.sh`)
is written into a git checkout (a `.git` folder), where launch commands are read.
"""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pytest

from conftest import trainlint
from linter import registry, versions

_FILE = re.compile(r"`([^`\s]+\.(?:ya?ml|json|py|txt|toml|sh))`")
_GPU = re.compile(r"\bon an? ([A-Z][A-Za-z0-9-]*\d[A-Za-z0-9-]*)")
_WORLD_SIZE = re.compile(r"\bon (\d+) GPUs?\b")


class Example:
    def __init__(self):
        self.files: dict[str, str] = {}
        self.gpu: str | None = None
        self.world_size: int | None = None

    @property
    def primary(self) -> str:
        return next(iter(self.files))


def example_section(documentation: str) -> str:
    match = re.search(r"^## Example\n(.*?)(?=^## |\Z)", documentation, re.M | re.S)
    assert match, "no '## Example' section"
    return match.group(1)


def _blocks(section: str) -> list[tuple[str, str]]:
    """(introducing line, dedented code) for every indented block of the section."""
    blocks: list[tuple[str, list[str]]] = []
    pending, inside = None, False
    for line in section.splitlines():
        if line.startswith("    "):
            if pending is not None:
                blocks.append((pending, []))
                pending, inside = None, True
            assert inside, f"a code block without a line ending in ':' to introduce it: {line!r}"
            blocks[-1][1].append(line)
        elif not line.strip():
            if inside:
                blocks[-1][1].append(line)
        else:
            inside = False
            pending = line.strip() if line.rstrip().endswith(":") else None
    return [(intro, textwrap.dedent("\n".join(lines)).strip("\n") + "\n") for intro, lines in blocks]


def parse(documentation: str) -> tuple[Example, Example]:
    """The example that fires and the "Use instead" that does not."""
    example, instead = Example(), None
    for intro, code in _blocks(example_section(documentation)):
        if instead is None and intro.startswith("Use instead"):
            instead = Example()
            instead.files = dict(example.files)
        current = instead or example
        named = _FILE.search(intro)
        if named is None:
            assert current is instead and example.files, f"name the file of this block: {intro!r}"
            name = example.primary
        else:
            name = named.group(1)
        current.files[name] = code
        if gpu := _GPU.search(intro):
            current.gpu = gpu.group(1)
        if world_size := _WORLD_SIZE.search(intro):
            current.world_size = int(world_size.group(1))
    assert instead is not None, "no 'Use instead' block"
    instead.gpu = instead.gpu or example.gpu
    instead.world_size = instead.world_size or example.world_size
    return example, instead


def codes_found(code: str, example: Example, folder: Path) -> list[str]:
    if any(name.endswith(".sh") for name in example.files):
        (folder / ".git").mkdir(exist_ok=True)
    for name, text in example.files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, "utf-8")
    arguments = ["--select", code, "--no-detect", "--format", "json", "--quiet"]
    if example.gpu:
        arguments += ["--gpu", example.gpu]
    if example.world_size:
        arguments += ["--world-size", str(example.world_size)]
    result = trainlint("check", folder / example.primary, *arguments)
    assert result.code in (0, 1), result.err
    return [finding["code"] for finding in json.loads(result.out)]


def builtin_rules() -> list:
    """The rules this project ships (a rule pack installed beside it keeps its own tests)."""
    return [rule for rule in registry.all_rules() if type(rule).__module__.split(".")[0] == "rules"]


@pytest.mark.parametrize("rule", builtin_rules(), ids=lambda rule: rule.code)
def test_documented_example(rule, tmp_path, monkeypatch):
    monkeypatch.setattr(versions, "installed", lambda package: None)  # examples pin what they need
    example, instead = parse(rule.documentation())
    (tmp_path / "example").mkdir()
    (tmp_path / "instead").mkdir()
    assert rule.code in codes_found(rule.code, example, tmp_path / "example"), \
        f"{rule.code}'s Example does not fire it: {example.files}"
    assert rule.code not in codes_found(rule.code, instead, tmp_path / "instead"), \
        f"{rule.code}'s 'Use instead' still fires it: {instead.files}"


def test_parser_reads_files_targets_and_overrides():
    documentation = textwrap.dedent("""\
        ## Example
        `sft.yaml`, on a V100 (Volta):
            tf32: true
            deepspeed: ds.json
        `ds.json`:
            {"train_batch_size": 64}
        Use instead, on 2 GPUs, in `ds.json`:
            {"train_batch_size": "auto"}

        ## Fix safety
            not an example
        """)
    example, instead = parse(documentation)
    assert example.files == {"sft.yaml": "tf32: true\ndeepspeed: ds.json\n", "ds.json": '{"train_batch_size": 64}\n'}
    assert (example.gpu, example.world_size) == ("V100", None)
    assert instead.files == {"sft.yaml": "tf32: true\ndeepspeed: ds.json\n", "ds.json": '{"train_batch_size": "auto"}\n'}
    assert (instead.gpu, instead.world_size) == ("V100", 2)
