"""GPU targets: named (`--gpu`, TRAINLINT_GPU, settings), or detected through NVML / torch.

Capabilities come from the compute capability alone (SPEC §4.2), never from
`torch.cuda.is_bf16_supported()`, which answers True on pre-Ampere GPUs through emulation.
Detection imports pynvml or torch lazily, runs at most once per process, is bounded in time,
and turns every failure into "not detected: <reason>".
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path

from .value import Value
from .lazy_pattern import LazyPattern

# How long each probe may take before it counts as hung. NVML answers in milliseconds; the torch
# fallback first imports torch, which on an H100 machine with a cold page cache took longer than
# 5 s (a CUDA build of torch 2.11: "torch: no answer within 5 s" was seen there).
DETECTION_TIMEOUT_S = {"nvml": 5.0, "torch": 30.0}
DATA = Path(__file__).parent / "data"  # shipped inside the package (importlib.resources costs ~10 ms to import)

# capability -> minimum compute capability (SPEC §4.2)
CAPABILITIES = {
    "bf16": (8, 0),
    "tf32": (8, 0),
    "flash_attention_2": (8, 0),
    "flash_attention_3": (9, 0),
    "fp8": (8, 9),
}


class TargetError(ValueError):
    pass


class Target(Value):
    __slots__ = ("name", "compute_capability", "memory_gib", "source")

    def __init__(self, name: str, compute_capability: tuple[int, int], memory_gib: float | None = None,
                 source: str = "catalog"):
        self.name = name
        self.compute_capability = compute_capability
        self.memory_gib = memory_gib
        self.source = source  # catalog | compute capability | nvml | torch

    def supports(self, capability: str) -> bool:
        return self.compute_capability >= CAPABILITIES[capability]

    @property
    def cc(self) -> str:
        return f"{self.compute_capability[0]}.{self.compute_capability[1]}"

    def as_dict(self) -> dict:
        return {
            "name": self.name,
            "compute_capability": self.cc,
            "memory_gib": self.memory_gib,
            "source": self.source,
            "capabilities": {name: self.supports(name) for name in CAPABILITIES},
        }


class Hardware:
    __slots__ = ("targets", "origin", "reasons")

    def __init__(self, targets: list[Target], origin: str, reasons: list[str] | None = None):
        self.targets = targets
        self.origin = origin  # "--gpu", "TRAINLINT_GPU", "settings", "nvml", "torch", "none"
        self.reasons = reasons if reasons is not None else []  # why detection found nothing

    def lacking(self, capability: str) -> list[Target]:
        return [target for target in self.targets if not target.supports(capability)]

    def all_support(self, capability: str) -> bool:
        return bool(self.targets) and not self.lacking(capability)


def _normalise(name: str) -> str:
    return re.sub(r"[\s\-_]", "", name).lower()


@lru_cache(maxsize=1)
def catalog() -> dict:
    return json.loads(DATA.joinpath("gpus.json").read_text("utf-8"))


@lru_cache(maxsize=1)
def _alias_index() -> dict[str, dict]:
    index = {}
    for entry in catalog()["gpus"]:
        for alias in [entry["name"], *entry.get("aliases", [])]:
            index[_normalise(alias)] = entry
    return index


def _catalog_target(entry: dict, source: str = "catalog") -> Target:
    major, minor = entry["compute_capability"].split(".")
    return Target(entry["name"], (int(major), int(minor)), entry.get("memory_gib"), source)


# Every real compute capability: the SM list of LLVM's NVPTX target (llvm/lib/Target/NVPTX/NVPTX.td,
# llvm-project PR 156857: 20 21 30 32 35 37 50 52 53 60 61 62 70 72 75 80 86 87 88 89 90 100 101 103
# 110 120 121; sm_101 became sm_110 in CUDA 13) and developer.nvidia.com/cuda-gpus.
COMPUTE_CAPABILITIES = {
    (2, 0), (2, 1), (3, 0), (3, 2), (3, 5), (3, 7), (5, 0), (5, 2), (5, 3), (6, 0), (6, 1), (6, 2), (7, 0), (7, 2),
    (7, 5), (8, 0), (8, 6), (8, 7), (8, 8), (8, 9), (9, 0), (10, 0), (10, 1), (10, 3), (11, 0), (12, 0),
    (12, 1),
}
# sm_80, sm_90a, sm_100f, compute_90 (the last digit is the minor version), or 8.0 / 10.0.
_CC = LazyPattern(r"^(?:(?:sm|compute)_?(\d+)(\d)[af]?|(\d+)\.(\d+))$", re.I)


def _cc_names() -> list[str]:
    return [f"sm_{major}{minor}" for major, minor in sorted(COMPUTE_CAPABILITIES)]


def parse_target(text: str) -> Target:
    """A catalog name or alias (`V100`, `A100-80GB`), or a compute capability (`7.0`, `sm_80`, `sm_100`)."""
    name = text.strip()
    if not name:
        raise TargetError("empty GPU name")
    match = _CC.match(name)
    if match:
        major, minor = (match.group(1), match.group(2)) if match.group(1) else (match.group(3), match.group(4))
        cc = (int(major), int(minor))
        if cc not in COMPUTE_CAPABILITIES:
            known = ", ".join(f"{a}.{b}" for a, b in sorted(COMPUTE_CAPABILITIES))
            raise TargetError(f"{name!r} is not a compute capability any NVIDIA GPU has (known: {known})")
        return Target(f"cc {cc[0]}.{cc[1]}", cc, None, "compute capability")
    entry = _alias_index().get(_normalise(name))
    if entry is None:
        raise TargetError(f"unknown GPU {name!r}{_suggestion(name)}: use a catalog name "
                          f"(`trainlint hardware --gpu NAME` checks one) or a compute capability like 8.0 or sm_80")
    return _catalog_target(entry)


def _suggestion(name: str) -> str:
    """" (did you mean 'A100-80GB'?)" from the catalog's names and aliases, compared without
    spaces, dashes and case."""
    import difflib  # error path only

    index = _alias_index()
    wanted = _normalise(name)
    close = difflib.get_close_matches(wanted, list(index), n=3, cutoff=0.6)
    # A name that is a prefix of, or contained in, an alias ("RTX6000" in "RTX 6000 Ada") counts too.
    close += [alias for alias in index if len(wanted) >= 3 and wanted in alias and alias not in close]
    names = list(dict.fromkeys(index[alias]["name"] for alias in close))[:3]
    if not names:
        return ""
    return f" (did you mean {' or '.join(repr(n) for n in names)}?)"


def parse_targets(spec: str) -> list[Target]:
    names = [part for part in (piece.strip() for piece in spec.split(",")) if part]
    if not names:
        raise TargetError("empty GPU target list")
    return [parse_target(name) for name in names]


def _by_name_from_device(name: str, cc: tuple[int, int], memory_gib: float | None, source: str) -> Target:
    entry = _alias_index().get(_normalise(name))
    display = entry["name"] if entry else name
    return Target(display, cc, memory_gib, source)


def _detect_nvml() -> list[Target]:
    import pynvml  # nvidia-ml-py

    pynvml.nvmlInit()
    try:
        targets = []
        for index in range(pynvml.nvmlDeviceGetCount()):
            handle = pynvml.nvmlDeviceGetHandleByIndex(index)
            name = pynvml.nvmlDeviceGetName(handle)
            name = name.decode() if isinstance(name, bytes) else name
            major, minor = pynvml.nvmlDeviceGetCudaComputeCapability(handle)
            memory = pynvml.nvmlDeviceGetMemoryInfo(handle).total / 2**30
            targets.append(_by_name_from_device(name, (major, minor), round(memory, 1), "nvml"))
        return targets
    finally:
        pynvml.nvmlShutdown()


def _detect_torch() -> list[Target]:
    import importlib.util

    if importlib.util.find_spec("torch") is None:
        raise RuntimeError("torch is not installed")
    import torch

    if not torch.cuda.is_available():
        raise RuntimeError("torch.cuda.is_available() is False")
    targets = []
    for index in range(torch.cuda.device_count()):
        properties = torch.cuda.get_device_properties(index)
        targets.append(_by_name_from_device(
            properties.name, (properties.major, properties.minor),
            round(properties.total_memory / 2**30, 1), "torch"))
    return targets


def _bounded(probe, timeout_s: float) -> list[Target]:
    """Run a probe in a daemon thread: a hung driver call must not hang the linter."""
    import threading  # detection only: a run with --gpu never starts a thread
    outcome: dict = {}

    def work():
        try:
            outcome["targets"] = probe()
        except BaseException as error:  # noqa: BLE001 - every failure is "not detected"
            outcome["error"] = error

    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    thread.join(timeout_s)
    if thread.is_alive():
        raise RuntimeError(f"no answer within {timeout_s:g} s")
    if "error" in outcome:
        raise outcome["error"]
    return outcome["targets"]


def _reason(error: BaseException) -> str:
    text = str(error).strip() or type(error).__name__
    return text.splitlines()[0]


@lru_cache(maxsize=1)
def detect() -> Hardware:
    reasons = []
    for origin, probe in (("nvml", _detect_nvml), ("torch", _detect_torch)):
        try:
            targets = _bounded(probe, DETECTION_TIMEOUT_S[origin])
        except BaseException as error:  # noqa: BLE001
            reasons.append(f"{origin}: {_reason(error)}")
            continue
        if targets:
            return Hardware(targets, origin, reasons)
        reasons.append(f"{origin}: no GPU found")
    return Hardware([], "none", reasons)


def resolve(cli_gpu: str | None, env_gpu: str | None, settings_gpus: list[str] | None, detect_allowed: bool) -> Hardware:
    """Targets by precedence (SPEC §4.1): --gpu > TRAINLINT_GPU > settings > detection > none."""
    if cli_gpu:
        return Hardware(parse_targets(cli_gpu), "--gpu")
    if env_gpu:
        return Hardware(parse_targets(env_gpu), "TRAINLINT_GPU")
    if settings_gpus:
        return Hardware([parse_target(name) for name in settings_gpus], "settings")
    if not detect_allowed:
        return Hardware([], "none", ["detection disabled (--no-detect)"])
    return detect()
