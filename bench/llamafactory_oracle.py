"""LLaMA-Factory's own argument parser as the oracle for TRN021 (its parser checks as a table).

Run with LLaMA-Factory installed in one environment and trainlint in another:

    TRAINLINT=$PWD/.venv/bin/trainlint LLAMAFACTORY_PYTHON=/path/to/venv/bin/python \\
        python bench/llamafactory_oracle.py [--rows]

Every training config among TRN021's snapshot fixtures and the LLaMA-Factory incident fixtures
is handed, in a fresh process, to `llamafactory.hparams.get_train_args` (what
`llamafactory-cli train` calls before it loads anything), and linted by trainlint with the
installed LLaMA-Factory pinned beside it (`--rows`: also each row's refused case and accepted
neighbour from tests/test_llamafactory_parser.py). An export config runs `export_model`, a chat
config `get_infer_args`; where the model is saved quantized (a local config.json's
quantization_config, or a -GPTQ/-AWQ/-bnb-4bit name, as trainlint reads it) LLaMA-Factory's checks
on the loaded model (init_adapter, export_model) run on a stand-in model with that
`quantization_method`: the oracle checks what LLaMA-Factory does with a quantized model, not
whether the checkpoint is one. Fixtures that need DeepSpeed, several GPUs or another
release are left out: the parser cannot run them here. A case agrees when LLaMA-Factory refuses
it and TRN021 (or the rule that owns that check: TRN006/010/011/017/018, QNT005) fires, or it is
accepted and they are silent. The bf16 GPU probe is answered as on a bf16 GPU: the oracle judges
the config, not this machine.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TRAINLINT = os.environ.get("TRAINLINT", "trainlint")
PYTHON = os.environ.get("LLAMAFACTORY_PYTHON", sys.executable)
SKIP_KEYS = ("deepspeed",)
PARSE = """
import json, os, re, sys, yaml
import transformers.training_args
# No GPU here: answer TrainingArguments' bf16 probe as a bf16 GPU would (the oracle judges the
# config, not this machine; trainlint runs with --no-detect for the same reason).
transformers.training_args.is_torch_bf16_gpu_available = lambda: True
import llamafactory.hparams.parser as parser
parser._check_extra_dependencies = lambda *args, **kwargs: None  # vllm/sglang installed: the machine, not the config
from llamafactory.hparams import get_infer_args, get_train_args
args = yaml.safe_load(open(sys.argv[1]))


def saved_quantized(name):
    # The checkpoint's quant_method: a local config.json's quantization_config, else the name of a
    # pre-quantized upload (-GPTQ / -AWQ / -bnb-4bit; e.g. Qwen's -GPTQ-Int4 and -AWQ config.json).
    local = os.path.join(os.path.dirname(sys.argv[1]), str(name), "config.json")
    if os.path.exists(local):
        return (json.load(open(local)).get("quantization_config") or {}).get("quant_method")
    found = re.search(r"[-_](gptq|awq)([-_]|$)", str(name).rsplit("/", 1)[-1], re.I)
    return found.group(1).lower() if found else ("bitsandbytes" if str(name).lower().endswith("-bnb-4bit") else None)


class Loaded:  # the loaded model as far as LLaMA-Factory's checks after loading read it
    def __init__(self, method):
        self.quantization_method = method


def after_loading(run):
    # LLaMA-Factory's checks on the loaded model (model/adapter.py init_adapter, train/tuner.py
    # export_model) with a stand-in model: every one of them names quantization; any other error
    # means the stand-in got past them.
    try:
        run()
    except (ValueError, AssertionError) as error:
        if "quantiz" in str(error).lower():
            return type(error).__name__ + ": " + str(error)
    except Exception:
        pass
    return None


method = saved_quantized(args.get("model_name_or_path"))
try:
    if any(args.get(key) for key in ("do_train", "do_eval", "do_predict")):
        args.setdefault("output_dir", sys.argv[2])
        model_args, _, training_args, finetuning_args, _ = get_train_args(args)
        refused = None
        if method:
            from llamafactory.model.adapter import init_adapter
            refused = after_loading(lambda: init_adapter(None, Loaded(method), model_args, finetuning_args,
                                                         training_args.do_train))
    elif args.get("export_dir"):
        get_infer_args(dict(args))  # its refusals count as they are; export_model parses again
        import llamafactory.train.tuner as tuner
        tuner.load_tokenizer = lambda model_args: {"tokenizer": None, "processor": None}
        tuner.get_template_and_fix_tokenizer = lambda tokenizer, data_args: None
        tuner.load_model = lambda tokenizer, model_args, finetuning_args, *rest, **kw: Loaded(
            method or ("bitsandbytes" if model_args.quantization_bit else None))
        refused = after_loading(lambda: tuner.export_model(args))
    else:
        model_args, _, finetuning_args, _ = get_infer_args(args)
        refused = None
        if method:
            from llamafactory.model.adapter import init_adapter
            refused = after_loading(lambda: init_adapter(None, Loaded(method), model_args, finetuning_args, False))
    print(json.dumps({"refused": refused and refused.splitlines()[0][:160]}))
except BaseException as error:  # the parser raises ValueError; argparse exits
    print(json.dumps({"refused": (type(error).__name__ + ": " + str(error)).splitlines()[0][:160]}))
"""


def cases() -> list[Path]:
    found = sorted((ROOT / "tests" / "rules" / "TRN021").glob("*.yaml"))
    found += sorted((ROOT / "tests" / "fixtures" / "incidents").glob("lf-*/*.yaml"))
    options = (ROOT / "tests" / "rules" / "TRN021" / "options.toml").read_text("utf-8")
    keep = []
    for path in found:
        text = path.read_text("utf-8")
        if any(line.split(":")[0].strip() in SKIP_KEYS for line in text.splitlines()):
            continue
        if f'"{path.name}"' in options or (path.parent / "requirements.txt").exists() \
                or (path.parent / "flags.txt").exists():
            continue  # pinned to another release, or needs the GPU count
        keep.append(path)
    return keep


def row_cases() -> list[tuple[str, str]]:
    """(name, YAML text) for each single-process case of tests/test_llamafactory_parser.py: every
    row's refused config and its accepted neighbour (cases that need DeepSpeed or a GPU count are
    left out, as above)."""
    sys.path[:0] = [str(ROOT / "tests"), str(ROOT)]
    import test_llamafactory_parser as table  # noqa: PLC0415 (the test file's cases, not a test run)

    found = []
    for number, (message, refused, change, options) in enumerate(table.CASES):
        if options:
            continue
        for side, keys in (("refused", refused), ("accepted", {**refused, **change})):
            if not any(keys.get(key) for key in ("do_train", "do_eval", "do_predict")):
                keys = {**keys, "output_dir": None}  # the test's base names one; chat and export parsers refuse it
            found.append((f"row case {number} {side} ({message[:40]})", table._yaml(keys)))
    return found


def main() -> None:
    version = subprocess.run([PYTHON, "-c", "import llamafactory; print(llamafactory.__version__)"],
                             capture_output=True, text=True).stdout.strip()
    rows, agree = [], 0
    every = [(f"{path.parent.name}/{path.name}", path.read_text("utf-8")) for path in cases()]
    if "--rows" in sys.argv:
        every += row_cases()
    for name, text in every:
        work = Path(tempfile.mkdtemp())
        path = work / (name.split("/")[-1] if not name.startswith("row case") else "train.yaml")
        path.write_text(text, "utf-8")
        (work / "requirements.txt").write_text(f"llamafactory=={version}\n")
        done = subprocess.run([PYTHON, "-c", PARSE, str(work / path.name), str(work / "out")], capture_output=True,
                              text=True, cwd=work, env=dict(os.environ, HF_HUB_OFFLINE="1"))
        lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
        refused = json.loads(lines[-1])["refused"] if lines else f"no verdict: {done.stderr.strip()[-120:]}"
        # TRN021 and the rules that own the parser's other checks (TRN006/TRN010/TRN011/TRN017/TRN018, QNT005).
        lint = subprocess.run([TRAINLINT, "check", str(work / path.name), "--no-detect", "--select", "TRN,QNT005",
                               "--format", "json"], capture_output=True, text=True, cwd=work)
        if lint.returncode not in (0, 1):
            codes = [f"lint error {lint.returncode}: {lint.stderr.strip()[-80:]}"]
        else:
            codes = sorted({finding["code"] for finding in json.loads(lint.stdout or "[]")})
        fired = bool(codes) and not codes[0].startswith("lint error")
        same = bool(refused) == fired
        agree += same
        rows.append(f"| {name} | {refused or 'accepted'} | {', '.join(codes) or 'silent'} "
                    f"| {'yes' if same else 'NO'} |")
    print(f"LLaMA-Factory {version}\n\n| case | LLaMA-Factory | trainlint | agree |\n|---|---|---|---|")
    print("\n".join(rows))
    print(f"\n{agree} of {len(rows)} cases agree.")


if __name__ == "__main__":
    main()
