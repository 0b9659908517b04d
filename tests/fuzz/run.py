"""Long mutation-fuzz harness over ../shared/corpus (not run by the test suite; a bench script).

    python -m tests.fuzz.run --count 3000 --seed 1

Each case mutates one corpus file, writes it to a scratch folder, and runs `trainlint check`
and `trainlint check --fix --unsafe-fixes` in-process. A crash (exit code other than 0/1, or
"internal error" on stderr) or a hang (a run past --timeout seconds, stopped by SIGALRM) is saved
under tests/fuzz/crashers/ for a regression fixture. The summary line gives the figures: cases,
internal errors, hangs, wall time, and the slowest case.
"""

from __future__ import annotations

import argparse
import io
import random
import signal
import sys
import tempfile
import time
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

from linter import settings
from linter.cli import main
from tests.fuzz.mutations import hostile_values, mutate

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT.parent / "shared" / "corpus"


class Hang(Exception):
    pass


def _alarm(signum, frame):
    raise Hang()


def run_case(path: Path, *args: str, timeout: int = 0) -> tuple[int, str]:
    """Exit code and stderr of one in-process run; exit code None for a run past `timeout` s."""
    settings.for_directory.cache_clear()
    out, err = io.StringIO(), io.StringIO()
    previous = signal.signal(signal.SIGALRM, _alarm) if timeout else None
    try:
        if timeout:
            signal.alarm(timeout)
        with redirect_stdout(out), redirect_stderr(err):
            code = main(["check", str(path), "--gpu", "A100", *args])
    except Hang:
        return None, err.getvalue()
    finally:
        if timeout:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, previous)
    return code, err.getvalue()


STATS = {"cases": 0, "runs": 0, "internal_errors": 0, "hangs": 0, "slowest_s": 0.0, "slowest": ""}


def fuzz(count: int, seed: int, crashers: Path | None, timeout: int = 0, hostile: bool = False) -> list[str]:
    rng = random.Random(seed)
    sources = sorted(p for p in CORPUS.rglob("*") if p.suffix in (".yaml", ".yml", ".json"))
    failures = []
    with tempfile.TemporaryDirectory() as scratch:
        for case in range(count):
            source = rng.choice(sources)
            if hostile:
                name, data = "hostile_values", hostile_values(source.read_bytes(), rng)
            else:
                name, data = mutate(source.read_bytes(), rng)
            target = Path(scratch) / f"case{case}{source.suffix}"
            target.write_bytes(data)
            STATS["cases"] += 1
            for args in ((), ("--fix", "--unsafe-fixes")):
                started = time.perf_counter()
                code, err = run_case(target, *args, timeout=timeout)
                elapsed = time.perf_counter() - started
                STATS["runs"] += 1
                if elapsed > STATS["slowest_s"]:
                    STATS["slowest_s"], STATS["slowest"] = elapsed, f"{source.name} {name}"
                if code is None:
                    STATS["hangs"] += 1
                    failures.append(f"{source.name} {name} {args}: no answer within {timeout} s")
                elif code not in (0, 1) or "internal error" in err or "Traceback" in err:
                    STATS["internal_errors"] += 1
                    failures.append(f"{source.name} {name} {args}: exit {code}: {err.strip()[:300]}")
                else:
                    continue
                if crashers is not None:
                    crashers.mkdir(parents=True, exist_ok=True)
                    (crashers / f"{case}-{name}{source.suffix}").write_bytes(data)
                break
    return failures


def main_cli() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--hostile-values", action="store_true",
                        help="only type-confusion mutations: one value replaced by one of another type")
    parser.add_argument("--timeout", type=int, default=30, help="seconds a run may take before it counts as a hang")
    args = parser.parse_args()
    if not CORPUS.is_dir():
        sys.exit(f"the corpus is not at {CORPUS}")
    started = time.perf_counter()
    failures = fuzz(args.count, args.seed, ROOT / "tests" / "fuzz" / "crashers", args.timeout, args.hostile_values)
    wall = time.perf_counter() - started
    kind = "type-confusion mutations" if args.hostile_values else "mutations"
    print(f"{STATS['cases']} {kind} (seed {args.seed}), {STATS['runs']} runs: {STATS['internal_errors']} internal "
          f"errors, {STATS['hangs']} hangs (>{args.timeout} s); {wall:.0f} s wall, slowest run "
          f"{STATS['slowest_s']:.2f} s ({STATS['slowest']})")
    for failure in failures:
        print(failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main_cli())
