"""Settings: `[tool.trainlint]` in pyproject.toml, or the same keys at the top level of
`trainlint.toml` / `.trainlint.toml`. As in ruff, the nearest settings file to each linted
file wins (no merging); paths inside it are relative to its folder.
"""

from __future__ import annotations

import fnmatch
import sys
from functools import lru_cache
from pathlib import Path

from .source import real_path


SETTINGS_FILES = ("trainlint.toml", ".trainlint.toml", "pyproject.toml")
KEYS = {
    "select": list, "extend-select": list, "ignore": list, "per-file-ignores": dict,
    "exclude": list, "target-gpus": list, "world-size": int, "unsafe-fixes": bool, "runs": list,
}


class SettingsError(Exception):
    pass


class Settings:
    __slots__ = ("root", "path", "select", "extend_select", "ignore", "per_file_ignores", "exclude",
                 "target_gpus", "world_size", "unsafe_fixes", "runs")

    def __init__(self, root: Path, path: Path | None = None, select: list[str] | None = None,
                 extend_select: list[str] | None = None, ignore: list[str] | None = None,
                 per_file_ignores: dict[str, list[str]] | None = None, exclude: list[str] | None = None,
                 target_gpus: list[str] | None = None, world_size: int | None = None,
                 unsafe_fixes: bool = False, runs: list[dict] | None = None):
        self.root = root  # the folder paths in the settings are relative to
        self.path = path  # the settings file, None for built-in defaults
        self.select = select
        self.extend_select = extend_select if extend_select is not None else []
        self.ignore = ignore if ignore is not None else []
        self.per_file_ignores = per_file_ignores if per_file_ignores is not None else {}
        self.exclude = exclude if exclude is not None else []
        self.target_gpus = target_gpus
        self.world_size = world_size
        self.unsafe_fixes = unsafe_fixes
        self.runs = runs if runs is not None else []

    def _relative(self, path: Path) -> str | None:
        try:
            return real_path(path).relative_to(real_path(self.root)).as_posix()
        except ValueError:
            return None

    def excludes(self, path: Path) -> bool:
        relative = self._relative(path)
        if relative is None:
            return False
        parts = relative.split("/")
        return any(
            fnmatch.fnmatch(relative, pattern) or fnmatch.fnmatch(parts[-1], pattern)
            or any(fnmatch.fnmatch(part, pattern) for part in parts[:-1])
            for pattern in self.exclude
        )

    def ignored_codes(self, path: Path) -> list[str]:
        relative = self._relative(path)
        if relative is None:
            return []
        codes: list[str] = []
        for pattern, pattern_codes in self.per_file_ignores.items():
            if fnmatch.fnmatch(relative, pattern) or fnmatch.fnmatch(Path(relative).name, pattern):
                codes.extend(pattern_codes)
        return codes


def _codes(value: list, key: str, path: Path) -> list[str]:
    if not all(isinstance(item, str) for item in value):
        raise SettingsError(f"{path}: `{key}` must be a list of rule codes")
    return [item.strip().upper() for item in value]


def load_file(path: Path) -> Settings | None:
    """Settings from one file; None for a pyproject.toml without [tool.trainlint]."""
    try:
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise SettingsError(f"{path}: cannot read settings: {error}") from None
    if path.name == "pyproject.toml" and "tool.trainlint" not in text:
        return None
    # Imported only now: most runs find no settings file and never pay for the TOML parser.
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise SettingsError(f"{path}: invalid TOML: {error}") from None
    if path.name == "pyproject.toml":
        data = data.get("tool", {}).get("trainlint")
        if data is None:
            return None
    settings = Settings(root=path.parent, path=path)
    for key, value in data.items():
        expected = KEYS.get(key)
        if expected is None:
            raise SettingsError(f"{path}: unknown setting `{key}` (known: {', '.join(sorted(KEYS))})")
        if not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
            raise SettingsError(f"{path}: `{key}` must be a {expected.__name__}")
        if key in ("select", "extend-select", "ignore"):
            value = _codes(value, key, path)
        elif key == "per-file-ignores":
            value = {pattern: _codes(codes if isinstance(codes, list) else [codes], key, path)
                     for pattern, codes in value.items()}
        elif key == "world-size" and value < 1:
            raise SettingsError(f"{path}: `world-size` must be at least 1")
        setattr(settings, key.replace("-", "_"), value)
    return settings


@lru_cache(maxsize=None)
def for_directory(directory: Path) -> Settings:
    """The nearest settings at or above `directory`; built-in defaults if there are none."""
    for folder in (directory, *directory.parents):
        for name in SETTINGS_FILES:
            candidate = folder / name
            if candidate.is_file():
                found = load_file(candidate)
                if found is not None:
                    return found
    return Settings(root=Path.cwd())
