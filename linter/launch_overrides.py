"""Values a launch command writes on its command line for keys of the config it names: the run
reads them in place of the file's. Commands in, key paths and values out (`agreed`); which IR
keys they change is the adapter's to say (linter/runs.py re-reads the file with them).

Each entry's own argument handling, from its source:
- LLaMA-Factory src/llamafactory/hparams/parser.py read_args: `llamafactory-cli train cfg.yaml
  k=v ...` merges `OmegaConf.from_cli(sys.argv[2:])` over the file (`OmegaConf.merge`: the
  command line wins), from 416853dd2 (#7793, v0.9.3). Earlier releases read a YAML only when it
  is the sole argument and hand anything else to HfArgumentParser, which refuses `k=v`: such a
  command never trains, so the launch's value is the only one a run can have.
- TRL's TrlParser.parse_args_and_config (trl/scripts/utils.py; trl/commands/cli_utils.py before
  v0.13): `--config cfg.yaml` sets the parser's defaults from the file (set_defaults_with_config)
  and then parses the command line, which wins, from 3d0449619 (#1739, v0.9.6). Before it,
  YamlConfigParser.merge_dataclasses took the file's value wherever the command line's equals
  the field's default: with a pinned TRL < 0.9.6 the value is unknown.
- alignment-handbook src/alignment/configs.py H4ArgumentParser.parse (967eab4 to 19f0345, and
  the projects that copy it): with the YAML as the first argument, parse_yaml_and_args
  overwrites the file's values with `--key=value` words (split at `=`: a word without one
  raises, and bools are True only for "true"/"True").
- axolotl src/axolotl/cli/config.py load_cfg(config, **kwargs): a CLI option overwrites the
  file's value where the file writes the key or is not `strict` (click options from the config
  model, cli/utils/args.py: `--key/--no-key` for bools, `--parent.child` for nested models).
- xtuner/tools/train.py: `--cfg-options k=v` is merged over the Python config
  (`cfg.merge_from_dict`), each value read by mmengine's DictAction: unknown here.
- Any other script: its own argument parser decides, so a key it is given is unknown.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .launch_commands import Command
from .launches import UNKNOWN, resolve

# Options that name a linked file (handled as links by linter/launches.py) or the config itself.
_NOT_VALUES = {"config", "config_file", "accelerate_config", "deepspeed", "deepspeed_config",
               "deepspeed_config_file", "local_rank", "local-rank"}
# transformers/hf_argparser.py string_to_bool also reads yes/no/t/f/y/n/1/0 for a bool field, but
# `no` is a string field's value too (save_strategy) and `1` an int's: only true/false are a bool here
# (another spelling given to a bool field reads as a value of the wrong type: left unknown).
# The accelerate launch options `trl <command>` takes for accelerate (trl/cli.py), not the config's.
_TRL_LAUNCH = {"num_processes", "num_machines", "machine_rank", "main_process_ip", "main_process_port",
               "mixed_precision", "gpu_ids", "multi_gpu", "use_deepspeed", "use_fsdp", "dynamo_backend",
               "same_network", "rdzv_backend", "zero_stage"}
_TRUE = {"true"}
_FALSE = {"false"}
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?)$")
# Whether TrlParser's command line wins in every release the pin allows.
_TRL_CLI_WINS = "0.9.6"
_MAX_SCRIPT = 1 << 20


def _typed(text: str, true: set[str], false: set[str]) -> Any:
    """A command-line word as the value the reader makes of it (int, float, bool or str); the
    argparse spellings of a bool (string_to_bool) are matched case-insensitively."""
    folded = text.lower() if true is _TRUE else text
    if folded in true:
        return True
    if folded in false:
        return False
    if _NUMBER.match(text):
        return int(text) if re.fullmatch(r"[-+]?\d+", text) else float(text)
    return text


def _names(command: Command, word: str, target: Path, root: Path) -> bool:
    if not word or word.startswith("-") or "$" in word:
        return False
    return resolve(command, word, root) == target


def _options(words: list[str]) -> list[tuple[str, str | None]]:
    """argparse-style `--name value`, `--name=value` and bare `--name` (None) words."""
    found, index = [], 0
    while index < len(words):
        word = words[index]
        if word.startswith("--") and len(word) > 2:
            name, equals, value = word[2:].partition("=")
            if equals:
                found.append((name, value))
            elif index + 1 < len(words) and not words[index + 1].startswith("--"):
                found.append((name, words[index + 1]))
                index += 1
            else:
                found.append((name, None))
        index += 1
    return found


def _argparse(words: list[str], true=_TRUE, false=_FALSE) -> dict[tuple[str, ...], Any]:
    """HfArgumentParser-style options: `--a-b` is field `a_b`; a bare option is a bool flag."""
    values: dict[tuple[str, ...], Any] = {}
    for name, value in _options(words):
        key = name.replace("-", "_")
        if key in _NOT_VALUES:
            continue
        values[(key,)] = True if value is None else _typed(value, true, false)
    return values


def _unknown(words: list[str]) -> dict[tuple[str, ...], Any]:
    return {key: UNKNOWN for key in _argparse(words)}


def _script_parser(command: Command, root: Path) -> str | None:
    """Which argument parser the command's script builds: "trl", "h4" or None (its own)."""
    entry = command.entry or ""
    if not entry.endswith(".py"):
        return None
    path = resolve(command, entry, root)
    if path is None:
        return None
    try:
        with open(path, "rb") as handle:
            text = handle.read(_MAX_SCRIPT).decode("utf-8", "replace")
    except OSError:
        return None
    if "H4ArgumentParser(" in text:
        return "h4"
    if "TrlParser(" in text and "parse_args_and_config" in text:
        return "trl"
    return None


def command_overrides(command: Command, target: Path, root: Path, trl_old: bool | None,
                      strict: bool, written) -> dict[tuple[str, ...], Any]:
    """The key paths one command gives a value for, with the value (UNKNOWN where the entry's
    reading of it is not known). `trl_old`: the pinned TRL is older than 0.9.6 (None: unknown);
    `strict`/`written(path)`: the file sets axolotl's `strict`, writes a key path."""
    entry, words = command.entry or "", list(command.arguments)
    config_at = next((index for index, word in enumerate(words) if _names(command, word, target, root)), None)
    if config_at is None:
        # `--config=cfg.yaml`: the value of an option names the file
        for index, word in enumerate(words):
            name, _, value = word.partition("=")
            if name.startswith("--") and _names(command, value, target, root):
                words[index:index + 1] = [name, value]
                config_at = index + 1
                break
    if config_at is None:
        return {}
    flag = words[config_at - 1] if config_at else ""
    rest = words[:config_at - 1 if flag.startswith("--") else config_at] + words[config_at + 1:]
    if entry == "llamafactory-cli train":
        if config_at != 0:
            return {}
        found = {}
        for word in rest:  # OmegaConf.from_cli: `key=value`, dotted keys nest, values read as YAML
            key, equals, value = word.partition("=")
            if equals and key and not key.startswith("-"):
                found[tuple(key.split("."))] = _typed(value, {"true", "True", "TRUE"}, {"false", "False", "FALSE"})
        return found
    if entry == "axolotl train":
        found = {}
        for name, value in _options(rest):
            key = name.replace("-", "_")
            negated = value is None and key.startswith("no_")
            path = tuple((key[3:] if negated else key).split("."))
            if path[0] in _NOT_VALUES or path[0] in ("launcher", "cloud", "accelerate", "num_processes"):
                continue
            if strict and not written(path[:1]):
                continue  # load_cfg: a strict config takes only the keys it writes
            found[path] = False if negated else True if value is None else _typed(value, _TRUE, _FALSE)
        return found
    if entry == "xtuner train":
        found, taking = {}, False
        for word in rest:
            if word.startswith("--"):
                taking = word in ("--cfg-options", "--cfg_options")
            elif taking and "=" in word:
                found[tuple(word.partition("=")[0].split("."))] = UNKNOWN
        return found
    if entry.startswith("trl ") or _script_parser(command, root) == "trl":
        if flag not in ("--config",):
            return _unknown(rest)
        values = {key: value for key, value in _argparse(rest).items() if key[0] not in _TRL_LAUNCH}
        return {key: UNKNOWN for key in values} if trl_old else values
    if _script_parser(command, root) == "h4":
        if config_at != 0 or any(word.startswith("--") and "=" not in word for word in rest):
            return _unknown(rest)  # the file is not read, or parse_yaml_and_args raises
        return _argparse(rest, {"true", "True"}, {"false", "False"})
    return _unknown(rest)


def agreed(commands: list[Command], target: Path, root: Path, trl_old: bool | None, strict: bool,
           written) -> dict[tuple[str, ...], Any]:
    """The key paths any command overrides: the value where every command gives the same known
    one, else UNKNOWN (a command that does not override a key leaves the file's value)."""
    each = [command_overrides(command, target, root, trl_old, strict, written) for command in commands]
    found: dict[tuple[str, ...], Any] = {}
    for path in dict.fromkeys(path for overrides in each for path in overrides):
        values = [overrides.get(path, UNKNOWN) for overrides in each]
        first = values[0]
        same = all(value is not UNKNOWN and value == first and type(value) is type(first) for value in values)
        found[path] = first if same else UNKNOWN
    return found


def python_node(document, path: tuple[str, ...]):
    """The expression a Python config (`model = dict(llm=dict(torch_dtype=...))`) holds at a
    dotted key path, as mmengine's Config.merge_from_dict walks it; None where no literal
    `dict(...)` / `{...}` nesting leads there."""
    import ast

    node = None
    for statement in document.tree.body:
        if isinstance(statement, ast.Assign) and any(
                isinstance(target, ast.Name) and target.id == path[0] for target in statement.targets):
            node = statement.value
    for key in path[1:]:
        node = document.resolve(node)
        if isinstance(node, ast.Call):
            node = next((item.value for item in node.keywords if item.arg == key), None)
        elif isinstance(node, ast.Dict):
            node = next((value for name, value in zip(node.keys, node.values)
                         if isinstance(name, ast.Constant) and name.value == key), None)
        else:
            return None
    return node
