"""DS033: a bitsandbytes optimizer that DeepSpeed steps on its CPU-offloaded partitions, for each reader
that hands the optimizer over (XTuner/mmengine always, the HF Trainer without a DeepSpeed optimizer
block where DeepSpeed and accelerate do not refuse or swap it), bound by bitsandbytes < 0.50.0."""

from __future__ import annotations

import json

import pytest

from conftest import trainlint


@pytest.fixture(autouse=True)
def _pins_only(nothing_installed):
    """Versions come from the pins each test writes (conftest.nothing_installed)."""


def _codes(tmp_path, files: dict[str, str], pins: tuple[str, ...]):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "requirements.txt").write_text("\n".join(pins) + "\n")
    result = trainlint("check", *(str(tmp_path / name) for name in files if name != "ds.json"), "--select", "DS033",
                       "--no-detect", "--format", "json")
    assert result.code in (0, 1), result.err
    return [finding["code"] for finding in json.loads(result.out)]


def _trl(optim: str = "paged_adamw_8bit", **deepspeed) -> dict[str, str]:
    zero = deepspeed.pop("zero", {"stage": 2, "offload_optimizer": {"device": "cpu"}})
    return {"trl.yaml": f"model_name_or_path: m\ndataset_name: d\noutput_dir: out\noptim: {optim}\ndeepspeed: ds.json\n",
            "ds.json": json.dumps({"zero_optimization": zero, "train_micro_batch_size_per_gpu": "auto", **deepspeed})}


@pytest.mark.parametrize("pins, fires", [
    (("bitsandbytes==0.49.2", "transformers==4.57.6"), True),
    (("bitsandbytes==0.50.0", "transformers==4.57.6"), False),  # CPU kernels (#1901)
    (("transformers==4.57.6",), False),  # bitsandbytes unknown
    (("bitsandbytes==0.43.3",), True),  # transformers unknown: refused (< 4.9) or stepped on the CPU
    (("bitsandbytes==0.43.3", "transformers==4.8.2"), False),  # transformers refuses first (DS009)
])
def test_hf_trainer_with_force_false(tmp_path, pins, fires):
    files = _trl(zero_force_ds_cpu_optimizer=False)
    assert _codes(tmp_path, files, pins) == (["DS033"] if fires else [])


def test_hf_trainer_silent_where_deepspeed_builds_its_own_or_it_is_not_offloaded(tmp_path):
    pins = ("bitsandbytes==0.45.5", "transformers==4.57.6")
    block = {"type": "AdamW", "params": {"lr": "auto"}}
    assert _codes(tmp_path, _trl(zero_force_ds_cpu_optimizer=False, optimizer=block), pins) == []
    assert _codes(tmp_path, _trl(zero_force_ds_cpu_optimizer=False, zero={"stage": 2}), pins) == []
    assert _codes(tmp_path, _trl("adamw_torch", zero_force_ds_cpu_optimizer=False), pins) == []


@pytest.mark.parametrize("transformers, deepspeed, legacy, fires", [
    ("4.57.6", "0.8.2", False, False),  # accelerate swaps it for DeepSpeedCPUAdam
    ("4.29.2", "0.8.2", False, True),  # handed over as is; DeepSpeed does not refuse yet
    ("4.29.2", "0.8.3", False, False),  # DeepSpeed refuses the client optimizer (DS009)
    ("4.29.2", None, False, False),
    ("4.40.0", "0.8.2", True, True),  # accelerate reads only offload_optimizer.device
])
def test_hf_trainer_with_force_true(tmp_path, transformers, deepspeed, legacy, fires):
    zero = {"stage": 2, "cpu_offload": True} if legacy else {"stage": 2, "offload_optimizer": {"device": "cpu"}}
    pins = ("bitsandbytes==0.41.0", f"transformers=={transformers}") + ((f"deepspeed=={deepspeed}",) if deepspeed else ())
    assert _codes(tmp_path, _trl("adamw_bnb_8bit", zero=zero), pins) == (["DS033"] if fires else [])


def test_xtuner_client_optimizer_needs_allow_untested_and_force_false(tmp_path):
    config = ("from bitsandbytes.optim import PagedAdamW8bit\nfrom mmengine.optim import AmpOptimWrapper\n"
              "from xtuner.model import SupervisedFinetune\n"
              "model = dict(type=SupervisedFinetune, llm=dict(pretrained_model_name_or_path='m'))\n"
              "optim_wrapper = dict(type=AmpOptimWrapper, optimizer=dict(type=PagedAdamW8bit, lr=1e-4))\n")
    files = {"train.py": config, "launch.sh": "xtuner train train.py --deepspeed ds.json\n"}
    pins = ("bitsandbytes==0.45.0",)
    (tmp_path / ".git").mkdir()  # a checkout: its launch commands are read
    offload = {"zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}}}
    for extra, fires in (({"zero_force_ds_cpu_optimizer": False, "zero_allow_untested_optimizer": True}, True),
                         ({"zero_force_ds_cpu_optimizer": False}, False),  # "untested ZeRO Optimizer" first
                         ({"zero_allow_untested_optimizer": True}, False)):  # ZeRORuntimeException first
        files["ds.json"] = json.dumps({**offload, **extra})
        assert _codes(tmp_path, files, pins) == (["DS033"] if fires else []), extra
