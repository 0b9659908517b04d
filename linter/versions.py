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
  list's `pkg==X`;
- shell scripts (`*.sh`, `*.bash`: `install.sh`, `setup.sh`, ...) and Dockerfiles: the
  requirements of `pip install` / `pip3 install` / `python -m pip install` / `uv pip install`
  commands (`pip install accelerate==0.33.0`). README prose is not read: it shows alternatives.

The nearest folder with a pin for the package wins (a subproject's own pins). Within one folder
every file that pins the package must agree: pins of one package that disagree (`requirements.txt`
says deepspeed==0.12.2, `pyproject.toml` deepspeed==0.14.4; two extras of one pyproject; a lock
file behind its manifest) leave the version unknown, since no tool documents which of them a run
installs (pip installs the file or command it is given; `uv sync` re-locks a lock that disagrees
with pyproject.toml, and `poetry install` refuses one), and `conflict()` names them for
--verbose notes. Only exact pins count: a range does not say which version runs. Without a pin,
a pinned framework release that itself requires the package exactly decides it
(`axolotl==0.10.0` installs transformers==4.52.3: linter/data/implied_pins.json, made by
bench/implied_pins.py from PyPI); else the distribution installed beside trainlint is used (the
common case of linting where you train). Unknown is None, and version-bound rules stay silent on it.

Everything here is imported lazily by the rules that need a version: nothing is read at start-up.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from .installed import installed
from .pin_readers import CONFLICT, is_install_script, may_pin, normalise as _normalise, reader_for, same_version
from .source import folders_to_checkout, forget_checkouts
from .value import Value
from .version_order import older_than

_LOCK_FILES = ("uv.lock", "poetry.lock", "Pipfile.lock")


class Pin(Value):
    """A version of a package and where it comes from. (A plain class: `dataclasses` imports
    `inspect`, ~5 ms on every lint.)"""

    __slots__ = ("package", "version", "path", "via")

    def __init__(self, package: str, version: str, path: Path | None, via: str | None = None):
        self.package = package
        self.version = version
        self.path = path  # the file that pins it; None when it is the installed distribution
        self.via = via  # "axolotl 0.10.0" where the pin is that release's own exact requirement

    @property
    def origin(self) -> str:
        """Where the version comes from, for messages: "pinned in setup.py", "installed", or
        "required by axolotl 0.10.0, pinned in requirements.txt"."""
        if self.path is None:
            return "installed"
        return f"required by {self.via}, pinned in {self.path.name}" if self.via else f"pinned in {self.path.name}"

    @property
    def where(self) -> str:
        """For rule messages, which print it in parentheses: the pinning file (a path), with the
        pinned framework release whose requirement it is, or "installed"."""
        if self.path is None:
            return "installed"
        return f"{self.path}: {self.via} requires it" if self.via else str(self.path)

    def describe(self) -> str:
        """For messages: "trl 0.18.0, pinned in setup.py"."""
        return f"{self.package} {self.version}, {self.origin}"


@lru_cache(maxsize=None)  # read once per check: for the mention test and the parse alike
def _read_text(path: Path) -> str | None:
    try:
        return path.read_text("utf-8")
    except (OSError, UnicodeDecodeError):
        return None


@lru_cache(maxsize=None)
def _pins_in(path: Path) -> dict[str, str]:
    """{normalised package name: exact version} pinned by one file ({} when unreadable)."""
    reader = reader_for(path.name)
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
    _folders_up_to_repository.cache_clear()
    _search_folders.cache_clear()
    _start_folder.cache_clear()
    _search_absolute.cache_clear()
    pin_in.cache_clear()
    doubted.cache_clear()
    forget_checkouts()  # the folder chains the searches walked


@lru_cache(maxsize=4096)
def pin_files(folder: Path) -> list[Path]:
    """The files of `folder` that may pin versions, in the order they are consulted."""
    try:
        with os.scandir(folder) as entries:  # names only: a folder above a checkout may hold thousands
            names = {entry.name for entry in entries}
        ordered = [name for name in _LOCK_FILES if name in names]
        ordered += sorted(name for name in names if name.startswith("requirements") and name.endswith(".txt"))
        ordered += [name for name in ("pyproject.toml", "setup.py", "setup.cfg") if name in names]
        ordered += sorted(name for name in names
                          if name.startswith("environment") and name.endswith((".yml", ".yaml")))
        ordered += sorted(name for name in names if is_install_script(name))
        return [folder / name for name in ordered if (folder / name).is_file()]  # a stat for these only
    except OSError:
        return []


@lru_cache(maxsize=4096)
def _folders_up_to_repository(folder: Path) -> list[Path]:
    # Up to the repository root: pins above it belong to another project.
    return folders_to_checkout(folder)


def _search(package: str, near: Path) -> tuple[str, list[tuple[str, Path]]] | None:
    """("pin" or "conflict", [(version, file), ...]) for the nearest folder that pins `package`;
    files named as `near` is (relative to the working directory for a relative path)."""
    # Absolute: a relative path's parents stop at "." (the folders above the working directory
    # were never searched), and _pins_in caches by path.
    near = Path(near)
    if near.is_absolute():
        return _search_absolute(package, near)
    found = _search_absolute(package, near.absolute())
    if found is None:
        return found
    return found[0], [(version, Path(os.path.relpath(path))) for version, path in found[1]]


@lru_cache(maxsize=None)  # every rule asks for its packages near the same few files
def _search_absolute(package: str, near: Path) -> tuple[str, list[tuple[str, Path]]] | None:
    return _search_folders(_normalise(package), _start_folder(near))


@lru_cache(maxsize=4096)  # every rule asks for its packages near the same few files: one stat each
def _start_folder(near: Path) -> Path:
    return near if near.is_dir() else near.parent


@lru_cache(maxsize=None)  # asked by version_of, disagreeing and conflict for one file alike
def _search_folders(wanted: str, start: Path) -> tuple[str, list[tuple[str, Path]]] | None:
    for folder in _folders_up_to_repository(start):
        found: list[tuple[str, Path]] = []
        conflict = False
        for candidate in pin_files(folder):
            # Parse (a TOML or lock file costs an import and a parse) only a file that names it
            # as a pin would: a project description naming a framework pins nothing.
            if not may_pin(wanted, _normalised_text(candidate), candidate.name):
                continue
            version = _pins_in(candidate).get(wanted)
            if not version:
                continue
            if isinstance(version, tuple):  # one file pins it twice, differently
                conflict = True
                found.extend((each, candidate) for each in version[1:])
                continue
            conflict = conflict or any(not same_version(version, other) for other, _ in found)
            found.append((version, candidate))
        if found:
            return (CONFLICT if conflict else "pin"), found
    return None


def pinned(package: str, near: Path) -> tuple[str, Path] | None:
    """The exact version pinned for `package` nearest to `near`, with the file that pins it;
    None when nothing pins it or the pins of the nearest folder disagree (see conflict())."""
    found = _search(package, near)
    if found is None or found[0] == CONFLICT:
        return None
    return found[1][0]


def disagreeing(package: str, near: Path) -> list[tuple[str, Path]]:
    """The pins of `package` that disagree in the nearest folder pinning it, as (version, file);
    [] when they agree or nothing pins it. A bound every one of them is below is still known."""
    found = _search(package, near)
    return found[1] if found is not None and found[0] == CONFLICT else []


def conflict(package: str, near: Path) -> str | None:
    """For notes: the disagreeing pins of `package` that leave its version unknown, e.g.
    "deepspeed==0.12.2 (requirements.txt), deepspeed==0.14.4 (pyproject.toml)"; else None."""
    return ", ".join(f"{package}=={version} ({path.name})" for version, path in disagreeing(package, near)) or None


def unknown_version_reason(package: str, near: Path, reader: str | None = None) -> str:
    """Why `package`'s version is unknown near `near` (for a file `reader` reads), for --verbose notes."""
    stale = doubted(package, _start_folder(Path(near).absolute()), reader) if reader else None
    if stale:
        return stale
    disagreeing = conflict(package, near)
    if disagreeing:
        return f"pins that disagree: {disagreeing}"
    return "no exact pin in requirements*.txt/pyproject.toml nearby, none installed"


# Distributions published under an earlier name: LLaMA-Factory was `llmtuner` on PyPI up to 0.7.1
# (setup.py name="llmtuner"; renamed "llamafactory" in dfa686b61, first released in 0.8.0).
_FORMER_NAMES = {"llamafactory": ("llmtuner",)}


def find_version(package: str, near: Path) -> Pin | None:
    """The version of `package` a run of the config at `near` uses: the nearest exact pin (of its
    name or a former one), else the installed distribution; None when unknown (pins that
    disagree included)."""
    for name in (package, *_FORMER_NAMES.get(package, ())):
        found = _search(name, near)
        if found is not None:  # pins that disagree: unknown, not the installed package
            return Pin(package, *found[1][0]) if found[0] != CONFLICT else None
    implied = _implied(package, near)
    if implied is not None:
        return implied
    version = installed(package)
    return Pin(package, version, None) if version else None


@lru_cache(maxsize=None)
def implied_pins() -> dict:
    """linter/data/implied_pins.json (bench/implied_pins.py): per framework release on PyPI, the
    exact versions its unconditional install requirements pin."""
    import json

    with open(Path(__file__).parent / "data" / "implied_pins.json", encoding="utf-8") as handle:
        return json.load(handle)["frameworks"]


def _implied(package: str, near: Path) -> Pin | None:
    """The version of `package` that a pinned framework release installs: `axolotl==0.10.0`
    requires transformers==4.52.3 exactly, so pip installs that one. None where no framework
    with exact requirements is pinned near `near` (or its pins disagree), its release is not in
    the table, or the release leaves `package` to a range, an extra or a platform marker."""
    for framework, releases in implied_pins().items():
        found = _search(framework, near)
        if found is None or found[0] == CONFLICT:
            continue
        version, path = found[1][0]
        release = releases.get(version) or next(
            (row for listed, row in releases.items() if same_version(listed, version)), None)
        if release is not None and package in release["pins"]:
            return Pin(package, release["pins"][package], path, via=f"{framework} {version}")
    return None


@lru_cache(maxsize=None)
def pin_in(package: str, folder: Path) -> Pin | None:
    """find_version for a config of `folder`, worked out once per folder and package for a whole
    check: every rule asks for the same few packages, configs side by side share the answer (the
    pins are looked up from the config's folder up), and `doubted` reads the same answer."""
    return find_version(package, folder)


@lru_cache(maxsize=None)
def doubted(package: str, folder: Path, reader: str) -> str | None:
    """Why the file pin pin_in found for `package` is not the one a `reader` run uses (a
    version the reader's releases cannot run with: linter/reader_requirements.py), else None."""
    found = pin_in(package, folder)
    if found is None or found.path is None or found.via:
        return None  # the installed distribution, or a pinned framework's own requirement: resolved by pip
    from .reader_requirements import below_reader_floor, has_table

    if not has_table(reader):
        return None
    own = next(filter(None, (pinned(name, folder) for name in (reader, *_FORMER_NAMES.get(reader, ())))), None)
    return below_reader_floor(package, found.version, reader, own)


def version_of(package: str, near: Path) -> tuple[str, str] | None:
    """(version, where it comes from: the pinning file's path or "installed") or None when unknown."""
    found = find_version(package, near)
    if found is None:
        return None
    return found.version, found.where


def key_releases() -> dict:
    """linter/data/key_releases.json (written by bench/key_releases.py from each framework's git
    history): {package: {floor, newest, keys: {key: [first release with it, the commit that added
    it, the newest release read without it]}}}. Read once, only by a rule that needs it."""
    global _KEY_RELEASES
    if _KEY_RELEASES is None:
        import json

        _KEY_RELEASES = json.loads((Path(__file__).parent / "data" / "key_releases.json").read_text("utf-8"))["packages"]
    return _KEY_RELEASES


_KEY_RELEASES: dict | None = None


def kept_by(row: list, version: str) -> bool | None:
    """Does release `version` keep a config path, by the path's row of key_releases.json `paths`
    ([1 if the floor release keeps it else 0, then per change [the last release in the old state,
    the first in the new one, the commit]])? None between those two releases (not read), or for a
    version that does not parse."""
    kept = bool(row[0])
    for last, first, _ in row[1:]:
        if older_than(version, first) is None or older_than(last, version) is None:
            return None
        if not older_than(last, version):
            return kept  # at or before the last release of this state
        if older_than(version, first):
            return None
        kept = not kept
    return kept


def path_row(history: dict, path: tuple, document) -> list | None:
    """The `paths` row (key_releases.json) of the key at `path` in a config `document`: a top-level
    key, a key of a block (`fsdp_config.key`, `zero_optimization.offload_param.key`) or of a list's
    entries (`datasets[].key`), with the
    variant the history's `selector` names (`datasets[].key@dpo` where `rl: dpo`), else the block's
    `.*` row (a release that passes every key of the block on). None where none is written."""
    rows = history.get("paths", {})
    if not path or not isinstance(path[-1], str):
        return None
    if len(path) == 1:
        return rows.get(path[0])
    if all(isinstance(step, str) for step in path):
        place = ".".join(path[:-1])  # a block's key, or a key of a block in a block
    elif len(path) == 3 and isinstance(path[0], str) and isinstance(path[1], int):
        place = path[0] + "[]"
    else:
        return None
    suffix = ""
    selector = history.get("selector", {}).get(place)
    if selector and isinstance(document, dict):
        value = document.get(selector)
        suffix = f"@{value}" if isinstance(value, str) and value in history.get("variants", ()) else ""
    row = rows.get(f"{place}.{path[-1]}{suffix}")
    return row if row is not None else rows.get(f"{place}.*{suffix}")


def refused_by(history: dict, path: tuple, version: str) -> bool | None:
    """Does release `version` refuse a key it lacks in the block holding `path` (key_releases.json
    `refuses`: the releases whose reader of the block validates it with a model that forbids other
    keys)? False where the block is read by name (an unknown key is ignored); None where the history
    has no such table or the version sits between two releases read."""
    if "refuses" not in history or not all(isinstance(step, str) for step in path):
        return None
    row = history["refuses"].get(".".join(path[:-1]))
    return kept_by(row, version) if row is not None else False


def kept_periods(row: list, floor: str, newest: str) -> str:
    """The releases that keep a path, in words: "0.1.0 to 0.6.0, 0.9.0 to 0.18.0"."""
    periods, start = [], floor if row[0] else None
    for last, first, _ in row[1:]:
        if start is not None:
            periods.append(f"{start} to {last}")
            start = None
        else:
            start = first
    if start is not None:
        periods.append(f"{start} to {newest}")
    return ", ".join(periods)
