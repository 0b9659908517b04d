"""TRN021: every row of LLaMA-Factory's own argument checks (rules/argument_table.py) fires on the
combination its parser refuses, stays silent on a neighbour the parser accepts, and keeps to its
version bound (a row only newer releases check: silent when the release is older or unknown)."""

from __future__ import annotations

import json

import pytest

from conftest import trainlint
from rules.argument_table import LIFTED, ROWS

_Z3 = '{"train_micro_batch_size_per_gpu": "auto", "zero_optimization": {"stage": 3}}'
_Z3_OFFLOAD = ('{"train_micro_batch_size_per_gpu": "auto", "zero_optimization": {"stage": 3, '
               '"offload_optimizer": {"device": "cpu"}, "offload_param": {"device": "cpu"}}}')
_Z2 = '{"train_micro_batch_size_per_gpu": "auto", "zero_optimization": {"stage": 2}}'
_BASE = {"model_name_or_path": "Qwen/Qwen2.5-7B-Instruct", "template": "qwen", "output_dir": "out"}
_SFT = {"stage": "sft", "do_train": True, "finetuning_type": "lora", "dataset": "alpaca_en_demo"}
_PPO = {"stage": "ppo", "do_train": True, "finetuning_type": "lora", "dataset": "alpaca_en_demo",
        "reward_model": "saves/rm"}
_EXPORT = {"finetuning_type": "lora", "export_dir": "models/out"}
_CHAT = {"finetuning_type": "lora", "infer_backend": "vllm"}  # llamafactory-cli chat / api
_GPTQ, _AWQ = "Qwen/Qwen2-72B-Instruct-GPTQ-Int4", "Qwen/Qwen1.5-32B-Chat-AWQ"  # saved quantized (linter.models)
_NEW = "0.9.4"  # every check at HEAD ff6d4d12 is in 0.9.4


@pytest.fixture(autouse=True)
def _pins_only(nothing_installed):
    """Versions come from the pins each test writes (conftest.nothing_installed)."""


def _yaml(keys: dict) -> str:
    return "".join(f"{key}: {json.dumps(value)}\n" for key, value in {**_BASE, **keys}.items() if value is not None)


def messages(tmp_path, keys: dict, pin: str | None = _NEW, world: int | None = None, ds: str | None = None):
    if pin:
        (tmp_path / "requirements.txt").write_text(f"llamafactory=={pin}\n")
    if ds:
        (tmp_path / "ds.json").write_text(ds)
        keys = {**keys, "deepspeed": "ds.json"}
    (tmp_path / "train.yaml").write_text(_yaml(keys))
    args = ("--world-size", str(world)) if world else ()
    result = trainlint("check", tmp_path / "train.yaml", "--no-detect", "--format", "json", "--select", "TRN021",
                       *args)
    assert result.code in (0, 1), result.err
    return [finding["message"] for finding in json.loads(result.out)]


# (parser message, refused config, the neighbour it accepts, options for both)
CASES = [
    ("`predict_with_generate` cannot be set as True except SFT.",
     {**_SFT, "stage": "dpo", "predict_with_generate": True, "val_size": 0.1}, {"stage": "sft"}, {}),
    ("`neat_packing` cannot be set as True except SFT.", {**_SFT, "stage": "dpo", "neat_packing": True},
     {"stage": "sft"}, {}),
    ("`train_on_prompt` or `mask_history` cannot be set as True except SFT.",
     {**_SFT, "stage": "rm", "train_on_prompt": True}, {"stage": "sft"}, {}),
    ("Please enable `predict_with_generate` to save model predictions.",
     {**_SFT, "do_train": False, "do_predict": True, "eval_dataset": "x"}, {"predict_with_generate": True}, {}),
    ("RM and PPO stages do not support `load_best_model_at_end`.",
     {**_SFT, "stage": "rm", "load_best_model_at_end": True}, {"stage": "dpo"}, {}),
    ("PPO training does not support evaluation, use the SFT stage to evaluate models.",
     {**_PPO, "do_train": False, "do_eval": True, "eval_dataset": "x"}, {"do_train": True}, {}),
    ("PPO training is incompatible with S^2-Attn.", {**_PPO, "shift_attn": True}, {"stage": "sft"}, {}),
    ("Unsloth does not support lora reward model.", {**_PPO, "use_unsloth": True}, {"reward_model_type": "full"}, {}),
    ("PPO only accepts wandb, tensorboard, or trackio logger.", {**_PPO, "report_to": "mlflow"},
     {"report_to": "wandb"}, {}),
    ("Please specify `max_steps` in streaming mode.", {**_SFT, "streaming": True}, {"max_steps": 100}, {}),
    ("Please specify dataset for training.", {**_SFT, "dataset": None}, {"dataset": "alpaca_en_demo"}, {}),
    ("Please make sure eval_dataset be provided or val_size >1e-6", {**_SFT, "eval_strategy": "steps"},
     {"val_size": 0.05}, {}),
    ("Please make sure eval_dataset be provided or val_size >1e-6", {**_SFT, "do_train": False, "do_eval": True},
     {"eval_dataset": "x"}, {}),
    ("Cannot use `predict_with_generate` and `compute_accuracy` together.",
     {**_SFT, "val_size": 0.1, "predict_with_generate": True, "compute_accuracy": True},
     {"predict_with_generate": False}, {}),
    ("Cannot use device map for quantized models in training.",
     {**_SFT, "quantization_bit": 4, "quantization_device_map": "auto"}, {"quantization_device_map": None}, {}),
    ("Please use scripts/pissa_init.py to initialize PiSSA in DeepSpeed ZeRO-3.", {**_SFT, "pissa_init": True},
     {"pissa_init": False}, {"ds": _Z3}),
    ("`pure_bf16` is incompatible with DeepSpeed ZeRO-3.", {**_SFT, "finetuning_type": "full", "pure_bf16": True},
     {"pure_bf16": False}, {"ds": _Z3}),
    ("Radio-based BAdam does not yet support distributed training, use layer-wise BAdam.",
     {**_SFT, "finetuning_type": "full", "use_badam": True, "badam_mode": "ratio"}, {"use_badam": False},
     {"world": 2}),
    ("Layer-wise BAdam only supports DeepSpeed ZeRO-3 training.",
     {**_SFT, "finetuning_type": "full", "use_badam": True}, {"use_badam": False}, {"world": 2, "ds": _Z2}),
    ("FP8 training is not compatible with quantization. Please disable one of them.",
     {**_SFT, "fp8": True, "quantization_bit": 4}, {"quantization_bit": None}, {}),
    ("vLLM/SGLang backend is only available for API, CLI and Web.", {**_SFT, "infer_backend": "vllm"},
     {"infer_backend": "huggingface"}, {}),
    ("Adapter is only valid for the LoRA method.", {**_SFT, "finetuning_type": "full", "adapter_name_or_path": "a"},
     {"finetuning_type": "lora"}, {}),
    ("Please use scripts/pissa_init.py to initialize PiSSA for a quantized model.",
     {**_SFT, "quantization_bit": 4, "pissa_init": True}, {"quantization_bit": None}, {}),
    ("Cannot resize embedding layers of a quantized model.", {**_SFT, "quantization_bit": 4, "resize_vocab": True},
     {"quantization_bit": None}, {}),
    ("Cannot create new adapter upon a quantized model.",
     {**_SFT, "quantization_bit": 4, "adapter_name_or_path": "a", "create_new_adapter": True},
     {"create_new_adapter": False}, {}),
    ("Quantized model only accepts a single adapter. Merge them first.",
     {**_SFT, "quantization_bit": 4, "adapter_name_or_path": "a,b"}, {"adapter_name_or_path": "a"}, {}),
    ("Quantized model only accepts a single adapter.", {**_SFT, "model_name_or_path": _GPTQ, "adapter_name_or_path": "a,b"},
     {"adapter_name_or_path": "a"}, {}),
    ("Cannot initialize PiSSA adapter on quantized models.",
     {**_SFT, "model_name_or_path": _AWQ, "pissa_init": True}, {"model_name_or_path": "Qwen/Qwen1.5-32B-Chat"}, {}),
    ("`image_max_pixels` cannot be smaller than `image_min_pixels`.",
     {**_SFT, "image_max_pixels": 1024, "image_min_pixels": 4096}, {"image_max_pixels": 589824}, {}),
    ("`video_max_pixels` cannot be smaller than `video_min_pixels`.", {**_SFT, "video_min_pixels": 262144},
     {"video_max_pixels": 262144}, {}),
    ("vLLM engine only supports auto-regressive models.", {**_CHAT, "stage": "rm"}, {"stage": "sft"}, {}),
    ("vLLM engine does not support bnb quantization (GPTQ and AWQ are supported).", {**_CHAT, "quantization_bit": 4},
     {"infer_backend": "huggingface"}, {}),
    ("vLLM engine does not support RoPE scaling.", {**_CHAT, "rope_scaling": "linear"}, {"rope_scaling": None}, {}),
    ("vLLM only accepts a single adapter. Merge them first.", {**_CHAT, "adapter_name_or_path": "a,b"},
     {"adapter_name_or_path": "a"}, {}),
    ("Cannot specify `val_size` if `dataset` is None.", {"finetuning_type": "lora", "val_size": 0.1},
     {"dataset": "x"}, {}),
    ("Cannot specify `val_size` if `eval_dataset` is not None.", {**_SFT, "eval_dataset": "x", "val_size": 0.1},
     {"val_size": None}, {}),
    ("`interleave_probs` is only valid for interleaved mixing.",
     {**_SFT, "dataset": "a,b", "interleave_probs": "0.5,0.5"}, {"mix_strategy": "interleave_under"}, {}),
    ("The length of dataset and interleave probs should be identical.",
     {**_SFT, "dataset": "a,b", "mix_strategy": "interleave_under", "interleave_probs": "0.5,0.3,0.2"},
     {"interleave_probs": [0.5, 0.5]}, {}),
    ("The length of eval dataset and interleave probs should be identical.",
     {**_SFT, "dataset": "a,b", "eval_dataset": "c", "mix_strategy": "interleave_under", "interleave_probs": "0.5,0.5"},
     {"eval_dataset": "c,d"}, {}),
    ("Streaming mode should have an integer val size.", {**_SFT, "streaming": True, "max_steps": 9, "val_size": 0.1},
     {"val_size": 100}, {}),
    ("`max_samples` is incompatible with `streaming`.", {**_SFT, "streaming": True, "max_steps": 9, "max_samples": 9},
     {"streaming": False}, {}),
    ("`mask_history` is incompatible with `train_on_prompt`.",
     {**_SFT, "mask_history": True, "train_on_prompt": True}, {"train_on_prompt": False}, {}),
    ("`reward_model` is necessary for PPO training.", {**_PPO, "reward_model": None}, {"reward_model": "saves/rm"}, {}),
    ("`reward_model_type` cannot be lora for Freeze/Full PPO training.", {**_PPO, "finetuning_type": "full"},
     {"reward_model_type": "full"}, {}),
    ("`reward_model_type` cannot be oft for Freeze/Full PPO training.", {**_PPO, "reward_model_type": "oft"},
     {"finetuning_type": "oft"}, {}),
    ("`dpo_label_smoothing` is only valid for sigmoid loss function.",
     {**_SFT, "stage": "dpo", "pref_loss": "ipo", "dpo_label_smoothing": 0.1}, {"pref_loss": "sigmoid"}, {}),
    ("`use_llama_pro` is only valid for Freeze or LoRA training.",
     {**_SFT, "finetuning_type": "full", "use_llama_pro": True}, {"finetuning_type": "freeze"}, {}),
    ("Cannot use LoRA with GaLore, APOLLO or BAdam together.", {**_SFT, "use_galore": True},
     {"finetuning_type": "full"}, {}),
    ("Cannot use LoRA with GaLore, APOLLO or BAdam together.", {**_SFT, "use_badam": True},
     {"finetuning_type": "full"}, {}),
    ("Cannot use PiSSA for current training stage.", {**_SFT, "stage": "kto", "pissa_init": True},
     {"stage": "sft"}, {}),
    ("`loraplus_lr_ratio` is only valid for LoRA training.",
     {**_SFT, "finetuning_type": "freeze", "loraplus_lr_ratio": 16.0}, {"finetuning_type": "lora"}, {}),
    ("`use_rslora` is only valid for LoRA training.", {**_SFT, "finetuning_type": "full", "use_rslora": True},
     {"finetuning_type": "lora"}, {}),
    ("`use_dora` is only valid for LoRA training.", {**_SFT, "finetuning_type": "oft", "use_dora": True},
     {"finetuning_type": "lora"}, {}),
    ("`pissa_init` is only valid for LoRA training.", {**_SFT, "finetuning_type": "full", "pissa_init": True},
     {"finetuning_type": "lora"}, {}),
    ("Quantization dataset is necessary for exporting.", {**_EXPORT, "export_quantization_bit": 4},
     {"export_quantization_dataset": "data/c4_demo.jsonl"}, {}),
    ("Please merge adapters before quantizing the model.",
     {**_EXPORT, "adapter_name_or_path": "a", "export_quantization_bit": 4, "export_quantization_dataset": "c4"},
     {"adapter_name_or_path": None}, {}),
    ("Cannot merge adapters to a quantized model.", {**_EXPORT, "adapter_name_or_path": "a", "quantization_bit": 4},
     {"quantization_bit": None}, {}),
    ("Cannot merge adapters to a quantized model.", {**_EXPORT, "adapter_name_or_path": "a", "model_name_or_path": _GPTQ},
     {"adapter_name_or_path": None}, {}),
]


# Checks later releases dropped: (message, refused config, the accepted neighbour, a release with the
# check, the first release without it, options)
LIFTED_CASES = [
    ("`predict_with_generate` cannot be set as True while training.",
     {**_SFT, "predict_with_generate": True, "val_size": 0.1}, {"do_train": False, "do_predict": True},
     "0.8.2", "0.8.3", {}),
    ("Turn off mixed precision training when using `pure_bf16`.", {**_SFT, "pure_bf16": True, "bf16": True},
     {"bf16": False}, "0.8.2", "0.8.3", {}),
    ("Unsloth does not support DoRA.", {**_SFT, "use_unsloth": True, "use_dora": True}, {"use_dora": False},
     "0.8.1", "0.8.2", {}),
    ("Layer-wise BAdam does not yet support distributed training, use ratio-wise BAdam.",
     {**_SFT, "finetuning_type": "full", "use_badam": True}, {"badam_mode": "ratio"}, "0.8.2", "0.8.3",
     {"world": 2}),
    ("GaLore and BAdam are incompatible with DeepSpeed yet.", {**_SFT, "finetuning_type": "full", "use_badam": True},
     {"use_badam": False}, "0.8.2", "0.8.3", {"ds": _Z2}),
    ("Please specify which `template` to use.", {**_SFT, "template": None}, {"stage": "pt"}, "0.9.1", "0.9.2", {}),
    ("`split_special_tokens` is only supported for slow tokenizers.", {**_SFT, "split_special_tokens": True},
     {"use_fast_tokenizer": False}, "0.9.4", "0.9.5", {}),
]


def test_every_lifted_row_has_a_case():
    assert {row.message for row in LIFTED} == {message for message, *_ in LIFTED_CASES}


@pytest.mark.parametrize("message, refused, change, within, lifted, options", LIFTED_CASES,
                         ids=[f"{i}" for i in range(len(LIFTED_CASES))])
def test_lifted_row_fires_only_while_the_release_has_it(tmp_path, message, refused, change, within, lifted,
                                                        options):
    for name, keys, pin, fires in (("within", refused, within, True), ("neighbour", {**refused, **change}, within,
                                   False), ("lifted", refused, lifted, False), ("unpinned", refused, None, False)):
        (tmp_path / name).mkdir()
        found = messages(tmp_path / name, keys, pin=pin, **options)
        assert any(message in text for text in found) is fires, (name, found)


def test_every_row_has_a_case():
    assert {row.message for row in ROWS} == {message for message, *_ in CASES}


@pytest.mark.parametrize("message, refused, change, options", CASES, ids=[f"{i}" for i in range(len(CASES))])
def test_row_fires_and_its_neighbour_does_not(tmp_path, message, refused, change, options):
    assert any(message in found for found in messages(tmp_path / "refused", refused, **_made(tmp_path, "refused",
                                                                                             options)))
    neighbour = {**refused, **change}
    assert not any(message in found for found in messages(tmp_path / "accepted", neighbour,
                                                          **_made(tmp_path, "accepted", options)))


def _made(tmp_path, name: str, options: dict) -> dict:
    (tmp_path / name).mkdir()
    return options


def test_bounded_row_silent_without_a_pin_and_before_its_release(tmp_path):
    refused = {**_SFT, "finetuning_type": "full", "use_dora": True}  # `use_dora` check from 0.8.3 (3d219b91b)
    for name, pin, fires in (("unpinned", None, False), ("old", "0.8.2", False), ("new", "0.8.3", True)):
        (tmp_path / name).mkdir()
        found = messages(tmp_path / name, refused, pin=pin)
        assert any("`use_dora` is only valid" in message for message in found) is fires, name


def test_always_row_fires_without_a_pin_and_names_the_older_failure(tmp_path):
    refused = {**_SFT, "eval_strategy": "steps"}
    for name, pin, says in (("unpinned", None, "the launch refuses it"),
                            ("old", "0.9.3", "llamafactory 0.9.3 ("),
                            ("new", "0.9.4", "the launch refuses it")):
        (tmp_path / name).mkdir()
        found = messages(tmp_path / name, refused, pin=pin)
        assert len(found) == 1 and found[0].startswith(says) and "first evaluation" in found[0], (name, found)
        assert ("does not check it yet" in found[0]) is (pin == "0.9.3")


def test_predict_without_eval_set_is_only_refused_from_its_release(tmp_path):
    """Before 0.9.4 a predict-only run predicted on `dataset` (data split_dataset): no hazard."""
    refused = {**_SFT, "do_train": False, "do_predict": True, "predict_with_generate": True}
    for name, pin, fires in (("unpinned", None, False), ("old", "0.9.3", False), ("new", "0.9.4", True)):
        (tmp_path / name).mkdir()
        assert bool(messages(tmp_path / name, refused, pin=pin)) is fires, name


def test_evaluation_from_a_tokenized_path_is_only_refused_from_its_release(tmp_path):
    refused = {**_SFT, "eval_strategy": "steps", "tokenized_path": "data/tokenized"}
    for name, pin, fires in (("unpinned", None, False), ("old", "0.9.3", False), ("new", "0.9.4", True)):
        (tmp_path / name).mkdir()
        assert bool(messages(tmp_path / name, refused, pin=pin)) is fires, name


def test_ppo_evaluation_without_a_set_is_only_refused_from_its_release(tmp_path):
    refused = {**_PPO, "eval_strategy": "steps"}
    for name, pin, fires in (("unpinned", None, False), ("old", "0.9.3", False), ("new", "0.9.4", True)):
        (tmp_path / name).mkdir()
        assert bool(messages(tmp_path / name, refused, pin=pin)) is fires, name


def test_pure_bf16_under_zero3_offload_fires_on_any_release(tmp_path):
    """LLaMA-Factory#3476: ZeRO-3 with CPU offload crashed before the check; without offload it ran."""
    refused = {**_SFT, "finetuning_type": "full", "pure_bf16": True}
    for name, ds, fires in (("offload", _Z3_OFFLOAD, True), ("plain", _Z3, False)):
        (tmp_path / name).mkdir()
        assert bool(messages(tmp_path / name, refused, pin=None, ds=ds)) is fires, name


def test_ppo_report_to_all_is_not_decided(tmp_path):
    assert messages(tmp_path, {**_PPO, "report_to": "all"}) == []


def test_inference_configs_are_not_training_configs(tmp_path):
    """A chat config naming vLLM is what the vLLM check in get_train_args is not about."""
    assert messages(tmp_path, {"finetuning_type": "lora", "adapter_name_or_path": "a", "infer_backend": "vllm"}) == []


# Rows whose hazard holds in every release that can read the file (bench/llamafactory_key_history.md:
# the check is as old as the keys, or older releases failed too): they fire without a pin.
UNPINNED = [
    ({**_SFT, "stage": "rm", "predict_with_generate": True, "val_size": 0.1}, {}, "except SFT"),
    ({**_PPO, "do_train": False, "do_eval": True, "eval_dataset": "x"}, {}, "PPO training does not support evaluation"),
    ({**_PPO, "use_unsloth": True}, {}, "Unsloth does not support lora reward model"),
    ({**_SFT, "finetuning_type": "full", "use_badam": True}, {"world": 16}, "Layer-wise BAdam only supports"),
    ({**_CHAT, "quantization_bit": 4}, {}, "vLLM engine does not support bnb quantization"),
    ({**_CHAT, "adapter_name_or_path": "a,b"}, {}, "vLLM only accepts a single adapter"),
    ({**_EXPORT, "adapter_name_or_path": "a", "model_name_or_path": _GPTQ}, {}, "Cannot merge adapters"),
    ({**_SFT, "model_name_or_path": _AWQ, "pissa_init": True}, {}, "Cannot initialize PiSSA adapter"),
    ({**_SFT, "model_name_or_path": _GPTQ, "adapter_name_or_path": "a,b"}, {}, "only accepts a single adapter."),
]


@pytest.mark.parametrize("refused, options, says", UNPINNED, ids=[f"{i}" for i in range(len(UNPINNED))])
def test_always_rows_fire_without_a_pin(tmp_path, refused, options, says):
    assert any(says in found for found in messages(tmp_path, refused, pin=None, **options))


def test_pissa_under_zero3_stays_pinned(tmp_path):
    """pissa_init came in 0.8.2, the ZeRO-3 check in 0.8.3: 0.8.2 with PEFT >= 0.12 (#1887 gathers the
    weight before PiSSA's SVD) is not known to fail, so the row needs a pin."""
    refused = {**_SFT, "pissa_init": True}
    for name, pin, fires in (("unpinned", None, False), ("old", "0.8.2", False), ("new", "0.8.3", True)):
        (tmp_path / name).mkdir()
        found = messages(tmp_path / name, refused, pin=pin, ds=_Z3)
        assert any("initialize PiSSA in DeepSpeed ZeRO-3" in text for text in found) is fires, name


def test_prequantized_rows_read_the_local_config_and_skip_dequantized_methods(tmp_path):
    """A local checkpoint's quantization_config decides; FP8 is dequantized on load (silent)."""
    for name, method, fires in (("gptq", "gptq", True), ("fp8", "fp8", False)):
        (tmp_path / name / "base").mkdir(parents=True)
        (tmp_path / name / "base" / "config.json").write_text(
            json.dumps({"model_type": "llama", "quantization_config": {"quant_method": method, "bits": 4}}))
        found = messages(tmp_path / name, {**_EXPORT, "adapter_name_or_path": "a", "model_name_or_path": "base"},
                         pin=None)
        assert any("Cannot merge adapters" in text for text in found) is fires, (name, found)
