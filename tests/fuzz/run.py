"""Long mutation-fuzz harness over ../shared/corpus (not run by the test suite).

    python -m tests.fuzz.run --count 1000 --seed 1

Each case mutates one corpus file, writes it to a scratch folder, and runs `trainlint check`
and `trainlint check --fix --unsafe-fixes` in-process. A crash (exit code other than 0/1, or
"internal error" on stderr) is saved under tests/fuzz/crashers/ for a regression fixture.
"""

from __future__ import annotations

import argparse
import io
import random
import sys
import tempfile
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

from linter import settings
from linter.cli import main
from tests.fuzz.mutations import mutate

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT.parent / "shared" / "corpus"


def run_case(path: Path, *args: str) -> tuple[int, str]:
    settings.for_directory.cache_clear()
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(["check", str(path), "--gpu", "A100", *args])
    return code, err.getvalue()


def fuzz(count: int, seed: int, crashers: Path | None) -> list[str]:
    rng = random.Random(seed)
    sources = sorted(p for p in CORPUS.rglob("*") if p.suffix in (".yaml", ".yml", ".json"))
    failures = []
    with tempfile.TemporaryDirectory() as scratch:
        for case in range(count):
            source = rng.choice(sources)
            name, data = mutate(source.read_bytes(), rng)
            target = Path(scratch) / f"case{case}{source.suffix}"
            target.write_bytes(data)
            for args in ((), ("--fix", "--unsafe-fixes")):
                code, err = run_case(target, *args)
                if code not in (0, 1) or "internal error" in err or "Traceback" in err:
                    failures.append(f"{source.name} {name} {args}: exit {code}: {err.strip()[:300]}")
                    if crashers is not None:
                        crashers.mkdir(parents=True, exist_ok=True)
                        (crashers / f"{case}-{name}{source.suffix}").write_bytes(data)
                    break
    return failures


def main_cli() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if not CORPUS.is_dir():
        sys.exit(f"the corpus is not at {CORPUS}")
    failures = fuzz(args.count, args.seed, ROOT / "tests" / "fuzz" / "crashers")
    print(f"{args.count} mutations (seed {args.seed}), {len(failures)} crashes")
    for failure in failures:
        print(failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main_cli())
