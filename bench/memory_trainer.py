"""Pre-registered memory validation through TRL's own SFT script (issue 17, item 7).

bench/memory_validation.py measures a hand-written training loop on models of at most 3B
parameters. This one measures what a user runs: each config in bench/memory_trainer/*.yaml is a
TRL YAML (`trl sft --config X`), and on the GPU it is parsed by TRL's own parser and trained by
TRL's own script (trl/scripts/sft.py `main`: SFTTrainer, its PEFT and quantization helpers),
on a model of the named checkpoint's shape with random weights (no download) and random tokens.
The configs cover what issue 17 asks to validate: 7-8B models at the 24/48/80 GB limits, 8-bit
loading, variable-length (unpacked) batches and 32k context.

Three steps; the predictions are committed before anything is measured, so the rows are held out
from whatever change is made to the estimator afterwards:

  python bench/memory_trainer.py predict
      Anywhere: runs `trainlint estimate` on every config and writes
      bench/memory_trainer/predictions.jsonl (the commit and date it was made at). Commit it.

  python bench/memory_trainer.py measure OUT.jsonl [--only ID,...] [--workdir DIR]
      On an NVIDIA GPU with torch, transformers, trl, peft and bitsandbytes: one fresh process per
      config (its own CUDA context and allocator), `max_steps` optimizer steps, and one JSON line
      per config with torch.cuda.max_memory_reserved() or the out-of-memory error.
      `--tiny` runs the same path on the CPU with a two-layer model and no quantization: it checks
      that the harness works with the installed TRL, and measures nothing.

  python bench/memory_trainer.py report OUT.jsonl
      Anywhere: the measured peaks against the pre-registered predictions (and against today's
      estimator), out-of-memory rows apart.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CONFIGS = HERE / "memory_trainer"
PREDICTIONS = CONFIGS / "predictions.jsonl"
TARGET = "H100"  # the GPU the device tool lends (H100 80GB); predictions are per GPU, not per target
STEPS = 4
GIB = 1024 ** 3

# Checkpoint shapes (the config.json fields that set memory). Llama-3.1-8B: meta-llama/Llama-3.1-8B
# config.json; Qwen2.5-7B: Qwen/Qwen2.5-7B config.json. Both untie their embeddings.
SHAPES = {
    "meta-llama/Llama-3.1-8B": {"model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336,
                                "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
                                "vocab_size": 128256, "tie_word_embeddings": False,
                                "max_position_embeddings": 131072, "rope_theta": 500000.0},
    "Qwen/Qwen2.5-7B": {"model_type": "qwen2", "hidden_size": 3584, "intermediate_size": 18944,
                        "num_hidden_layers": 28, "num_attention_heads": 28, "num_key_value_heads": 4,
                        "vocab_size": 152064, "tie_word_embeddings": False,
                        "max_position_embeddings": 131072, "rope_theta": 1000000.0},
}
TINY = {"hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4,
        "num_key_value_heads": 2, "vocab_size": 512}
# Variable-length rows: sample lengths uniform in [max_length / 8, max_length] (seeded).
VARIABLE = "varlen"


def configs(only: list[str] | None = None) -> list[Path]:
    found = sorted(CONFIGS.glob("*.yaml"))
    return [path for path in found if not only or path.stem in only]


def read_config(path: Path) -> dict:
    """As TRL reads it (TrlParser: PyYAML's safe_load)."""
    import yaml

    return dict(yaml.safe_load(path.read_text("utf-8")))


# ---- predict (anywhere) ------------------------------------------------------------------------

def estimate(path: Path) -> dict:
    done = subprocess.run([sys.executable, "-m", "linter", "estimate", str(path), "--gpu", TARGET, "--no-detect",
                           "--world-size", "1", "--format", "json"],
                          capture_output=True, text=True, cwd=ROOT, check=True)
    data = json.loads(done.stdout)
    data = data[0] if isinstance(data, list) else data
    context = sum(part["gib"] for part in data["components"] if part["component"] == "CUDA context")
    return {"total_gib": data["total_gib"], "model_states_gib": data["model_states_gib"],
            # max_memory_reserved excludes the CUDA context: compare the rest.
            "comparable_gib": round(data["total_gib"] - context, 3),
            "components": data["components"], "assumptions": data["assumptions"]}


def predict() -> None:
    commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=ROOT).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "linter", "rules"], capture_output=True, text=True,
                           cwd=ROOT).stdout.strip()
    stamp = {"made": datetime.date.today().isoformat(), "commit": commit, "estimator_modified": bool(dirty)}
    with PREDICTIONS.open("w") as sink:
        sink.write(json.dumps({"predictions": stamp}) + "\n")
        for path in configs():
            sink.write(json.dumps({"id": path.stem, **estimate(path)}) + "\n")
    print(f"wrote {PREDICTIONS.relative_to(ROOT)} ({len(configs())} configs, estimator at {commit[:10]})")


# ---- measure (GPU) -----------------------------------------------------------------------------

def measure(out: Path, only: list[str] | None, workdir: Path, tiny: bool) -> None:
    for path in configs(only):
        done = subprocess.run([sys.executable, __file__, "_one", str(path), str(workdir)] + (["--tiny"] if tiny else []),
                              capture_output=True, text=True)
        lines = [line for line in done.stdout.splitlines() if line.startswith("{\"id\"")]
        row = json.loads(lines[-1]) if lines else {"id": path.stem, "failed": done.stderr[-2000:]}
        with out.open("a") as sink:
            sink.write(json.dumps(row) + "\n")
        print(json.dumps(row), flush=True)


def _model_dir(name: str, workdir: Path, tiny: bool) -> Path:
    """A checkpoint of the named shape with random weights, and a tokenizer, saved once."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    shape = dict(SHAPES[name], **(TINY if tiny else {}))
    saved = workdir / (name.replace("/", "--") + ("-tiny" if tiny else ""))
    if (saved / "config.json").exists():
        return saved
    config = AutoConfig.for_model(**shape)
    device = "cpu" if tiny else "cuda"
    with torch.device(device):
        model = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16)
    model.save_pretrained(saved)
    del model
    _tokenizer(shape["vocab_size"]).save_pretrained(saved)
    return saved


def _tokenizer(vocab_size: int):
    """A word-level tokenizer with the special tokens SFTTrainer looks for; the data is
    pre-tokenized, so its vocabulary is never used to encode text."""
    from tokenizers import Tokenizer, models
    from transformers import PreTrainedTokenizerFast

    vocab = {"<pad>": 0, "<eos>": 1, "<unk>": 2, **{f"t{i}": i for i in range(3, min(vocab_size, 1000))}}
    return PreTrainedTokenizerFast(tokenizer_object=Tokenizer(models.WordLevel(vocab, unk_token="<unk>")),
                                   pad_token="<pad>", eos_token="<eos>", unk_token="<unk>")


def _dataset(config: dict, path: Path, vocab_size: int, folder: Path, rows: int) -> None:
    import random

    generator = random.Random(0)
    longest = int(config["max_length"])
    variable = VARIABLE in path.stem
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "train.jsonl").open("w") as sink:
        for _ in range(rows):
            length = generator.randint(max(1, longest // 8), longest) if variable else longest
            sink.write(json.dumps({"input_ids": [generator.randrange(3, vocab_size) for _ in range(length)]}) + "\n")


def _one(path: Path, workdir: Path, tiny: bool) -> None:
    """Child process: TRL's parser reads the config, TRL's SFT script trains it."""
    import torch
    from trl.scripts import sft

    config = read_config(path)
    name = config["model_name_or_path"]
    workdir.mkdir(parents=True, exist_ok=True)
    model = _model_dir(name, workdir, tiny)
    vocab = (TINY if tiny else SHAPES[name])["vocab_size"]
    micro = int(config.get("per_device_train_batch_size", 8))
    data = Path(tempfile.mkdtemp(dir=workdir)) / "data"
    _dataset(config, path, vocab, data, rows=micro * STEPS)
    overrides = ["--model_name_or_path", str(model), "--dataset_name", str(data),
                 "--output_dir", str(data.parent / "out"), "--max_steps", str(STEPS), "--report_to", "none",
                 "--save_strategy", "no", "--logging_steps", "1", "--dataset_text_field", "input_ids"]
    if tiny:
        overrides += ["--use_cpu", "true", "--bf16", "false", "--load_in_4bit", "false", "--load_in_8bit", "false",
                      "--optim", "adamw_torch", "--dtype", "float32"]
    script, training, model_args, dataset_args = sft.make_parser().parse_args_and_config(
        args=["--config", str(path), *overrides])
    row = {"id": path.stem, "tiny": tiny, "trl": _version("trl"), "transformers": _version("transformers"),
           "peft": _version("peft"), "bitsandbytes": _version("bitsandbytes"), "torch": torch.__version__}
    if torch.cuda.is_available() and not tiny:
        row["gpu"] = torch.cuda.get_device_name()
        row["capacity"] = torch.cuda.get_device_properties(0).total_memory
    try:
        sft.main(script, training, model_args, dataset_args)
        row["oom"] = False
    except torch.cuda.OutOfMemoryError as error:
        row["oom"], row["error"] = True, str(error).splitlines()[0][:300]
    if torch.cuda.is_available() and not tiny:
        row["reserved"] = torch.cuda.max_memory_reserved()
        row["allocated"] = torch.cuda.max_memory_allocated()
    print(json.dumps(row), flush=True)


def _version(name: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return None


# ---- report (anywhere) -------------------------------------------------------------------------

def report(rows_file: Path) -> None:
    lines = [json.loads(line) for line in PREDICTIONS.read_text().splitlines()]
    stamp, predicted = lines[0]["predictions"], {row["id"]: row for row in lines[1:]}
    rows = [json.loads(line) for line in rows_file.read_text().splitlines() if line.strip()]
    print(f"Predictions made {stamp['made']} at {stamp['commit'][:10]}; measured rows: {len(rows)}.\n")
    print("| config | measured GiB | predicted GiB | error % | today's estimate GiB |")
    print("| --- | --- | --- | --- | --- |")
    errors, ooms = [], []
    for row in rows:
        if row.get("tiny") or "reserved" not in row:
            continue
        before, now = predicted.get(row["id"]), estimate(CONFIGS / f"{row['id']}.yaml")["comparable_gib"]
        if row.get("oom"):
            ooms.append((row, before, now))
            continue
        measured = row["reserved"] / GIB
        error = (before["comparable_gib"] - measured) / measured * 100 if before else None
        if error is not None:
            errors.append(abs(error))
        print(f"| {row['id']} | {measured:.2f} | {before['comparable_gib'] if before else '—'} | "
              f"{'—' if error is None else f'{error:+.1f}'} | {now:.2f} |")
    if ooms:
        print("\nOut of memory (no peak to compare; does the prediction exceed the capacity?):\n")
        print("| config | capacity GiB | predicted GiB | predicted above capacity |")
        print("| --- | --- | --- | --- |")
        for row, before, _ in ooms:
            capacity = row.get("capacity", 0) / GIB
            value = before["comparable_gib"] if before else None
            print(f"| {row['id']} | {capacity:.1f} | {value if value is not None else '—'} | "
                  f"{'—' if value is None else 'yes' if value > capacity else 'no'} |")
    if errors:
        print(f"\nMeasured rows: {len(errors)}; mean absolute error {sum(errors) / len(errors):.1f} %, "
              f"largest {max(errors):.1f} %.")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("predict")
    run = sub.add_parser("measure")
    run.add_argument("out", type=Path)
    run.add_argument("--only", default="")
    run.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "trainlint-memory-trainer")
    run.add_argument("--tiny", action="store_true")
    one = sub.add_parser("_one")
    one.add_argument("config", type=Path)
    one.add_argument("workdir", type=Path)
    one.add_argument("--tiny", action="store_true")
    show = sub.add_parser("report")
    show.add_argument("rows", type=Path)
    args = parser.parse_args(argv)
    if args.command == "predict":
        predict()
    elif args.command == "measure":
        measure(args.out, [name for name in args.only.split(",") if name] or None, args.workdir, args.tiny)
    elif args.command == "_one":
        _one(args.config, args.workdir, args.tiny)
    else:
        report(args.rows)


if __name__ == "__main__":
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    main()
