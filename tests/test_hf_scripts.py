"""Plain transformers / TRL / PEFT training scripts (linter/adapters/hf_script.py): the calls'
literal keywords read through the HF adapter's bindings; computed values and **kwargs unknown."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import trainlint
from linter.engine import Options, Session

HEADER = ("import os, torch\nfrom transformers import AutoModelForCausalLM, BitsAndBytesConfig, TrainingArguments, Trainer\n"
          "from peft import LoraConfig, get_peft_model\nfrom trl import SFTConfig, SFTTrainer, DPOConfig, DPOTrainer\n")


def script(tmp_path: Path, body: str, header: str = HEADER) -> Path:
    path = tmp_path / "train.py"
    path.write_text(header + body)
    return path


def config_of(path: Path):
    return Session(Options(detect=False)).load(path, True).config


def values(path: Path) -> dict:
    config = config_of(path)
    return {key: field.value for key, field in config.fields.items()} if config is not None else {}


def sft(arguments: str, trainer: str = "SFTTrainer(model=model, args=args)") -> str:
    return f"model = None\nargs = SFTConfig(output_dir='o', {arguments})\ntrainer = {trainer}\n"


# ---- the argument call: literals are facts, computed values and **kwargs are not ----------------


@pytest.mark.parametrize("keywords, key, expected", [
    ("per_device_train_batch_size=4", "batch.micro", 4),
    ("learning_rate=LR", "optimizer.lr", 2e-4),  # a module constant holding a literal
    ("fp16=True", "precision.fp16", True),
    ("max_seq_length=1024", "sequence.max_length", 1024),
    ("report_to=['wandb']", "logging.report_to", ["wandb"]),
    ("gradient_checkpointing_kwargs={'use_reentrant': False}", "memory.checkpointing_reentrant", False),
])
def test_a_literal_keyword_is_recorded(tmp_path, keywords, key, expected):
    found = values(script(tmp_path, "LR = 2e-4\n" + sft(keywords)))
    assert found["file.kind"] == "trl" and found[key] == expected


@pytest.mark.parametrize("keywords", ["per_device_train_batch_size=int(os.environ['BS'])",
                                      "per_device_train_batch_size=cli.batch_size"])
def test_a_computed_keyword_is_unknown_and_gets_no_default(tmp_path, keywords):
    found = values(script(tmp_path, sft(keywords)))
    assert "batch.micro" not in found
    assert found["batch.grad_accum"] == 1  # an unwritten key of a closed call: TrainingArguments' default


def test_a_call_with_kwargs_records_written_keys_only(tmp_path):
    found = values(script(tmp_path, sft("per_device_train_batch_size=4, **extra")))
    assert found["batch.micro"] == 4
    assert "batch.grad_accum" not in found and "optimizer.betas" not in found


def test_a_key_set_after_the_call_or_given_to_the_trainer_is_unknown(tmp_path):
    body = sft("fp16=True, max_seq_length=512", "SFTTrainer(model=model, args=args, max_seq_length=2048)")
    found = values(script(tmp_path, body + "args.fp16 = False\n"))
    assert "precision.fp16" not in found and "sequence.max_length" not in found
    assert "precision.bf16" not in found  # its default follows fp16, which is unknown


def test_trainer_arguments_get_transformers_defaults(tmp_path):
    body = "args = TrainingArguments('o', learning_rate=1e-5)\ntrainer = Trainer(model=None, args=args)\n"
    found = values(script(tmp_path, body))
    assert found["file.kind"] == "trainer" and found["precision.bf16"] is False and found["optimizer.lr"] == 1e-5
    assert "training.trainer" not in found


# ---- the trainer is the class the script calls ----------------------------------------------------


def test_the_trainer_class_is_the_trainer_kind(tmp_path):
    body = "args = DPOConfig(output_dir='o', beta=0.1)\nDPOTrainer(model=None, args=args)\n"
    assert values(script(tmp_path, body))["training.trainer"] == "dpo"


@pytest.mark.parametrize("trainer", ["MyTrainer(model=model, args=args)", "DPOTrainer(model=model, args=args)"])
def test_a_subclass_or_another_trainer_records_no_trainer(tmp_path, trainer):
    found = values(script(tmp_path, "class MyTrainer(SFTTrainer):\n    pass\n" + sft("fp16=True", trainer)))
    assert found["precision.fp16"] is True and "training.trainer" not in found


@pytest.mark.parametrize("body, header", [
    (sft("fp16=True"), HEADER + "from unsloth import FastLanguageModel\n"),  # unsloth.py's
    ("args = SFTConfig(output_dir='o', fp16=True)\nrun(args)\n", HEADER),  # no trainer receives it
    (sft("fp16=True") + "other = SFTConfig(output_dir='p')\n", HEADER),  # two argument objects
    (sft("fp16=True") + "args.set_training(learning_rate=1e-4)\n", HEADER),  # changed by a method
    (sft("fp16=True"), "from transformers import Trainer\nclass SFTConfig: pass\nclass SFTTrainer(Trainer): pass\n"),
])
def test_not_claimed(tmp_path, body, header):
    config = config_of(script(tmp_path, body, header))
    assert config is None or config.framework != "hf"


# ---- the model load, its BitsAndBytesConfig, LoraConfig and padding --------------------------------


MODEL = ("bnb = BitsAndBytesConfig(load_in_4bit=True{bnb})\n"
         "model = AutoModelForCausalLM.from_pretrained('org/model', quantization_config=bnb{load})\n")


def test_model_load_and_quantization(tmp_path):
    found = values(script(tmp_path, MODEL.format(bnb="", load=", torch_dtype=torch.bfloat16, device_map='auto'")
                          + sft("fp16=True")))
    assert (found["model.name"], found["model.load_dtype"], found["model.device_map"]) == ("org/model", "bfloat16", "auto")
    assert (found["quantization.bits"], found["quantization.compute_dtype"]) == (4, "float32")  # BitsAndBytesConfig's


def test_model_facts_computed_or_open_are_unknown(tmp_path):
    body = MODEL.format(bnb=", **quant", load=", torch_dtype=dtype") + sft("fp16=True")
    found = values(script(tmp_path, body))
    assert found["quantization.bits"] == 4
    assert "model.load_dtype" not in found and "quantization.compute_dtype" not in found


def test_a_recast_model_has_no_load_dtype(tmp_path):
    body = MODEL.format(bnb="", load=", torch_dtype=torch.float16") + "model = model.to(torch.bfloat16)\n" + sft("")
    assert "model.load_dtype" not in values(script(tmp_path, body))


@pytest.mark.parametrize("lora, expected", [
    ("r=8, lora_alpha=16, target_modules=['q_proj']", {"adapter.r": 8, "adapter.target_modules": ["q_proj"]}),
    ("r=8", {"adapter.r": 8, "adapter.peft_default_targets": True}),
    ("r=rank, **more", {}),
])
def test_lora_config(tmp_path, lora, expected):
    body = f"peft_config = LoraConfig({lora})\n" + sft("fp16=True", "SFTTrainer(model=model, args=args, peft_config=peft_config)")
    found = values(script(tmp_path, body))
    assert found["adapter.kind"] == "lora"
    assert {key: found.get(key) for key in ("adapter.r", "adapter.target_modules", "adapter.peft_default_targets")} \
        == {key: expected.get(key) for key in ("adapter.r", "adapter.target_modules", "adapter.peft_default_targets")}


def test_an_unused_lora_config_is_not_read(tmp_path):
    found = values(script(tmp_path, "peft_config = LoraConfig(r=8)\n" + sft("fp16=True")))
    assert "adapter.kind" not in found


PEFT_HEADER = HEADER + ("from peft import AdaLoraConfig, PrefixTuningConfig, PromptTuningConfig, PromptEncoderConfig\n"
                         "from transformers import TrainerCallback\n")


@pytest.mark.parametrize("call, kind", [
    ("PrefixTuningConfig(task_type='CAUSAL_LM', num_virtual_tokens=10)", "prefix_tuning"),
    ("PromptTuningConfig(task_type='SEQ_CLS', num_virtual_tokens=10)", "prompt_tuning"),
    ("PromptEncoderConfig(task_type='CAUSAL_LM', num_virtual_tokens=10)", "p_tuning"),
    ("AdaLoraConfig(task_type='CAUSAL_LM', init_r=12, target_r=4, total_step=100)", "adalora"),
])
def test_the_trained_peft_config_class_is_the_adapter_kind(tmp_path, call, kind):
    body = f"peft_config = {call}\n" + sft("fp16=True", "SFTTrainer(model=model, args=args, peft_config=peft_config)")
    found = values(script(tmp_path, body, PEFT_HEADER))
    assert found["adapter.kind"] == kind and found["adapter.task_type"] == call.split("'")[1]
    assert "adapter.generic_model" not in found


def test_two_trained_peft_configs_record_none(tmp_path):
    body = ("a = PrefixTuningConfig(num_virtual_tokens=10)\nb = LoraConfig(r=8)\nmodel = get_peft_model(model, a)\n"
            "model = get_peft_model(model, b)\n" + sft("fp16=True"))
    assert "adapter.kind" not in values(script(tmp_path, body, PEFT_HEADER))


@pytest.mark.parametrize("lora, generic", [("r=8", True), ("r=8, task_type=None", True),
                                           ("r=8, task_type='CAUSAL_LM'", None), ("r=8, task_type=task", None),
                                           ("r=8, **extra", None)])
def test_a_lora_config_without_task_type_is_the_generic_peft_model(tmp_path, lora, generic):
    body = f"model = get_peft_model(model, LoraConfig({lora}))\n" + sft("fp16=True")
    assert values(script(tmp_path, body, PEFT_HEADER)).get("adapter.generic_model") is generic


ADALORA = "model = get_peft_model(model, AdaLoraConfig(init_r=12, target_r=4, total_step=100))\n"


@pytest.mark.parametrize("extra, trainer, allocates", [
    ("", "SFTTrainer(model=model, args=args)", False),
    ("", "SFTTrainer(model=model, args=args, callbacks=[EarlyStoppingCallback()])", False),
    ("class Allocate(TrainerCallback):\n    def on_step_end(self, args, state, control, model=None, **kw):\n"
     "        model.base_model.update_and_allocate(state.global_step)\n",
     "SFTTrainer(model=model, args=args, callbacks=[Allocate()])", None),
    ("from helpers import Allocate\n", "SFTTrainer(model=model, args=args, callbacks=[Allocate()])", None),
    ("", "SFTTrainer(model=model, args=args, callbacks=callbacks)", None),
    ("class MyTrainer(SFTTrainer):\n    pass\n", "MyTrainer(model=model, args=args)", None),
])
def test_adalora_allocation_is_known_only_where_the_script_shows_every_caller(tmp_path, extra, trainer, allocates):
    header = PEFT_HEADER + "from transformers import EarlyStoppingCallback\n"
    found = values(script(tmp_path, extra + ADALORA + sft("fp16=True", trainer), header))
    assert found["adapter.kind"] == "adalora" and found.get("adapter.allocates_ranks") is allocates


def test_the_trainer_class_is_recorded(tmp_path):
    body = "args = TrainingArguments('o')\ntrainer = Trainer(model=None, args=args)\n"
    assert values(script(tmp_path, body))["training.trainer_class"] == "Trainer"
    found = values(script(tmp_path, "class Trainer2(Trainer):\n    pass\n" + body.replace("Trainer(model", "Trainer2(model")))
    assert "training.trainer_class" not in found


def test_pad_is_eos(tmp_path):
    found = values(script(tmp_path, "tokenizer.pad_token = tokenizer.eos_token\n" + sft("fp16=True")))
    assert found["tokenizer.pad_is_eos"] is True


# ---- a rule on a script, and its clean twin ------------------------------------------------------------


def codes(path: Path, gpu: str) -> list[str]:
    return sorted(f["code"] for f in json.loads(trainlint("check", path, "--gpu", gpu, "--format", "json").out))


def test_bf16_on_a_v100_fires_on_a_script_and_not_on_its_fp16_twin(tmp_path):
    assert "PRE001" in codes(script(tmp_path, sft("bf16=True")), "V100")
    assert "PRE001" not in codes(script(tmp_path, sft("fp16=True")), "V100")
    assert "PRE001" not in codes(script(tmp_path, sft("bf16=use_bf16")), "V100")

