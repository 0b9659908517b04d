"""TRN110 accelerate-fsdp-option-refused: the fsdp_config option strings FullyShardedDataParallelPlugin
cannot parse, by the spellings each accelerate release takes (huggingface/accelerate#2273): each row
fires where the release refuses the value, not where it parses it or outside the key's releases, and
unpinned only where every release that reads the key refuses it."""

from __future__ import annotations

import json

import pytest

from conftest import trainlint


@pytest.fixture(autouse=True)
def _pins_only(nothing_installed):
    """Versions come from the pins each test writes (conftest.nothing_installed)."""


def _codes(tmp_path, options: dict[str, object], pin: str | None, kind: str = "FSDP") -> list[str]:
    text = f"distributed_type: {kind}\nnum_processes: 8\nfsdp_config:\n" + "".join(
        f"  {key}: {json.dumps(value) if isinstance(value, str) else str(value).lower() if isinstance(value, bool) else value}\n"
        for key, value in options.items())
    (tmp_path / "accelerate.yaml").write_text(text)
    requirements = tmp_path / "requirements.txt"
    if pin:
        requirements.write_text(f"accelerate=={pin}\n")
    elif requirements.exists():
        requirements.unlink()
    result = trainlint("check", str(tmp_path / "accelerate.yaml"), "--select", "TRN110", "--no-detect",
                       "--format", "json")
    assert result.code in (0, 1), result.err
    return [finding["code"] for finding in json.loads(result.out)]


_S = "fsdp_sharding_strategy"


@pytest.mark.parametrize("value, pin, fires", [
    (0, None, True), (0, "0.20.0", True), (0, "0.30.0", True), (0, "1.14.0", True), (6, "1.0.0", True),
    (1, None, False), (5, "0.20.0", False), (1, "1.14.0", False),
    # names: refused before 0.26.0, upper case only until 0.33.x, any case from 0.34.0
    ("FULL_SHARD", None, False), ("FULL_SHARD", "0.25.0", True), ("FULL_SHARD", "0.26.0", False),
    ("full_shard", "0.33.0", True), ("full_shard", "0.34.0", False), ("_HYBRID_SHARD_ZERO2", "0.30.0", True),
    ("_hybrid_shard_zero2", "1.2.0", False), ("FULL", None, True), ("FULL", "1.14.0", True),
    # before the key's first release (0.12.0) nothing reads it
    (0, "0.11.0", False),
])
def test_sharding_strategy(tmp_path, value, pin, fires):
    assert _codes(tmp_path, {_S: value}, pin) == (["TRN110"] if fires else [])


def test_sharding_strategy_fsdp2_and_other_launchers(tmp_path):
    # FSDP2 does not read it from 1.6.0; older releases ignore fsdp_version and parse it
    assert _codes(tmp_path, {"fsdp_version": 2, _S: 0}, "1.6.0") == []
    assert _codes(tmp_path, {"fsdp_version": 2, _S: 0}, "1.5.2") == ["TRN110"]
    assert _codes(tmp_path, {"fsdp_version": 2, _S: 0}, None) == []
    assert _codes(tmp_path, {_S: 0}, "1.14.0", kind="MULTI_GPU") == []  # only the FSDP launcher exports it


@pytest.mark.parametrize("options, pin, fires", [
    ({"fsdp_version": 2, "fsdp_reshard_after_forward": "FULL_SHARD"}, None, True),
    ({"fsdp_version": 2, "fsdp_reshard_after_forward": "FULL_SHARD"}, "1.6.0", True),
    ({"fsdp_version": 2, "fsdp_reshard_after_forward": "FULL_SHARD"}, "1.5.2", False),
    ({"fsdp_version": 2, "fsdp_reshard_after_forward": True}, None, False),
    ({"fsdp_version": 2, "fsdp_reshard_after_forward": "false"}, "1.14.0", False),
    ({"fsdp_version": 1, "fsdp_reshard_after_forward": "FULL_SHARD"}, "1.14.0", False),
])
def test_reshard_after_forward_under_fsdp2(tmp_path, options, pin, fires):
    assert _codes(tmp_path, options, pin) == (["TRN110"] if fires else [])


@pytest.mark.parametrize("options, pin, fires", [
    ({"fsdp_auto_wrap_policy": "TRANSFORMER_WRAP"}, "0.34.0", True),
    ({"fsdp_auto_wrap_policy": "TRANSFORMER_WRAP"}, "0.33.0", False),  # before: silently no wrapping
    ({"fsdp_auto_wrap_policy": "TRANSFORMER_WRAP"}, None, False),
    ({"fsdp_auto_wrap_policy": "transformer_based_wrap"}, "1.14.0", False),
    ({"fsdp_backward_prefetch": "BACKWARD"}, None, True),
    ({"fsdp_backward_prefetch": "backward_pre"}, "0.30.0", True),
    ({"fsdp_backward_prefetch": "backward_pre"}, "0.34.0", False),
    ({"fsdp_backward_prefetch": "BACKWARD"}, "0.25.0", False),  # fsdp_backward_prefetch_policy then
    ({"fsdp_state_dict_type": 3}, "0.33.0", True),
    ({"fsdp_state_dict_type": 3}, "0.34.0", False),
    ({"fsdp_state_dict_type": "FULL"}, None, True),
    ({"fsdp_state_dict_type": "SHARDED_STATE_DICT"}, None, False),
])
def test_wrap_policy_prefetch_state_dict(tmp_path, options, pin, fires):
    assert _codes(tmp_path, options, pin) == (["TRN110"] if fires else [])


_SIZE = {"fsdp_auto_wrap_policy": "SIZE_BASED_WRAP"}


@pytest.mark.parametrize("options, pin, fires", [
    # int() of the exported string: a float or an exponent is refused by every release
    ({**_SIZE, "fsdp_min_num_params": "1e8"}, None, True),
    ({**_SIZE, "fsdp_min_num_params": 100000000.0}, "1.14.0", True),
    ({**_SIZE, "fsdp_min_num_params": 100000000}, None, False),
    ({**_SIZE, "fsdp_min_num_params": 100000000}, "0.20.0", False),
    ({"fsdp_auto_wrap_policy": "TRANSFORMER_BASED_WRAP", "fsdp_min_num_params": "1e8"}, None, False),  # not read
    # lower-case policy: SIZE_BASED_WRAP from 0.34.0 only (before, no wrapping: min_num_params not read)
    ({"fsdp_auto_wrap_policy": "size_based_wrap", "fsdp_min_num_params": "1e8"}, "0.34.0", True),
    ({"fsdp_auto_wrap_policy": "size_based_wrap", "fsdp_min_num_params": "1e8"}, "0.33.0", False),
    ({"fsdp_auto_wrap_policy": "size_based_wrap", "fsdp_min_num_params": "1e8"}, None, False),
    # left out: the launch's float default 1e8 exported as "100000000.0" until 1.13.0 (#3902)
    (_SIZE, "1.12.0", True), (_SIZE, "0.20.0", True), (_SIZE, "1.13.0", False), (_SIZE, None, False),
    (_SIZE, "0.11.0", False),
])
def test_min_num_params_under_size_based_wrap(tmp_path, options, pin, fires):
    assert _codes(tmp_path, options, pin) == (["TRN110"] if fires else [])


def _silent_bugs(tmp_path, policy: str, pin: str | None, args: str = "") -> list[str]:
    (tmp_path / "accelerate.yaml").write_text(f"distributed_type: FSDP\nnum_processes: 8\nfsdp_config:\n"
                                              f"  fsdp_auto_wrap_policy: {policy}\n")
    (tmp_path / "requirements.txt").write_text(f"accelerate=={pin}\n" if pin else "")
    if args:
        (tmp_path / "train_args.json").write_text(args)
    result = trainlint("check", str(tmp_path), "--select", "TRN074", "--no-detect", "--format", "json")
    assert result.code in (0, 1), result.err
    return [finding["message"] for finding in json.loads(result.out)]


@pytest.mark.parametrize("policy, pin, fires", [
    ("transformer_based_wrap", "0.33.0", True), ("TRANSFORMER_WRAP", "0.20.0", True), ("size", "0.11.0", True),
    ("TRANSFORMER_BASED_WRAP", "0.33.0", False), ("NO_WRAP", "0.20.0", False),
    ("transformer_based_wrap", "0.34.0", False),  # any case from 0.34.0 (others refused: TRN110)
    ("transformer_based_wrap", "0.10.0", False), ("transformer_based_wrap", None, False),
])
def test_wrap_policy_unknown_wraps_nothing_before_0_34(tmp_path, policy, pin, fires):
    found = _silent_bugs(tmp_path, policy, pin)
    assert bool(found) == fires, found
    if fires:
        assert "wraps no layer" in found[0] and f"fsdp_auto_wrap_policy {policy}" in found[0]


def test_wrap_policy_left_to_trainer_arguments_that_turn_fsdp_on(tmp_path):
    """TrainingArguments with fsdp export their own FSDP_AUTO_WRAP_POLICY: the launcher's is not what runs."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "train.sh").write_text("accelerate launch --config_file accelerate.yaml -m trl.scripts.sft "
                                       "--config sft.yaml\n")
    (tmp_path / "sft.yaml").write_text("model_name_or_path: m\ndataset_name: d\noutput_dir: out\n"
                                       "fsdp: full_shard auto_wrap\n")
    assert _silent_bugs(tmp_path, "transformer_based_wrap", "0.33.0") == []
    (tmp_path / "sft.yaml").write_text("model_name_or_path: m\ndataset_name: d\noutput_dir: out\n")
    assert len(_silent_bugs(tmp_path, "transformer_based_wrap", "0.33.0")) == 1
