"""What the held-out sets' verdict rules share (judge.py's first-set rules and sets/*/rules.py).

A set's rules.py reads a finding through `Finding` (the fields every rule looks at: repo, path,
code, message, the manifest's true format, the claiming adapter, the unknown key of an SCH001,
the text of the reported line, whether the file is misclaimed), parses MEM001's figures with
`memory_need` / `sharded_need`, and takes the reasons that every set states in the same words
(the hardware and numerics facts below, each citing its source) from here. A reason that depends
on one repository stays in that set's rules.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from materialize import folder_name

# adapter name (a finding's "framework") -> the true formats it may claim
ADAPTER_FORMATS = {
    "hf": {"hf", "accelerate", "peft"},
    "deepspeed": {"deepspeed"},
    "axolotl": {"axolotl"},
    "llamafactory": {"llamafactory"},
    "ludwig": {"ludwig"},
    "xtuner": {"xtuner"},
    "unsloth": {"unsloth"},
}


def unknown_key(message: str) -> str | None:
    """The key an SCH001 message names ("unknown key X for ..."), or None."""
    match = re.match(r"unknown key (\S+) for", message)
    return match.group(1) if match else None


def line_text(tree: Path, repo: str, path: str, line: int) -> str:
    """The text of the reported line in the materialized tree ("" when it cannot be read)."""
    try:
        return (tree / folder_name(repo) / path).read_text("utf-8").splitlines()[line - 1]
    except (OSError, IndexError, UnicodeDecodeError):
        return ""


def is_misclaimed(adapter: str, true_format: str) -> bool:
    """A file claimed by an adapter that does not read its true format (both known)."""
    return bool(adapter and true_format and true_format not in ADAPTER_FORMATS.get(adapter, {adapter}))


@dataclass(frozen=True)
class Finding:
    """The fields of one finding that the verdict rules read."""

    repo: str
    path: str
    code: str
    message: str
    line: int
    adapter: str
    row: dict
    tree: Path

    @classmethod
    def of(cls, finding: dict, manifest: dict, tree: Path) -> "Finding":
        repo, path = finding["repo"], finding["path"]
        return cls(repo, path, finding["code"], finding["message"], int(finding["line"]), finding["framework"],
                   manifest.get((repo, path), {}), tree)

    @property
    def true_format(self) -> str:
        return self.row.get("true_format", "")

    @property
    def key(self) -> str | None:
        return unknown_key(self.message)

    @property
    def text(self) -> str:
        return line_text(self.tree, self.repo, self.path, self.line)

    @property
    def misclaimed(self) -> bool:
        return is_misclaimed(self.adapter, self.true_format)


# --- MEM001 figures ----------------------------------------------------------------------------
# "model states alone need X GiB per GPU, which does not fit A100-40GB (40 GiB)" and, where the
# estimate already shards by the launch, "... which is above 90% of V100-16GB (16 GiB)"
MEMORY_NEED = re.compile(r"need ([\d.]+) GiB per GPU, which does not fit (A100-40GB|V100-16GB) \((\d+) GiB\)")
SHARDED_NEED = re.compile(r"need ([\d.]+) GiB per GPU, which is above 90% of (A100-40GB|V100-16GB) \((\d+) GiB\)")


def memory_need(message: str) -> tuple[str, str, str]:
    """(need GiB, GPU name, GPU GiB) of an unsharded MEM001 estimate, as the message writes them."""
    return MEMORY_NEED.search(message).groups()


def sharded_need(message: str) -> tuple[str, str, str]:
    """(need GiB, GPU name, GPU GiB) of a MEM001 estimate already sharded by the launch."""
    return SHARDED_NEED.search(message).groups()


# --- reasons every set states in the same words -------------------------------------------------
BF16_ON_V100 = ("the file enables bf16 on a V100 (compute capability 7.0: no bf16 arithmetic; "
                "torch.cuda.is_bf16_supported() says True only through emulation)")
FLASH_ON_V100 = ("FlashAttention-2 supports Ampere and newer only (flash-attn README: 'FlashAttention-2 "
                 "currently supports Ampere, Ada, or Hopper GPUs'); the file asks for it on a V100")
TF32_RAISES = ("TrainingArguments.__post_init__ (transformers training_args.py) raises '--tf32 requires Ampere "
               "or a newer GPU arch' when is_torch_tf32_available() is False, which it is below compute "
               "capability 8.0 (a V100 is 7.0)")
FP16_OF_BF16_CHECKPOINT = ("fp16 training of a checkpoint trained in bfloat16 on a V100 (no bf16 there): activations "
                           "outside fp16's range give NaN or zero loss (QwenLM/Qwen3#670, hiyouga/LLaMA-Factory#4901)")
ZERO2_FP16 = "ZeRO-2 with fp16 is set in the file; INCIDENTS.md records NaN losses for this combination"
OFFLOAD_PARAM_STAGE3 = ("offload_param is a ZeRO-3 feature (deepspeed/runtime/zero/config.py: offload_param "
                        "'Valid only for stage 3'); in a stage-2 config it is ignored")
OVERLAP_COMM_FIXES = ("0.19.0, which carries the last of the overlap_comm gradient-corruption fixes (PR #7965; "
                      "earlier #5606 in 0.14.3, #7805 in 0.18.5)")
BF16_TEXT = r"bf16|bfloat16|\"enabled\": true"  # the first three sets' test of the reported line
FLASH_TEXT = r"flash_attention|flash_attn"


def hardware_verdict(seen: Finding, tf32_via: str = "") -> tuple[str, str] | None:
    """The verdicts the sets give in the same words on what the reported line itself asks of a
    V100: bf16 (PRE001), FlashAttention-2 (PRE007), tf32 (PRE004, `tf32_via` says how the framework
    hands it to TrainingArguments), fp16 training of a bf16 checkpoint (NUM003); None otherwise."""
    if seen.code == "PRE001" and re.search(BF16_TEXT, seen.text):
        return "true", BF16_ON_V100
    if seen.code == "PRE007" and re.search(FLASH_TEXT, seen.text):
        return "true", FLASH_ON_V100
    if seen.code == "PRE004" and re.search(r"tf32: true", seen.text):
        return "true", tf32_via + TF32_RAISES
    if seen.code == "NUM003" and "was trained in bfloat16" in seen.message:
        return "true", FP16_OF_BF16_CHECKPOINT
    return None
