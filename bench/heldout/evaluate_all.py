"""Evaluate every held-out set at the current code and print one summary table.

    python bench/heldout/evaluate_all.py [--prefix /tmp/L-] [--sets first,second,...]
                                         [--materialize] [--save FILE] [--compare FILE]

For each set (the first in bench/heldout/, the others in bench/heldout/sets/NAME/), the tree
PREFIX<set> (default /tmp/L-<set>) is materialized from the git mirrors when it is missing (or
always, with --materialize; bench/heldout/materialize.py: `fetch github:owner/name` every
repository of the manifests first), then `evaluate.py TREE --set NAME` and `judge.py TREE --set
NAME` (without --write) run on it. Their full outputs are kept beside the tree
(PREFIX<set>.evaluate.txt, PREFIX<set>.judge.txt); the table gives per set: findings, judged,
false (evaluate.py, against the recorded verdicts), unjudged, recorded verdicts no longer found
(false = fixed, true = lost), format misclaims, findings on explicitly passed non-config files,
SCH001 renames by closeness, whether the issue-15 bar holds, and judge.py's own count of false
and unjudged (its rules, not the recorded verdicts).

--save FILE writes the table as TSV; --compare FILE prints, per set, every column that differs
from a table saved earlier (bench/heldout/SUMMARY.tsv holds the figures recorded at main).
Exit status 0 when every set meets the bar and judge.py finds nothing unjudged, else 1.
"""

from __future__ import annotations

import argparse
import csv
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from materialize import FIRST, set_dir  # noqa: E402

COLUMNS = ("set", "configs", "repos", "findings", "judged", "false", "unjudged", "fixed", "lost",
           "misclaims", "explicit", "closeness", "bar", "judge_false", "judge_unjudged", "missing")
PATTERNS = {
    "configs": (r"held-out set: (\d+) configs", "evaluate"),
    "repos": (r"configs from (\d+) repositories", "evaluate"),
    "findings": (r"^findings: (\d+) distinct", "evaluate"),
    "judged": (r"^judged: (\d+) ", "evaluate"),
    "false": (r"false positives: (\d+) =", "evaluate"),
    "unjudged": (r"^unjudged \(new since verdicts.tsv\): (\d+)", "evaluate"),
    "fixed": (r"no longer found: (\d+) false", "evaluate"),
    "lost": (r"false \(fixed\), (\d+) true", "evaluate"),
    "misclaims": (r"^format misclaims: (\d+)", "evaluate"),
    "explicit": (r"passed explicitly \(pre-commit\): (\d+)", "evaluate"),
    "closeness": (r"by closeness: (\d+)", "evaluate"),
    "bar": (r"^issue 15 bar (met|NOT met)", "evaluate"),
    "judge_false": (r"\): (\d+) false \(", "judge"),
    "judge_unjudged": (r"%\), (\d+) unjudged", "judge"),
}


ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth",
            "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth")


def set_names() -> list[str]:
    """The first set and every bench/heldout/sets/NAME/ with a manifest, in the order they were built."""
    names = [FIRST] + [path.parent.name for path in (HERE / "sets").glob("*/MANIFEST.tsv")]
    return sorted(names, key=lambda name: (ORDINALS.index(name) if name in ORDINALS else len(ORDINALS), name))


def run(script: str, tree: Path, name: str, log: Path) -> str:
    done = subprocess.run([sys.executable, str(HERE / script), str(tree), "--set", name],
                          capture_output=True, text=True)
    text = done.stdout + done.stderr
    log.write_text(text, encoding="utf-8")
    return text


def evaluate_set(name: str, prefix: str, rematerialize: bool) -> dict[str, str]:
    tree = Path(f"{prefix}{name}")
    row = {"set": name, "missing": "0"}
    if rematerialize or not tree.exists():
        done = subprocess.run([sys.executable, str(HERE / "materialize.py"), str(tree), "--set", name],
                              capture_output=True, text=True)
        found = re.search(r"\((\d+) missing\)", done.stderr)
        row["missing"] = found.group(1) if found else "?"
        if done.returncode:
            print(f"{name}: {done.stderr.strip().splitlines()[-1] if done.stderr.strip() else 'materialize failed'}",
                  file=sys.stderr)
    texts = {"evaluate": run("evaluate.py", tree, name, Path(f"{tree}.evaluate.txt")),
             "judge": run("judge.py", tree, name, Path(f"{tree}.judge.txt"))}
    for column, (pattern, source) in PATTERNS.items():
        found = re.search(pattern, texts[source], re.MULTILINE)
        row[column] = found.group(1) if found else "?"
    return row


def print_table(rows: list[dict[str, str]]) -> None:
    total = {"set": "total"}
    for column in COLUMNS[1:]:
        values = [row.get(column, "?") for row in rows]
        if column == "bar":
            total[column] = "met" if all(v == "met" for v in values) else "NOT met"
        else:
            total[column] = str(sum(int(v) for v in values if v.isdigit()))
    print("| " + " | ".join(COLUMNS) + " |")
    print("|" + "---|" * len(COLUMNS))
    for row in [*rows, total]:
        print("| " + " | ".join(row.get(column, "?") for column in COLUMNS) + " |")


def compare(rows: list[dict[str, str]], path: Path) -> None:
    with open(path, encoding="utf-8", newline="") as handle:
        before = {row["set"]: row for row in csv.DictReader(handle, delimiter="\t")}
    changes = []
    for row in rows:
        old = before.get(row["set"])
        if old is None:
            changes.append(f"{row['set']}: not in {path.name}")
            continue
        diffs = [f"{c} {old.get(c, '?')} -> {row[c]}" for c in COLUMNS[1:] if c in old and old[c] != row[c]]
        if diffs:
            changes.append(f"{row['set']}: " + ", ".join(diffs))
    print(f"\ndifferences from {path}: {len(changes)} set(s)")
    for line in changes:
        print("    " + line)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prefix", default="/tmp/L-", help="tree of set NAME is PREFIX + NAME (default /tmp/L-)")
    parser.add_argument("--sets", default=None, help="comma-separated set names (default: all)")
    parser.add_argument("--materialize", action="store_true", help="rebuild every tree, even one that exists")
    parser.add_argument("--save", type=Path, default=None, help="write the table as TSV")
    parser.add_argument("--compare", type=Path, default=None, help="a TSV saved earlier (--save)")
    args = parser.parse_args(argv)
    names = set_names()
    if args.sets:
        wanted = args.sets.split(",")
        unknown = [name for name in wanted if name not in names]
        if unknown:
            print(f"unknown set(s): {', '.join(unknown)} (known: {', '.join(names)})", file=sys.stderr)
            return 2
        names = wanted
    rows = []
    for name in names:
        if not (set_dir(name) / "MANIFEST.tsv").exists():
            continue
        print(f"{name}...", file=sys.stderr, flush=True)
        rows.append(evaluate_set(name, args.prefix, args.materialize))
    print_table(rows)
    if args.save:
        with open(args.save, "w", encoding="utf-8", newline="") as handle:
            writer = csv.DictWriter(handle, COLUMNS, delimiter="\t", lineterminator="\n")
            writer.writeheader()
            writer.writerows(rows)
    if args.compare:
        compare(rows, args.compare)
    ok = all(row["bar"] == "met" and row["judge_unjudged"] == "0" for row in rows)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
