"""Issue 16, sharded runs: TRN016-TRN019 and DS014 fire on the mined incidents' hazard in each
framework that can write it, and stay silent on the clean twin and where the version differs."""

from __future__ import annotations

import json

import pytest

from conftest import FIXTURES, trainlint

SELECT = ("--select", "TRN016,TRN017,TRN018,TRN019,DS014")
_DS_Z3 = '{"train_micro_batch_size_per_gpu": "auto", "zero_optimization": {"stage": 3}}'
_DS_Z2 = '{"train_micro_batch_size_per_gpu": "auto", "zero_optimization": {"stage": 2}}'


def findings(path, *args: str) -> list[dict]:
    result = trainlint("check", path, "--no-detect", "--format", "json", *SELECT, *args)
    assert result.code in (0, 1), result.err
    return json.loads(result.out)


def codes(path, *args: str) -> list[str]:
    return [finding["code"] for finding in findings(path, *args)]


@pytest.fixture(autouse=True)
def _pins_only(nothing_installed):
    """Versions come from the pins each test writes (conftest.nothing_installed)."""


@pytest.fixture
def write(tmp_path):
    def write(name: str, data: str):
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(data)
        return path

    return write


# ---- the incidents themselves ----------------------------------------------------------------

@pytest.mark.parametrize("incident, code, extra", [
    ("fsdp-double-checkpointing", "TRN016", ()),
    ("lf-galore-layerwise-distributed", "TRN017", ("--world-size", "2")),
    ("lf-predict-with-generate-zero3", "TRN018", ()),
    ("trl-grpo-zero3-sharded-generation", "TRN019", ()),
    ("ds-nvme-offload-without-path", "DS014", ()),
])
def test_incident_caught(incident, code, extra):
    folder = FIXTURES / "incidents" / incident
    name = next(line.split(":", 1)[1].strip() for line in (folder / "expect.txt").read_text().splitlines()
                if line.startswith("file:"))
    assert code in codes(folder / name, *extra)


# ---- TRN016 fsdp-double-checkpointing ---------------------------------------------------------

_FSDP = "model_name_or_path: m\ndataset_name: d\noutput_dir: out\nfsdp: full_shard auto_wrap\n"


def test_trn016_written_and_trl_default(write):
    assert codes(write("a.yaml", _FSDP + "gradient_checkpointing: true\nfsdp_config:\n  activation_checkpointing: true\n")) \
        == ["TRN016"]
    # TRL >= 0.22 turns gradient checkpointing on by default; the "fsdp_" spelling is stripped.
    write("trl22/requirements.txt", "trl==0.22.0\n")
    found = findings(write("trl22/b.yaml", _FSDP + "fsdp_config:\n  fsdp_activation_checkpointing: true\n"))
    assert [f["code"] for f in found] == ["TRN016"] and "TRL's default" in found[0]["message"]


def test_trn016_silent_on_the_trl_default_of_an_unknown_trl(write):
    """TRL's gradient_checkpointing default is True from 0.22.0 and False before: unknown without a pin."""
    path = write("b.yaml", _FSDP + "fsdp_config:\n  activation_checkpointing: true\n")
    assert codes(path) == []
    result = trainlint("check", path, "--no-detect", "--verbose", *SELECT)
    assert "TRN016 skipped: gradient_checkpointing is unset and the trl version is unknown" in result.out + result.err


def test_trn016_silent(write):
    assert codes(write("off.yaml", _FSDP + "gradient_checkpointing: false\nfsdp_config:\n  activation_checkpointing: true\n")) == []
    no_fsdp = "model_name_or_path: m\ndataset_name: d\ngradient_checkpointing: true\nfsdp_config:\n  activation_checkpointing: true\n"
    assert codes(write("nofsdp.yaml", no_fsdp)) == []
    assert codes(write("fsdp_ckpt_off.yaml", _FSDP + "gradient_checkpointing: true\nfsdp_config:\n  activation_checkpointing: false\n")) == []


def test_trn016_versions(write):
    body = _FSDP + "gradient_checkpointing: true\nfsdp_config:\n  activation_checkpointing: true\n"
    write("old/requirements.txt", "transformers==4.32.1\n")
    assert codes(write("old/a.yaml", body)) == []  # the check arrived in 4.33.0
    write("new/requirements.txt", "transformers==4.33.0\n")
    assert codes(write("new/a.yaml", body)) == ["TRN016"]
    write("oldtrl/requirements.txt", "trl==0.21.0\n")  # gradient_checkpointing default False
    assert codes(write("oldtrl/a.yaml", _FSDP + "fsdp_config:\n  activation_checkpointing: true\n")) == []


# ---- TRN017 galore-layerwise-distributed ------------------------------------------------------

_LF = "model_name_or_path: m\nstage: sft\ndo_train: true\nfinetuning_type: full\ntemplate: qwen\ndataset: d\noutput_dir: out\n"


def test_trn017(write):
    galore = write("g.yaml", _LF + "use_galore: true\ngalore_layerwise: true\n")
    assert codes(galore, "--world-size", "2") == ["TRN017"]
    assert codes(galore, "--world-size", "1") == []
    assert codes(galore) == []  # GPUs unknown
    assert codes(write("n.yaml", _LF + "use_galore: true\ngalore_layerwise: false\n"), "--world-size", "2") == []
    # galore_layerwise means nothing without use_galore.
    assert codes(write("o.yaml", _LF + "galore_layerwise: true\n"), "--world-size", "2") == []
    assert codes(write("a.yaml", _LF + "use_apollo: true\napollo_layerwise: true\n"), "--world-size", "8") == ["TRN017"]


# ---- TRN018 generate-under-zero3 ---------------------------------------------------------------

_GENERATE = _LF + "val_size: 0.05\neval_strategy: steps\npredict_with_generate: true\ndeepspeed: ds.json\n"


def test_trn018(write):
    write("z3/ds.json", _DS_Z3)
    assert codes(write("z3/a.yaml", _GENERATE)) == ["TRN018"]
    write("z2/ds.json", _DS_Z2)
    assert codes(write("z2/a.yaml", _GENERATE)) == []


def test_trn018_old_release_needs_evaluation(write):
    write("old/ds.json", _DS_Z3)
    write("old/requirements.txt", "llamafactory==0.8.3\n")
    found = findings(write("old/a.yaml", _GENERATE))
    assert [f["code"] for f in found] == ["TRN018"] and "first evaluation" in found[0]["message"]
    assert codes(write("old/b.yaml", _GENERATE.replace("eval_strategy: steps\n", ""))) == []


def test_trn018_lora_only_where_the_release_refuses_it(write):
    """LLaMA-Factory#5292: before 0.9.0 LoRA and QLoRA runs generated under ZeRO-3 fine; only a
    full fine-tune failed. 0.9.0 refuses every fine-tuning type at launch (review of 2026-11-24)."""
    lora = _GENERATE.replace("finetuning_type: full", "finetuning_type: lora")
    assert "finetuning_type: lora" in lora
    write("lora/ds.json", _DS_Z3)
    assert codes(write("lora/a.yaml", lora)) == []  # release unknown: only >= 0.9.0 refuses it
    write("lora_old/ds.json", _DS_Z3)
    write("lora_old/requirements.txt", "llamafactory==0.8.3\n")
    assert codes(write("lora_old/a.yaml", lora)) == []
    write("lora_new/ds.json", _DS_Z3)
    write("lora_new/requirements.txt", "llamafactory==0.9.1\n")
    found = findings(write("lora_new/a.yaml", lora))
    assert [f["code"] for f in found] == ["TRN018"] and "refuses it at launch" in found[0]["message"]


# ---- TRN019 grpo-sharded-generation -------------------------------------------------------------

_GRPO = "model_name_or_path: m\ndataset_name: d\noutput_dir: out\nnum_generations: 8\ndeepspeed: ds.json\n"


def test_trn019(write):
    write("z3/ds.json", _DS_Z3)
    found = findings(write("z3/a.yaml", _GRPO + "ds3_gather_for_generation: false\n"))
    assert [f["code"] for f in found] == ["TRN019"] and found[0]["severity"] == "warning"
    assert codes(write("z3/b.yaml", _GRPO)) == []
    assert codes(write("z3/c.yaml", _GRPO + "ds3_gather_for_generation: false\nuse_vllm: true\n")) == []
    write("z2/ds.json", _DS_Z2)
    assert codes(write("z2/a.yaml", _GRPO + "ds3_gather_for_generation: false\n")) == []


# ---- DS014 nvme-offload-without-path ------------------------------------------------------------

def _zero(stage: int, **blocks) -> str:
    return json.dumps({"train_micro_batch_size_per_gpu": 1, "zero_optimization": {"stage": stage, **blocks}})


def test_ds014(write):
    assert codes(write("p.json", _zero(3, offload_param={"device": "nvme"}))) == ["DS014"]
    assert codes(write("o.json", _zero(3, offload_optimizer={"device": "nvme", "nvme_path": None}))) == ["DS014"]
    both = _zero(3, offload_param={"device": "nvme"}, offload_optimizer={"device": "nvme"})
    assert codes(write("b.json", both)) == ["DS014", "DS014"]
    assert codes(write("ok.json", _zero(3, offload_param={"device": "nvme", "nvme_path": "/nvme"}))) == []
    assert codes(write("cpu.json", _zero(3, offload_param={"device": "cpu"}))) == []
    # Stages 1 and 2 treat an NVMe optimizer offload as CPU offload.
    assert codes(write("z2.json", _zero(2, offload_optimizer={"device": "nvme"}))) == []


# ---- TRN020 8bit-optimizer-with-sharding ---------------------------------------------------------

_FSDP1_8BIT = "model_name_or_path: m\ndataset_name: d\noutput_dir: out\noptim: paged_adamw_8bit\nfsdp: full_shard auto_wrap\n"


def test_trn020_fsdp1_checkpoint_save_needs_old_bitsandbytes(write):
    write("old/requirements.txt", "bitsandbytes==0.45.5\ntransformers==4.57.6\n")
    found = findings(write("old/a.yaml", _FSDP1_8BIT), "--select", "TRN020")
    assert [f["code"] for f in found] == ["TRN020"] and "first checkpoint" in found[0]["message"]
    assert codes(write("old/nosave.yaml", _FSDP1_8BIT + "save_strategy: 'no'\n"), "--select", "TRN020") == []
    assert codes(write("old/modelonly.yaml", _FSDP1_8BIT + "save_only_model: true\n"), "--select", "TRN020") == []
    assert codes(write("old/torch.yaml", _FSDP1_8BIT.replace("paged_adamw_8bit", "adamw_torch")), "--select", "TRN020") == []
    write("new/requirements.txt", "bitsandbytes==0.49.2\ntransformers==4.57.6\n")  # PR #1840
    assert codes(write("new/a.yaml", _FSDP1_8BIT), "--select", "TRN020") == []
    assert codes(write("unknown.yaml", _FSDP1_8BIT), "--select", "TRN020") == []


@pytest.mark.parametrize("transformers, fires", [
    ("4.57.6", True),     # FSDP version from accelerate (default 1)
    ("5.9.0", True),      # fsdp_config.get("version", 1)
    ("5.10.0", False),    # fsdp_config.get("version", 2): FSDP2, no FSDP1 checkpoint crash
    ("5.23.0", False),
    (None, False),        # unknown transformers: the FSDP version is unknown
])
def test_trn020_fsdp_version_from_the_pinned_transformers(write, transformers, fires):
    pins = "bitsandbytes==0.45.5\n" + (f"transformers=={transformers}\n" if transformers else "")
    write("requirements.txt", pins)
    assert codes(write("a.yaml", _FSDP1_8BIT), "--select", "TRN020") == (["TRN020"] if fires else [])
    # a written version is the one 5.x uses; 4.x ignores it (accelerate's launcher setting decides)
    written = _FSDP1_8BIT + "fsdp_config:\n  version: 1\n"
    used = transformers is not None and transformers.startswith("5.")
    assert codes(write("v1.yaml", written), "--select", "TRN020") == (["TRN020"] if used else [])


def test_trn020_fsdp2_any_bitsandbytes(write):
    axolotl = ("base_model: m\ndatasets:\n  - path: d\n    type: alpaca\noptimizer: adamw_bnb_8bit\nfsdp_version: 2\n"
               "fsdp_config:\n  offload_params: false\n")
    assert codes(write("ax.yaml", axolotl), "--select", "TRN020") == ["TRN020"]
    # Axolotl lets the paged variant through under FSDP2; not claimed.
    assert codes(write("paged.yaml", axolotl.replace("adamw_bnb_8bit", "paged_adamw_8bit")), "--select", "TRN020") == []


def test_trn020_silent_under_deepspeed(write):
    write("ds.json", _DS_Z3)
    body = "model_name_or_path: m\ndataset_name: d\noutput_dir: out\noptim: adamw_bnb_8bit\ndeepspeed: ds.json\n"
    write("requirements.txt", "bitsandbytes==0.42.0\n")
    assert codes(write("a.yaml", body), "--select", "TRN020") == []


_AXOLOTL_FSDP1_AO = ("base_model: m\ndatasets:\n  - path: d\n    type: alpaca\nmicro_batch_size: 1\nsequence_len: 2048\n"
                     "optimizer: adamw_torch_8bit\n"
                     "saves_per_epoch: 1\nfsdp:\n  - full_shard\n  - auto_wrap\nfsdp_config:\n"
                     "  fsdp_offload_params: false\n")


@pytest.mark.parametrize("optimizer", ["adamw_torch_8bit", "adamw_torch_4bit", "ao_adamw_fp8"])
def test_trn020_torchao_low_bit_state_under_fsdp1_any_version(write, optimizer):
    """torchao's low-bit states implement neither new_zeros nor cat (axolotl#2744): no pin needed."""
    found = findings(write("a.yaml", _AXOLOTL_FSDP1_AO.replace("adamw_torch_8bit", optimizer)), "--select", "TRN020")
    assert [f["code"] for f in found] == ["TRN020"] and "torchao" in found[0]["message"]


def test_trn020_torchao_silent_without_optimizer_saves_or_under_fsdp2(write):
    assert codes(write("v2.yaml", _AXOLOTL_FSDP1_AO + "fsdp_version: 2\n"), "--select", "TRN020") == []
    assert codes(write("model_only.yaml", _AXOLOTL_FSDP1_AO + "save_only_model: true\n"), "--select", "TRN020") == []
    trl = _FSDP1_8BIT.replace("paged_adamw_8bit", "adamw_torch_8bit")
    write("requirements.txt", "transformers==4.57.6\n")
    assert codes(write("trl.yaml", trl), "--select", "TRN020") == ["TRN020"]
    assert codes(write("trl_nosave.yaml", trl + "save_strategy: 'no'\n"), "--select", "TRN020") == []
