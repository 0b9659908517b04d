"""linter/gitignore.py against git itself: the same tree, the same .gitignore files, the same answer."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from linter.gitignore import IgnoreMatcher, ignore_matcher, parse_line

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

FILES = [
    "a.log", "keep.log", "src/a.log", "src/main.py", "src/deep/x.pyc", "src/deep/y.py",
    "build/out.json", "build/keep.json", "lib/build/z.json", "docs/build", "checkpoints/step1/tokenizer.json",
    "checkpoints/step1/config.yaml", "checkpoints/README.md", "data/raw/a.jsonl", "data/raw/keep/b.jsonl",
    "data/clean/c.jsonl", "x/y/z/deep.tmp", "x/y/z/deep.txt", "foo/bar/baz.cfg", "foo/baz.cfg",
    "abc/x/y/def.yaml", "abc/def.yaml", "#hash.txt", "!bang.txt", "space .txt", "sub/.gitignore",
    "sub/a.yaml", "sub/b.yaml", "sub/nested/a.yaml", "sub/nested/c.yaml", "sub/only_root.yaml",
    "q1.txt", "qq.txt", "set/a1.json", "set/b1.json", "set/c1.json", "trail/dir/f.txt", "trail/file",
    "venv/lib/site.py", "notes/x.md", "notes/keep/y.md",
]
ROOT_IGNORE = """\
# comment line
*.log
!keep.log
/build/*
!/build/keep.json
checkpoints/*/
data/raw/
!data/raw/keep/
x/**/*.tmp
**/baz.cfg
abc/**/def.yaml
\\#hash.txt
\\!bang.txt
space\\ .txt
/only_root.yaml
q?.txt
set/[ab]1.json
trail/*/
venv
notes/**
!notes/keep/
!notes/keep/**
"""
SUB_IGNORE = """\
*.yaml
!b.yaml
nested/c.yaml
/only_root.yaml
"""


def _repository(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    for name in FILES:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x\n")
    (root / ".gitignore").write_text(ROOT_IGNORE)
    (root / "sub" / ".gitignore").write_text(SUB_IGNORE)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / ".git" / "info").mkdir(exist_ok=True)
    (root / ".git" / "info" / "exclude").write_text("*.pyc\n")
    return root


def _git_files(root: Path, *flags: str) -> set[str]:
    listed = subprocess.run(["git", "ls-files", "--others", "--exclude-standard", *flags],
                            cwd=root, check=True, capture_output=True, text=True).stdout
    return {line for line in listed.splitlines() if line}


def _walk(root: Path, matcher: IgnoreMatcher) -> set[str]:
    kept = set()
    for directory, subdirs, files in os.walk(root):
        current = Path(directory)
        subdirs[:] = [name for name in subdirs if name != ".git"
                      and not matcher.ignored(current / name, is_dir=True)]
        for name in files:
            if not matcher.ignored(current / name):
                kept.add((current / name).relative_to(root).as_posix())
    return kept


def test_walk_keeps_exactly_what_git_keeps(tmp_path):
    root = _repository(tmp_path)
    matcher = ignore_matcher(root)
    assert _walk(root, matcher) == _git_files(root)


def test_each_file_verdict_matches_git(tmp_path):
    root = _repository(tmp_path)
    matcher = ignore_matcher(root)
    ignored_by_git = _git_files(root, "--ignored")
    assert ignored_by_git  # the fixture exercises ignoring at all
    for name in [*FILES, ".gitignore"]:
        assert matcher.ignored(root / name) == (name in ignored_by_git), name


def test_reinclusion_under_an_excluded_folder_is_not_possible(tmp_path):
    root = _repository(tmp_path)
    (root / ".gitignore").write_text("data/\n!data/raw/keep/b.jsonl\n")
    matcher = IgnoreMatcher(root)
    assert matcher.ignored(root / "data" / "raw" / "keep" / "b.jsonl")
    assert "data/raw/keep/b.jsonl" in _git_files(root, "--ignored")


def test_directory_only_pattern_does_not_match_a_file(tmp_path):
    root = _repository(tmp_path)
    (root / ".gitignore").write_text("build/\n")
    matcher = IgnoreMatcher(root)
    assert matcher.ignored(root / "lib" / "build", is_dir=True)
    assert not matcher.ignored(root / "docs" / "build")  # a file named build
    assert "docs/build" not in _git_files(root, "--ignored")


def test_outside_a_repository_nothing_is_ignored(tmp_path):
    (tmp_path / ".gitignore").write_text("*\n")
    (tmp_path / "a.yaml").write_text("x: 1\n")
    assert not ignore_matcher(tmp_path).ignored(tmp_path / "a.yaml")


def test_parse_line_skips_comments_and_blanks():
    assert parse_line("# x") is None and parse_line("") is None and parse_line("   ") is None
    pattern = parse_line("!/build/")
    assert pattern.negated and pattern.directory_only and pattern.anchored and pattern.text == "build"
