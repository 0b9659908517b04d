"""Rebuild the held-out tree from bench/heldout/MANIFEST.tsv and the repositories' git mirrors.

    python bench/heldout/materialize.py DEST [--mirrors DIR] [--set NAME]

Each repository lands in DEST/<owner>__<name>/ with its own layout (configs, the pins and the
argument-dataclass files the checks read, and the launch scripts of sets built with LAUNCH = True,
kind "launch"), made a git repository of its own (`git init`, no
commit) so that "the repository root" is where it is upstream. Files come byte for byte from the
commit named in the manifest (`git show <commit>:<path>` on the bare mirror that
`fetch github:owner/name` leaves under /work/.mirror/owner+name/repo). Missing mirrors are
reported and skipped; an existing DEST/<owner>__<name>/ is replaced.

Sets: the first held-out set (the default, `--set first`) lives in bench/heldout/ itself
(MANIFEST.tsv, verdicts.tsv); another set NAME lives in bench/heldout/sets/NAME/ (MANIFEST.tsv,
verdicts.tsv, selection.py with its SELECTION, rules.py with its verdict rules).
"""

from __future__ import annotations

import argparse
import csv
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
FIRST = "first"


def set_dir(name: str = FIRST) -> Path:
    """Where a held-out set's MANIFEST.tsv and verdicts.tsv live: bench/heldout/ for the first set,
    bench/heldout/sets/NAME/ for another."""
    return HERE if name == FIRST else HERE / "sets" / name


def read_manifest(path: Path = HERE / "MANIFEST.tsv") -> list[dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


def folder_name(repo: str) -> str:
    return repo.replace("/", "__")


def materialize(dest: Path, mirrors: Path, rows: list[dict[str, str]]) -> int:
    dest.mkdir(parents=True, exist_ok=True)
    missing = 0
    by_repo: dict[str, list[dict[str, str]]] = {}
    for row in rows:
        by_repo.setdefault(row["repo"], []).append(row)
    for repo, repo_rows in by_repo.items():
        git_dir = mirrors / repo.replace("/", "+") / "repo"
        if not git_dir.is_dir():
            print(f"{repo}: no mirror at {git_dir} (fetch github:{repo} first); skipped", file=sys.stderr)
            missing += len(repo_rows)
            continue
        root = dest / folder_name(repo)
        if root.exists():
            shutil.rmtree(root)
        root.mkdir(parents=True)
        subprocess.run(["git", "init", "-q", str(root)], check=True)
        for row in repo_rows:
            shown = subprocess.run(["git", "--git-dir", str(git_dir), "show", f"{row['commit']}:{row['path']}"],
                                   capture_output=True)
            if shown.returncode != 0:
                print(f"{repo}: {row['path']} at {row['commit'][:12]}: {shown.stderr.decode().strip()}",
                      file=sys.stderr)
                missing += 1
                continue
            target = root / row["path"]
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(shown.stdout)
    return missing


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dest", type=Path)
    parser.add_argument("--mirrors", type=Path, default=Path(os.environ.get("TRAINLINT_MIRRORS", "/work/.mirror")))
    parser.add_argument("--set", dest="set_name", default=FIRST, help="held-out set (default: first)")
    parser.add_argument("--manifest", type=Path, default=None, help="default: the set's MANIFEST.tsv")
    args = parser.parse_args(argv)
    rows = read_manifest(args.manifest or set_dir(args.set_name) / "MANIFEST.tsv")
    missing = materialize(args.dest, args.mirrors, rows)
    print(f"{len(rows) - missing} files under {args.dest} ({missing} missing)", file=sys.stderr)
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
