"""Framework versions a run will use: an exact pin near the config, else the installed package.

Pins are read, in the config's folder and each folder above it up to the repository root (the
nearest folder holding `.git`; without one, up to the file system root), from:

- `uv.lock`, `poetry.lock` (`[[package]]` name/version) and `Pipfile.lock` (`"version": "==X"`):
  what a resolver wrote down. A package listed with two versions (uv/poetry forks by platform
  marker) says nothing exact and is skipped.
- `requirements*.txt` (`pkg==X`, extras allowed);
- `pyproject.toml`: PEP 621 `[project] dependencies` / `optional-dependencies`, PEP 735
  `[dependency-groups]`, and Poetry's `[tool.poetry.*dependencies]` tables, where a bare
  `"1.2.3"` (or `{version = "1.2.3"}`) is an exact constraint (Poetry's docs, "Dependency
  specification": "exact requirements ... 1.2.3");
- `setup.py`, read with `ast` and never run: every string literal that is a requirement with an
  exact pin (`install_requires=[...]`, or the `_deps = [...]` table that transformers-style
  setup.py files index into);
- `setup.cfg` `[options] install_requires` (and `extras_require`) lines;
- `environment*.yml` / `environment*.yaml` (conda): `- pkg==X`, `- pkg=X.Y.Z` (conda's single
  `=` is a prefix match, so only a full three-part version counts as exact) and the `- pip:`
  list's `pkg==X`.

The nearest folder with a pin for the package wins; within one folder the order above decides
(a lock file records what was installed, a manifest what was asked for). Only exact pins count:
a range does not say which version runs. Without a pin, the distribution installed beside
trainlint is used (the common case of linting where you train). Unknown is None, and
version-bound rules stay silent on it.

Everything here is imported lazily by the rules that need a version: nothing is read at start-up.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path

from .source import folders_to_checkout
from .value import Value
from .lazy_pattern import LazyPattern

_NAME = r"[A-Za-z0-9][A-Za-z0-9._-]*"
_VERSION = r"[A-Za-z0-9.+!_-]+"
_REQUIREMENT = LazyPattern(rf"^\s*({_NAME})\s*(?:\[[^\]]*\])?\s*===?\s*({_VERSION})\s*(?:[;#,]|$)")
_CONDA = LazyPattern(rf"^\s*-\s*(?:[\w.-]+::)?({_NAME})\s*(==?)\s*({_VERSION})\s*(?:#.*)?$")
_FULL_VERSION = LazyPattern(r"^\d+\.\d+\.\d+")
_LOCK_FILES = ("uv.lock", "poetry.lock", "Pipfile.lock")


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


class Pin(Value):
    """A version of a package and where it comes from. (A plain class: `dataclasses` imports
    `inspect`, ~5 ms on every lint.)"""

    __slots__ = ("package", "version", "path")

    def __init__(self, package: str, version: str, path: Path | None):
        self.package = package
        self.version = version
        self.path = path  # the file that pins it; None when it is the installed distribution

    @property
    def origin(self) -> str:
        """Where the version comes from, for messages: "pinned in setup.py" or "installed"."""
        return f"pinned in {self.path.name}" if self.path is not None else "installed"

    def describe(self) -> str:
        """For messages: "trl 0.18.0, pinned in setup.py"."""
        return f"{self.package} {self.version}, {self.origin}"


def _requirement(text: str) -> tuple[str, str] | None:
    match = _REQUIREMENT.match(text)
    if match is None or "*" in match.group(2):
        return None
    return _normalise(match.group(1)), match.group(2)


def _lines_to_pins(lines) -> dict[str, str]:
    pins = {}
    for line in lines:
        found = _requirement(line.strip().strip("\"',"))
        if found:
            pins.setdefault(found[0], found[1])
    return pins


@lru_cache(maxsize=None)  # read once per check: for the mention test and the parse alike
def _read_text(path: Path) -> str | None:
    try:
        return path.read_text("utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _toml(text: str) -> dict | None:
    try:
        import tomllib  # Python 3.11+
    except ImportError:  # pragma: no cover - Python 3.10: callers fall back to reading lines
        return None
    try:
        return tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError):
        return {}


def _pins_requirements(text: str) -> dict[str, str]:
    return _lines_to_pins(text.splitlines())


def _pins_pyproject(text: str) -> dict[str, str]:
    data = _toml(text)
    if data is None:  # no tomllib: quoted requirement strings, one per line, as before
        return _lines_to_pins(text.splitlines())
    requirements: list[str] = []
    project = data.get("project") if isinstance(data.get("project"), dict) else {}
    requirements += [r for r in project.get("dependencies", []) if isinstance(r, str)]
    for group in (project.get("optional-dependencies") or {}).values():
        requirements += [r for r in group if isinstance(r, str)] if isinstance(group, list) else []
    for group in (data.get("dependency-groups") or {}).values():  # PEP 735
        requirements += [r for r in group if isinstance(r, str)] if isinstance(group, list) else []
    pins = _lines_to_pins(requirements)
    poetry = ((data.get("tool") or {}).get("poetry") or {}) if isinstance(data.get("tool"), dict) else {}
    tables = [poetry.get("dependencies"), poetry.get("dev-dependencies")]
    tables += [(group or {}).get("dependencies") for group in (poetry.get("group") or {}).values()
               if isinstance(group, dict)]
    for table in tables:
        if not isinstance(table, dict):
            continue
        for name, spec in table.items():
            if isinstance(spec, dict):
                spec = spec.get("version")
            if not isinstance(spec, str):
                continue
            spec = spec.strip()
            exact = re.fullmatch(rf"(?:==?\s*)?({_VERSION})", spec)  # Poetry: "1.2.3" is exact
            if exact and "*" not in spec and re.match(r"\d", exact.group(1)):
                pins.setdefault(_normalise(name), exact.group(1))
    return pins


def _pins_setup_py(text: str) -> dict[str, str]:
    import ast

    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return {}
    strings = [node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)]
    return _lines_to_pins(string for string in strings if "\n" not in string.strip())


def _pins_setup_cfg(text: str) -> dict[str, str]:
    import configparser

    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        return {}
    lines = []
    if parser.has_option("options", "install_requires"):
        lines += parser.get("options", "install_requires").splitlines()
    if parser.has_section("options.extras_require"):
        for _, value in parser.items("options.extras_require"):
            lines += value.splitlines()
    return _lines_to_pins(lines)


def _pins_environment(text: str) -> dict[str, str]:
    pins = {}
    for line in text.splitlines():
        if line.lstrip().startswith("- ") and "==" in line:
            found = _requirement(line.lstrip()[2:])
            if found:
                pins.setdefault(*found)
                continue
        match = _CONDA.match(line)
        if match and (match.group(2) == "==" or _FULL_VERSION.match(match.group(3))):
            pins.setdefault(_normalise(match.group(1)), match.group(3))
    return pins


def _pins_lock(text: str) -> dict[str, str]:
    """uv.lock / poetry.lock: [[package]] tables; a package with two versions is skipped."""
    data = _toml(text)
    packages: list[tuple[str, str]] = []
    if data is None:
        name = None
        for line in text.splitlines():
            if line.strip() == "[[package]]":
                name = None
            elif (match := re.match(r'^name\s*=\s*"([^"]+)"', line)):
                name = match.group(1)
            elif name and (match := re.match(r'^version\s*=\s*"([^"]+)"', line)):
                packages.append((name, match.group(1)))
                name = None
    else:
        for package in data.get("package", []) or []:
            if isinstance(package, dict) and isinstance(package.get("name"), str) \
                    and isinstance(package.get("version"), str):
                packages.append((package["name"], package["version"]))
    seen: dict[str, set[str]] = {}
    for name, version in packages:
        seen.setdefault(_normalise(name), set()).add(version)
    return {name: next(iter(versions)) for name, versions in seen.items() if len(versions) == 1}


def _pins_pipfile_lock(text: str) -> dict[str, str]:
    import json

    try:
        data = json.loads(text)
    except ValueError:
        return {}
    pins = {}
    for section in ("default", "develop"):
        for name, entry in (data.get(section) or {}).items() if isinstance(data, dict) else ():
            version = entry.get("version") if isinstance(entry, dict) else None
            if isinstance(version, str) and version.startswith("==") and "*" not in version:
                pins.setdefault(_normalise(name), version[2:].strip())
    return pins


def _reader_for(name: str):
    if name in ("uv.lock", "poetry.lock"):
        return _pins_lock
    if name == "Pipfile.lock":
        return _pins_pipfile_lock
    if name == "pyproject.toml":
        return _pins_pyproject
    if name == "setup.py":
        return _pins_setup_py
    if name == "setup.cfg":
        return _pins_setup_cfg
    if name.startswith("environment") and name.endswith((".yml", ".yaml")):
        return _pins_environment
    if name.startswith("requirements") and name.endswith(".txt"):
        return _pins_requirements
    return None


@lru_cache(maxsize=None)
def _pins_in(path: Path) -> dict[str, str]:
    """{normalised package name: exact version} pinned by one file ({} when unreadable)."""
    reader = _reader_for(path.name)
    text = _read_text(path) if reader is not None else None
    return reader(text) if text is not None else {}


@lru_cache(maxsize=None)
def _normalised_text(path: Path) -> str:
    """The file's text, lower-cased with runs of - _ . as one -: a pin of a package names it so."""
    return _normalise(_read_text(path) or "")


def forget() -> None:
    """Drop what was read: a new check (the CLI called again in one process) reads pins afresh."""
    _pins_in.cache_clear()
    _normalised_text.cache_clear()
    _read_text.cache_clear()
    pin_files.cache_clear()


@lru_cache(maxsize=4096)
def pin_files(folder: Path) -> list[Path]:
    """The files of `folder` that may pin versions, in the order they are consulted."""
    try:
        names = {entry.name for entry in folder.iterdir() if entry.is_file()}
    except OSError:
        return []
    ordered = [name for name in _LOCK_FILES if name in names]
    ordered += sorted(name for name in names if name.startswith("requirements") and name.endswith(".txt"))
    ordered += [name for name in ("pyproject.toml", "setup.py", "setup.cfg") if name in names]
    ordered += sorted(name for name in names
                      if name.startswith("environment") and name.endswith((".yml", ".yaml")))
    return [folder / name for name in ordered]


def _folders_up_to_repository(near: Path) -> list[Path]:
    # Up to the repository root: pins above it belong to another project.
    return folders_to_checkout(near.parent if not near.is_dir() else near)


def pinned(package: str, near: Path) -> tuple[str, Path] | None:
    """The exact version pinned for `package` nearest to `near`, with the file that pins it."""
    wanted = _normalise(package)
    # Absolute: a relative path's parents stop at "." (the folders above the working directory
    # were never searched), and _pins_in caches by path.
    relative = not Path(near).is_absolute()
    near = Path(near).absolute()
    for folder in _folders_up_to_repository(near):
        for candidate in pin_files(folder):
            # Parse (a TOML or lock file costs an import and a parse) only a file that names it.
            if wanted not in _normalised_text(candidate):
                continue
            version = _pins_in(candidate).get(wanted)
            if version:
                # Named as the config was: relative to the working directory for a relative path.
                return version, Path(os.path.relpath(candidate)) if relative else candidate
    return None


@lru_cache(maxsize=None)
def _distributions(entry: str) -> dict[str, str]:
    """The `.dist-info` folders of one import path entry, by normalised project name."""
    found: dict[str, str] = {}
    try:
        names = os.listdir(entry)
    except OSError:
        return found
    for name in names:
        if name.endswith(".dist-info"):
            project = name[: -len(".dist-info")].rpartition("-")[0]
            found.setdefault(_normalise(project), os.path.join(entry, name))
    return found


def _metadata_version(folder: str) -> str | None:
    try:
        with open(os.path.join(folder, "METADATA"), encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if line.startswith("Version:"):
                    return line.partition(":")[2].strip() or None
                if not line.strip():
                    break  # the headers end at the first blank line
    except OSError:
        pass
    return None


@lru_cache(maxsize=None)
def installed(package: str) -> str | None:
    """The installed distribution's version (asked once per package per process).

    Read from the `.dist-info/METADATA` of the first import path entry that holds the project,
    which is where importlib.metadata finds it; importing importlib.metadata (email, zipfile,
    csv) costs ~10 ms a run, more than the rest of a one-file check. Zipped or egg entries, which
    a folder scan cannot read, fall back to importlib.metadata."""
    import sys

    wanted = _normalise(package)
    for entry in sys.path:
        folder = _distributions(entry or ".").get(wanted)
        if folder is not None:
            return _metadata_version(folder)
    if not any(os.path.isfile(entry) for entry in sys.path if entry):  # python311.zip is listed, rarely there
        return None
    from importlib.metadata import PackageNotFoundError, version  # pragma: no cover - zipped installs

    try:  # pragma: no cover
        return version(package)
    except PackageNotFoundError:  # pragma: no cover
        return None


# Distributions published under an earlier name: LLaMA-Factory was `llmtuner` on PyPI up to 0.7.1
# (setup.py name="llmtuner"; renamed "llamafactory" in dfa686b61, first released in 0.8.0).
_FORMER_NAMES = {"llamafactory": ("llmtuner",)}


def find_version(package: str, near: Path) -> Pin | None:
    """The version of `package` a run of the config at `near` uses: the nearest exact pin (of its
    name or a former one), else the installed distribution; None when unknown."""
    for name in (package, *_FORMER_NAMES.get(package, ())):
        found = pinned(name, near)
        if found is not None:
            return Pin(package, found[0], found[1])
    version = installed(package)
    return Pin(package, version, None) if version else None


def version_of(package: str, near: Path) -> tuple[str, str] | None:
    """(version, where it comes from: the pinning file's path or "installed") or None when unknown."""
    found = find_version(package, near)
    if found is None:
        return None
    return found.version, str(found.path) if found.path is not None else "installed"


def older_than(version: str, bound: str) -> bool | None:
    from packaging.version import InvalidVersion, Version

    try:
        return Version(version) < Version(bound)
    except InvalidVersion:
        return None
