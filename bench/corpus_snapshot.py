"""Snapshot of every finding trainlint makes on ../shared/corpus, for T4, V100, A100 and H100.

    python bench/corpus_snapshot.py            # compare with bench/corpus_snapshot.jsonl
    python bench/corpus_snapshot.py --write    # record the current findings as the snapshot

A refactoring must leave behaviour unchanged where nothing was wrong: the compare mode prints
every finding that appeared or disappeared (by target, file, position and code) and every
message or fix that changed, and exits 1 if there is any difference.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus"
SNAPSHOT = Path(__file__).resolve().parent / "corpus_snapshot.jsonl"
TARGETS = ("T4", "V100", "A100", "H100")


def findings(gpu: str) -> list[dict]:
    command = [sys.executable, "-m", "linter.cli", "check", str(CORPUS), "--gpu", gpu, "--format", "json",
               "--no-detect"]
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
    if done.returncode not in (0, 1):
        sys.exit(f"corpus_snapshot: trainlint exited {done.returncode} for {gpu}: {done.stderr.strip()}")
    rows = []
    for finding in json.loads(done.stdout):
        fix = finding.get("fix")
        rows.append({
            "gpu": gpu,
            "file": str(Path(finding["file"]).resolve().relative_to(CORPUS.resolve())),
            "line": finding["line"], "column": finding["column"],
            "code": finding["code"], "severity": finding["severity"], "message": finding["message"],
            "fix": None if fix is None else {"applicability": fix.get("applicability"),
                                             "message": fix.get("message"),
                                             "edits": [_relative(edit) for edit in fix.get("edits") or ()]},
        })
    return rows


def _relative(edit: dict) -> dict:
    return {**edit, "file": str(Path(edit["file"]).resolve().relative_to(CORPUS.resolve()))}


def key(row: dict) -> tuple:
    return (row["gpu"], row["file"], row["line"], row["column"], row["code"])


def main(argv: list[str]) -> int:
    if not CORPUS.is_dir():
        sys.exit(f"corpus_snapshot: {CORPUS} is absent")
    current = [row for gpu in TARGETS for row in findings(gpu)]
    if "--write" in argv:
        SNAPSHOT.write_text("".join(json.dumps(row, sort_keys=True) + "\n" for row in current), encoding="utf-8")
        print(f"wrote {len(current)} findings to {SNAPSHOT.relative_to(ROOT)}")
        return 0
    recorded = [json.loads(line) for line in SNAPSHOT.read_text(encoding="utf-8").splitlines()]
    before, after = {key(row): row for row in recorded}, {key(row): row for row in current}
    differences = 0
    for lost in sorted(before.keys() - after.keys()):
        differences += 1
        print(f"- {' '.join(map(str, lost))}: {before[lost]['message']}")
    for gained in sorted(after.keys() - before.keys()):
        differences += 1
        print(f"+ {' '.join(map(str, gained))}: {after[gained]['message']}")
    for same in sorted(before.keys() & after.keys()):
        old, new = before[same], after[same]
        for field in ("severity", "message", "fix"):
            if old[field] != new[field]:
                differences += 1
                print(f"~ {' '.join(map(str, same))} {field}:\n    was {old[field]!r}\n    now {new[field]!r}")
    print(f"{len(recorded)} recorded, {len(current)} now, {differences} differences")
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
