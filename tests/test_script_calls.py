"""What a plain script's trainer call receives and what the script does with the trainer
(linter/adapters/script_calls.py): the facts TRN090-TRN092 read, and where they stay unknown."""

from __future__ import annotations

from pathlib import Path

import pytest

from linter.engine import Options, Session

HEADER = ("from transformers import AutoModelForCausalLM, HfArgumentParser, Trainer, TrainingArguments\n"
          "from trl import DataCollatorForCompletionOnlyLM, SFTConfig, SFTTrainer\n"
          "model = AutoModelForCausalLM.from_pretrained('Qwen/Qwen2.5-0.5B')\n")


def facts(tmp_path: Path, body: str) -> dict:
    path = tmp_path / "train.py"
    path.write_text(HEADER + body)
    config = Session(Options(detect=False)).load(path, True).config
    return {key: field.value for key, field in config.fields.items()}


@pytest.mark.parametrize("train, passes", [
    ("trainer.train()", False),
    ("trainer.train(resume_from_checkpoint='out/checkpoint-5')", True),
    ("trainer.train('out/checkpoint-5')", True),
    ("trainer.train(resume_from_checkpoint=None)", False),
    ("trainer.train(**kwargs)", None),  # unknown
    ("other.train()", None),  # not the trainer
])
def test_train_call_resume_argument(tmp_path, train, passes):
    found = facts(tmp_path, "args = TrainingArguments(output_dir='o', resume_from_checkpoint='out/checkpoint-5')\n"
                            f"trainer = Trainer(model=model, args=args)\n{train}\n")
    assert found["checkpoint.resume_from"] == "out/checkpoint-5"
    assert found.get("training.train_resume_arg") is passes


def test_resume_field_read_or_parser(tmp_path):
    read = facts(tmp_path, "args = TrainingArguments(output_dir='o')\ntrainer = Trainer(model=model, args=args)\n"
                           "if args.resume_from_checkpoint:\n    print('resuming')\ntrainer.train()\n")
    assert read["checkpoint.resume_field_read"] is True
    parsed = facts(tmp_path, "parser = HfArgumentParser(TrainingArguments)\nargs = TrainingArguments(output_dir='o')\n"
                             "trainer = Trainer(model=model, args=args)\ntrainer.train()\n")
    assert parsed["checkpoint.resume_field_read"] is True


def test_evaluation_facts(tmp_path):
    found = facts(tmp_path, "args = TrainingArguments(output_dir='o', eval_strategy='steps')\n"
                            "trainer = Trainer(model=model, args=args, eval_dataset=valid, compute_metrics=metrics)\n"
                            "trainer.evaluate()\n")
    assert found["trainer.call_class"] == "transformers.Trainer"
    assert (found["eval.compute_metrics"], found["eval.preprocess_logits"], found["eval.dataset_given"]) == \
        (True, False, True)
    assert (found["eval.prediction_loss_only"], found["eval.batch_metrics"]) == (False, False)
    assert found["eval.evaluate_called"] is True and found["model.script_classes"] == ["AutoModelForCausalLM"]


def test_open_trainer_call_records_no_argument_facts(tmp_path):
    found = facts(tmp_path, "args = TrainingArguments(output_dir='o')\n"
                            "trainer = Trainer(model=model, args=args, **extra)\n")
    assert "eval.compute_metrics" not in found and "eval.dataset_given" not in found


def test_collator_and_packing_keyword(tmp_path):
    found = facts(tmp_path, "collator = DataCollatorForCompletionOnlyLM('### A:', tokenizer=tok)\n"
                            "args = TrainingArguments(output_dir='o')\n"
                            "trainer = SFTTrainer(model, args=args, data_collator=collator, packing=True)\n")
    assert found["data.collator_class"] == "trl.DataCollatorForCompletionOnlyLM"
    assert found["data.collator_instruction_template"] is False and found["trainer.packing_keyword"] is True
    templated = facts(tmp_path, "collator = DataCollatorForCompletionOnlyLM('### A:', '### Q:', tokenizer=tok)\n"
                                "args = SFTConfig(output_dir='o', packing=True)\n"
                                "trainer = SFTTrainer(model, args=args, data_collator=collator)\n")
    assert templated["data.collator_instruction_template"] is True and templated["sequence.packing"] is True
