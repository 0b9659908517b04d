"""LLaMA-Factory's own argument parser as the oracle for TRN021 (its parser checks as a table).

Run with LLaMA-Factory installed in one environment and trainlint in another:

    TRAINLINT=.venv/bin/trainlint LLAMAFACTORY_PYTHON=/path/to/venv/bin/python \\
        python bench/llamafactory_oracle.py

Every training config among TRN021's snapshot fixtures and the LLaMA-Factory incident fixtures
is handed, in a fresh process, to `llamafactory.hparams.get_train_args` (what
`llamafactory-cli train` calls before it loads anything), and linted by trainlint with the
installed LLaMA-Factory pinned beside it. Fixtures that need DeepSpeed, several GPUs or another
release are left out: the parser cannot run them here. A case agrees when LLaMA-Factory refuses
it and TRN021 (or the rule that owns that check: TRN006/010/011/017/018, QNT005) fires, or it is
accepted and they are silent. The bf16 GPU probe is answered as on a bf16 GPU: the oracle judges
the config, not this machine.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TRAINLINT = os.environ.get("TRAINLINT", "trainlint")
PYTHON = os.environ.get("LLAMAFACTORY_PYTHON", sys.executable)
SKIP_KEYS = ("deepspeed", "export_dir", "infer_backend")
PARSE = """
import json, sys, yaml
import transformers.training_args
# No GPU here: answer TrainingArguments' bf16 probe as a bf16 GPU would (the oracle judges the
# config, not this machine; trainlint runs with --no-detect for the same reason).
transformers.training_args.is_torch_bf16_gpu_available = lambda: True
from llamafactory.hparams import get_train_args
args = yaml.safe_load(open(sys.argv[1]))
args.setdefault("output_dir", sys.argv[2])
try:
    get_train_args(args)
    print(json.dumps({"refused": None}))
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


def main() -> None:
    version = subprocess.run([PYTHON, "-c", "import llamafactory; print(llamafactory.__version__)"],
                             capture_output=True, text=True).stdout.strip()
    rows, agree = [], 0
    for path in cases():
        work = Path(tempfile.mkdtemp())
        shutil.copy(path, work / path.name)
        (work / "requirements.txt").write_text(f"llamafactory=={version}\n")
        done = subprocess.run([PYTHON, "-c", PARSE, str(work / path.name), str(work / "out")], capture_output=True,
                              text=True, cwd=work, env=dict(os.environ, HF_HUB_OFFLINE="1"))
        lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
        refused = json.loads(lines[-1])["refused"] if lines else f"no verdict: {done.stderr.strip()[-120:]}"
        # TRN021 and the rules that own the parser's other checks (TRN006/TRN010/TRN011/TRN017/TRN018, QNT005).
        lint = subprocess.run([TRAINLINT, "check", str(work / path.name), "--no-detect", "--select", "TRN,QNT005",
                               "--format", "json"], capture_output=True, text=True, cwd=work)
        codes = sorted({finding["code"] for finding in json.loads(lint.stdout or "[]")})
        fired = bool(codes)
        same = bool(refused) == fired
        agree += same
        rows.append(f"| {path.parent.name}/{path.name} | {refused or 'accepted'} | {', '.join(codes) or 'silent'} "
                    f"| {'yes' if same else 'NO'} |")
    print(f"LLaMA-Factory {version}\n\n| case | LLaMA-Factory | trainlint | agree |\n|---|---|---|---|")
    print("\n".join(rows))
    print(f"\n{agree} of {len(rows)} cases agree.")


if __name__ == "__main__":
    main()
