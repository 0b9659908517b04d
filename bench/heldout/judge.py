"""Judge the findings of a held-out run and write bench/heldout/verdicts.tsv.

    python bench/heldout/judge.py TREE [--write] [--set NAME]

Runs `trainlint check TREE --gpu A100 --format json` and the same with `--gpu V100`, takes
every distinct finding (repo, path, code, line, message), and judges every error and a seeded
random sample of 100 warnings. The verdicts are the RULES below, each written from the
framework's or the project's own source (cited in its reason); a finding no rule covers is
printed as unjudged and the script exits 1, so a new kind of finding gets a verdict by hand
before it is counted. Without --write it only reports.

A finding is "true" when it is true for the script that reads the file and the version it
uses (as far as the repository records them); "false" otherwise. On a file claimed by the wrong
adapter, schema findings (SCH*) are false; hardware and numeric findings are judged on what the
file says.

With --set NAME (a set other than the first), the manifest and verdicts are those of
bench/heldout/sets/NAME/, and the rules are that set's rules.py `judge` (same signature as judge
below); the selection of findings to judge (every error, seeded sample of warnings) is the same.
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1]))  # the checkout, for linter.project_args

from judging import (BF16_ON_V100, BF16_TEXT, FLASH_ON_V100,  # noqa: E402
                     FP16_OF_BF16_CHECKPOINT, OFFLOAD_PARAM_STAGE3, OVERLAP_COMM_FIXES, ZERO2_FP16, Finding)
from materialize import FIRST, folder_name, read_manifest, set_dir  # noqa: E402

SEED = 15
WARNING_SAMPLE = 100
GPUS = ("A100", "V100")
FIELDS = ("repo", "path", "code", "line", "message", "severity", "gpus", "sampled", "verdict", "reason")

# Launch facts the configs themselves do not record, quoted from each repository.
OPEN_INSTRUCT_LAUNCH = ("open-instruct launches these with `accelerate launch --num_processes 8 --use_deepspeed "
                        "--deepspeed_config_file configs/ds_configs/stage3_no_offloading_accelerate.conf` "
                        "(scripts/finetune_with_accelerate.sh, dpo_train_with_accelerate.sh): ZeRO-3 over the "
                        "GPUs, which the YAML cannot say")
HANDBOOK_LAUNCH = ("the recipes' README runs them with `accelerate launch --config_file "
                   "recipes/accelerate_configs/zero3.yaml` (ZeRO-3, 8 processes); the YAML cannot say the "
                   "world size, so a per-GPU total for one unsharded GPU is not what runs")


# EmoLLM's XTuner configs (checked by reading its launch commands at 955155b, after the first
# judging had taken the AmpOptimWrapper dtype as what runs).
EMOLLM_LAUNCH = (
    "EmoLLM trains its XTuner configs with `xtuner train <config>.py --deepspeed deepspeed_zero2` (xtuner_config/"
    "README.md:36, README_internlm2_7b_base_qlora.md:189, README_llama3_8b_instruct_qlora_alpaca_e3_M.md:261, "
    "README_scientist.md:39, pt/README.md:30; no command without --deepspeed). Under --deepspeed xtuner/tools/"
    "train.py replaces the AmpOptimWrapper and auto_dtype_of_deepspeed_config (tools/utils.py) turns the shipped "
    "fp16/bf16 'auto' into bf16 on an A100; DeepSpeed casts the parameters to bf16 (runtime/engine.py "
    "_configure_distributed_model) and bitsandbytes' Linear4bit.set_compute_type computes in the bf16 input's "
    "dtype: the run is already bf16 on the A100")


def judge(finding: dict, manifest: dict, tree: Path) -> tuple[str, str] | None:
    """(verdict, reason) from the rules, or None when no rule covers the finding."""
    seen = Finding.of(finding, manifest, tree)
    repo, path, code, message = seen.repo, seen.path, seen.code, seen.message
    true_format, adapter, key = seen.true_format, seen.adapter, seen.key

    # --- the file is claimed by the wrong adapter: its schema findings are false (another format's
    # keys); other findings are judged on what the file says, below
    if seen.misclaimed and code.startswith("SCH"):
        return "false", (f"format misclaim: a {true_format} file claimed by the {adapter} adapter"
                         + (" (Firefly train.py reads it with HfArgumentParser((CustomizedArguments, "
                            "TrainingArguments)).parse_json_file)" if repo == "yangjianxin1/Firefly" else ""))
    if code == "SCH001" and ("for llamafactory" in message) and true_format == "hf":
        return "false", "format misclaim: a TRL recipe claimed as LLaMA-Factory"

    # --- keys the project's own argument dataclasses define
    if code == "SCH001" and key:
        from linter.project_args import project_arguments

        project = project_arguments(tree / folder_name(repo) / path)
        candidates = project.classes
        if repo == "allenai/open-instruct":  # which script reads the file decides which classes count
            wanted = ({"DPOExperimentConfig", "TokenizerConfig"} if "/dpo/" in path
                      else {"FlatArguments", "TokenizerConfig"})  # finetune.py: (FlatArguments, TokenizerConfig)
            candidates = tuple(cls for cls in candidates if cls.name in wanted)
        defined = next((cls for cls in candidates if key.split(".")[0] in cls.fields), None)
        if defined is not None:
            return "false", (f"{key} is a field of the project's {defined.name} "
                             f"({defined.path.relative_to(tree / folder_name(repo))}:{defined.line}), "
                             "which the script's HfArgumentParser/TrlParser reads")
    if code == "SCH001" and key == "torch_dtype" and "for trl" in message:
        pin = ("open-r1 pins trl==0.18.0 in setup.py" if repo == "huggingface/open-r1"
               else "the repository asks for trl>=0.19.1 (setup.py), no exact version")
        return "false", (f"TRL's ModelConfig.torch_dtype exists until 0.27 (renamed dtype in 0.23, removed 0.27; "
                         f"trl/trainer/model_config.py); {pin}")
    if code == "SCH001" and key == "max_seq_length" and "for trl" in message:
        return "false", ("SFTConfig.max_seq_length is accepted until TRL 0.20 (trl/trainer/sft_config.py); "
                         "alignment-handbook asks for trl>=0.19.1 (setup.py): 0.19.x accepts it")
    if code == "SCH001" and repo == "huggingface/alignment-handbook" and key in (
            "dataset_mixer", "dataset_splits", "hub_model_revision"):
        return "true", (f"{key} is no field of alignment-handbook's ScriptArguments/SFTConfig at this commit "
                        "(src/alignment/configs.py: dataset_mixture) nor of TRL's; TrlParser raises on unused "
                        "keys (set_defaults_with_config leaves them to parse_args_into_dataclasses)")
    if code == "SCH001" and repo == "huggingface/open-r1" and (
            key == "vllm_device" or message.startswith("vllm_device was removed in trl 0.18.0")):
        return "true", ("GRPOConfig.vllm_device was removed in TRL 0.18.0 (a8cfca6d0 'Remove deprecated'); "
                        "open-r1 pins trl==0.18.0 in setup.py")
    if code == "SCH001" and repo == "modal-labs/llm-finetuning" and key == "debug":
        return "false", ("`debug:` (\"Debug mode\") is a documented Axolotl option in its config reference "
                         "until the 2025-06 doc rewrite (axolotl 9d5bfc127); the value is empty")
    if code == "SCH001" and repo == "KZ-Shi/LLaMA-E" and key in ("enable_lora", "merge_weights"):
        return "false", ("written by PEFT 0.2 (LoraConfig.enable_lora / merge_weights); a saved adapter_config "
                         "records its writer's version and PEFT drops keys it no longer knows when loading")
    if code == "SCH001" and true_format == "deepspeed" and key in ("min_lr", "fp16.fp16_opt_level", "log"):
        return "true", (f"DeepSpeed's config reader (deepspeed/runtime/config.py, precision_config.py) reads no "
                        f"`{key}`: the setting is silently ignored")

    # --- hardware and numerics
    if code == "DS004":
        return "true", OFFLOAD_PARAM_STAGE3
    if code == "DS005":
        return "true", ("ZeRO-2 with overlap_comm true on the pinned DeepSpeed, older than " + OVERLAP_COMM_FIXES
                        + "; NaN grad_norm reports: deepspeedai/DeepSpeed#5347, #5294")
    if code == "DS023" and repo == "yangjianxin1/Firefly":
        return "true", ("train.py reads the file with HfArgumentParser((CustomizedArguments, TrainingArguments)) "
                        "and trains with transformers' Trainer; ds_z3_config.json has a scheduler block "
                        "(WarmupLR), so integrations/deepspeed.py deepspeed_optim_sched builds DeepSpeed's "
                        "WarmupLR (warm-up, then constant) and the written lr_scheduler_type cosine is not used")
    if code == "DS001":
        return "true", ZERO2_FP16
    if code == "PRE001" and repo == "SmartFlowAI/EmoLLM" and path.startswith("xtuner_config/"):
        return "false", ("EmoLLM launches its XTuner configs with --deepspeed deepspeed_zero2 (xtuner_config/README.md:36), "
                         "which drops the AmpOptimWrapper; auto_dtype_of_deepspeed_config enables bf16 only where "
                         "torch.cuda.is_bf16_supported(), False on a V100 with the pinned torch==2.1.2 "
                         "(xtuner_config/requirements.txt): the run is fp16 there, not bf16")
    if code == "PRE001":
        if repo == "allenai/open-instruct" and path.startswith("configs/train_configs/"):
            return "false", ("the bf16 comes from TRL's default (bf16 = not fp16), but open-instruct reads this "
                             "file into its own dataclasses (finetune.py FlatArguments / dpo_utils "
                             "DPOExperimentConfig), and mixed precision comes from the accelerate launch; the file "
                             "sets no bf16")
        if repo == "huggingface/open-r1" and path.startswith("recipes/dataset_filtering/") \
                and "bf16 mixed precision" not in message:
            return "true", ("torch_dtype: bfloat16 is written (the model loads in bf16) and the V100 has no bf16 "
                            "arithmetic; with trl==0.18.0 pinned (setup.py) bf16 mixed precision stays off")
        if repo == "huggingface/open-r1" and path.startswith("recipes/dataset_filtering/"):
            return "false", ("'bf16 mixed precision' is TRL's bf16 default of TRL >= 0.19; open-r1 pins "
                             "trl==0.18.0, where bf16 defaults to False (only torch_dtype: bfloat16 is set)")
        if re.search(BF16_TEXT, seen.text):
            return "true", BF16_ON_V100
    if code == "PRE007" and "flash_attention" in seen.text:
        return "true", FLASH_ON_V100
    if code in ("PRE002", "QNT001") and repo == "SmartFlowAI/EmoLLM" and path.startswith("xtuner_config/"):
        return "false", EMOLLM_LAUNCH
    if code == "PRE002":
        return "true", "the file trains in fp16 (AmpOptimWrapper dtype float16 / fp16 enabled) on an A100 that has bf16"
    if code == "QNT001":
        return "true", "bnb_4bit_compute_dtype=torch.float16 is written in the file; the A100 target has bf16"
    if code == "QNT006":
        return "true", ("LLM.int8() training on a V100 (compute capability 7.0): loss 0.0 / divergence reported on "
                        "bitsandbytes 0.38 (bitsandbytes-foundation/bitsandbytes#343, huggingface/peft#236); the "
                        "int8 matmul kernels need Turing or newer")
    if code == "NUM003" and "was trained in bfloat16" in message:
        return "true", FP16_OF_BF16_CHECKPOINT
    if code == "NUM003":
        return "true", ("a Llama-3 model trained in float16 (AmpOptimWrapper dtype='float16') on V100 only: "
                        "INCIDENTS.md family overflow")
    if code == "NUM004":
        return "true", ("lora_modules_to_save with the embeddings while Axolotl loads the model in bf16: PEFT's "
                        "ModulesToSaveWrapper copies them in the model dtype (peft/utils/other.py)")
    if code == "MEM001":
        if repo == "allenai/open-instruct":
            return "false", OPEN_INSTRUCT_LAUNCH
        if repo == "huggingface/alignment-handbook":
            return "false", HANDBOOK_LAUNCH
        if repo == "KZ-Shi/LLaMA-E":
            return "false", ("a saved PEFT adapter_config.json says nothing about how the base model is loaded "
                             "(dtype, quantization, batch): no estimate follows from it")
        if repo == "modal-labs/llm-finetuning":
            return "false", ("the config links a ZeRO-3 DeepSpeed config inside the axolotl image "
                             "(/workspace/axolotl/deepspeed_configs/zero3_bf16.json) and modal runs it on several "
                             "GPUs; states are sharded, which the estimate without the link cannot see")
        if repo in ("QwenLM/Qwen2.5", "QwenLM/Qwen3") and "lora-sft" in path and "V100" in message:
            return "true", ("a 7B model's 16-bit weights alone are 14.2 GiB (Qwen2-7B config.json: 7.6B parameters) "
                            "on a 16 GiB V100; activations and the CUDA context come on top (a warning: above 90 %)")
        if repo == "unslothai/notebooks" and "gpt-oss-(120B)" in path:
            return "true", ("gpt-oss-120B's 4-bit weights alone exceed 40 GiB (117B parameters; the notebook is "
                            "written for an 80 GB A100); on a 40 GB A100 or a V100 the model does not load")
        if repo == "SmartFlowAI/EmoLLM":
            return "true", ("XTuner packs to max_length 2048 with the file's per-device batch; Llama-3's 128,256-"
                            "token vocabulary makes the logits and fp32 loss alone exceed the GPU "
                            "(`trainlint estimate` breakdown checked by hand)")
    if code == "LNK001":
        if "PATH-TO-DS-CONFIG" in message:
            return "true", "a literal placeholder: the run fails at DeepSpeed init until it is replaced"
        if "/workspace/axolotl/" in message:
            return "false", ("an absolute path inside the axolotl Docker image that modal's app runs in "
                             "(src/common.py image: winglian/axolotl); it exists where the config is read")
    if code == "SCH002" and "bitsandbytes" in message:
        return "false", ("quantization_method: bitsandbytes is valid in LLaMA-Factory before 0.9.3 (renamed "
                         "bnb in c3c0efbaa, first in v0.9.3); the Qwen example names no LLaMA-Factory version")
    return None


def set_rules(name: str):
    """The judge function of held-out set NAME (bench/heldout/sets/NAME/rules.py)."""
    import runpy

    return runpy.run_path(str(set_dir(name) / "rules.py"))["judge"]


def run_check(tree: Path, gpu: str) -> list[dict]:
    done = subprocess.run([sys.executable, "-m", "linter", "check", str(tree), "--gpu", gpu, "--format", "json"],
                          capture_output=True, text=True, cwd=HERE.parents[1])
    if done.returncode not in (0, 1):
        raise SystemExit(f"trainlint failed ({done.returncode}): {done.stderr[-2000:]}")
    return json.loads(done.stdout or "[]")


def distinct_findings(tree: Path, manifest_rows: list[dict]) -> dict[tuple, dict]:
    """(repo, path, code, line, message) -> finding, with the GPUs it appears under."""
    folders = {folder_name(row["repo"]): row["repo"] for row in manifest_rows}
    found: dict[tuple, dict] = {}
    for gpu in GPUS:
        for finding in run_check(tree, gpu):
            relative = Path(finding["file"]).resolve().relative_to(tree.resolve())
            repo = folders.get(relative.parts[0], relative.parts[0])
            path = Path(*relative.parts[1:]).as_posix()
            message = finding["message"]  # the tree's location is no part of a verdict's key
            for prefix in {str(tree.resolve()), str(tree.absolute()), str(tree)}:
                message = message.replace(prefix + "/", "<tree>/")
            finding["message"] = message
            key = (repo, path, finding["code"], int(finding["line"]), message)
            entry = found.setdefault(key, {**finding, "repo": repo, "path": path, "gpus": set()})
            entry["gpus"].add(gpu)
    return found


def judged_keys(found: dict[tuple, dict]) -> dict[tuple, str]:
    """Every error, and a seeded sample of WARNING_SAMPLE warnings: key -> why it is judged."""
    chosen = {key: "error" for key, finding in found.items() if finding["severity"] == "error"}
    warnings = sorted(key for key, finding in found.items() if finding["severity"] != "error")
    sample = random.Random(SEED).sample(warnings, min(WARNING_SAMPLE, len(warnings)))
    chosen.update({key: "warning-sample" for key in sample})
    return chosen


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tree", type=Path)
    parser.add_argument("--write", action="store_true", help="write the set's verdicts.tsv")
    parser.add_argument("--set", dest="set_name", default=FIRST, help="held-out set (default: first)")
    args = parser.parse_args(argv)
    directory = set_dir(args.set_name)
    rules = judge if args.set_name == FIRST else set_rules(args.set_name)
    rows = read_manifest(directory / "MANIFEST.tsv")
    manifest = {(row["repo"], row["path"]): row for row in rows}
    found = distinct_findings(args.tree, rows)
    chosen = judged_keys(found)
    out, unjudged = [], []
    for key in sorted(chosen):
        finding = found[key]
        verdict = rules(finding, manifest, args.tree)
        if verdict is None:
            unjudged.append(key)
            continue
        out.append({"repo": key[0], "path": key[1], "code": key[2], "line": key[3], "message": key[4],
                    "severity": finding["severity"], "gpus": ",".join(sorted(finding["gpus"])),
                    "sampled": chosen[key], "verdict": verdict[0], "reason": verdict[1]})
    for key in unjudged:
        print("unjudged:", *key, sep="\t")
    false = sum(row["verdict"] == "false" for row in out)
    print(f"{len(found)} distinct findings, {len(chosen)} judged ({sum(v == 'error' for v in chosen.values())} "
          f"errors + {sum(v != 'error' for v in chosen.values())} sampled warnings): {false} false "
          f"({100 * false / max(len(out), 1):.1f}%), {len(unjudged)} unjudged", file=sys.stderr)
    if args.write:
        with open(directory / "verdicts.tsv", "w", encoding="utf-8", newline="") as handle:
            writer = csv.DictWriter(handle, FIELDS, delimiter="\t", lineterminator="\n")
            writer.writeheader()
            writer.writerows(out)
    return 1 if unjudged else 0


if __name__ == "__main__":
    sys.exit(main())
