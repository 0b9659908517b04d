"""Hardware: the catalog, named targets, fake NVML and torch detection, failure modes."""

from __future__ import annotations

import sys
import time
import types

import pytest

from linter import hardware
from linter.hardware import TargetError, parse_target, parse_targets


def fake_nvml(devices, fail_at=None, delay=0.0):
    module = types.ModuleType("pynvml")
    calls = []

    def step(name):
        calls.append(name)
        if fail_at == name:
            raise RuntimeError(f"{name} failed")

    def init():
        step("init")
        time.sleep(delay)

    module.nvmlInit = init
    module.nvmlShutdown = lambda: step("shutdown")
    module.nvmlDeviceGetCount = lambda: (step("count"), len(devices))[1]
    module.nvmlDeviceGetHandleByIndex = lambda index: devices[index]
    module.nvmlDeviceGetName = lambda handle: (step("name"), handle[0])[1]
    module.nvmlDeviceGetCudaComputeCapability = lambda handle: handle[1]
    module.nvmlDeviceGetMemoryInfo = lambda handle: types.SimpleNamespace(total=handle[2] * 2**30)
    module.calls = calls
    return module


@pytest.fixture
def no_torch(monkeypatch):
    monkeypatch.setattr(hardware, "_detect_torch", lambda: (_ for _ in ()).throw(RuntimeError("torch is not installed")))


def test_catalog_entries_are_complete_and_aliases_unique():
    seen = {}
    for entry in hardware.catalog()["gpus"]:
        assert entry["source"].startswith("http"), entry["name"]
        major, minor = entry["compute_capability"].split(".")
        assert major.isdigit() and minor.isdigit()
        assert entry["memory_gib"] > 0
        for alias in [entry["name"], *entry.get("aliases", [])]:
            key = hardware._normalise(alias)
            assert key not in seen, f"{alias} in {entry['name']} and {seen.get(key)}"
            seen[key] = entry["name"]
    for required in ("P100", "V100", "T4", "RTX 2080 Ti", "A100", "A30", "A10", "A10G", "A40", "RTX 3090",
                     "RTX A5000", "RTX A6000", "L4", "L40", "L40S", "RTX 4090", "RTX 6000 Ada", "H100", "H200",
                     "GH200", "B200", "RTX 5090"):
        assert hardware._normalise(required) in seen, required


@pytest.mark.parametrize("name, cc, bf16", [
    ("V100", (7, 0), False), ("t4", (7, 5), False), ("A100-80GB", (8, 0), True), ("a10g", (8, 6), True),
    ("H100", (9, 0), True), ("sm_80", (8, 0), True), ("7.5", (7, 5), False), ("sm_90", (9, 0), True),
])
def test_parse_target(name, cc, bf16):
    target = parse_target(name)
    assert target.compute_capability == cc and target.supports("bf16") is bf16


def test_capability_table():
    assert parse_target("L4").supports("fp8") and not parse_target("A100").supports("fp8")
    assert parse_target("H100").supports("flash_attention_3") and not parse_target("A100").supports("flash_attention_3")
    assert not parse_target("T4").supports("tf32")


def test_bare_names_take_the_smaller_memory_variant():
    assert parse_target("A100").memory_gib <= parse_target("A100-80GB").memory_gib


def test_unknown_and_empty_targets():
    with pytest.raises(TargetError, match="unknown GPU"):
        parse_targets("A100,Z9")
    with pytest.raises(TargetError):
        parse_targets(" , ")


def test_nvml_detection_reads_cc_and_memory(monkeypatch, no_torch):
    module = fake_nvml([("NVIDIA A100-SXM4-80GB", (8, 0), 80), ("Tesla T4", (7, 5), 15)])
    monkeypatch.setitem(sys.modules, "pynvml", module)
    found = hardware.detect()
    assert found.origin == "nvml"
    assert [(t.compute_capability, t.memory_gib, t.source) for t in found.targets] == [((8, 0), 80.0, "nvml"), ((7, 5), 15.0, "nvml")]
    assert found.lacking("bf16") == [found.targets[1]]
    assert module.calls[-1] == "shutdown"


def test_nvml_failure_falls_back_to_torch(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", fake_nvml([], fail_at="init"))
    torch = types.ModuleType("torch")
    torch.cuda = types.SimpleNamespace(
        is_available=lambda: True, device_count=lambda: 1,
        get_device_properties=lambda index: types.SimpleNamespace(name="NVIDIA L4", major=8, minor=9, total_memory=24 * 2**30))
    monkeypatch.setitem(sys.modules, "torch", torch)
    monkeypatch.setattr("importlib.util.find_spec", lambda name: object())
    found = hardware.detect()
    assert found.origin == "torch" and found.targets[0].compute_capability == (8, 9)
    assert found.reasons == ["nvml: init failed"]


def test_nothing_detected_gives_reasons(monkeypatch, no_torch):
    monkeypatch.setitem(sys.modules, "pynvml", fake_nvml([]))
    found = hardware.detect()
    assert found.targets == [] and found.reasons == ["nvml: no GPU found", "torch: torch is not installed"]


def test_hung_driver_does_not_hang(monkeypatch, no_torch):
    monkeypatch.setattr(hardware, "DETECTION_TIMEOUT_S", {"nvml": 0.2, "torch": 0.2})
    monkeypatch.setitem(sys.modules, "pynvml", fake_nvml([], delay=2.0))
    started = time.monotonic()
    found = hardware.detect()
    assert time.monotonic() - started < 1.5
    assert "no answer within" in found.reasons[0]


def test_missing_pynvml_module_is_a_reason(monkeypatch, no_torch):
    monkeypatch.setitem(sys.modules, "pynvml", None)  # import raises ImportError
    found = hardware.detect()
    assert found.reasons[0].startswith("nvml: ")


def test_detection_runs_once_per_process(monkeypatch, no_torch):
    module = fake_nvml([("NVIDIA H100 80GB HBM3", (9, 0), 80)])
    monkeypatch.setitem(sys.modules, "pynvml", module)
    hardware.detect()
    hardware.detect()
    assert module.calls.count("init") == 1


def test_device_name_maps_to_catalog_name(monkeypatch, no_torch):
    monkeypatch.setitem(sys.modules, "pynvml", fake_nvml([("Tesla V100-SXM2-32GB", (7, 0), 32)]))
    assert hardware.detect().targets[0].name == "V100-32GB"
