"""Time trainlint against yamllint and check-jsonschema on the same files, in paired runs.

    pip install '.[test]' yamllint check-jsonschema
    python bench/run.py > bench/RESULTS.md

Scenarios (SPEC §11, issue 8): (a) one config, cold process, --gpu given; (b) every YAML/JSON
file of ../shared/corpus in one call; (c) the corpus replicated 10x. Each pair of commands runs
alternately (A B A B ...) after a warm-up; the report gives median wall times, the median of the
per-pair ratios, and the peak RSS of each command (from the kernel's rusage of the child).
"""

from __future__ import annotations

import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus"
RUNS = int(os.environ.get("BENCH_RUNS", "7"))
BIN = Path(sys.executable).parent


def tool(name: str) -> str:
    found = shutil.which(name, path=str(BIN)) or shutil.which(name)
    if found is None:
        sys.exit(f"bench: `{name}` is not installed (pip install yamllint check-jsonschema)")
    return found


def timed(command: list[str]) -> tuple[float, float]:
    """Wall seconds and peak RSS (MiB) of one run of `command`."""
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, _, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    return wall, usage.ru_maxrss / 1024


def paired(a: list[str], b: list[str]) -> dict:
    timed(a), timed(b)  # warm-up: file cache, .pyc
    a_runs, b_runs, ratios = [], [], []
    for _ in range(RUNS):
        a_run, b_run = timed(a), timed(b)
        a_runs.append(a_run)
        b_runs.append(b_run)
        ratios.append(a_run[0] / b_run[0])
    return {
        "a_wall": statistics.median(w for w, _ in a_runs), "b_wall": statistics.median(w for w, _ in b_runs),
        "ratio": statistics.median(ratios), "ratio_max": max(ratios),
        "a_rss": max(r for _, r in a_runs), "b_rss": max(r for _, r in b_runs),
    }


def corpus_files() -> tuple[list[str], list[str]]:
    files = sorted(p for p in CORPUS.rglob("*") if p.suffix in (".yaml", ".yml", ".json"))
    return [str(p) for p in files if p.suffix != ".json"], [str(p) for p in files]


def machine() -> str:
    memory = ""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                memory = f", {int(line.split()[1]) / 2**20:.0f} GiB memory"
    except OSError:
        pass
    return f"{platform.machine()}, {os.cpu_count()} cores{memory}, Python {platform.python_version()}"


def compile_bytecode() -> None:
    """Compile trainlint's modules as `pip install` does for every package: an editable install
    under PYTHONDONTWRITEBYTECODE would otherwise recompile every module on every run, while the
    tools it is compared with load cached bytecode."""
    import linter
    import rules

    environment = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    for package in (linter, rules):
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(Path(package.__file__).parent)],
                       check=True, env=environment, stdout=subprocess.DEVNULL)


def main() -> None:
    if not CORPUS.is_dir():
        sys.exit(f"bench: the corpus is not at {CORPUS}")
    compile_bytecode()
    trainlint, yamllint, check_jsonschema = tool("trainlint"), tool("yamllint"), tool("check-jsonschema")
    yaml_files, all_files = corpus_files()
    one = str(ROOT / "examples" / "ludwig_mistral_qlora.yaml")
    with tempfile.TemporaryDirectory() as scratch:
        schema = Path(scratch) / "empty.schema.json"
        schema.write_text("{}")
        replicated = Path(scratch) / "x10"
        for copy in range(10):
            shutil.copytree(CORPUS, replicated / str(copy))
        rows = [
            ("(a) one config, cold, --gpu A100", "yamllint, same file",
             paired([trainlint, "check", one, "--gpu", "A100", "-q", "--exit-zero"], [yamllint, one])),
            (f"(b) corpus, {len(all_files)} YAML+JSON files, one call", f"yamllint, the {len(yaml_files)} YAMLs",
             paired([trainlint, "check", *all_files, "--gpu", "A100", "-q", "--exit-zero"], [yamllint, *yaml_files])),
            (f"(b') corpus, {len(all_files)} files", "check-jsonschema, empty schema, same files",
             paired([trainlint, "check", *all_files, "--gpu", "A100", "-q", "--exit-zero"],
                    [check_jsonschema, "--schemafile", str(schema), *all_files])),
            ("(c) corpus x10, one call", "trainlint on the corpus (b)",
             paired([trainlint, "check", str(replicated), "--gpu", "A100", "-q", "--exit-zero"],
                    [trainlint, "check", str(CORPUS), "--gpu", "A100", "-q", "--exit-zero"])),
        ]
    print("# trainlint benchmarks\n")
    print("Reproduce: `pip install '.[test]' yamllint check-jsonschema && python bench/run.py > bench/RESULTS.md`\n")
    print(f"Machine: {machine()}. {RUNS} paired runs per row after one warm-up; medians.\n")
    print("| scenario | compared with | trainlint wall (s) | other wall (s) | ratio (median, max) | "
          "trainlint peak RSS (MiB) | other peak RSS (MiB) |")
    print("|---|---|---|---|---|---|---|")
    for scenario, other, r in rows:
        print(f"| {scenario} | {other} | {r['a_wall']:.3f} | {r['b_wall']:.3f} | {r['ratio']:.2f}x, {r['ratio_max']:.2f}x"
              f" | {r['a_rss']:.0f} | {r['b_rss']:.0f} |")
    print("\nTargets (SPEC §11, issue 8): (a) and (b) ratio <= 1.0; (c) <= 10.5x (b); peak RSS < 150 MiB on (b).")


if __name__ == "__main__":
    main()
