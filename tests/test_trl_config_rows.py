"""The SFT / DPO / GRPO rows of TRN076 (rules/trl_configs.py), each at the release that added its
check, the release before, and unpinned."""

from __future__ import annotations

import pytest
from test_framework_validators import _codes

_SFT = ("model_name_or_path: Qwen/Qwen2.5-0.5B\ndataset_name: trl-lib/Capybara\ndataset_text_field: text\n"
        "output_dir: out\n")
_HEAD = "use_peft: true\nlora_target_modules: [q_proj, v_proj, lm_head]\n"
_DPO = ("model_name_or_path: Qwen/Qwen2-0.5B-Instruct\ndataset_name: trl-lib/ultrafeedback_binarized\n"
        "output_dir: out\nf_divergence_type: reverse_kl\n")
_GRPO = ("model_name_or_path: Qwen/Qwen2-0.5B-Instruct\ndataset_name: trl-lib/DeepMath-103K\noutput_dir: out\n"
         "num_generations: 8\nlog_completions_hub_repo: me/completions\n")


def _pins(pin):
    return (f"trl=={pin}",) if pin else ()


@pytest.mark.parametrize("pin, fires", [("1.0.0", True), ("1.9.0", True), ("0.29.1", False), (None, False)])
def test_padding_free_without_packing(tmp_path, pin, fires):
    text = _SFT + "padding_free: true\n"
    assert _codes(tmp_path, {"sft.yaml": text}, "TRN076", _pins(pin)) == (["TRN076"] if fires else [])
    # max_length null, packing, or a written max_length with packing: not refused
    for extra in ("max_length: null\n", "packing: true\n", "max_length: 2048\npacking: true\n"):
        assert _codes(tmp_path, {"sft.yaml": text + extra}, "TRN076", _pins(pin)) == []
    assert _codes(tmp_path, {"sft.yaml": text + "max_length: 2048\n"}, "TRN076", _pins(pin)) == (
        ["TRN076"] if fires else [])


@pytest.mark.parametrize("pin, fires", [("1.4.0", True), ("1.3.0", False), (None, False)])
def test_chunked_nll_with_liger(tmp_path, pin, fires):
    text = _SFT + "loss_type: chunked_nll\nuse_liger_kernel: true\n"
    assert _codes(tmp_path, {"sft.yaml": text}, "TRN076", _pins(pin)) == (["TRN076"] if fires else [])
    assert _codes(tmp_path, {"sft.yaml": text.replace("chunked_nll", "nll")}, "TRN076", _pins(pin)) == []


@pytest.mark.parametrize("pin, written, fires", [
    ("1.4.0", True, True), ("1.0.0", True, True), (None, True, True), ("0.22.0", True, False),
    ("1.7.0", False, True), ("1.6.0", False, False), (None, False, False)])
def test_lora_on_lm_head_under_chunked_loss(tmp_path, pin, written, fires):
    text = _SFT + _HEAD + ("loss_type: chunked_nll\n" if written else "")
    assert _codes(tmp_path, {"sft.yaml": text}, "TRN076", _pins(pin)) == (["TRN076"] if fires else [])
    # no adapter on the head, the nll loss, or the Liger kernel (nll by default): not refused
    assert _codes(tmp_path, {"sft.yaml": text.replace(", lm_head", "")}, "TRN076", _pins(pin)) == []
    assert _codes(tmp_path, {"sft.yaml": _SFT + _HEAD + "loss_type: nll\n"}, "TRN076", _pins(pin)) == []
    if not written:
        assert _codes(tmp_path, {"sft.yaml": text + "use_liger_kernel: true\n"}, "TRN076", _pins(pin)) == []


@pytest.mark.parametrize("pin, fires", [("0.29.0", True), ("1.9.0", True), ("0.28.0", False), (None, False)])
def test_dpo_rows(tmp_path, pin, fires):
    exo = _DPO + "loss_type: exo_pair\n"
    assert _codes(tmp_path, {"dpo.yaml": exo}, "TRN076", _pins(pin)) == (["TRN076"] if fires else [])
    assert _codes(tmp_path, {"dpo.yaml": exo + "label_smoothing: 0.001\n"}, "TRN076", _pins(pin)) == []
    liger = _DPO + "use_liger_kernel: true\nprecompute_ref_log_probs: true\n"
    assert _codes(tmp_path, {"dpo.yaml": liger}, "TRN076", _pins(pin)) == (["TRN076"] if fires else [])
    assert _codes(tmp_path, {"dpo.yaml": liger.replace("use_liger_kernel: true", "use_liger_kernel: false")},
                  "TRN076", _pins(pin)) == []


@pytest.mark.parametrize("pin, fires", [("0.28.0", True), ("1.9.0", True), ("0.27.0", False), (None, False)])
def test_grpo_hub_completions(tmp_path, pin, fires):
    assert _codes(tmp_path, {"grpo.yaml": _GRPO}, "TRN076", _pins(pin)) == (["TRN076"] if fires else [])
    assert _codes(tmp_path, {"grpo.yaml": _GRPO + "log_completions: true\n"}, "TRN076", _pins(pin)) == []
