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


# ---- rows of rules/trl_config_rows.py: each fires at the release that added its check, not at the
# release before, and unpinned only where every release that reads the keys refuses them

_KTO = ("model_name_or_path: Qwen/Qwen2-0.5B-Instruct\ndataset_name: trl-lib/kto-mix-14k\noutput_dir: out\n"
        "desirable_weight: 1.0\n")
_GRPO_PLAIN = _GRPO.replace("log_completions_hub_repo: me/completions\n", "")


@pytest.mark.parametrize("pin, fires", [("0.16.0", True), ("1.9.0", True), ("0.15.0", False), (None, True)])
def test_packing_without_max_length(tmp_path, pin, fires):
    text = _SFT + "packing: true\nmax_length: null\n"
    assert _codes(tmp_path, {"sft.yaml": text}, "TRN076", _pins(pin)) == (["TRN076"] if fires else [])
    # a length, no packing, or no dataset preparation: not refused
    for clean in (text.replace("null", "2048"), text.replace("packing: true", "packing: false"),
                  text + "dataset_kwargs:\n  skip_prepare_dataset: true\n"):
        assert _codes(tmp_path, {"sft.yaml": clean}, "TRN076", _pins(pin)) == []


@pytest.mark.parametrize("pin, fires", [("0.15.0", True), ("0.16.0", False), ("0.14.0", False), (None, False)])
def test_packing_without_max_seq_length(tmp_path, pin, fires):
    text = _SFT + "packing: true\nmax_seq_length: null\n"
    assert _codes(tmp_path, {"sft.yaml": text}, "TRN076", _pins(pin)) == (["TRN076"] if fires else [])


@pytest.mark.parametrize("pin, fires", [("0.20.0", True), ("1.9.0", True), ("0.19.0", False), (None, True)])
def test_dpo_loss_weights_length(tmp_path, pin, fires):
    text = _DPO + "loss_type: [sigmoid, sft]\nloss_weights: [1.0]\n"
    assert _codes(tmp_path, {"dpo.yaml": text}, "TRN076", _pins(pin)) == (["TRN076"] if fires else [])
    assert _codes(tmp_path, {"dpo.yaml": _DPO + "loss_weights: [1.0, 0.5]\n"}, "TRN076", _pins(pin)) == (
        ["TRN076"] if fires else [])
    assert _codes(tmp_path, {"dpo.yaml": text.replace("[1.0]", "[1.0, 0.5]")}, "TRN076", _pins(pin)) == []


@pytest.mark.parametrize("pin, fires", [("0.29.0", True), ("1.9.0", True), ("0.28.0", False), (None, False)])
def test_dpo_weighting_with_aot(tmp_path, pin, fires):
    text = _DPO + "loss_type: aot_unpaired\nuse_weighting: true\n"
    assert _codes(tmp_path, {"dpo.yaml": text}, "TRN076", _pins(pin)) == (["TRN076"] if fires else [])
    assert _codes(tmp_path, {"dpo.yaml": text.replace("aot_unpaired", "sigmoid")}, "TRN076", _pins(pin)) == []


@pytest.mark.parametrize("pin, head, rest", [
    ("1.8.0", True, False), ("1.9.0", True, False), ("1.7.0", True, True), ("0.29.0", True, True),
    ("0.28.0", False, False), (None, False, False)])
def test_dpo_liger_with_peft(tmp_path, pin, head, rest):
    text = _DPO + "use_liger_kernel: true\n" + _HEAD
    assert _codes(tmp_path, {"dpo.yaml": text}, "TRN076", _pins(pin)) == (["TRN076"] if head else [])
    # a LoRA elsewhere: refused only 0.29 to 1.7 (any PEFT model)
    assert _codes(tmp_path, {"dpo.yaml": text.replace(", lm_head", "")}, "TRN076", _pins(pin)) == (
        ["TRN076"] if rest else [])
    assert _codes(tmp_path, {"dpo.yaml": text.replace("use_liger_kernel: true", "use_liger_kernel: false")},
                  "TRN076", _pins(pin)) == []


@pytest.mark.parametrize("pin, fires", [("1.6.0", True), ("1.9.0", True), ("1.5.0", False), (None, False)])
def test_kto_sampling_strategy(tmp_path, pin, fires):
    text = _KTO + "train_sampling_strategy: random\n"
    assert _codes(tmp_path, {"kto.yaml": text}, "TRN076", _pins(pin)) == (["TRN076"] if fires else [])
    # apo_zero_unpaired estimates no KL term; sequential is the default
    assert _codes(tmp_path, {"kto.yaml": text + "loss_type: apo_zero_unpaired\n"}, "TRN076", _pins(pin)) == []
    assert _codes(tmp_path, {"kto.yaml": text.replace("random", "sequential")}, "TRN076", _pins(pin)) == []


@pytest.mark.parametrize("extra, pin, fires", [
    # top_entropy_quantile: 0.20.0 (use_liger_loss until 0.24, use_liger_kernel from 0.25)
    ("use_liger_loss: true\ntop_entropy_quantile: 0.2\n", "0.20.0", True),
    ("use_liger_loss: true\ntop_entropy_quantile: 0.2\n", "0.19.0", False),
    ("use_liger_loss: true\ntop_entropy_quantile: 0.2\n", None, True),
    ("use_liger_kernel: true\ntop_entropy_quantile: 0.2\n", "0.24.0", False),
    ("use_liger_kernel: true\ntop_entropy_quantile: 0.2\n", "0.25.0", True),
    ("use_liger_kernel: true\ntop_entropy_quantile: 0.2\n", None, False),
    ("use_liger_kernel: true\ntop_entropy_quantile: 1.0\n", "1.9.0", False),
    # off_policy_mask_threshold: 0.27.0
    ("use_liger_kernel: true\noff_policy_mask_threshold: 0.5\n", "0.27.0", True),
    ("use_liger_kernel: true\noff_policy_mask_threshold: 0.5\n", "0.26.0", False),
    ("use_liger_kernel: false\noff_policy_mask_threshold: 0.5\n", "1.9.0", False),
    # the entropy bonus: 1.8.0
    ("use_liger_kernel: true\nentropy_coef: 0.01\n", "1.8.0", True),
    ("use_liger_kernel: true\nuse_adaptive_entropy: true\n", "1.9.0", True),
    ("use_liger_kernel: true\nentropy_coef: 0.01\n", "1.7.0", False),
    ("use_liger_kernel: true\nentropy_coef: 0.0\n", "1.9.0", False),
    # delta (two-sided clipping): 0.18.0 to 1.3.x
    ("use_liger_loss: true\ndelta: 2.0\n", "0.18.0", True),
    ("use_liger_loss: true\ndelta: 2.0\n", "0.17.0", False),
    ("use_liger_kernel: true\ndelta: 2.0\n", "1.3.0", True),
    ("use_liger_kernel: true\ndelta: 2.0\n", "1.4.0", False),
    ("use_liger_kernel: true\ndelta: 2.0\n", None, False),
])
def test_grpo_liger_rows(tmp_path, extra, pin, fires):
    assert _codes(tmp_path, {"grpo.yaml": _GRPO_PLAIN + extra}, "TRN076", _pins(pin)) == (["TRN076"] if fires else [])


@pytest.mark.parametrize("pin", ["1.9.0", "0.8.0", None])
def test_both_bit_widths(tmp_path, pin):
    text = _SFT + "load_in_4bit: true\nload_in_8bit: true\n"
    assert _codes(tmp_path, {"sft.yaml": text}, "TRN076", _pins(pin)) == ["TRN076"]
    assert _codes(tmp_path, {"sft.yaml": text.replace("load_in_4bit: true", "load_in_4bit: false")}, "TRN076",
                  _pins(pin)) == []


_IS = "vllm_importance_sampling_"


@pytest.mark.parametrize("extra, pin, fires", [
    # clip_min not below clip_max: 1.6.0 (0bef67208); clip_max unwritten is 3.0, a written cap replaces it
    (f"{_IS}clip_min: 2.0\n{_IS}clip_max: 2.0\n", "1.6.0", True),
    (f"{_IS}clip_min: 2.0\n{_IS}clip_max: 2.0\n", "1.9.0", True),
    (f"{_IS}clip_min: 2.0\n{_IS}clip_max: 2.0\n", "1.5.0", False),
    (f"{_IS}clip_min: 2.0\n{_IS}clip_max: 2.0\n", None, True),
    (f"{_IS}clip_min: 4.0\n", "1.9.0", True),
    (f"{_IS}clip_min: 0.5\n{_IS}cap: 0.5\n{_IS}clip_max: 5.0\n", "1.9.0", True),
    (f"{_IS}clip_min: 0.5\n{_IS}clip_max: 2.0\n", "1.9.0", False),
    (f"{_IS}clip_min: 0.5\n", "1.9.0", False),
    (f"{_IS}clip_min: 4.0\n{_IS}clip_max: null\n", "1.9.0", False),
    # a *_truncate mode with neither bound: 1.6.0 (0bef67208)
    (f"{_IS}mode: token_truncate\n{_IS}clip_max: null\n", "1.6.0", True),
    (f"{_IS}mode: sequence_truncate\n{_IS}clip_max: null\n", "1.9.0", True),
    (f"{_IS}mode: sequence_truncate\n{_IS}clip_max: null\n", "1.5.0", False),
    (f"{_IS}mode: sequence_truncate\n{_IS}clip_max: null\n", None, True),
    (f"{_IS}mode: token_truncate\n{_IS}clip_max: null\n{_IS}clip_min: 0.5\n", "1.9.0", False),
    (f"{_IS}mode: token_truncate\n{_IS}clip_max: null\n{_IS}correction: false\n", "1.9.0", False),
    (f"{_IS}mode: token_mask\n{_IS}clip_max: null\n", "1.9.0", False),
    (f"{_IS}mode: token_truncate\n", "1.9.0", False),
])
def test_grpo_importance_sampling_rows(tmp_path, extra, pin, fires):
    assert _codes(tmp_path, {"grpo.yaml": _GRPO_PLAIN + extra}, "TRN076", _pins(pin)) == (["TRN076"] if fires else [])
