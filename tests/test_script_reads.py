"""TRL ModelConfig fields the script a launch runs never reads are not bound (linter/script_reads.py,
linter/adapters/script_fields.py, linter/runs.py): a script may parse a TRL file with
TrlParser((ModelConfig, ...)) and build its model another way (Unsloth), so the file's
attn_implementation / lora_modules_to_save never reach the run."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from conftest import trainlint

from linter import launches
from linter.script_reads import fields_read

_FILE = """\
model_name_or_path: Qwen/Qwen2.5-0.5B
torch_dtype: bfloat16
attn_implementation: flash_attention_2
load_in_4bit: false
use_peft: true
lora_r: 16
lora_modules_to_save: ["lm_head", "embed_tokens"]
dataset_name: d
per_device_train_batch_size: 1
"""

# A script that hands only some ModelConfig fields on, through a function of its own.
_UNSLOTH = """\
from unsloth import FastLanguageModel
from trl import ModelConfig, ScriptArguments, SFTConfig, SFTTrainer, TrlParser


def train(model_args, script_args, training_args):
    print(f"{model_args}")
    model, tokenizer = FastLanguageModel.from_pretrained(
        model_name=model_args.model_name_or_path, load_in_4bit=model_args.load_in_4bit)
    if model_args.use_peft:
        model = FastLanguageModel.get_peft_model(model, r=getattr(model_args, "lora_r"))
    SFTTrainer(model=model, args=training_args).train()


if __name__ == "__main__":
    parser = TrlParser((ModelConfig, ScriptArguments, SFTConfig))
    model_args, script_args, training_args = parser.parse_args_and_config()
    train(model_args, script_args, training_args=training_args)
"""

# TRL's own pattern (trl/scripts/sft.py): the fields are handed on, the object goes to helpers whole.
_TRL_SFT = """\
from transformers import AutoModelForCausalLM
from trl import ModelConfig, ScriptArguments, SFTConfig, SFTTrainer, TrlParser, get_peft_config

parser = TrlParser((ScriptArguments, SFTConfig, ModelConfig))
script_args, training_args, model_args = parser.parse_args_and_config()
model = AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path,
                                             attn_implementation=model_args.attn_implementation)
SFTTrainer(model=model, args=training_args, peft_config=get_peft_config(model_args)).train()
"""


def _script(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "train.py"
    path.write_text(textwrap.dedent(text), "utf-8")
    return path


def test_the_fields_a_script_reads(tmp_path):
    # attribute reads, getattr with a literal name, an f-string, a function of the script's own
    assert fields_read(_script(tmp_path, _UNSLOTH), "ModelConfig", "trl") == {
        "model_name_or_path", "load_in_4bit", "use_peft", "lora_r"}


def test_a_whole_object_handed_on_or_an_unknown_parse_is_not_known(tmp_path):
    cases = {
        "helper": _TRL_SFT,  # get_peft_config(model_args) reads every LoRA field
        "vars": _UNSLOTH.replace('print(f"{model_args}")', "kwargs = vars(model_args)"),
        "method": _UNSLOTH.replace('print(f"{model_args}")', "kwargs = model_args.to_dict()"),
        "alias": _UNSLOTH.replace('print(f"{model_args}")', "config = model_args"),
        "returned": _UNSLOTH.replace('print(f"{model_args}")', "return model_args"),
        "unpacked whole": _UNSLOTH.replace("model_args, script_args, training_args = parser", "args = parser"),
        "two parsers": _UNSLOTH + "\nother = HfArgumentParser((ModelConfig,))\n",
        "not TRL's": _UNSLOTH.replace("from trl import ModelConfig, ", "from trl import "),
        "imported function": _UNSLOTH.replace("def train(", "def _train("),
        "starred call": _UNSLOTH.replace("train(model_args, script_args, training_args=training_args)",
                                         "train(*[model_args, script_args, training_args])"),
    }
    for name, text in cases.items():
        folder = tmp_path / name.replace(" ", "_").replace("'", "")
        folder.mkdir()
        assert fields_read(_script(folder, text), "ModelConfig", "trl") is None, name


def test_every_parse_of_the_parser_is_followed(tmp_path):
    text = """\
        import sys
        from trl import ModelConfig, TrlParser
        from transformers import TrainingArguments
        parser = TrlParser((ModelConfig, TrainingArguments))
        if sys.argv[1].endswith(".yaml"):
            model_args, training_args = parser.parse_yaml_file(sys.argv[1])
        else:
            margs, training_args = parser.parse_args_into_dataclasses()
        print(model_args.lora_r, margs.attn_implementation)
        """
    assert fields_read(_script(tmp_path, text), "ModelConfig", "trl") == {"lora_r", "attn_implementation"}


def _checkout(tmp_path: Path, files: dict[str, str]) -> Path:
    (tmp_path / ".git").mkdir(parents=True)
    files = {"requirements.txt": "peft==0.18.1\n", **files}  # MOD004 judges a PEFT before 0.19.0
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(textwrap.dedent(text), "utf-8")
    launches.scan.cache_clear()
    return tmp_path


def _codes(path: Path, gpu: str = "V100") -> list[str]:
    result = trainlint("check", path, "--no-detect", "--format", "json", "--gpu", gpu,
                       "--select", "PRE007,MOD004,NUM004,PRE001,QNT001")
    assert result.code in (0, 1), result.err
    return sorted(finding["code"] for finding in json.loads(result.out))


def test_a_field_the_launched_script_never_reads_is_not_bound(tmp_path):
    # PRE007 (flash_attention_2 on a V100) holds only where the script hands attn_implementation on
    launched = _checkout(tmp_path / "unsloth", {"config/sft.yaml": _FILE, "train.py": _UNSLOTH,
                                                "run.sh": "accelerate launch train.py --config config/sft.yaml\n"})
    # the model dtype (PRE001), attention (PRE007) and modules_to_save (MOD004, NUM004) are Unsloth's
    # to decide: the script hands it none of torch_dtype, attn_implementation, lora_modules_to_save
    assert _codes(launched / "config" / "sft.yaml") == []
    trl = _checkout(tmp_path / "trl", {"config/sft.yaml": _FILE, "train.py": _TRL_SFT,
                                       "run.sh": "accelerate launch train.py --config config/sft.yaml\n"})
    assert _codes(trl / "config" / "sft.yaml") == ["MOD004", "NUM004", "PRE001", "PRE007"]


def test_without_one_agreed_script_the_file_is_read_as_today(tmp_path):
    # no launch command names the file: the script that reads it is not known
    unnamed = _checkout(tmp_path / "unnamed", {"config/sft.yaml": _FILE, "train.py": _UNSLOTH})
    assert "PRE007" in _codes(unnamed / "config" / "sft.yaml")
    # two launch commands run different scripts with it
    disagree = _checkout(tmp_path / "disagree", {
        "config/sft.yaml": _FILE, "train.py": _UNSLOTH, "train_hf.py": _TRL_SFT,
        "a.sh": "accelerate launch train.py --config config/sft.yaml\n",
        "b.sh": "accelerate launch train_hf.py --config config/sft.yaml\n"})
    assert "PRE007" in _codes(disagree / "config" / "sft.yaml")


def test_the_dtype_alias_and_post_init_fields_stay_bound(tmp_path):
    # ModelConfig.__post_init__ copies torch_dtype into dtype (TRL 0.23 to 0.26): reading dtype reads it
    reads_dtype = _UNSLOTH.replace("load_in_4bit=model_args.load_in_4bit", "dtype=model_args.dtype")
    root = _checkout(tmp_path / "dtype", {"config/sft.yaml": _FILE, "train.py": reads_dtype,
                                          "run.sh": "accelerate launch train.py --config config/sft.yaml\n"})
    from linter.adapters.script_fields import unread_model_config_keys

    keys = ["torch_dtype", "attn_implementation", "load_in_4bit", "load_in_8bit", "lora_r", "dataset_name"]
    assert unread_model_config_keys(root / "train.py", keys) == ["attn_implementation"]


# The project's own ScriptArguments, in place of TRL's: a file setting its key is written for the
# project's scripts (no TRL or transformers class takes `dataset_id_or_path`).
_OWN_ARGUMENTS = """\
from dataclasses import dataclass


@dataclass
class ScriptArguments:
    dataset_id_or_path: str
"""
_OWN_FILE = _FILE.replace("dataset_name: d", "dataset_id_or_path: d")


def _own(script: str, field: str = "dataset_id_or_path") -> str:
    head, _, body = script.partition("\n\n")
    return (head.replace("ModelConfig, ScriptArguments,", "ModelConfig,") + "\n"
            + _OWN_ARGUMENTS.replace("dataset_id_or_path", field) + "\n\n" + body)


def test_unnamed_a_field_one_possible_reader_never_reads_is_not_bound(tmp_path):
    # no launch names the file; it sets a key only the project's ScriptArguments declares, so one of
    # the project's scripts reads it: both parse every key, only train_hf.py hands attention, dtype
    # and modules_to_save on. Which one runs decides PRE007 / PRE001 / MOD004 / NUM004: unknown
    root = _checkout(tmp_path / "two", {"config/sft.yaml": _OWN_FILE, "train.py": _own(_UNSLOTH),
                                        "train_hf.py": _own(_TRL_SFT)})
    assert _codes(root / "config" / "sft.yaml") == []
    # the only script that can parse it is the Unsloth one: as if a launch named it
    alone = _checkout(tmp_path / "alone", {"config/sft.yaml": _OWN_FILE, "train.py": _own(_UNSLOTH)})
    assert _codes(alone / "config" / "sft.yaml") == []


def test_unnamed_every_possible_reader_reading_the_field_keeps_it(tmp_path):
    # the only possible reader hands every field on (TRL's own pattern)
    root = _checkout(tmp_path / "trl", {"config/sft.yaml": _OWN_FILE, "train_hf.py": _own(_TRL_SFT)})
    assert _codes(root / "config" / "sft.yaml") == ["MOD004", "NUM004", "PRE001", "PRE007"]
    # the Unsloth script's own class lacks the file's key: its parser refuses the file, it is no reader
    other = _checkout(tmp_path / "other", {"config/sft.yaml": _OWN_FILE, "train_hf.py": _own(_TRL_SFT),
                                           "train.py": _own(_UNSLOTH, "data_path")})
    assert _codes(other / "config" / "sft.yaml") == ["MOD004", "NUM004", "PRE001", "PRE007"]
    # nor is one parsing TRL's own ScriptArguments, though another script names its class so
    trl_args = _checkout(tmp_path / "trl_args", {"config/sft.yaml": _OWN_FILE, "train_hf.py": _own(_TRL_SFT),
                                                 "train.py": _UNSLOTH})
    assert _codes(trl_args / "config" / "sft.yaml") == ["MOD004", "NUM004", "PRE001", "PRE007"]
    # a script parsing a TRL config of another trainer (GRPOConfig) does not read an SFT file
    grpo = _own(_UNSLOTH).replace("SFTConfig, SFTTrainer", "GRPOConfig, GRPOTrainer").replace(
        "SFTTrainer(", "GRPOTrainer(").replace("(ModelConfig, ScriptArguments, SFTConfig)",
                                                "(ModelConfig, ScriptArguments, GRPOConfig)")
    sft_file = _OWN_FILE + "packing: true\n"  # SFTConfig's alone
    mixed = _checkout(tmp_path / "grpo", {"config/sft.yaml": sft_file, "train_hf.py": _own(_TRL_SFT),
                                          "train_grpo.py": grpo})
    assert _codes(mixed / "config" / "sft.yaml") == ["MOD004", "NUM004", "PRE001", "PRE007"]
