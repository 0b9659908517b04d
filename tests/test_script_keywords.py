"""SCH001 on a training script's argument call (rules/script_keywords.py, linter/argument_keys.py):
a keyword the class lacks in the pinned release, or in every release read when none is pinned,
raises TypeError at construction; a splat's keys and classes the tables do not cover are not judged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import trainlint

HEADER = ("from transformers import Trainer, TrainingArguments, Seq2SeqTrainer, Seq2SeqTrainingArguments\n"
          "from trl import SFTConfig, SFTTrainer, DPOConfig, DPOTrainer, PPOConfig, PPOTrainer\n")


def findings(tmp_path: Path, body: str, pins: str = "") -> list[dict]:
    (tmp_path / "train.py").write_text(HEADER + body)
    if pins:
        (tmp_path / "requirements.txt").write_text(pins + "\n")
    out = trainlint("check", tmp_path / "train.py", "--select", "SCH001", "--format", "json").out
    return json.loads(out)


def trainer(keywords: str) -> str:
    return f"args = TrainingArguments(output_dir='o', {keywords})\nTrainer(model=None, args=args).train()\n"


def sft(keywords: str) -> str:
    return f"config = SFTConfig(output_dir='o', {keywords})\nSFTTrainer(model='m', args=config).train()\n"


@pytest.mark.parametrize("pins, fires", [("transformers==4.51.0", True), ("transformers==5.0.0", True),
                                         ("transformers==4.50.3", False), ("", False)])
def test_evaluation_strategy_by_the_transformers_release(tmp_path, pins, fires):
    found = findings(tmp_path, trainer("evaluation_strategy='steps', eval_steps=10"), pins)
    assert bool(found) is fires
    if fires:
        assert found[0]["severity"] == "error" and found[0]["line"] == 3
        assert "TrainingArguments takes no keyword evaluation_strategy in transformers" in found[0]["message"]
        assert "kept by transformers 4.20.0 to 4.50.3" in found[0]["message"]
        assert "raises TypeError at construction; renamed eval_strategy" in found[0]["message"]


def test_a_keyword_no_release_has_fires_unpinned(tmp_path):
    found = findings(tmp_path, trainer("per_device_train_batchsize=4"))
    assert [f["code"] for f in found] == ["SCH001"]
    assert "in any transformers release 4.20.0 to 5.24.0" in found[0]["message"]
    assert "did you mean 'per_device_train_batch_size'" in found[0]["message"]


def test_seq2seq_keys_belong_to_seq2seq_arguments_only(tmp_path):
    assert findings(tmp_path, trainer("predict_with_generate=True"))
    body = ("args = Seq2SeqTrainingArguments(output_dir='o', predict_with_generate=True, generation_max_length=64)\n"
            "Seq2SeqTrainer(model=None, args=args).train()\n")
    assert findings(tmp_path, body) == []


@pytest.mark.parametrize("pins, fires", [("trl==0.21.0", True), ("trl==0.19.1", False), ("", False),
                                         ("trl==9.0.0", False)])  # a release past the ones read: not known
def test_a_keyword_trl_removed(tmp_path, pins, fires):
    found = findings(tmp_path, sft("max_seq_length=512, dataset_text_field='text'"), pins)
    assert bool(found) is fires
    if fires:
        message = found[0]["message"]
        assert "SFTConfig takes no keyword max_seq_length in trl 0.21.0" in message
        assert "(kept by trl 0.9.3 to 0.19.1)" in message and "renamed max_length in trl 0.16.0" in message


def test_a_trl_config_takes_its_training_arguments_fields(tmp_path):
    assert findings(tmp_path, sft("learning_rate=1e-5, bf16=True, eval_strategy='no'"), "trl==0.21.0") == []
    found = findings(tmp_path, sft("evaluation_strategy='no'"), "trl==0.21.0\ntransformers==4.55.0")
    assert "nor does its TrainingArguments base in transformers 4.55.0" in found[0]["message"]


def test_another_configs_keyword_fires_unpinned(tmp_path):
    body = "config = DPOConfig(output_dir='o', dataset_text_field='text')\nDPOTrainer(model='m', args=config)\n"
    found = findings(tmp_path, body)
    assert "DPOConfig takes no keyword dataset_text_field in any trl release 0.9.3 to 1.9.0" in found[0]["message"]


def test_a_splat_and_uncovered_classes_are_not_judged(tmp_path):
    assert findings(tmp_path, sft("**extra")) == []
    # PPOConfig's table row is PPOv2Config's too (PPOConfig was a plain class before TRL 0.12.0)
    body = "config = PPOConfig(output_dir='o', made_up_key=1)\nPPOTrainer(args=config, model=None)\n"
    assert findings(tmp_path, body) == []


def test_a_keyword_set_later_is_no_constructor_keyword(tmp_path):
    body = "args = TrainingArguments(output_dir='o')\nargs.made_up_key = 1\nTrainer(model=None, args=args)\n"
    assert findings(tmp_path, body) == []


# ---- a key the script computes is unknown, not the framework's default (rules/facts.py left_out) -------


def _trn076(tmp_path: Path, body: str, pins: str) -> list[str]:
    (tmp_path / "train.py").write_text("from peft import LoraConfig\n" + HEADER + body)
    (tmp_path / "requirements.txt").write_text(pins + "\n")
    out = trainlint("check", tmp_path / "train.py", "--select", "TRN076", "--format", "json").out
    return [f["message"] for f in json.loads(out)]


@pytest.mark.parametrize("loss, fires", [("", True), ("loss_type=cli.loss, ", False), ("**extra, ", False),
                                         ("use_liger_kernel=cli.liger, ", False), ("use_liger_kernel=False, ", True)])
def test_an_unwritten_loss_type_is_the_default_only_where_not_computed(tmp_path, loss, fires):
    body = (f"config = SFTConfig(output_dir='o', {loss}bf16=True)\npeft = LoraConfig(r=8, target_modules=['q_proj', 'lm_head'])\n"
            "SFTTrainer(model='m', args=config, peft_config=peft).train()\n")
    assert bool(_trn076(tmp_path, body, "trl==1.7.0")) is fires


@pytest.mark.parametrize("keywords, fires", [("", True), ("max_length=cli.max_length", False),
                                             ("packing=cli.packing", False), ("packing=False", True)])
def test_padding_free_reads_an_unwritten_max_length_as_its_default_only(tmp_path, keywords, fires):
    body = f"config = SFTConfig(output_dir='o', padding_free=True, {keywords})\nSFTTrainer(model='m', args=config)\n"
    assert bool(_trn076(tmp_path, body, "trl==1.0.0")) is fires


@pytest.mark.parametrize("keywords, fires", [("", True), ("label_smoothing=cli.smoothing", False)])
def test_exo_pair_reads_an_unwritten_label_smoothing_as_zero_only(tmp_path, keywords, fires):
    body = (f"config = DPOConfig(output_dir='o', loss_type='exo_pair', {keywords})\n"
            "DPOTrainer(model='m', args=config).train()\n")
    assert bool(_trn076(tmp_path, body, "trl==0.29.0")) is fires


@pytest.mark.parametrize("keywords, fires", [("", True), ("log_completions=cli.log", False), ("log_completions=False", True)])
def test_log_completions_a_script_computes_is_not_off(tmp_path, keywords, fires):
    body = (f"from trl import GRPOConfig, GRPOTrainer\nconfig = GRPOConfig(output_dir='o', log_completions_hub_repo='me/c', "
            f"{keywords})\nGRPOTrainer(model='m', reward_funcs=[], args=config).train()\n")
    assert bool(_trn076(tmp_path, body, "trl==0.28.0")) is fires
