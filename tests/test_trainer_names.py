"""TRN053 (enum names per transformers release), TRN054 (lr_scheduler_kwargs per schedule function)
and the two TrainingArguments rows of the release-bug table (TRN073 reduce_lr_on_plateau on 4.29.x,
TRN074 metric_for_best_model *loss before 4.42.0): fires, stays silent, respects the release bounds."""

from __future__ import annotations

import json
import textwrap

import pytest

from conftest import FIXTURES, trainlint
from linter import versions

_SFT = "model_name_or_path: Qwen/Qwen2.5-0.5B\ndataset_name: trl-lib/Capybara\noutput_dir: out\n"
_TRAINER = "output_dir: out\nper_device_train_batch_size: 8\ngradient_accumulation_steps: 1\n"


@pytest.fixture(autouse=True)
def _pins_only(nothing_installed):
    """Versions come from the pins each test writes (conftest.nothing_installed)."""


def _codes(tmp_path, text, pins=None, select="TRN053,TRN054", name="args.yaml"):
    (tmp_path / name).write_text(textwrap.dedent(text))
    if pins:
        (tmp_path / "requirements.txt").write_text("\n".join(pins) + "\n")
    versions.forget()
    result = trainlint("check", str(tmp_path / name), "--select", select, "--no-detect", "--format", "json")
    assert result.code in (0, 1), result.err
    return [finding["code"] for finding in json.loads(result.out)]


@pytest.mark.parametrize("extra, pin, fires", [
    ("optim: adamw_torch_8bit\n", "4.48.3", True),
    ("optim: adamw_torch_8bit\n", "4.49.0", False),
    ("optim: adamw_hf\n", "4.49.0", False),
    ("optim: adamw_hf\n", "4.50.0", True),
    ("optim: adamw_apex_fused\n", "5.7.0", False),
    ("optim: adamw_apex_fused\n", "5.8.0", True),
    ("lr_scheduler_type: cosine_with_min_lr\nlr_scheduler_kwargs: {min_lr: 0.0}\n", "4.39.3", True),
    ("lr_scheduler_type: cosine_with_min_lr\nlr_scheduler_kwargs: {min_lr: 0.0}\n", "4.40.0", False),
    ("lr_scheduler_type: greedy\neval_strategy: steps\n", "5.3.0", True),
    ("lr_scheduler_type: greedy\neval_strategy: steps\n", "5.4.0", False),
    ("save_strategy: best\nmetric_for_best_model: loss\neval_strategy: steps\n", "4.46.3", True),
    ("save_strategy: best\nmetric_for_best_model: loss\neval_strategy: steps\n", "4.47.0", False),
    ("report_to: trackio\n", "4.53.3", True),
    ("report_to: [wandb, trackio]\n", "4.54.0", False),
    ("report_to: kubeflow\n", "5.3.0", True),
    ("report_to: [none]\n", "4.46.3", False),
    ("report_to: wandb,tensorboard\n", "4.46.3", False),  # a comma string is not judged
])
def test_names_follow_the_release(tmp_path, extra, pin, fires):
    assert _codes(tmp_path, _SFT + extra, [f"transformers=={pin}"], select="TRN053") == (["TRN053"] if fires else [])


@pytest.mark.parametrize("extra", ["optim: adamw_torch_8bit\n", "report_to: trackio\n", "save_strategy: best\n"])
def test_names_some_releases_have_are_silent_without_a_version(tmp_path, extra):
    assert _codes(tmp_path, _SFT + extra, select="TRN053") == []


def test_a_name_no_release_has_fires_on_an_old_pin_and_is_left_to_the_schema_otherwise(tmp_path):
    text = _SFT + "optim: adamw\neval_strategy: step\n"
    assert _codes(tmp_path, text, ["transformers==4.46.3"], select="TRN053") == ["TRN053", "TRN053"]
    (tmp_path / "requirements.txt").unlink()
    assert _codes(tmp_path, text, select="TRN053,SCH002") == ["SCH002", "SCH002"]


def test_a_plain_trainer_json_is_read(tmp_path):
    text = json.dumps({"output_dir": "out", "per_device_train_batch_size": 4, "fp16": True, "optim": "lion_8bit"})
    assert _codes(tmp_path, text, ["transformers==4.29.2"], select="TRN053", name="args.json") == ["TRN053"]
    assert _codes(tmp_path, text, ["transformers==4.30.0"], select="TRN053", name="args.json") == []


@pytest.mark.parametrize("extra", [
    "lr_scheduler_type: cosine\nlr_scheduler_kwargs:\n  min_lr: 1.0e-6\n",
    "lr_scheduler_type: linear\nlr_scheduler_kwargs:\n  num_cycles: 0.5\n",
    "lr_scheduler_type: cosine_with_min_lr\n",
    "lr_scheduler_type: cosine_with_min_lr\nlr_scheduler_kwargs:\n  min_lr: 1.0e-6\n  min_lr_rate: 0.1\n",
    "lr_scheduler_type: cosine_warmup_with_min_lr\nlr_scheduler_kwargs: {}\n",
    "lr_scheduler_type: warmup_stable_decay\n",
    "lr_scheduler_type: warmup_stable_decay\nlr_scheduler_kwargs:\n  num_decay_steps: 10\n  decay_type: exp\n",
    "lr_scheduler_type: cosine\nlr_scheduler_kwargs:\n  num_warmup_steps: 10\n",
    "learning_rate: 1.0e-8\nlr_scheduler_type: polynomial\n",
])
def test_schedule_kwargs_every_release_refuses(tmp_path, extra):
    assert _codes(tmp_path, _TRAINER + extra, select="TRN054") == ["TRN054"]


@pytest.mark.parametrize("extra", [
    "lr_scheduler_type: cosine\nlr_scheduler_kwargs:\n  num_cycles: 0.5\n",
    "lr_scheduler_type: cosine_with_min_lr\nlr_scheduler_kwargs:\n  min_lr_rate: 0.1\n",
    "lr_scheduler_type: constant_with_warmup\nlr_scheduler_kwargs:\n  min_lr: 0.1\n",  # ignored
    "lr_scheduler_type: polynomial\nlr_scheduler_kwargs:\n  lr_end: 1.0e-7\n  power: 2.0\n",
    "lr_scheduler_type: cosine\nlr_scheduler_kwargs: '{\"min_lr\": 0.1}'\n",  # a JSON string: not judged
])
def test_schedule_kwargs_accepted_are_silent(tmp_path, extra):
    assert _codes(tmp_path, _TRAINER + extra, ["transformers==4.46.3"], select="TRN054") == []


def test_schedule_replaced_by_a_deepspeed_scheduler_is_silent(tmp_path):
    (tmp_path / "ds.json").write_text(json.dumps({"train_micro_batch_size_per_gpu": "auto",
                                                  "zero_optimization": {"stage": 2},
                                                  "scheduler": {"type": "WarmupLR", "params": {}}}))
    text = _TRAINER + "deepspeed: ds.json\nlr_scheduler_type: cosine_with_min_lr\n"
    assert _codes(tmp_path, text, select="TRN054") == []


@pytest.mark.parametrize("kwargs, pin, fires", [
    ("  num_decay_steps: 10\n", "4.48.3", True),   # num_stable_steps required 4.42.0-4.48.x
    ("  num_decay_steps: 10\n", "4.49.0", False),
    ("  num_stable_steps: 10\n  num_decay_steps: 10\n", "4.41.2", True),  # #31085: num_training_steps passed
    ("  num_stable_steps: 10\n  num_decay_steps: 10\n", "4.42.0", False),
    ("  num_stable_steps: 10\n  num_decay_steps: 10\n  decay_type: linear\n", "4.48.3", True),
    ("  num_decay_steps: 10\n  decay_type: linear\n", "4.49.0", False),
])
def test_warmup_stable_decay_by_release(tmp_path, kwargs, pin, fires):
    text = _TRAINER + "lr_scheduler_type: warmup_stable_decay\nlr_scheduler_kwargs:\n" + kwargs
    assert _codes(tmp_path, text, [f"transformers=={pin}"], select="TRN054") == (["TRN054"] if fires else [])


def test_inverse_sqrt_kwargs_reach_the_function_from_5_4(tmp_path):
    text = _TRAINER + "lr_scheduler_type: inverse_sqrt\nlr_scheduler_kwargs:\n  min_lr: 0.1\n"
    assert _codes(tmp_path, text, ["transformers==5.3.0"], select="TRN054") == []
    assert _codes(tmp_path, text, ["transformers==5.4.0"], select="TRN054") == ["TRN054"]


_BEST = FIXTURES / "incidents" / "hf-best-model-custom-loss-metric-maximized" / "train.yaml"
_PLATEAU = FIXTURES / "incidents" / "hf-reduce-lr-on-plateau-get-last-lr" / "train.yaml"


@pytest.mark.parametrize("pin, extra, fires", [
    ("4.41.2", "", True),
    ("4.42.0", "", False),
    ("4.41.2", "greater_is_better: false\n", False),
    ("4.41.2", "metric_for_best_model: eval_loss\n", False),
])
def test_loss_metric_direction_row(tmp_path, pin, extra, fires):
    text = _BEST.read_text()
    if extra.startswith("metric_for_best_model"):
        text = text.replace("metric_for_best_model: eval_validation_loss\n", "")
    assert _codes(tmp_path, text + extra, [f"transformers=={pin}"], select="TRN074") == (["TRN074"] if fires else [])


def test_loss_metric_direction_row_needs_the_version(tmp_path):
    assert _codes(tmp_path, _BEST.read_text(), select="TRN074") == []


@pytest.mark.parametrize("pins, extra, fires", [
    (["transformers==4.29.2", "torch==2.0.1"], "", True),
    (["transformers==4.30.0", "torch==2.0.1"], "", False),
    (["transformers==4.29.2", "torch==2.2.0"], "", False),
    (["transformers==4.29.2", "torch==2.0.1"], "logging_strategy: 'no'\n", False),
    (["transformers==4.29.2"], "", False),  # torch unknown
])
def test_plateau_get_last_lr_row(tmp_path, pins, extra, fires):
    assert _codes(tmp_path, _PLATEAU.read_text() + extra, pins, select="TRN073") == (["TRN073"] if fires else [])


@pytest.mark.parametrize("extra, pins, code", [
    ("fp16: true\nuse_cpu: true\n", ["transformers==4.30.2"], "TRN040"),
    ("fp16_full_eval: true\nno_cuda: true\n", ["transformers==4.20.1"], "TRN040"),
    ("fp16: true\nuse_cpu: true\n", ["transformers==4.41.2", "torch==2.2.2"], "TRN040"),
    ("fp16: true\nuse_cpu: true\n", ["transformers==4.46.3", "torch==2.1.0"], "TRN040"),
    ("optim: adamw_torch_fused\n", ["transformers==4.30.2", "torch==1.13.1"], "TRN040"),
    ("optim: adamw_torch_fused\nfp16: true\n", ["transformers==4.30.2", "torch==2.0.0"], "TRN040"),
    ("torch_compile: true\n", ["transformers==4.30.2", "torch==1.13.1"], "TRN040"),
    ("warmup_steps: -10\n", ["transformers==5.1.0"], "TRN040"),
    ("save_strategy: best\neval_strategy: steps\n", [], "TRN041"),
    ("save_strategy: best\neval_strategy: steps\n", ["transformers==4.47.0"], "TRN041"),
])
def test_more_refusal_rows_fire(tmp_path, extra, pins, code):
    assert _codes(tmp_path, _TRAINER + extra, pins, select="TRN040,TRN041") == [code]


@pytest.mark.parametrize("pin, quote", [
    ("5.22.0", '("warmup_steps must be an integer or a float")'),
    ("5.23.0", '("Got warmup_steps = -10, Expected value warmup_steps >= 0")'),
])
def test_negative_warmup_quotes_the_release(tmp_path, pin, quote):
    """transformers 5.23.0 rewords _validate_args' refusal of a negative warmup_steps (PyPI wheels)."""
    (tmp_path / "args.yaml").write_text(_TRAINER + "warmup_steps: -10\n")
    (tmp_path / "requirements.txt").write_text(f"transformers=={pin}\n")
    versions.forget()
    result = trainlint("check", str(tmp_path / "args.yaml"), "--select", "TRN040", "--no-detect", "--format", "json")
    found = json.loads(result.out)
    assert [finding["code"] for finding in found] == ["TRN040"] and quote in found[0]["message"]


@pytest.mark.parametrize("extra, pins", [
    ("fp16: true\nuse_cpu: true\n", ["transformers==4.41.2", "torch==2.3.0"]),
    ("fp16: true\nuse_cpu: true\n", ["transformers==4.46.3", "torch==2.3.0"]),
    ("fp16: true\nuse_cpu: true\n", ["transformers==4.46.3"]),  # torch unknown
    ("fp16: true\nuse_cpu: false\n", ["transformers==4.30.2"]),
    ("bf16: true\nuse_cpu: true\n", ["transformers==4.30.2"]),
    ("optim: adamw_torch_fused\n", ["transformers==4.30.2", "torch==2.0.1"]),
    ("optim: adamw_torch_fused\nfp16: true\n", ["transformers==4.30.2", "torch==2.0.1"]),
    ("optim: adamw_torch_fused\n", ["transformers==4.52.0", "torch==1.13.1"]),
    ("torch_compile: true\n", ["transformers==4.30.2", "torch==2.0.0"]),
    ("warmup_steps: -10\n", ["transformers==4.41.2"]),
    ("warmup_steps: 0.1\n", ["transformers==5.1.0"]),
    ("save_strategy: best\neval_strategy: steps\nmetric_for_best_model: eval_loss\n", []),
    ("save_strategy: best\neval_strategy: steps\n", ["transformers==4.46.3"]),  # the value itself: TRN053
])
def test_more_refusal_rows_silent(tmp_path, extra, pins):
    assert _codes(tmp_path, _TRAINER + extra, pins, select="TRN040,TRN041") == []


_FSDP = _TRAINER + "fsdp: full_shard auto_wrap\nfsdp_config:\n"


@pytest.mark.parametrize("config, pin, fires", [
    ("  cpu_ram_efficient_loading: true\n  sync_module_states: false\n", "4.41.0", True),
    ("  fsdp_cpu_ram_efficient_loading: 'true'\n  fsdp_sync_module_states: 'false'\n", "5.9.0", True),
    ("  cpu_ram_efficient_loading: true\n  sync_module_states: false\n", "4.40.2", False),
    ("  cpu_ram_efficient_loading: true\n  sync_module_states: false\n", "5.10.0", False),
    ("  cpu_ram_efficient_loading: true\n", "4.46.3", False),
    ("  min_num_params: 100000\n  transformer_layer_cls_to_wrap: [LlamaDecoderLayer]\n", "4.32.0", True),
    ("  fsdp_min_num_params: 100000\n  fsdp_transformer_layer_cls_to_wrap: LlamaDecoderLayer\n", "5.9.0", True),
    ("  min_num_params: 0\n  transformer_layer_cls_to_wrap: [LlamaDecoderLayer]\n", "4.46.3", False),
    ("  min_num_params: 100000\n  transformer_layer_cls_to_wrap: [LlamaDecoderLayer]\n", "5.10.0", False),
])
def test_fsdp_config_pairs(tmp_path, config, pin, fires):
    assert _codes(tmp_path, _FSDP + config, [f"transformers=={pin}"], select="TRN042") == (
        ["TRN042"] if fires else [])


def test_fsdp_config_pairs_need_fsdp_on(tmp_path):
    text = _TRAINER + "fsdp_config:\n  cpu_ram_efficient_loading: true\n  sync_module_states: false\n"
    assert _codes(tmp_path, text, ["transformers==4.46.3"], select="TRN042") == []


@pytest.mark.parametrize("fsdp, pin, count", [
    ("full-shard auto_wrap", None, 1),           # no release has the word
    ("hybrid_shard auto_wrap", "4.35.2", 1),     # hybrid_shard came in 4.36.0
    ("hybrid_shard auto_wrap", "4.36.0", 0),
    ("hybrid_shard auto_wrap", "5.10.4", 1),     # FSDP1-only under the 5.10 default FSDP2
    ("[hybrid_shard, auto_wrap]", "5.10.4", 1),
    ("[full-shard]", "4.46.3", 0),               # 4.x converts a string only
    ("full_shard auto_wrap", "5.10.4", 0),
    ("true", "5.10.4", 0),
])
def test_fsdp_option_words(tmp_path, fsdp, pin, count):
    pins = [f"transformers=={pin}"] if pin else None
    assert _codes(tmp_path, _TRAINER + f"fsdp: {fsdp}\n", pins, select="TRN042") == ["TRN042"] * count


@pytest.mark.parametrize("pins, accumulation, fires", [
    (["transformers==4.46.3", "accelerate==1.0.1"], 4, True),
    (["transformers==4.46.3", "accelerate==0.27.2"], 4, False),  # the kwargs are not read before 0.28.0
    (["transformers==4.46.3"], 4, False),                        # accelerate unknown
    (["transformers==5.1.0"], 4, True),
    (["transformers==5.1.0"], 1, False),                         # num_steps becomes the accumulation
    (["transformers==4.39.3", "accelerate==1.0.1"], 4, False),
])
def test_accelerator_num_steps_with_accumulation(tmp_path, pins, accumulation, fires):
    text = (f"output_dir: out\nper_device_train_batch_size: 8\ngradient_accumulation_steps: {accumulation}\n"
            "accelerator_config:\n  gradient_accumulation_kwargs:\n    num_steps: 4\n")
    assert _codes(tmp_path, text, pins, select="TRN040") == (["TRN040"] if fires else [])


@pytest.mark.parametrize("extra, pin, codes", [
    ("sharded_ddp: offload\n", "4.30.2", ["TRN042"]),
    ("sharded_ddp: simple zero_dp_2\n", "4.30.2", ["TRN042"]),
    ("sharded_ddp: zero_dp_2 zero_dp_3\n", "4.30.2", ["TRN042"]),
    ("sharded_ddp: zero-dp-2\n", "4.30.2", ["TRN042"]),
    ("sharded_ddp: true\nbf16: true\n", "4.30.2", ["TRN042"]),
    ("sharded_ddp: simple\nfsdp: full_shard\n", "4.30.2", ["TRN043"]),
    ("sharded_ddp: zero_dp_2 offload\n", "4.30.2", []),
    ("sharded_ddp: offload\n", "4.35.0", []),   # the option is gone (an unknown key there)
    ("sharded_ddp: false\nbf16: true\n", "4.30.2", []),
])
def test_sharded_ddp_rows(tmp_path, extra, pin, codes):
    assert _codes(tmp_path, _TRAINER + extra, [f"transformers=={pin}"], select="TRN042,TRN043") == codes


@pytest.mark.parametrize("policy, pin, fires", [
    ("transformer_based_wrap", "5.10.4", True),
    ("TRANSFORMER_BASED_WRAP", "5.10.4", False),
    ("transformer_based_wrap", "5.9.0", False),
])
def test_fsdp_wrap_policy_names(tmp_path, policy, pin, fires):
    text = _TRAINER + f"fsdp: true\nfsdp_config:\n  auto_wrap_policy: {policy}\n"
    assert _codes(tmp_path, text, [f"transformers=={pin}"], select="TRN042") == (["TRN042"] if fires else [])


@pytest.mark.parametrize("extra, fires", [
    ("lr_scheduler_type: cosine_with_restarts\n", True),  # every release: num_cycles defaults to 1
    ("lr_scheduler_type: cosine_with_restarts\nlr_scheduler_kwargs:\n  num_cycles: 1\n", True),
    ("lr_scheduler_type: cosine_with_restarts\nlr_scheduler_kwargs:\n  last_epoch: -1\n", True),
    ("lr_scheduler_type: cosine_with_restarts\nlr_scheduler_kwargs:\n  num_cycles: 3\n", False),
    ("lr_scheduler_type: cosine_with_restarts\nlr_scheduler_kwargs: '{\"num_cycles\": 3}'\n", False),  # JSON string
    ("lr_scheduler_type: cosine\n", False),
])
def test_cosine_restarts_needs_num_cycles(tmp_path, extra, fires):
    assert _codes(tmp_path, _TRAINER + extra, select="TRN087") == (["TRN087"] if fires else [])


def test_cosine_restarts_replaced_by_a_deepspeed_scheduler_is_silent(tmp_path):
    (tmp_path / "ds.json").write_text(json.dumps({"train_micro_batch_size_per_gpu": "auto",
                                                  "scheduler": {"type": "WarmupLR", "params": {}}}))
    text = _TRAINER + "deepspeed: ds.json\nlr_scheduler_type: cosine_with_restarts\n"
    assert _codes(tmp_path, text, select="TRN087") == []


@pytest.mark.parametrize("text, pin, checkpointing, reentrant", [
    ("activation_checkpointing: true\n", "5.23.0", True, None),
    ("activation_checkpointing: true\n", None, True, None),  # the new name's only reader
    ("activation_checkpointing: false\ngradient_checkpointing: true\n", "5.24.0", False, None),  # new name wins
    ("activation_checkpointing: null\ngradient_checkpointing: true\n", "5.23.0", True, None),  # None: the alias
    ("activation_checkpointing: true\ngradient_checkpointing: false\n", "5.22.0", False, None),  # no such field
    ("activation_checkpointing_kwargs:\n  use_reentrant: false\n", "5.23.0", False, False),
])
def test_checkpointing_renamed_in_transformers_5_23(tmp_path, monkeypatch, text, pin, checkpointing, reentrant):
    """transformers 5.23.0: gradient_checkpointing(_kwargs) became activation_checkpointing(_kwargs),
    the old names aliases read where the new one is None (training_args.py __post_init__, PyPI wheel)."""
    from linter.engine import Options, Session

    monkeypatch.setattr(versions, "installed", lambda package: None)  # the pin, or unknown
    if pin:
        (tmp_path / "requirements.txt").write_text(f"transformers=={pin}\n")
    (tmp_path / "args.yaml").write_text(_TRAINER + text)
    versions.forget()
    config = Session(Options(detect=False)).load(tmp_path / "args.yaml", True).config
    assert config.value("memory.gradient_checkpointing") is checkpointing
    assert config.value("memory.checkpointing_reentrant") is reentrant
