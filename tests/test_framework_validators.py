"""Blind batch 4's framework validators: DS028 (ZeRO-3 weight quantization with bf16), DS029 (partial
optimizer offload), TRN061 (TRL sync_ref_model checks), TRN062 (torch_compile with FSDP1 flat
parameters), TRN063 (accelerate ParallelismConfig checks), PEF009/PEF010 (PEFT pattern lookup) and
VER002's accelerate FSDP2 row: each check fires where the framework fails, and not outside its
release range or where the version is unknown (unless every release fails)."""

from __future__ import annotations

import json

import pytest

from conftest import trainlint


@pytest.fixture(autouse=True)
def _pins_only(nothing_installed):
    """Versions come from the pins each test writes (conftest.nothing_installed)."""


def _codes(tmp_path, files: dict[str, str], select: str, pins: tuple[str, ...] = (), world: int | None = None,
           target: str | None = None):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    requirements = tmp_path / "requirements.txt"
    if pins:
        requirements.write_text("\n".join(pins) + "\n")
    elif requirements.exists():
        requirements.unlink()
    extra = ["--world-size", str(world)] if world else []
    result = trainlint("check", str(tmp_path / (target or next(iter(files)))), "--select", select, "--no-detect",
                       "--format", "json", *extra)
    assert result.code in (0, 1), result.err
    return [finding["code"] for finding in json.loads(result.out)]


# ---- DS028 ------------------------------------------------------------------------------------------

def _ds(zero: dict, precision: str = "bf16") -> dict[str, str]:
    return {"ds.json": json.dumps({precision: {"enabled": True}, "zero_optimization": {"stage": 3, **zero}})}


@pytest.mark.parametrize("pin, fires", [("0.9.5", False), ("0.10.0", True), ("0.19.5", True), (None, True)])
def test_ds028_quantized_weights_with_bf16(tmp_path, pin, fires):
    pins = (f"deepspeed=={pin}",) if pin else ()
    assert _codes(tmp_path, _ds({"zero_quantized_weights": True}), "DS028", pins) == (["DS028"] if fires else [])


def test_ds028_frozen_weights_from_0_10_2_and_not_fp16(tmp_path):
    assert _codes(tmp_path, _ds({"zero_quantized_nontrainable_weights": True}), "DS028", ("deepspeed==0.10.2",)) \
        == ["DS028"]
    assert _codes(tmp_path, _ds({"zero_quantized_nontrainable_weights": True}), "DS028", ("deepspeed==0.10.1",)) == []
    assert _codes(tmp_path, _ds({"zero_quantized_weights": True}, "fp16"), "DS028", ("deepspeed==0.16.4",)) == []


def test_ds028_needs_zero3(tmp_path):
    files = {"ds.json": json.dumps({"bf16": {"enabled": True},
                                    "zero_optimization": {"stage": 2, "zero_quantized_weights": True}})}
    assert _codes(tmp_path, files, "DS028", ("deepspeed==0.16.4",)) == []


# ---- DS029 ------------------------------------------------------------------------------------------

def _offload(device: str, ratio: float, optimizer: str = "Adam", stage: int = 3) -> dict[str, str]:
    block = {"device": device, "ratio": ratio, **({"nvme_path": "/mnt/nvme"} if device == "nvme" else {})}
    return {"ds.json": json.dumps({"optimizer": {"type": optimizer, "params": {"lr": 1e-4}},
                                   "zero_optimization": {"stage": stage, "offload_optimizer": block}})}


@pytest.mark.parametrize("device, ratio, optimizer, fires", [
    ("nvme", 0.5, "Adam", True), ("cpu", 0.5, "Adam", False), ("nvme", 1.0, "Adam", False),
    ("cpu", 0.5, "Adagrad", True), ("cpu", 0.5, "Lion", True), ("cpu", 0.5, "AdamW", False),
    ("none", 0.5, "Adam", False)])
def test_ds029_partial_offload(tmp_path, device, ratio, optimizer, fires):
    assert _codes(tmp_path, _offload(device, ratio, optimizer), "DS029") == (["DS029"] if fires else [])


def test_ds029_stage2_is_ds004s_and_old_releases_refuse_the_key(tmp_path):
    assert _codes(tmp_path, _offload("nvme", 0.5, stage=2), "DS029") == []
    assert _codes(tmp_path, _offload("nvme", 0.5), "DS029", ("deepspeed==0.12.2",)) == []
    assert _codes(tmp_path, _offload("nvme", 0.5), "DS029", ("deepspeed==0.12.3",)) == ["DS029"]


# ---- TRN061 -----------------------------------------------------------------------------------------

_GRPO_PEFT = "model_name_or_path: Qwen/Qwen2.5-1.5B-Instruct\nnum_generations: 8\nuse_peft: true\nsync_ref_model: true\n"


@pytest.mark.parametrize("pin, fires", [("0.14.0", False), ("0.15.0", True), ("0.27.0", True), ("0.28.0", True),
                                        (None, True)])
def test_trn061_grpo_with_peft(tmp_path, pin, fires):
    pins = (f"trl=={pin}",) if pin else ()
    assert _codes(tmp_path, {"grpo.yaml": _GRPO_PEFT}, "TRN061", pins) == (["TRN061"] if fires else [])


def test_trn061_not_without_peft_or_sync(tmp_path):
    assert _codes(tmp_path, {"grpo.yaml": _GRPO_PEFT.replace("use_peft: true", "use_peft: false")}, "TRN061") == []
    assert _codes(tmp_path, {"grpo.yaml": _GRPO_PEFT.replace("sync_ref_model: true", "sync_ref_model: false")},
                  "TRN061") == []


def test_trn061_dpo_precompute_and_grpo_zero_beta(tmp_path):
    dpo = "model_name_or_path: m\ndataset_name: d\nprecompute_ref_log_probs: true\nsync_ref_model: true\n"
    assert _codes(tmp_path, {"dpo.yaml": dpo}, "TRN061") == ["TRN061"]
    # a DPO-only key marks the file as DPOConfig's: still checked as DPO
    assert _codes(tmp_path, {"dpo.yaml": dpo + "f_divergence_type: reverse_kl\n"}, "TRN061") == ["TRN061"]
    beta = "model_name_or_path: m\ndataset_name: d\nnum_generations: 8\nbeta: 0.0\nsync_ref_model: true\n"
    assert _codes(tmp_path, {"grpo.yaml": beta}, "TRN061", ("trl==0.28.0",)) == ["TRN061"]
    assert _codes(tmp_path, {"grpo.yaml": beta}, "TRN061", ("trl==0.27.0",)) == []


def test_trn061_sft_has_no_sync_ref_model(tmp_path):
    sft = "model_name_or_path: m\ndataset_text_field: text\nuse_peft: true\nsync_ref_model: true\n"
    assert _codes(tmp_path, {"sft.yaml": sft}, "TRN061") == []


# ---- TRN062 -----------------------------------------------------------------------------------------

_ACCELERATE_FSDP1 = "distributed_type: FSDP\nnum_processes: 8\nfsdp_config:\n  fsdp_use_orig_params: {orig}\n"
_RUN = '[[runs]]\nfiles = ["train.yaml", "accelerate.yaml"]\n'


@pytest.mark.parametrize("orig, compile_, fires", [("false", "true", True), ("true", "true", False),
                                                   ("false", "false", False)])
def test_trn062_accelerate_launcher(tmp_path, orig, compile_, fires):
    files = {"train.yaml": f"output_dir: out\nlearning_rate: 2.0e-5\nbf16: true\ntorch_compile: {compile_}\n",
             "accelerate.yaml": _ACCELERATE_FSDP1.format(orig=orig), "trainlint.toml": _RUN}
    assert _codes(tmp_path, files, "TRN062") == (["TRN062"] if fires else [])


def test_trn062_fsdp2_is_not_affected(tmp_path):
    files = {"train.yaml": "output_dir: out\nlearning_rate: 2.0e-5\nbf16: true\ntorch_compile: true\n",
             "accelerate.yaml": _ACCELERATE_FSDP1.format(orig="false") + "  fsdp_version: 2\n", "trainlint.toml": _RUN}
    assert _codes(tmp_path, files, "TRN062") == []


def test_trn062_trainer_fsdp_config_needs_the_transformers_release(tmp_path):
    train = "output_dir: out\ntorch_compile: true\nfsdp: full_shard auto_wrap\nfsdp_config:\n  use_orig_params: false\n"
    assert _codes(tmp_path, {"train.yaml": train}, "TRN062", ("transformers==4.46.3",)) == ["TRN062"]
    assert _codes(tmp_path, {"train.yaml": train}, "TRN062") == []  # FSDP version unknown


# ---- TRN063 -----------------------------------------------------------------------------------------

def _parallel(sizes: dict[str, int], kind: str = "FSDP", version: int | None = 2, processes: int = 2) -> str:
    text = f"distributed_type: {kind}\nnum_processes: {processes}\n"
    if version:
        text += f"fsdp_config:\n  fsdp_version: {version}\n"
    return text + "parallelism_config:\n" + "".join(
        f"  parallelism_config_{name}_size: {size}\n" for name, size in sizes.items())


@pytest.mark.parametrize("pin, fires", [("1.11.0", False), ("1.12.0", True), ("1.13.0", False)])
def test_trn063_context_parallel_on_1_12(tmp_path, pin, fires):
    files = {"accelerate.yaml": _parallel({"cp": 2})}
    assert _codes(tmp_path, files, "TRN063", (f"accelerate=={pin}",)) == (["TRN063"] if fires else [])


def test_trn063_sizes(tmp_path):
    pins = ("accelerate==1.13.0",)
    assert _codes(tmp_path, {"a.yaml": _parallel({"dp_shard": 2, "tp": 2}, processes=8)}, "TRN063", pins) == ["TRN063"]
    assert _codes(tmp_path, {"b.yaml": _parallel({"dp_shard": 2, "tp": 2}, processes=4)}, "TRN063", pins) == []
    assert _codes(tmp_path, {"c.yaml": _parallel({"dp_shard": 2, "tp": 2}, version=None, processes=4)}, "TRN063",
                  pins) == ["TRN063"]
    assert _codes(tmp_path, {"d.yaml": _parallel({"dp_replicate": 2, "tp": 2}, "MULTI_GPU", None, 4)}, "TRN063",
                  pins) == ["TRN063"]
    assert _codes(tmp_path, {"e.yaml": _parallel({"cp": 2, "sp": 2}, processes=4)}, "TRN063", pins) == ["TRN063"]


def test_trn063_silent_without_a_version_or_before_1_10(tmp_path):
    assert _codes(tmp_path, {"a.yaml": _parallel({"cp": 2})}, "TRN063") == []  # only 1.12.x breaks
    assert _codes(tmp_path, {"a.yaml": _parallel({"dp_shard": 2, "tp": 2}, processes=8)}, "TRN063",
                  ("accelerate==1.9.0",)) == []


def test_trn063_unpinned_where_every_release_fails(tmp_path):
    # 1.10.0 to the newest refuse the sizes; every earlier release refuses `parallelism_config` itself
    assert _codes(tmp_path, {"a.yaml": _parallel({"dp_shard": 2, "tp": 2}, processes=8)}, "TRN063") == ["TRN063"]
    assert _codes(tmp_path, {"b.yaml": _parallel({"dp_replicate": 2, "tp": 2}, "MULTI_GPU", None, 4)},
                  "TRN063") == ["TRN063"]
    assert _codes(tmp_path, {"c.yaml": _parallel({"dp_shard": 2, "tp": 2}, processes=4)}, "TRN063") == []
    # sizes above the process count with sp: 1.12.0 on skips the count check for DeepSpeed SP
    assert _codes(tmp_path, {"d.yaml": _parallel({"dp_shard": 2, "sp": 2}, processes=8)}, "TRN063") == []
    assert _codes(tmp_path, {"e.yaml": _parallel({"cp": 2, "sp": 2}, processes=4)}, "TRN063") == []  # 1.13.0 on


def _deepspeed_sp(extra: str = "", size: int = 4) -> str:
    return (f"distributed_type: DEEPSPEED\nnum_processes: {size}\ndeepspeed_config:\n  zero_stage: 3\n"
            f"parallelism_config:\n  parallelism_config_sp_size: {size}\n{extra}")


@pytest.mark.parametrize("extra, pins, fires", [
    # the DeepSpeed launcher hands the block over from 1.12.0 (c7e59dd7): earlier releases never read it
    ("  parallelism_config_sp_backend: megatron\n", ("accelerate==1.11.0",), False),
    ("  parallelism_config_sp_backend: megatron\n", ("accelerate==1.12.0",), True),
    ("  parallelism_config_sp_backend: deepspeed\n", ("accelerate==1.14.0",), False),
    ("  parallelism_config_cp_backend: nccl\n", ("accelerate==1.13.0",), True),
    ("  parallelism_config_sp_attn_implementation: flex_attention\n", ("accelerate==1.12.0",), True),
    ("  parallelism_config_sp_attn_implementation: flex_attention\n", ("accelerate==1.14.0",), True),
    # a hub flash-attn kernel: refused by 1.12/1.13, taken from 1.14.0 (f317f824)
    ("  parallelism_config_sp_attn_implementation: kernels-community/flash-attn2\n", ("accelerate==1.13.0",), True),
    ("  parallelism_config_sp_attn_implementation: kernels-community/flash-attn2\n", ("accelerate==1.14.0",), False),
    ("  parallelism_config_sp_attn_implementation: my-attention\n", ("accelerate==1.14.0",), True),
    ("", ("accelerate==1.12.0", "deepspeed==0.18.1"), True),
    ("", ("accelerate==1.12.0", "deepspeed==0.18.2"), False),
    ("", ("accelerate==1.12.0",), False),  # DeepSpeed unknown
    ("  parallelism_config_sp_backend: megatron\n", (), False),  # accelerate unknown
])
def test_trn063_backends_and_handlers(tmp_path, extra, pins, fires):
    assert _codes(tmp_path, {"accelerate.yaml": _deepspeed_sp(extra)}, "TRN063", pins) == (["TRN063"] if fires else [])


def test_trn063_sp_attention_only_with_sequence_parallelism(tmp_path):
    text = _deepspeed_sp("  parallelism_config_sp_attn_implementation: eager\n", size=1)
    assert _codes(tmp_path, {"accelerate.yaml": text}, "TRN063", ("accelerate==1.14.0",)) == []


def test_trn063_cp_comm_strategy_every_release(tmp_path):
    text = _parallel({"dp_shard": 2, "cp": 2}, processes=4) + "  parallelism_config_cp_comm_strategy: ring\n"
    assert _codes(tmp_path, {"a.yaml": text}, "TRN063", ("accelerate==1.10.0",)) == ["TRN063"]
    assert _codes(tmp_path, {"b.yaml": text}, "TRN063") == ["TRN063"]  # every release that reads the block
    fine = _parallel({"dp_shard": 2, "cp": 2}, processes=4) + "  parallelism_config_cp_comm_strategy: alltoall\n"
    assert _codes(tmp_path, {"c.yaml": fine}, "TRN063") == []


@pytest.mark.parametrize("sizes, pin, fires", [
    ({"dp_shard": 4, "tp": 0}, "1.10.0", True), ({"dp_shard": 4, "dp_replicate": -1}, "1.14.0", True),
    ({"dp_shard": 4, "tp": 0}, "1.9.0", False), ({"dp_shard": 4, "tp": 1}, "1.14.0", False),
    ({"dp_shard": 4, "sp": 0}, "1.12.0", True), ({"dp_shard": 4, "sp": 0}, "1.11.0", False),  # sp_size from 1.12.0
])
def test_trn063_size_below_one(tmp_path, sizes, pin, fires):
    found = _codes(tmp_path, {"a.yaml": _parallel(sizes, processes=4)}, "TRN063", (f"accelerate=={pin}",))
    assert found == (["TRN063"] if fires else [])


@pytest.mark.parametrize("pins, fires", [
    (("accelerate==1.7.0", "torch==2.5.1"), True), (("accelerate==1.14.0", "torch==2.6.0"), False),
    (("accelerate==1.6.0", "torch==2.5.1"), False), (("accelerate==1.6.0", "torch==2.4.1"), True),
    (("accelerate==1.5.2", "torch==2.4.1"), False), (("accelerate==1.14.0",), False),  # torch unknown
])
def test_trn063_fsdp2_torch_floor(tmp_path, pins, fires):
    text = "distributed_type: FSDP\nnum_processes: 2\nfsdp_config:\n  fsdp_version: 2\n"
    assert _codes(tmp_path, {"a.yaml": text}, "TRN063", pins) == (["TRN063"] if fires else [])


# ---- PEF009 / PEF010 ------------------------------------------------------------------------------

def _adapter(**fields) -> dict[str, str]:
    return {"adapter_config.json": json.dumps({"peft_type": "LORA", "r": 8, "lora_alpha": 1,
                                               "target_modules": ["q_proj", "v_proj"], **fields})}


@pytest.mark.parametrize("key, pin, fires", [
    ("^q_proj", None, True), ("^q_proj", "0.20.0", True), ("q_proj", None, False),
    ("^model.layers.0.self_attn.q_proj", "0.14.0", True), ("^model.layers.0.self_attn.q_proj", "0.15.0", False),
    ("^model.layers.0.self_attn.q_proj", None, False), ("^lm_head", "0.15.0", False)])
def test_pef009_anchored_keys(tmp_path, key, pin, fires):
    pins = (f"peft=={pin}",) if pin else ()
    assert _codes(tmp_path, _adapter(alpha_pattern={key: 4}), "PEF009", pins) == (["PEF009"] if fires else [])


@pytest.mark.parametrize("pin, fires", [("0.5.0", False), ("0.6.0", True), ("0.13.2", True), ("0.14.0", False),
                                        (None, False)])
def test_pef010_lora_overlap(tmp_path, pin, fires):
    pins = (f"peft=={pin}",) if pin else ()
    files = _adapter(rank_pattern={"q_proj": 8}, alpha_pattern={"0.self_attn.q_proj": 2})
    assert _codes(tmp_path, files, "PEF010", pins) == (["PEF010"] if fires else [])


def test_pef010_not_when_the_alpha_comes_out_the_same(tmp_path):
    pins = ("peft==0.13.2",)
    same_default = _adapter(rank_pattern={"q_proj": 8}, alpha_pattern={"0.self_attn.q_proj": 1})
    assert _codes(tmp_path, same_default, "PEF010", pins) == []
    unrelated = _adapter(rank_pattern={"v_proj": 8}, alpha_pattern={"0.self_attn.q_proj": 2})
    assert _codes(tmp_path, unrelated, "PEF010", pins) == []


def test_pef010_loha_until_0_15(tmp_path):
    files = {"adapter_config.json": json.dumps({"peft_type": "LOHA", "r": 8, "alpha": 8, "target_modules": ["v_proj"],
                                                "rank_pattern": {"v_proj": 4},
                                                "alpha_pattern": {"layers.3.self_attn.v_proj": 16}})}
    assert _codes(tmp_path, files, "PEF010", ("peft==0.14.0",)) == ["PEF010"]
    assert _codes(tmp_path, files, "PEF010", ("peft==0.15.0",)) == []


# ---- VER002: accelerate FSDP2 RAM-efficient loading with CPU offload --------------------------------

_FSDP2 = ("distributed_type: FSDP\nnum_processes: 2\nfsdp_config:\n  fsdp_version: 2\n"
          "  fsdp_cpu_ram_efficient_loading: true\n  fsdp_offload_params: {offload}\n")


@pytest.mark.parametrize("pin, offload, fires", [("1.5.2", "true", False), ("1.6.0", "true", True),
                                                 ("1.12.0", "true", True), ("1.13.0", "true", False),
                                                 ("1.12.0", "false", False), (None, "true", False)])
def test_ver002_fsdp2_ram_efficient_cpu_offload(tmp_path, pin, offload, fires):
    pins = (f"accelerate=={pin}",) if pin else ()
    files = {"accelerate.yaml": _FSDP2.format(offload=offload)}
    assert _codes(tmp_path, files, "VER002", pins) == (["VER002"] if fires else [])


@pytest.mark.parametrize("state_dict, pin, fires", [
    ("FULL_STATE_DICT", "1.6.0", True), ("FULL_STATE_DICT", "1.7.0", False), ("SHARDED_STATE_DICT", "1.6.0", False),
    ("LOCAL_STATE_DICT", "1.12.0", True), ("LOCAL_STATE_DICT", "1.5.2", False)])
def test_trn063_fsdp2_state_dict_types(tmp_path, state_dict, pin, fires):
    files = {"accelerate.yaml": "distributed_type: FSDP\nnum_processes: 8\nfsdp_config:\n  fsdp_version: 2\n"
                                f"  fsdp_state_dict_type: {state_dict}\n"}
    assert _codes(tmp_path, files, "TRN063", (f"accelerate=={pin}",)) == (["TRN063"] if fires else [])


@pytest.mark.parametrize("kind, machines, processes, pin, fires", [
    ("MULTI_GPU", 2, 1, None, True), ("FSDP", 4, 2, "0.30.1", True), ("MULTI_GPU", 2, 2, None, False),
    ("MULTI_GPU", 1, 1, None, False), ("DEEPSPEED", 2, 1, None, False), ("NO", 2, 1, None, False)])
def test_trn063_processes_below_machines(tmp_path, kind, machines, processes, pin, fires):
    """utils/launch.py prepare_multi_gpu_env: nproc_per_node = num_processes // num_machines, every release."""
    files = {"accelerate.yaml": f"distributed_type: {kind}\nnum_machines: {machines}\nnum_processes: {processes}\n"}
    pins = (f"accelerate=={pin}",) if pin else ()
    assert _codes(tmp_path, files, "TRN063", pins) == (["TRN063"] if fires else [])


@pytest.mark.parametrize("ids, machines, pin, fires", [
    ("'0'", 1, "0.18.0", True), ("'0'", 1, "0.16.0", False), ("'0'", 1, None, False), ("'0,1'", 1, "0.18.0", False),
    ("all", 1, "1.0.0", False), ("'0'", 2, "1.0.0", False)])
def test_trn063_multi_gpu_with_one_gpu_id(tmp_path, ids, machines, pin, fires):
    """commands/launch.py _validate_launch_command refuses it from 0.17.0 (9b5877d1, #1127)."""
    files = {"accelerate.yaml": f"distributed_type: MULTI_GPU\ngpu_ids: {ids}\nnum_machines: {machines}\n"
                                f"num_processes: {machines * 2}\n"}
    pins = (f"accelerate=={pin}",) if pin else ()
    assert _codes(tmp_path, files, "TRN063", pins) == (["TRN063"] if fires else [])


# ---- TRN012: GRPOConfig.__post_init__'s world-size-free refusals ------------------------------------

_GRPO = "model_name_or_path: m\ndataset_name: d\nper_device_train_batch_size: 8\nnum_generations: {generations}\n"


@pytest.mark.parametrize("extra, generations, pin, fires", [
    ("generation_batch_size: 64\nsteps_per_generation: 4\n", 8, "0.18.0", True),
    ("generation_batch_size: 64\nsteps_per_generation: 4\n", 8, "0.17.0", False),
    ("generation_batch_size: 64\n", 8, "0.18.0", False),
    # both keys came with the check (GRPOConfig's, and RLOOConfig's from 0.22 with the same check)
    ("generation_batch_size: 64\nsteps_per_generation: 4\n", 8, None, True),
    # one generation per prompt: refused from 0.17.0, advantage 0 (or NaN) on 0.14-0.16: every GRPO release
    ("", 1, "0.17.0", True), ("", 1, "0.16.1", True), ("", 1, None, True), ("", 1, "0.13.0", False),
    ("", 0, None, False),
    ("auto_find_batch_size: true\n", 8, "1.9.0", True), ("auto_find_batch_size: true\n", 8, "1.8.0", False)])
def test_trn012_grpo_config_refusals(tmp_path, extra, generations, pin, fires):
    pins = (f"trl=={pin}",) if pin else ()
    files = {"grpo.yaml": _GRPO.format(generations=generations) + extra}
    assert _codes(tmp_path, files, "TRN012", pins) == (["TRN012"] if fires else [])


@pytest.mark.parametrize("targets, key, fires", [
    (["q_proj", "v_proj"], "k_proj", True), (["q_proj", "v_proj"], "layers.0.self_attn.k_proj", True),
    (["q_proj", "v_proj"], "layers.0.self_attn.v_proj", False), (["self_attn.q_proj"], "q_proj", False),
    ("all-linear", "k_proj", False), (".*q_proj", "k_proj", False), (["q_proj"], "q_pr.j", False), (["q_proj"], "k_pr.j", True)])
def test_pef009_key_for_a_module_no_target_adapts(tmp_path, targets, key, fires):
    files = _adapter(target_modules=targets, rank_pattern={key: 32})
    assert _codes(tmp_path, files, "PEF009") == (["PEF009"] if fires else [])
