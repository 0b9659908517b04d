"""DS025 rows from DeepSpeed's engine and ZeRO optimizers (rules/deepspeed_engine_rows.py): each
fires inside its release range, and with the version unknown only where every release refuses."""

from __future__ import annotations

import json

import pytest

from conftest import trainlint


@pytest.fixture(autouse=True)
def _pins_only(nothing_installed):
    """Versions come from the pins each test writes (conftest.nothing_installed)."""


def _codes(tmp_path, config: dict, pin: str | None):
    (tmp_path / "ds_config.json").write_text(json.dumps(config))
    if pin:
        (tmp_path / "requirements.txt").write_text(f"deepspeed=={pin}\n")
    result = trainlint("check", str(tmp_path / "ds_config.json"), "--select", "DS025", "--no-detect", "--format", "json")
    assert result.code in (0, 1), result.err
    return [finding["code"] for finding in json.loads(result.out)]


_ADAM = {"type": "AdamW", "params": {"lr": "auto"}}  # "auto": a trainer fills the file and builds the engine


@pytest.mark.parametrize("key, value", [("prescale_gradients", True), ("gradient_predivide_factor", 8)])
@pytest.mark.parametrize("stage, zero, pin, fires", [
    (2, {}, None, True), (3, {}, None, True), (3, {}, "0.19.5", True), (2, {"reduce_scatter": False}, None, False),
    (1, {}, "0.12.6", True), (1, {}, "0.13.0", False), (1, {}, "0.3.16", False), (1, {}, None, False),
    (0, {}, None, False)])
def test_rescaled_reduction_with_reduce_scatter(tmp_path, key, value, stage, zero, pin, fires):
    config = {"train_micro_batch_size_per_gpu": "auto", key: value, "optimizer": _ADAM,
              "zero_optimization": {"stage": stage, **zero}}
    assert _codes(tmp_path, config, pin) == (["DS025"] if fires else [])


def test_rescaled_reduction_needs_an_optimizer_and_a_changed_value(tmp_path):
    bare = {"prescale_gradients": True, "zero_optimization": {"stage": 3}}  # no optimizer, no trainer: ZeRO-Offload
    assert _codes(tmp_path, bare, None) == []
    plain = {"train_micro_batch_size_per_gpu": "auto", "prescale_gradients": False, "gradient_predivide_factor": 1.0,
             "optimizer": _ADAM, "zero_optimization": {"stage": 2}}
    assert _codes(tmp_path, plain, None) == []


@pytest.mark.parametrize("stage, zero, pin, fires", [
    (1, {}, "0.5.7", False), (1, {}, "0.5.8", True), (3, {}, "0.8.1", True), (3, {}, "0.8.2", False),
    (2, {}, "0.8.3", True), (2, {"reduce_scatter": False}, "0.8.3", False), (2, {}, "0.9.0", False),
    (2, {}, None, False)])
def test_fp32_communication_under_zero(tmp_path, stage, zero, pin, fires):
    config = {"train_micro_batch_size_per_gpu": "auto", "communication_data_type": "fp32", "optimizer": _ADAM,
              "zero_optimization": {"stage": stage, **zero}}
    assert _codes(tmp_path, config, pin) == (["DS025"] if fires else [])


_CPU = {"offload_optimizer": {"device": "cpu"}}


@pytest.mark.parametrize("block, stage, zero, optimizer, pin, fires", [
    ({"fp16": {"enabled": True, "fp16_master_weights_and_grads": True}}, 2, {}, _ADAM, "0.12.6", True),
    ({"fp16": {"enabled": True, "fp16_master_weights_and_grads": True}}, 2, _CPU, _ADAM, "0.12.6", False),
    ({"fp16": {"enabled": True, "fp16_master_weights_and_grads": True}}, 3, {}, _ADAM, "0.19.5", True),
    ({"fp16": {"enabled": True, "fp16_master_weights_and_grads": True}}, 2, _CPU,
     {"type": "Lion", "params": {"lr": "auto"}}, "0.19.5", True),
    ({"fp16": {"enabled": True, "fp16_master_weights_and_grads": True}}, 2, {}, _ADAM, None, False),
    ({"bf16": {"enabled": True, "bf16_master_weights_and_grads": True}}, 2, {}, _ADAM, "0.18.3", True),
    ({"bf16": {"enabled": True, "bf16_master_weights_and_grads": True}}, 3, _CPU, _ADAM, "0.18.3", False),
    ({"bf16": {"enabled": True, "bf16_master_weights_and_grads": True, "bf16_optimizer_states": True}}, 2, {}, _ADAM,
     "0.18.3", False)])
def test_master_weights_need_cpu_adam(tmp_path, block, stage, zero, optimizer, pin, fires):
    config = {"train_micro_batch_size_per_gpu": "auto", **block, "optimizer": optimizer,
              "zero_optimization": {"stage": stage, **zero}}
    assert _codes(tmp_path, config, pin) == (["DS025"] if fires else [])


@pytest.mark.parametrize("precision, accum, pin, fires", [
    ({"bf16": {"enabled": True}}, "fp32", "0.18.3", False), ({"bf16": {"enabled": True}}, "fp32", "0.18.5", True),
    ({"bf16": {"enabled": True}}, "fp32", None, False),
    ({"bf16": {"enabled": True}}, "bf16", "0.16.4", True), ({"bf16": {"enabled": True}}, "bf16", "0.17.6", False),
    ({"bf16": {"enabled": True}}, "fp16", "0.19.5", True), ({"bf16": {"enabled": True}}, "fp16", "0.7.5", False),
    ({}, "bf16", "0.12.6", True), ({}, "fp32", "0.12.6", False), ({"bf16": {"enabled": "auto"}}, "fp16", "0.12.6", False)])
def test_accumulation_dtype_without_zero(tmp_path, precision, accum, pin, fires):
    config = {"train_micro_batch_size_per_gpu": "auto", **precision, "data_types": {"grad_accum_dtype": accum},
              "optimizer": _ADAM, "zero_optimization": {"stage": 0}}
    assert _codes(tmp_path, config, pin) == (["DS025"] if fires else [])


def test_bf16_accumulation_without_zero_is_silent_for_a_pipeline_engine(tmp_path):
    """A bare file (no trainer, no "auto") may feed a PipelineEngine, which took bf16 accumulation."""
    config = {"train_micro_batch_size_per_gpu": 4, "bf16": {"enabled": True}, "data_types": {"grad_accum_dtype": "bf16"},
              "optimizer": {"type": "AdamW", "params": {"lr": 1e-4}}}
    assert _codes(tmp_path, config, "0.16.4") == []


@pytest.mark.parametrize("precision, stage, pin, fires", [
    ({"fp16": {"enabled": True}}, 0, "0.12.6", True), ({"fp16": {"enabled": True}}, 0, "0.2.0", False),
    ({"fp16": {"enabled": True}}, 0, None, False), ({}, 0, "0.12.6", False)])
def test_amp_with_deepspeed_precision(tmp_path, precision, stage, pin, fires):
    config = {"train_micro_batch_size_per_gpu": "auto", "amp": {"enabled": True}, **precision, "optimizer": _ADAM,
              "zero_optimization": {"stage": stage}}
    assert _codes(tmp_path, config, pin) == (["DS025"] if fires else [])
