"""Scale rows (issue 19, fault 11): one 10 MB config of each format, and 1,000 files in one call.

    python bench/scale.py            # prints Markdown rows for bench/RESULTS.md

Each input is generated into a scratch folder (nothing from the corpus is copied): a 10 MB YAML
with ~700k keys, a 10 MB DeepSpeed JSON, a 10 MB Unsloth training script (parsed, since it
sniffs as a config), and 1,000 small configs (DeepSpeed JSON and Axolotl YAML, half each). Every
command runs as a child process; the row gives the median wall time and the peak RSS the kernel
reports for it (rusage of the child). Target: a 10 MB config in under 5 s and 500 MB.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIMIT = 10 * 1024 * 1024  # the reader's MAX_FILE_BYTES
RUNS = int(os.environ.get("BENCH_RUNS", "3"))


def big_yaml(path: Path) -> int:
    """An Axolotl config whose `special_tokens`-like mapping holds ~700k keys."""
    lines = ["base_model: m", "micro_batch_size: 2", "datasets:", "  - path: d", "fp16: true", "extra:"]
    size = sum(len(line) + 1 for line in lines)
    index = 0
    while True:
        line = f"  k{index}: {index % 7}"
        if size + len(line) + 1 > LIMIT - 16:
            break
        lines.append(line)
        size += len(line) + 1
        index += 1
    path.write_text("\n".join(lines) + "\n")
    return index


def big_json(path: Path) -> int:
    parts = ['{\n  "train_batch_size": 8,\n  "fp16": {"enabled": true},\n  "zero_optimization": {"stage": 2},\n'
             '  "extra": {\n']
    size = len(parts[0])
    index = 0
    while True:
        part = f'    "k{index}": [{index}, {index % 3}.5, "v"],\n'
        if size + len(part) > LIMIT - 64:
            break
        parts.append(part)
        size += len(part)
        index += 1
    parts.append('    "end": 0\n  }\n}\n')
    path.write_text("".join(parts))
    return index


def big_python(path: Path, limit: int = LIMIT) -> int:
    header = ("from unsloth import FastLanguageModel\nimport torch\n"
              "model, tokenizer = FastLanguageModel.from_pretrained(model_name='m', dtype=torch.float16, "
              "load_in_4bit=True)\n")
    parts = [header]
    size = len(header)
    index = 0
    while True:
        part = f"value_{index} = dict(a={index}, b=[{index}, 'x'], c=call_{index % 10}(value_{max(index - 1, 0)}))\n"
        if size + len(part) > limit - 16:
            break
        parts.append(part)
        size += len(part)
        index += 1
    path.write_text("".join(parts))
    return index


def many_files(folder: Path, count: int = 1000) -> None:
    folder.mkdir()
    for index in range(count):
        if index % 2:
            (folder / f"ds_{index}.json").write_text(
                '{\n  "train_micro_batch_size_per_gpu": %d,\n  "fp16": {"enabled": true},\n'
                '  "zero_optimization": {"stage": %d}\n}\n' % (index % 8 + 1, index % 4))
        else:
            (folder / f"axolotl_{index}.yaml").write_text(
                f"base_model: org/model-{index}\nmicro_batch_size: {index % 8 + 1}\ndatasets:\n  - path: d\n"
                "adapter: lora\nlora_r: 16\nlearning_rate: 0.0002\nfp16: true\n")


def large_jsons(folder: Path, count: int = 100) -> None:
    """DeepSpeed JSONs of ~630 KB each (a large comms_logger block): memory must follow the run
    being linted, not the sum of every file (issue 19 measured 6.2 GB for 100 x 800 KB)."""
    folder.mkdir()
    pad = ", ".join(f'"k{i}": {i}' for i in range(40000))
    for index in range(count):
        (folder / f"ds{index}.json").write_text(
            '{"zero_optimization": {"stage": 2}, "fp16": {"enabled": true}, '
            f'"train_micro_batch_size_per_gpu": 4, "comms_logger": {{"extra": {{{pad}}}}}}}')


def measure(command: list[str], before=None) -> tuple[float, float, int]:
    """Median wall seconds, the largest peak RSS (MiB) and the exit code over RUNS runs."""
    walls, peaks, code = [], [], 0
    for _ in range(RUNS):
        if before is not None:
            before()
        started = time.perf_counter()
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
        _, status, usage = os.wait4(process.pid, 0)
        walls.append(time.perf_counter() - started)
        peaks.append(usage.ru_maxrss / 1024)
        code = os.waitstatus_to_exitcode(status)
    return statistics.median(walls), max(peaks), code


def main() -> int:
    trainlint = [sys.executable, "-m", "linter", "check", "--gpu", "A100"]
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        scratch_path = Path(scratch)
        inputs = []
        yaml_path = scratch_path / "big.yaml"
        inputs.append((f"10 MB YAML ({big_yaml(yaml_path):,} keys)", [str(yaml_path)]))
        json_path = scratch_path / "big_ds.json"
        inputs.append((f"10 MB DeepSpeed JSON ({big_json(json_path):,} keys)", [str(json_path)]))
        inputs.append(("the 10 MB YAML with --fix (one insertion, verified by a re-parse)", [str(yaml_path), "--fix"]))
        python_path = scratch_path / "big_train.py"
        inputs.append((f"10 MB Unsloth script ({big_python(python_path):,} statements): over the 2 MiB Python limit, "
                       "SYN001", [str(python_path)]))
        mid_path = scratch_path / "mid_train.py"
        inputs.append((f"2 MiB Unsloth script ({big_python(mid_path, 2 * 1024 * 1024):,} statements), the largest "
                       "Python read", [str(mid_path)]))
        many_files(scratch_path / "many")
        inputs.append(("1,000 files (500 YAML, 500 JSON), one call", [str(scratch_path / "many")]))
        large_jsons(scratch_path / "large")
        inputs.append(("100 DeepSpeed JSONs of 630 KB, one call", [str(scratch_path / "large")]))
        for name, paths in inputs:
            files = [Path(path) for path in paths if not path.startswith("--")]
            size = sum(p.stat().st_size for path in files for p in ([path] if path.is_file() else path.iterdir()))
            if "--fix" in paths:
                original = files[0].read_bytes()
                wall, peak, code = measure([*trainlint, *paths], before=lambda: files[0].write_bytes(original))
            else:
                wall, peak, code = measure([*trainlint, *paths])
            rows.append(f"| {name} | {size / 1e6:.1f} MB | {wall:.2f} | {peak:.0f} | {code} |")
    print(f"Scale rows ({sys.version.split()[0]}, {os.cpu_count()} CPUs, median of {RUNS} runs; "
          "`python bench/scale.py`):\n")
    print("| input | size | trainlint wall (s) | peak RSS (MiB) | exit |")
    print("|---|---|---|---|---|")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
