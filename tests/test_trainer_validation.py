"""TRN040-TRN044: the table of argument combinations the HF Trainer refuses at launch
(rules/trainer_arguments.py), by row: fires, stays silent, and respects the release bounds."""

from __future__ import annotations

import json
import textwrap

import pytest

from conftest import trainlint


@pytest.fixture(autouse=True)
def _pins_only(nothing_installed):
    """Versions come from the pins each test writes (conftest.nothing_installed)."""


def _codes(tmp_path, text, pins=None, files=None, select="TRN040,TRN041,TRN042,TRN043,TRN044"):
    (tmp_path / "args.yaml").write_text(textwrap.dedent(text))
    if pins:
        (tmp_path / "requirements.txt").write_text("\n".join(pins) + "\n")
    for name, body in (files or {}).items():
        (tmp_path / name).write_text(body)
    result = trainlint("check", str(tmp_path / "args.yaml"), "--select", select, "--no-detect", "--format", "json")
    assert result.code in (0, 1), result.err
    return [finding["code"] for finding in json.loads(result.out)]


_TRAINER = "output_dir: out\nper_device_train_batch_size: 8\ngradient_accumulation_steps: 1\n"


@pytest.mark.parametrize("extra, code", [
    ("dataloader_prefetch_factor: 2\n", "TRN040"),
    ("torch_empty_cache_steps: -5\n", "TRN040"),
    ("lr_scheduler_type: reduce_lr_on_plateau\neval_strategy: 'no'\n", "TRN041"),
    ("eval_strategy: steps\neval_steps: 30\nsave_strategy: steps\nsave_steps: 100\nload_best_model_at_end: true\n", "TRN041"),
    ("optim: galore_adafactor\n", "TRN044"),
    ("optim: apollo_adamw_layerwise\noptim_target_modules: [attn]\ngradient_accumulation_steps: 2\n", "TRN044"),
])
def test_rows_without_bounds_fire_whatever_the_version(tmp_path, extra, code):
    text = _TRAINER.replace("gradient_accumulation_steps: 1\n", "") if "gradient_accumulation_steps" in extra else _TRAINER
    assert _codes(tmp_path, text + extra) == [code]


@pytest.mark.parametrize("extra", [
    "dataloader_num_workers: 2\ndataloader_prefetch_factor: 2\n",
    "torch_empty_cache_steps: 4\n",
    "lr_scheduler_type: reduce_lr_on_plateau\neval_strategy: epoch\n",
    "eval_strategy: steps\neval_steps: 50\nsave_strategy: steps\nsave_steps: 100\nload_best_model_at_end: true\n",
    "eval_strategy: steps\neval_steps: 30\nsave_strategy: steps\nsave_steps: 100\n",
    "optim: galore_adamw\noptim_target_modules: all-linear\n",
    "optim: galore_adamw_layerwise\noptim_target_modules: [attn]\n",
    "optim: adamw_torch\ngradient_accumulation_steps: 4\n",
    "fsdp: full_shard offload auto_wrap\n",
])
def test_accepted_combinations_are_silent(tmp_path, extra):
    text = _TRAINER.replace("gradient_accumulation_steps: 1\n", "") if "gradient_accumulation_steps" in extra else _TRAINER
    assert _codes(tmp_path, text + extra, pins=["transformers==4.46.3"]) == []


@pytest.mark.parametrize("version, fires", [("4.46.3", True), ("4.57.6", True), ("5.0.0", False)])
def test_warmup_ratio_range_check_ends_in_5(tmp_path, version, fires):
    assert _codes(tmp_path, _TRAINER + "warmup_ratio: 1.5\n", pins=[f"transformers=={version}"]) == (
        ["TRN040"] if fires else [])


def test_bounded_rows_are_silent_without_a_version(tmp_path):
    assert _codes(tmp_path, _TRAINER + "warmup_ratio: 1.5\nfsdp: offload\n") == []


@pytest.mark.parametrize("version, fires", [("4.46.3", True), ("5.9.0", True), ("5.10.0", False)])
def test_fsdp_option_checks_end_in_5_10(tmp_path, version, fires):
    assert _codes(tmp_path, _TRAINER + "fsdp: offload\n", pins=[f"transformers=={version}"]) == (
        ["TRN042"] if fires else [])


_ZERO3 = {"ds.json": '{"zero_optimization": {"stage": 3}}'}
_ZERO2 = {"ds.json": '{"zero_optimization": {"stage": 2}}'}


@pytest.mark.parametrize("version, files, fires", [
    ("4.45.0", _ZERO3, True), ("4.44.2", _ZERO3, True), ("4.57.6", _ZERO2, False), ("4.44.2", _ZERO2, True),
    ("4.38.0", _ZERO2, True), ("4.37.2", _ZERO3, False), ("4.37.2", _ZERO2, False), ("4.36.2", _ZERO2, False)])
def test_auto_find_batch_size_under_deepspeed(tmp_path, version, files, fires):
    """Refused with any DeepSpeed config in 4.38.0-4.44.2 (PR #29058), with ZeRO-3 from 4.45.0
    (PR #31731); the older OOM-retry crash is TRN046."""
    text = _TRAINER + "auto_find_batch_size: true\ndeepspeed: ds.json\n"
    assert _codes(tmp_path, text, pins=[f"transformers=={version}"], files=files) == (["TRN043"] if fires else [])


@pytest.mark.parametrize("version, fires", [("4.38.0", True), ("4.44.2", True), ("4.45.0", False), ("4.37.2", False),
                                            (None, False)])
def test_auto_find_batch_size_under_fsdp_4_38_to_4_44(tmp_path, version, fires):
    pins = [f"transformers=={version}"] if version else None
    text = _TRAINER + "auto_find_batch_size: true\nfsdp: full_shard auto_wrap\n"
    assert _codes(tmp_path, text, pins=pins) == (["TRN043"] if fires else [])


_BEST = ("eval_strategy: steps\neval_steps: 100\nsave_strategy: steps\nsave_steps: 100\n"
         "load_best_model_at_end: true\nsave_only_model: true\n")


@pytest.mark.parametrize("version, sharding, fires", [
    ("4.38.0", "deepspeed: ds.json\n", True), ("4.37.2", "deepspeed: ds.json\n", True),
    ("4.46.3", "fsdp: full_shard auto_wrap\n", True), ("4.37.2", "fsdp: full_shard auto_wrap\n", False),
    ("4.46.3", "", False)])
def test_save_only_model_with_best_model_under_sharding(tmp_path, version, sharding, fires):
    assert _codes(tmp_path, _TRAINER + _BEST + sharding, pins=[f"transformers=={version}"], files=_ZERO2) == (
        ["TRN043"] if fires else [])


def test_fsdp_with_deepspeed_fires_without_a_version(tmp_path):
    assert _codes(tmp_path, _TRAINER + "fsdp: full_shard\ndeepspeed: ds.json\n", files=_ZERO2) == ["TRN043"]


def test_default_save_steps_is_named_as_the_default(tmp_path):
    text = _TRAINER + "eval_strategy: steps\neval_steps: 200\nsave_strategy: steps\nload_best_model_at_end: true\n"
    (tmp_path / "args.yaml").write_text(text)
    result = trainlint("check", str(tmp_path / "args.yaml"), "--select", "TRN041", "--no-detect")
    assert "save_steps 500 (the default)" in result.out


# DS023: a DeepSpeed scheduler block replaces the trainer's lr_scheduler_type
_DS_DECAY = {"ds.json": '{"zero_optimization": {"stage": 2}, "scheduler": {"type": "WarmupDecayLR"}}'}


@pytest.mark.parametrize("schedule, fires", [("cosine", True), ("linear", False), ("constant_with_warmup", True)])
def test_deepspeed_scheduler_block_replaces_the_trainers(tmp_path, schedule, fires):
    text = _TRAINER + f"lr_scheduler_type: {schedule}\ndeepspeed: ds.json\n"
    assert _codes(tmp_path, text, files=_DS_DECAY, select="DS023") == (["DS023"] if fires else [])


def test_deepspeed_scheduler_silent_without_a_written_schedule_or_block(tmp_path):
    assert _codes(tmp_path, _TRAINER + "deepspeed: ds.json\n", files=_DS_DECAY, select="DS023") == []
    no_block = {"ds.json": '{"zero_optimization": {"stage": 2}}'}
    assert _codes(tmp_path, _TRAINER + "lr_scheduler_type: cosine\ndeepspeed: ds.json\n", files=no_block,
                  select="DS023") == []


# DS024: a DeepSpeed activation_checkpointing block under the HF Trainer is never used
_DS_ACTIVATIONS = {"ds.json": '{"zero_optimization": {"stage": 3}, '
                              '"activation_checkpointing": {"partition_activations": true, "cpu_checkpointing": true}}'}


@pytest.mark.parametrize("checkpointing, said", [("true", "it is on"), ("false", "it is off")])
def test_deepspeed_activation_checkpointing_block_is_inert(tmp_path, checkpointing, said):
    text = _TRAINER + f"gradient_checkpointing: {checkpointing}\ndeepspeed: ds.json\n"
    assert _codes(tmp_path, text, files=_DS_ACTIVATIONS, select="DS024") == ["DS024"]
    result = trainlint("check", str(tmp_path / "args.yaml"), "--select", "DS024", "--no-detect")
    assert said in result.out


def test_deepspeed_activation_checkpointing_silent_when_off_or_without_a_trainer(tmp_path):
    off = {"ds.json": '{"zero_optimization": {"stage": 3}, "activation_checkpointing": {"partition_activations": false}}'}
    assert _codes(tmp_path, _TRAINER + "deepspeed: ds.json\n", files=off, select="DS024") == []
    (tmp_path / "ds.json").write_text(_DS_ACTIVATIONS["ds.json"])
    result = trainlint("check", str(tmp_path / "ds.json"), "--select", "DS024", "--no-detect", "--format", "json")
    assert json.loads(result.out) == []  # a DeepSpeed file alone: its script may call deepspeed.checkpointing


# DS026: a DeepSpeed file without gradient_clipping drops the trainer's max_grad_norm; DeepSpeed
# clips at its own default, 0 (none) up to 0.19.2 and 1.0 from 0.19.3.
_DS_NO_CLIP = {"ds.json": '{"zero_optimization": {"stage": 2}}'}


@pytest.mark.parametrize("norm, pin, fires", [
    ("max_grad_norm: 0.3\n", None, True),             # neither default: every release differs
    ("max_grad_norm: 0.3\n", "0.19.3", True),
    ("", None, False),                                 # 1.0 (the default): 0.19.3 on clips at 1.0 too
    ("", "0.19.2", True), ("", "0.19.3", False),
    ("max_grad_norm: 1.0\n", "0.14.4", True),
    ("max_grad_norm: 0\n", None, False),               # no clipping asked: 0.19.2 and older agree
    ("max_grad_norm: 0\n", "0.19.2", False), ("max_grad_norm: 0\n", "0.19.5", True),
])
def test_deepspeed_gradient_clipping_missing(tmp_path, norm, pin, fires):
    pins = [f"deepspeed=={pin}"] if pin else None
    text = _TRAINER + norm + "deepspeed: ds.json\n"
    assert _codes(tmp_path, text, pins=pins, files=_DS_NO_CLIP, select="DS026") == (["DS026"] if fires else [])


@pytest.mark.parametrize("clip", ['"auto"', "0.3"])
def test_deepspeed_gradient_clipping_written_is_silent(tmp_path, clip):
    files = {"ds.json": '{"zero_optimization": {"stage": 2}, "gradient_clipping": %s}' % clip}
    text = _TRAINER + "max_grad_norm: 0.3\ndeepspeed: ds.json\n"
    assert _codes(tmp_path, text, files=files, select="DS026") == []


def test_deepspeed_gradient_clipping_zero_counts_only_where_training_arguments_read_it(tmp_path):
    """Axolotl passes max_grad_norm on only when truthy: its 0 leaves the Trainer's 1.0."""
    (tmp_path / "ds.json").write_text(_DS_NO_CLIP["ds.json"])
    (tmp_path / "requirements.txt").write_text("deepspeed==0.19.5\n")
    (tmp_path / "config.yml").write_text("base_model: mistralai/Mistral-7B-v0.1\ndatasets:\n  - path: x/y\n"
                                         "    type: alpaca\nmicro_batch_size: 2\nmax_grad_norm: 0\n"
                                         "deepspeed: ds.json\n")
    result = trainlint("check", str(tmp_path / "config.yml"), "--select", "DS026", "--no-detect", "--format", "json")
    assert result.code in (0, 1), result.err
    assert json.loads(result.out) == []


def test_deepspeed_gradient_clipping_fix_adds_auto(tmp_path):
    (tmp_path / "ds.json").write_text(_DS_NO_CLIP["ds.json"])
    (tmp_path / "args.yaml").write_text(_TRAINER + "max_grad_norm: 0.3\ndeepspeed: ds.json\n")
    result = trainlint("check", str(tmp_path / "args.yaml"), str(tmp_path / "ds.json"), "--select", "DS026",
                       "--no-detect", "--fix", "--unsafe-fixes")
    assert result.code in (0, 1), result.err
    assert json.loads((tmp_path / "ds.json").read_text())["gradient_clipping"] == "auto"


# PRE006: LoRA on float16 weights with fp16 AMP before PEFT 0.12.0
_LORA_FP16 = ("model_name_or_path: Qwen/Qwen2.5-0.5B\ndataset_name: trl-lib/Capybara\ntorch_dtype: float16\n"
              "fp16: true\nuse_peft: true\n")


@pytest.mark.parametrize("pins, fires", [(["peft==0.11.1"], True), (["peft==0.12.0"], False), (None, False)])
def test_lora_on_float16_weights_before_peft_upcasts(tmp_path, pins, fires):
    assert _codes(tmp_path, _LORA_FP16, pins=pins, select="PRE006") == (["PRE006"] if fires else [])


def test_qlora_on_float16_is_not_the_lora_case(tmp_path):
    text = _LORA_FP16 + "load_in_4bit: true\n"
    assert _codes(tmp_path, text, pins=["peft==0.11.1"], select="PRE006") == []


def test_save_only_model_under_deepspeed_before_the_check_fails_at_the_end(tmp_path):
    (tmp_path / "args.yaml").write_text(_TRAINER + _BEST + "deepspeed: ds.json\n")
    (tmp_path / "ds.json").write_text(_ZERO2["ds.json"])
    (tmp_path / "requirements.txt").write_text("transformers==4.36.2\n")
    result = trainlint("check", str(tmp_path / "args.yaml"), "--select", "TRN043", "--no-detect")
    assert "fails loading the best checkpoint at the end" in result.out
    (tmp_path / "requirements.txt").unlink()
    result = trainlint("check", str(tmp_path / "args.yaml"), "--select", "TRN043", "--no-detect")
    assert "transformers 4.38.0+ refuses it at launch" in result.out


# TRN011 with a strategy left at TrainingArguments' default (eval_strategy "no", save_strategy
# "steps", the same from 4.9.0 to 5.23.0): __post_init__ compares the values after the defaults.
@pytest.mark.parametrize("extra, pins, fires", [
    ("load_best_model_at_end: true\n", ["transformers==4.46.3"], True),
    ("load_best_model_at_end: true\n", None, True),  # every release since 4.9.0 refuses it
    ("save_strategy: epoch\nload_best_model_at_end: true\n", ["transformers==5.23.0"], True),
    ("evaluation_strategy: epoch\nload_best_model_at_end: true\n", ["transformers==4.36.2"], True),
    ("eval_strategy: steps\nload_best_model_at_end: true\n", ["transformers==4.46.3"], False),
    ("save_strategy: 'no'\nload_best_model_at_end: true\n", ["transformers==4.46.3"], False),
    ("save_strategy: best\nload_best_model_at_end: true\n", ["transformers==4.57.6"], False),
    ("load_best_model_at_end: true\n", ["transformers==4.8.2"], False),  # no check before 4.9.0
    ("save_strategy: epoch\n", ["transformers==4.46.3"], False),
])
def test_load_best_with_default_strategies(tmp_path, extra, pins, fires):
    assert _codes(tmp_path, _TRAINER + extra, pins=pins, select="TRN011") == (["TRN011"] if fires else [])

def test_deepspeed_scheduler_reported_at_the_block_that_wins(tmp_path):
    """The finding sits on the DeepSpeed `scheduler` key (the setting that wins and that the fix
    removes), with the lr_scheduler_type that is dropped."""
    (tmp_path / "args.yaml").write_text(_TRAINER + "lr_scheduler_type: cosine\ndeepspeed: ds.json\n")
    (tmp_path / "ds.json").write_text('{\n  "zero_optimization": {"stage": 2},\n  "scheduler": {"type": "WarmupDecayLR"}\n}\n')
    result = trainlint("check", str(tmp_path / "args.yaml"), "--select", "DS023", "--no-detect", "--format", "json")
    [finding] = json.loads(result.out)
    assert finding["file"].endswith("ds.json") and finding["line"] == 3
    assert "lr_scheduler_type cosine is not used" in finding["message"]


# TRN041: load_best_model_at_end with ratio steps (transformers 4.29.0 on) and the steps checks
_BEST_STEPS = _TRAINER + "eval_strategy: steps\nsave_strategy: steps\nload_best_model_at_end: true\n"


@pytest.mark.parametrize("steps, pins, fires", [
    ("eval_steps: 0.02\nsave_steps: 0.1\n", ["transformers==4.52.4"], True),   # float remainder, #38217
    ("eval_steps: 0.02\nsave_steps: 0.1\n", ["transformers==4.29.2"], True),
    ("eval_steps: 0.02\nsave_steps: 0.1\n", ["transformers==4.53.0"], False),
    ("eval_steps: 0.02\nsave_steps: 0.1\n", None, False),                      # unknown version: silent
    ("eval_steps: 0.1\nsave_steps: 0.25\n", None, True),                       # not a multiple: every release
    ("eval_steps: 0.1\nsave_steps: 0.2\n", ["transformers==4.40.0"], False),   # remainder 0
    ("eval_steps: 0.1\nsave_steps: 500\n", None, True),                        # ratio beside steps
    ("eval_steps: 0.5\nsave_steps: 500\n", None, False),                       # 500 % 0.5 == 0
])
def test_ratio_steps_with_load_best(tmp_path, steps, pins, fires):
    assert _codes(tmp_path, _BEST_STEPS + steps, pins, select="TRN041") == (["TRN041"] if fires else [])


@pytest.mark.parametrize("extra, pins, fires", [
    ("logging_steps: 2.5\n", ["transformers==4.29.0"], True),
    ("logging_steps: 2.5\n", ["transformers==4.28.1"], False),
    ("logging_steps: 2.5\n", None, False),
    ("save_steps: 100.5\n", ["transformers==5.0.0"], True),
    ("save_strategy: epoch\nsave_steps: 100.5\n", ["transformers==5.0.0"], False),
    ("eval_strategy: steps\neval_steps: 12.5\n", ["transformers==4.46.3"], True),
    ("eval_steps: 12.5\n", ["transformers==4.46.3"], False),                   # no eval strategy
    ("logging_steps: 0\n", None, True),
    ("logging_strategy: epoch\nlogging_steps: 0\n", None, False),
    ("eval_strategy: steps\nlogging_steps: 0\n", None, True),
    ("eval_strategy: steps\neval_steps: 10\nlogging_steps: 5\n", None, False),
])
def test_steps_values_refused_by_training_arguments(tmp_path, extra, pins, fires):
    assert _codes(tmp_path, _TRAINER + extra, pins, select="TRN041") == (["TRN041"] if fires else [])


@pytest.mark.parametrize("steps, pin, fires", [
    ("0.03", "4.41.2", False), ("0.03", "4.42.0", True), ("1", "4.43.4", True), ("1", "4.44.0", False),
    ("0.03", "4.57.6", True), ("100.0", "4.50.3", True), ("100", "4.50.3", False), ("-5", "4.46.3", True),
    ("0.03", "5.0.0", False), ("0.03", None, False)])
def test_warmup_steps_type_check(tmp_path, steps, pin, fires):
    pins = [f"transformers=={pin}"] if pin else None
    assert _codes(tmp_path, _TRAINER + f"warmup_steps: {steps}\n", pins, select="TRN040") == (
        ["TRN040"] if fires else [])


@pytest.mark.parametrize("extra, fires", [
    ("lr_scheduler_type: greedy\n", True), ("lr_scheduler_type: greedy\neval_strategy: steps\neval_steps: 50\n", False),
    ("lr_scheduler_type: cosine\n", False)])
def test_greedy_schedule_needs_evaluation(tmp_path, extra, fires):
    assert _codes(tmp_path, _TRAINER + extra, select="TRN041") == (["TRN041"] if fires else [])


@pytest.mark.parametrize("extra, pins, fires", [
    ("data_seed: 42\n", ["transformers==4.46.3", "accelerate==1.0.1"], True),
    ("data_seed: 42\n", ["transformers==4.45.2", "accelerate==1.0.1"], False),   # before the check
    ("data_seed: 42\n", ["transformers==5.0.0", "accelerate==1.0.1"], False),
    ("data_seed: 42\n", ["transformers==4.46.3", "accelerate==1.1.0"], False),
    ("data_seed: 42\n", ["transformers==4.46.3"], False),                        # accelerate unknown
    ("eval_use_gather_object: true\n", ["transformers==4.43.0", "accelerate==0.29.3"], True),
    ("eval_use_gather_object: true\n", ["transformers==4.43.0", "accelerate==0.30.0"], False),
])
def test_options_that_need_a_newer_accelerate(tmp_path, extra, pins, fires):
    assert _codes(tmp_path, _TRAINER + extra, pins, select="TRN040") == (["TRN040"] if fires else [])


# TRN042: fsdp_config reshard_after_forward through str_to_bool under FSDP2 (5.0.0 on; FSDP2 is the
# default from 5.10.0): a sharding strategy name is refused ("invalid truth value full_shard").
@pytest.mark.parametrize("config, pins, fires", [
    ("fsdp_config:\n  fsdp_reshard_after_forward: FULL_SHARD\n", ["transformers==5.24.0"], True),
    ("fsdp_config:\n  fsdp_reshard_after_forward: FULL_SHARD\n", ["transformers==5.10.0"], True),
    ("fsdp_config:\n  fsdp_reshard_after_forward: FULL_SHARD\n", ["transformers==5.9.0"], False),  # FSDP1 default
    ("fsdp_config:\n  version: 2\n  reshard_after_forward: hybrid_shard\n", ["transformers==5.0.0"], True),
    ("fsdp_config:\n  version: 2\n  reshard_after_forward: hybrid_shard\n", ["transformers==4.57.6"], False),
    ("fsdp_config:\n  fsdp_reshard_after_forward: FULL_SHARD\n", None, False),
    ("fsdp_config:\n  version: 1\n  reshard_after_forward: full_shard\n", ["transformers==5.24.0"], False),
    ("fsdp_config:\n  reshard_after_forward: true\n", ["transformers==5.24.0"], False),
    ("fsdp_config:\n  reshard_after_forward: 'False'\n", ["transformers==5.24.0"], False),
])
def test_fsdp2_reshard_after_forward_truth_value(tmp_path, config, pins, fires):
    text = _TRAINER + "fsdp: true\n" + config
    assert _codes(tmp_path, text, pins, select="TRN042") == (["TRN042"] if fires else [])
