"""`.gitignore` matching for directory walks, with git's pattern semantics.

What git ignores is what a walk of the tree skips: a `.gitignore` in any folder of the
repository (deeper files override shallower ones), plus `.git/info/exclude`. Pattern rules, from
git's documentation (gitignore(5)) and checked against `git ls-files --others --ignored
--exclude-standard` in the tests:

- blank lines and `#` comments are skipped; trailing spaces are dropped unless escaped (`\\ `);
  `\\#` and `\\!` start a pattern with a literal `#` / `!`;
- `!pattern` re-includes what an earlier pattern excluded; the last matching pattern decides;
  a file whose parent folder is excluded cannot be re-included (git does not descend into it);
- a trailing `/` matches folders only;
- a pattern with a `/` at its start or middle is anchored to the folder of its `.gitignore`;
  otherwise it matches a name at any depth below that folder;
- `*` and `?` do not match `/`; `[...]` is a character class (`[!...]` negates); a leading
  `**/` matches in every folder, a trailing `/**` everything inside, `/**/` zero or more folders;
  other `**` are plain `*`.

Git's global excludes file (core.excludesFile) is not read: it belongs to one user, not to the
repository. Outside a git repository nothing is ignored (as git and ruff's walker behave).

Use: `matcher = ignore_matcher(walk_root)`, then in `os.walk` prune with
`matcher.ignored(path, is_dir=True)` and skip files with `matcher.ignored(path)`.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from .source import checkout_root


class Pattern:
    __slots__ = ("text", "negated", "directory_only", "anchored", "regex")

    def __init__(self, text: str, negated: bool, directory_only: bool, anchored: bool, regex: re.Pattern):
        self.text = text
        self.negated = negated
        self.directory_only = directory_only
        self.anchored = anchored  # matched against the path relative to the .gitignore's folder
        self.regex = regex  # else against the last path component

    def matches(self, relative: str, name: str, is_dir: bool) -> bool:
        if self.directory_only and not is_dir:
            return False
        return self.regex.fullmatch(relative if self.anchored else name) is not None

    def __repr__(self) -> str:
        return f"Pattern({self.text!r})"


def _translate(glob: str) -> str:
    """A gitignore glob (already stripped of `!`, anchoring `/` and trailing `/`) as a regex."""
    out = []
    i, n = 0, len(glob)
    while i < n:
        c = glob[i]
        if c == "*":
            if glob.startswith("**", i):
                at_start = i == 0
                before_slash = i > 0 and glob[i - 1] == "/"
                after = glob[i + 2:i + 3]
                if at_start and after == "/":  # leading **/ : any folders, or none
                    out.append("(?:.*/)?")
                    i += 3
                    continue
                if before_slash and after == "/":  # /**/ : zero or more folders
                    out.append("(?:.*/)?")
                    i += 3
                    continue
                if before_slash and i + 2 == n:  # trailing /** : everything inside
                    out.append(".*")
                    i += 2
                    continue
                j = i
                while j < n and glob[j] == "*":
                    j += 1
                out.append("[^/]*")  # other consecutive asterisks are regular ones
                i = j
                continue
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "\\" and i + 1 < n:
            i += 1
            out.append(re.escape(glob[i]))
        elif c == "[":
            j = i + 1
            if j < n and glob[j] in "!^":
                j += 1
            if j < n and glob[j] == "]":
                j += 1
            while j < n and glob[j] != "]":
                j += 1
            if j >= n:  # no closing bracket: a literal "["
                out.append("\\[")
            else:
                body = glob[i + 1:j]
                negate = body[:1] in ("!", "^")
                if negate:
                    body = body[1:]
                body = body.replace("\\", "\\\\")
                out.append(f"[{'^' if negate else ''}{body}]" if not negate else f"(?!/)[^{body}]")
                i = j
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def parse_line(line: str) -> Pattern | None:
    """One `.gitignore` line as a Pattern; None for blanks and comments."""
    line = line.rstrip("\n").rstrip("\r")
    if not line or line.startswith("#"):
        return None
    # trailing spaces are ignored unless escaped with a backslash
    stripped = line.rstrip(" ")
    if stripped.endswith("\\") and len(stripped) < len(line):
        stripped += " "
    line = stripped
    if not line:
        return None
    negated = False
    if line.startswith("!"):
        negated, line = True, line[1:]
    elif line.startswith("\\!") or line.startswith("\\#"):
        line = line[1:]
    directory_only = line.endswith("/") and not line.endswith("\\/")
    if directory_only:
        line = line.rstrip("/")
    if not line:
        return None
    anchored = "/" in line
    if line.startswith("/"):
        line = line[1:]
    try:
        regex = re.compile(_translate(line), re.DOTALL)
    except re.error:
        return None  # git ignores a pattern it cannot use; so do we
    return Pattern(line, negated, directory_only, anchored, regex)


@lru_cache(maxsize=4096)
def _patterns_of(path: Path) -> tuple[Pattern, ...]:
    try:
        text = path.read_text("utf-8", errors="surrogateescape")
    except OSError:
        return ()
    return tuple(pattern for pattern in map(parse_line, text.splitlines()) if pattern is not None)


def repository_root(near: Path) -> Path | None:
    return checkout_root(near.resolve())


class IgnoreMatcher:
    """Answers "does git ignore this path?" for paths inside one repository."""

    def __init__(self, root: Path):
        self.root = root.resolve()
        exclude = self.root / ".git" / "info" / "exclude"
        self._exclude = _patterns_of(exclude) if exclude.is_file() else ()
        self._folder_verdicts: dict[tuple[str, ...], bool] = {}
        self._folder_patterns: dict[tuple[str, ...], tuple[Pattern, ...]] = {}

    def _patterns_in(self, folder_parts: tuple[str, ...]) -> tuple[Pattern, ...]:
        patterns = self._folder_patterns.get(folder_parts)
        if patterns is None:  # one stat per folder per matcher, not one per path checked
            candidate = self.root.joinpath(*folder_parts, ".gitignore")
            patterns = self._folder_patterns[folder_parts] = _patterns_of(candidate) if candidate.is_file() else ()
        return patterns

    def _own_verdict(self, parts: tuple[str, ...], is_dir: bool) -> bool:
        """Whether the patterns alone (not the parent folders) ignore the path `parts`."""
        ignored = False
        name = parts[-1]
        for pattern in self._exclude:
            if pattern.matches("/".join(parts), name, is_dir):
                ignored = not pattern.negated
        for depth in range(len(parts)):  # the .gitignore of each folder above the path, root first
            patterns = self._patterns_in(parts[:depth])
            if not patterns:
                continue
            relative = "/".join(parts[depth:])
            for pattern in patterns:
                if pattern.matches(relative, name, is_dir):
                    ignored = not pattern.negated
        return ignored

    def _folder_ignored(self, parts: tuple[str, ...]) -> bool:
        if not parts:
            return False
        cached = self._folder_verdicts.get(parts)
        if cached is None:
            cached = self._folder_ignored(parts[:-1]) or self._own_verdict(parts, True)
            self._folder_verdicts[parts] = cached
        return cached

    def ignored(self, path: Path, is_dir: bool | None = None) -> bool:
        """True when git ignores `path` (a file or folder inside the repository). `is_dir` is
        looked up when not given. Paths outside the repository, and `.git` itself, are not ignored."""
        absolute = path.resolve() if not path.is_absolute() else Path(path)
        try:
            parts = absolute.relative_to(self.root).parts
        except ValueError:
            try:
                parts = absolute.resolve().relative_to(self.root).parts
            except ValueError:
                return False
        if not parts:
            return False
        if is_dir is None:
            is_dir = absolute.is_dir()
        if self._folder_ignored(parts[:-1]):
            return True
        return self._folder_ignored(parts) if is_dir else self._own_verdict(parts, False)


class _NothingIgnored:
    root = None

    def ignored(self, path: Path, is_dir: bool | None = None) -> bool:
        return False


def ignore_matcher(near: Path) -> IgnoreMatcher | _NothingIgnored:
    """The matcher for the repository holding `near` (a folder or a file); one that ignores
    nothing outside a git repository."""
    root = repository_root(near if near.is_dir() else near.parent)
    return IgnoreMatcher(root) if root is not None else _NothingIgnored()
