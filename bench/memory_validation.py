"""Check `trainlint estimate` against measured peak GPU memory (issue #5).

Two steps, because only the first needs a GPU:

  python bench/memory_validation.py measure OUT.jsonl [--shapes 1b,3b]
      On a machine with an NVIDIA GPU, torch, transformers, peft and bitsandbytes: builds each
      model of the matrix from its config with random weights (no download), runs three optimizer
      steps on random tokens the way Hugging Face Trainer does for that setup, and writes one JSON
      line per setup with torch.cuda.max_memory_reserved().

  python bench/memory_validation.py report OUT.jsonl > bench/memory_validation.md
      Anywhere: writes the Axolotl config each setup corresponds to, runs trainlint's estimator
      on it, and prints the table (setup, measured, estimated, error %).

What each setup does on the GPU (what HF Trainer / Axolotl / TRL do for such a config):
  lora   weights in the 16-bit dtype, LoRA r=16 alpha=32 dropout 0.05 on all seven linear
         modules (PEFT upcasts adapter weights to fp32), autocast, AdamW as TrainingArguments'
         default optimizer, GradScaler for fp16.
  qlora  4-bit NF4 with double quantization and the 16-bit compute dtype (bitsandbytes),
         prepare_model_for_kbit_training (non-quantized weights to fp32), the same LoRA,
         paged 8-bit AdamW.
  full   bf16: weights in bf16 and AdamW over all of them (states in bf16, as torch keeps them in
         the parameter's dtype). fp16: weights in fp32 with fp16 autocast and GradScaler, the one
         way HF Trainer trains a full model in fp16 (fp16 weights fail in GradScaler.unscale_).
The estimate is compared with max_memory_reserved, which excludes the CUDA context; the
estimator's "CUDA context" line is therefore left out of the compared figure.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from pathlib import Path

# Llama-3.2 shapes (config.json of meta-llama/Llama-3.2-1B and -3B; both tie embeddings).
SHAPES = {
    "1b": {"name": "meta-llama/Llama-3.2-1B", "hidden_size": 2048, "intermediate_size": 8192,
           "num_hidden_layers": 16, "num_attention_heads": 32, "num_key_value_heads": 8,
           "vocab_size": 128256, "tie_word_embeddings": True},
    "3b": {"name": "meta-llama/Llama-3.2-3B", "hidden_size": 3072, "intermediate_size": 8192,
           "num_hidden_layers": 28, "num_attention_heads": 24, "num_key_value_heads": 8,
           "vocab_size": 128256, "tie_word_embeddings": True},
    # Held out: shapes and sequence lengths the estimator's coefficients were not fitted on.
    "tinyllama": {"name": "TinyLlama/TinyLlama-1.1B-Chat-v1.0", "hidden_size": 2048, "intermediate_size": 5632,
                  "num_hidden_layers": 22, "num_attention_heads": 32, "num_key_value_heads": 4,
                  "vocab_size": 32000, "tie_word_embeddings": False},
    "qwen1.5b": {"name": "Qwen/Qwen2.5-1.5B", "model_type": "qwen2", "hidden_size": 1536,
                 "intermediate_size": 8960, "num_hidden_layers": 28, "num_attention_heads": 12,
                 "num_key_value_heads": 2, "vocab_size": 151936, "tie_word_embeddings": True},
}
# Eager attention stores the score matrix SDPA never keeps (the estimator's 5 bytes per score
# were not fitted on any row: these rows are held out too).
SHAPES["1b-eager"] = dict(SHAPES["1b"], attention="eager")
HELD_OUT = ("tinyllama", "qwen1.5b", "1b-eager")
# Rows outside ±20 %, each with what the measurement shows about why. The estimate is not tuned to
# them: they are reported as they are.
KNOWN_MISSES = {
    ("1b-eager", "lora", 4096, True): "allocator fragmentation: reserved is 1.60 x allocated (1.01-1.37 in "
                                      "every other row), while the estimate less its 10 % allocator share "
                                      "(21.2 GiB) is 9 % above the allocated peak (19.4 GiB)",
}
METHODS = ("lora", "qlora", "full")
PRECISIONS = ("bf16", "fp16")
MICRO_BATCHES = (1, 4)
SEQUENCE_LENGTH = 2048
LORA_TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
STEPS = 3


def setups(shapes):
    for shape in shapes:
        if shape in HELD_OUT:
            for method in METHODS:
                for sequence in (1024, 4096):
                    for checkpointing in (True, False):
                        yield {"shape": shape, "method": method, "precision": "bf16", "micro": 2,
                               "checkpointing": checkpointing, "sequence": sequence}
            continue
        for method in METHODS:
            for precision in PRECISIONS:
                for micro in MICRO_BATCHES:
                    for checkpointing in (True, False):
                        yield {"shape": shape, "method": method, "precision": precision,
                               "micro": micro, "checkpointing": checkpointing,
                               "sequence": SEQUENCE_LENGTH}


# ---- measure (GPU) ---------------------------------------------------------------------------

def measure(out: Path, shapes: list[str], workdir: Path) -> None:
    import torch
    import transformers
    from transformers import AutoConfig, AutoModelForCausalLM, BitsAndBytesConfig, TrainingArguments

    default_optim = str(TrainingArguments(output_dir=str(workdir / "args")).optim)
    fused = "fused" in default_optim
    torch.cuda.init()
    torch.zeros(1, device="cuda")
    context = _context_bytes(torch)
    with out.open("a") as sink:
        sink.write(json.dumps({"environment": {
            "gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
            "transformers": transformers.__version__, "peft": _version("peft"),
            "bitsandbytes": _version("bitsandbytes"), "default_optim": default_optim,
            "cuda_context_bytes": context}}) + "\n")
    for shape in shapes:
        fields = {key: value for key, value in SHAPES[shape].items() if key not in ("name", "model_type", "attention")}
        attention = SHAPES[shape].get("attention", "sdpa")
        config = AutoConfig.for_model(SHAPES[shape].get("model_type", "llama"), **fields,
                                      max_position_embeddings=8192, attn_implementation=attention)
        saved = workdir / shape
        if not (saved / "config.json").exists():
            with torch.device("cuda"):
                model = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16)
            model.save_pretrained(saved)
            del model
            _clean(torch)
        for setup in setups([shape]):
            started = time.time()
            row = dict(setup)
            try:
                row.update(_run(torch, setup, config, saved, fused, AutoModelForCausalLM, BitsAndBytesConfig))
            except torch.cuda.OutOfMemoryError:
                row.update(oom=True, reserved=torch.cuda.max_memory_reserved(),
                           capacity=torch.cuda.get_device_properties(0).total_memory)
            row["seconds"] = round(time.time() - started, 1)
            _clean(torch)
            with out.open("a") as sink:
                sink.write(json.dumps(row) + "\n")
            print(json.dumps(row), flush=True)


def _run(torch, setup, config, saved, fused, AutoModelForCausalLM, BitsAndBytesConfig) -> dict:
    from peft import LoraConfig, get_peft_model, prepare_model_for_kbit_training

    half = torch.bfloat16 if setup["precision"] == "bf16" else torch.float16
    method, checkpointing = setup["method"], setup["checkpointing"]
    torch.cuda.reset_peak_memory_stats()
    if method == "qlora":
        quantization = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4",
                                          bnb_4bit_use_double_quant=True, bnb_4bit_compute_dtype=half)
        model = AutoModelForCausalLM.from_pretrained(saved, quantization_config=quantization, dtype=half,
                                                     device_map={"": 0}, attn_implementation=config._attn_implementation)
        model = prepare_model_for_kbit_training(
            model, use_gradient_checkpointing=checkpointing,
            gradient_checkpointing_kwargs={"use_reentrant": False})
    else:
        weights = torch.float32 if method == "full" and setup["precision"] == "fp16" else half
        with torch.device("cuda"):
            model = AutoModelForCausalLM.from_config(config, dtype=weights)
        if checkpointing:
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    if method != "full":
        lora = LoraConfig(r=16, lora_alpha=32, lora_dropout=0.05, target_modules=LORA_TARGETS,
                          task_type="CAUSAL_LM")
        model = get_peft_model(model, lora)
    model.config.use_cache = False
    model.train()
    trainable = [parameter for parameter in model.parameters() if parameter.requires_grad]
    if method == "qlora":
        import bitsandbytes

        optimizer = bitsandbytes.optim.PagedAdamW8bit(trainable, lr=2e-4)
    else:
        optimizer = torch.optim.AdamW(trainable, lr=2e-5, fused=fused)
    scaler = torch.amp.GradScaler("cuda") if setup["precision"] == "fp16" else None
    after_load = torch.cuda.memory_reserved()
    generator = torch.Generator(device="cuda").manual_seed(0)
    for _ in range(STEPS):
        tokens = torch.randint(0, config.vocab_size, (setup["micro"], setup["sequence"]),
                               device="cuda", generator=generator)
        with torch.autocast("cuda", dtype=half):
            loss = model(input_ids=tokens, labels=tokens).loss
        if scaler is not None:
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        else:
            loss.backward()
            optimizer.step()
        optimizer.zero_grad(set_to_none=True)
    torch.cuda.synchronize()
    result = {"oom": False, "reserved": torch.cuda.max_memory_reserved(),
              "allocated": torch.cuda.max_memory_allocated(), "after_load": after_load,
              "trainable": sum(parameter.numel() for parameter in trainable),
              "loss": round(float(loss), 3)}
    del model, optimizer, trainable, loss, tokens
    return result


def _clean(torch) -> None:
    gc.collect()
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()


def _context_bytes(torch) -> int | None:
    """Device memory this process holds beyond PyTorch's allocator: the CUDA context."""
    try:
        import os

        import pynvml

        pynvml.nvmlInit()
        handle = pynvml.nvmlDeviceGetHandleByIndex(0)
        for process in pynvml.nvmlDeviceGetComputeRunningProcesses(handle):
            if process.pid == os.getpid() and process.usedGpuMemory:
                return process.usedGpuMemory - torch.cuda.memory_reserved()
        used = pynvml.nvmlDeviceGetMemoryInfo(handle).used
        return used - torch.cuda.memory_reserved()
    except Exception:  # noqa: BLE001 - informative only
        return None


def _version(name: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return None


# ---- report (anywhere) -----------------------------------------------------------------------

def config_text(setup: dict) -> str:
    """The config whose run the setup measures: Axolotl's, or TRL's for a full fine-tune in fp16
    (Axolotl's `fp16: true` loads fp16 weights, which GradScaler refuses; TRL can ask for fp32
    weights with fp16 autocast, the setup measured)."""
    shape = SHAPES[setup["shape"]]
    optimizer = "paged_adamw_8bit" if setup["method"] == "qlora" else "adamw_torch_fused"
    checkpointing = "true" if setup["checkpointing"] else "false"
    if setup["method"] == "full" and setup["precision"] == "fp16":
        return "\n".join([f"model_name_or_path: {shape['name']}", "dtype: float32", "fp16: true", "bf16: false",
                          f"per_device_train_batch_size: {setup['micro']}", f"max_length: {setup['sequence']}",
                          f"gradient_checkpointing: {checkpointing}", f"optim: {optimizer}"]) + "\n"
    lines = [f"base_model: {shape['name']}"]
    if setup["method"] == "lora":
        lines += ["adapter: lora"]
    elif setup["method"] == "qlora":
        lines += ["adapter: qlora", "load_in_4bit: true"]
    if setup["method"] != "full":
        lines += ["lora_r: 16", "lora_alpha: 32", "lora_dropout: 0.05", "lora_target_modules:",
                  *(f"  - {target}" for target in LORA_TARGETS)]
    lines += [f"{setup['precision']}: true", f"optimizer: {optimizer}",
              f"micro_batch_size: {setup['micro']}", f"sequence_len: {setup['sequence']}",
              f"gradient_checkpointing: {checkpointing}",
              "attn_implementation: eager" if shape.get("attention") == "eager" else "sdp_attention: true"]
    return "\n".join(lines) + "\n"


def compare(rows_file: Path):
    """(environment, [(row, estimated GiB comparable with max_memory_reserved)])."""
    import tempfile

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from linter.engine import Options, Session
    from linter.memory import estimate

    records = [json.loads(line) for line in rows_file.read_text().splitlines() if line.strip()]
    environment = next(record["environment"] for record in records if "environment" in record)
    pairs = []
    with tempfile.TemporaryDirectory() as folder:
        session = Session(Options(detect=False))
        for number, row in enumerate(record for record in records if "environment" not in record):
            path = Path(folder) / f"setup{number}.yaml"
            path.write_text(config_text(row))
            result = estimate(session.build_runs([session.load(path, True).config])[0])
            context = dict(result.components)["CUDA context"]
            pairs.append((row, result.total_gib - context))  # no allocator share: the context is not the allocator's
    return environment, pairs


def error_percent(row: dict, estimated: float) -> float | None:
    """Signed error of the estimate against the measured peak; None for a run that ran out of
    memory (it has no measured peak: those rows are reported apart, never as an error of 0 %)."""
    if row["oom"]:
        return None
    measured = row["reserved"] / 2**30
    return (estimated - measured) / measured * 100


ISSUE_17 = """## Issue 17 (memory at scale): what is and is not measured

No GPU was available to the session that built issue 17's changes (2026-11-23: the device tool
reported that this task was not drawn for a GPU). Nothing below was measured; the figures in the
table above are the earlier H100 measurements, re-estimated with the current estimator. Its
allocator overhead is now charged on transient memory only (issue 17), which lowered the
estimates: the mean absolute error went from 3.9 % to 4.3 % (held out: 4.3 % to 5.7 %), the
largest from 24.8 % to 25.6 %, and the full fine-tunes with checkpointing, already under-estimated,
more so (Qwen2.5-1.5B batch 2 x 1024: -14.0 % before). The miss explained above quotes the earlier
estimate. The out-of-memory runs are now reported apart instead of as errors of 0 %.

Held-out honesty: the rows marked held out above were committed in the same commits as the
coefficients they test (a980ec1 and ef10ca3, 2026-11-22), so that they did not tune the
coefficients rests on that session's account, not on the git history. New validation rows must
be committed (configs and measurements) before any change to the estimator they test.

Checked without a GPU, in tests/test_memory.py: DeepSpeed's own model-state estimators
(estimate_zero2/zero3_model_states_mem_needs, computed beside trainlint's figure for 7B and 70B
Llama, ZeRO-2/3, 1 and 8 GPUs, no / optimizer / optimizer+parameter offload); FSDP full shard
against torch/accelerate's arithmetic (fp32 upcast, 16P/N); LoRA under ZeRO-3 (frozen weights
partitioned); the issue's anchors (Mixtral-8x7B QLoRA on 24 GB, a TRL full fine-tune at batch 4
on 80 GB, LLaMA-Factory full AMP 7B >= 95 GiB, the QLoRA paper's LLaMA-65B on 48 GB).

Still unmeasured, to run on a GPU when one is available (bench/memory_validation.py measure):
7-8B models at the 24/48/80 GB limits; 8-bit loading; variable-length (unpacked) batches; 32k
context; a framework's real trainer (TRL SFTTrainer or Axolotl) rather than the hand-written
loop; MoE models (Mixtral, Qwen MoE: expert activations and router); paged optimizers under
memory pressure; chunked cross entropy; activation offloading; LLaMA-Factory's fp32 upcast;
FSDP and ZeRO on more than one GPU (a single GPU cannot measure sharding; those stay checked
against DeepSpeed's and torch's formulas)."""


def report(rows_file: Path) -> str:
    environment, pairs = compare(rows_file)
    out = ["# Memory estimate against measured peak", "",
           "Produced by `python bench/memory_validation.py measure rows.jsonl` on the GPU and "
           "`python bench/memory_validation.py report bench/memory_validation_rows.jsonl` here; the "
           "script's docstring says what each setup runs, and `config_text` gives the config estimated. "
           "tests/test_memory.py re-checks every row against the current estimator.",
           "",
           f"Measured on {environment['gpu']} with torch {environment['torch']}, transformers "
           f"{environment['transformers']}, peft {environment['peft']}, bitsandbytes "
           f"{environment['bitsandbytes']} (TrainingArguments' default optimizer: "
           f"{environment['default_optim'].split('.')[-1].lower()}). {STEPS} optimizer steps, SDPA attention (eager where the model says so), "
           "LoRA r=16 on all seven linear modules.", "",
           "The estimator's per-token coefficients (linter/memory.py) were fitted on the Llama-3.2 rows "
           f"({', '.join(s for s in SHAPES if s not in HELD_OUT)}); the rows of "
           f"{', '.join(SHAPES[s]['name'] for s in HELD_OUT)} (other vocabularies, MLP widths, an untied "
           "lm_head, sequence lengths 1024 and 4096, eager attention) were measured afterwards and are held out: they "
           "test the estimator, they did not tune it.", "",
           "`measured` is torch.cuda.max_memory_reserved(). It excludes the CUDA context (measured "
           f"{environment['cuda_context_bytes'] / 2**30:.2f} GiB through NVML), so `estimated` is "
           "trainlint's total less its CUDA-context line (and that line's allocator share).", "",
           "| model | method | precision | micro batch | sequence | checkpointing | measured GiB | estimated GiB | error % |",
           "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    errors, held_out, out_of_memory = [], [], []
    for row, estimated in pairs:
        shape = SHAPES[row["shape"]]
        label = shape["name"] + (", eager attention" if shape.get("attention") == "eager" else "")
        label += " (held out)" if row["shape"] in HELD_OUT else ""
        setup = (f"{row['method']} | {row['precision']} | {row['micro']} | {row['sequence']} | "
                 f"{'on' if row['checkpointing'] else 'off'}")
        if row["oom"]:
            out_of_memory.append(f"| {label} | {setup} | {row['capacity'] / 2**30:.1f} | {estimated:.2f} | "
                                 f"{'yes' if estimated * 2**30 > row['capacity'] else 'NO (the estimate fits)'} |")
            continue
        error = error_percent(row, estimated)
        errors.append(abs(error))
        if row["shape"] in HELD_OUT:
            held_out.append(abs(error))
        out.append(f"| {label} | {setup} | {row['reserved'] / 2**30:.2f} | {estimated:.2f} | {error:+.1f} |")
    out += ["", "Runs that ran out of memory have no measured peak; they are not counted in the error figures "
            "below. What they show is whether the estimate, too, is above the GPU's capacity.", "",
            "| model | method | precision | micro batch | sequence | checkpointing | capacity GiB | estimated GiB | estimate above capacity |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- |", *out_of_memory]
    out.append("")
    for (shape, method, sequence, checkpointing), why in KNOWN_MISSES.items():
        out.append(f"Outside ±20 %: {SHAPES[shape]['name']} ({shape}) {method}, sequence {sequence}, "
                   f"checkpointing {'on' if checkpointing else 'off'}: {why}.")
    out.append("")
    for label, group in (("All", errors), ("Held out", held_out)):
        within = sum(1 for error in group if error <= 20)
        out.append(f"{label} (measured peaks only): {within} of {len(group)} rows within ±20 %; largest error "
                   f"{max(group):.1f} %; mean absolute error {sum(group) / len(group):.1f} %.")
    out += ["", "Not measured here: ZeRO/FSDP partitioning and offload (their model-state figures are "
            "DeepSpeed's own estimator formulas), 8-bit loading, and GPUs "
            "other than the H100 (allocator behaviour is the same; the CUDA context varies by a few "
            "hundred MiB with driver and CUDA version).", "", ISSUE_17]
    return "\n".join(out) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    measure_parser = commands.add_parser("measure")
    measure_parser.add_argument("out", type=Path)
    measure_parser.add_argument("--shapes", default="1b,3b", help=f"of {', '.join(SHAPES)}")
    measure_parser.add_argument("--workdir", type=Path, default=Path("/tmp/memory_validation"))
    report_parser = commands.add_parser("report")
    report_parser.add_argument("rows", type=Path)
    arguments = parser.parse_args()
    if arguments.command == "measure":
        arguments.workdir.mkdir(parents=True, exist_ok=True)
        measure(arguments.out, arguments.shapes.split(","), arguments.workdir)
    else:
        sys.stdout.write(report(arguments.rows))


if __name__ == "__main__":
    main()
