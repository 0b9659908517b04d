"""Issue 16, model-structure classes: FSDP wrap classes the model lacks (MOD003), tied embeddings
trained twice as modules_to_save (MOD004), new tokens under an adapter with frozen embeddings
(MOD005). Snapshot fixtures live in tests/rules/MOD00x; these pin the version, table and
must-not-fire edges."""

from __future__ import annotations

import json

import pytest

from conftest import trainlint, write_file


pytestmark = pytest.mark.usefixtures("empty_hub_cache", "nothing_installed")


def codes(*args):
    return sorted(f["code"] for f in json.loads(trainlint("check", *args, "--no-detect", "--format", "json").out))


TRL_FSDP = """model_name_or_path: {model}
dataset_name: trl-lib/Capybara
output_dir: out
fsdp: {options}
fsdp_config:
  transformer_layer_cls_to_wrap:
    - {cls}
"""


def test_mod003_fires_on_another_architectures_layer(tmp_path):
    path = write_file(tmp_path / "trl.yaml", TRL_FSDP.format(model="Qwen/Qwen2.5-7B", options="full_shard auto_wrap",
                                                         cls="LlamaDecoderLayer"))
    assert codes(path, "--select", "MOD003") == ["MOD003"]


@pytest.mark.parametrize("model, options, cls", [
    ("Qwen/Qwen2.5-7B", "full_shard auto_wrap", "Qwen2DecoderLayer"),   # its own layer
    ("Qwen/Qwen2.5-7B", "full_shard", "LlamaDecoderLayer"),             # no auto_wrap: names unused in 4.x
    ("acme/house-model-7b", "full_shard auto_wrap", "LlamaDecoderLayer"),  # unknown model
    ("Qwen/Qwen2.5-7B", "full_shard auto_wrap", "MyCustomBlock"),       # a class the table does not know
])
def test_mod003_silent(tmp_path, model, options, cls):
    path = write_file(tmp_path / "trl.yaml", TRL_FSDP.format(model=model, options=options, cls=cls))
    assert codes(path, "--select", "MOD003") == []


def test_mod003_reads_the_local_config_and_skips_remote_code(tmp_path):
    path = write_file(tmp_path / "trl.yaml", TRL_FSDP.format(model="models/m", options="full_shard auto_wrap",
                                                         cls="LlamaDecoderLayer"))
    write_file(tmp_path / "models" / "m" / "config.json", json.dumps({"model_type": "mistral"}))
    assert codes(path, "--select", "MOD003") == ["MOD003"]
    write_file(tmp_path / "models" / "m" / "config.json",
           json.dumps({"model_type": "mistral", "auto_map": {"AutoModelForCausalLM": "modeling_m.M"}}))
    from linter import models

    models.checkpoint_config.cache_clear()
    assert codes(path, "--select", "MOD003") == []


def test_mod003_size_based_policy_is_silent(tmp_path):
    text = TRL_FSDP.format(model="Qwen/Qwen2.5-7B", options="full_shard auto_wrap", cls="LlamaDecoderLayer")
    path = write_file(tmp_path / "trl.yaml", text + "  auto_wrap_policy: SIZE_BASED_WRAP\n")
    assert codes(path, "--select", "MOD003") == []


def test_mod003_accelerate_config_records_wrap_classes(tmp_path):
    from pathlib import Path

    from linter.engine import Options, Session
    from linter.source import Source
    from linter.yaml_reader import parse_yaml

    def parse(text):
        return Session(Options()).claim(parse_yaml(Source(Path("accelerate.yaml"), text)))

    head = "compute_environment: LOCAL_MACHINE\ndistributed_type: FSDP\nfsdp_config:\n"
    names = "  fsdp_transformer_layer_cls_to_wrap: LlamaDecoderLayer,MistralDecoderLayer\n"
    config = parse(head + "  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP\n" + names)
    assert config.value("parallel.fsdp_wrap_classes") == ["LlamaDecoderLayer", "MistralDecoderLayer"]
    # accelerate's default policy is NO_WRAP: the names are not used
    assert parse(head + names).value("parallel.fsdp_wrap_classes") is None


LF_TIED = """model_name_or_path: {model}
stage: sft
do_train: true
finetuning_type: lora
additional_target: {targets}
template: llama3
"""


def test_mod004_fires_on_a_tied_model(tmp_path):
    path = write_file(tmp_path / "lf.yaml", LF_TIED.format(model="meta-llama/Llama-3.2-1B-Instruct",
                                                       targets="embed_tokens,lm_head"))
    assert codes(path, "--select", "MOD004") == []  # PEFT unknown
    write_file(tmp_path / "requirements.txt", "peft==0.18.1\n")
    assert codes(path, "--select", "MOD004") == ["MOD004"]
    write_file(tmp_path / "requirements.txt", "peft==0.19.0\n")  # merge_and_unload unties the merged config
    assert codes(path, "--select", "MOD004") == []


@pytest.mark.parametrize("inference_mode, remedy", [(True, "merge it with PEFT >= 0.19.0 or use it unmerged"),
                                                    (False, "set ensure_weight_tying: true (PEFT >= 0.18)")])
def test_mod004_reads_a_peft_adapter_config(tmp_path, inference_mode, remedy):
    adapter = {"peft_type": "LORA", "task_type": "CAUSAL_LM", "base_model_name_or_path": "Qwen/Qwen2.5-1.5B-Instruct",
               "inference_mode": inference_mode, "r": 8, "lora_alpha": 16, "target_modules": ["q_proj", "v_proj"],
               "modules_to_save": ["embed_tokens", "lm_head"]}
    path = write_file(tmp_path / "adapter_config.json", json.dumps(adapter))
    write_file(tmp_path / "requirements.txt", "peft==0.18.1\n")
    found = json.loads(trainlint("check", path, "--no-detect", "--format", "json", "--select", "MOD004").out)
    assert [f["code"] for f in found] == ["MOD004"] and remedy in found[0]["message"]
    write_file(path, json.dumps({**adapter, "ensure_weight_tying": True}))
    assert codes(path, "--select", "MOD004") == []
    write_file(path, json.dumps({**adapter, "modules_to_save": ["embed_tokens"]}))
    assert codes(path, "--select", "MOD004") == []


@pytest.mark.parametrize("model, targets", [
    ("meta-llama/Llama-3.2-1B-Instruct", "embed_tokens"),          # the tied matrix trained once
    ("meta-llama/Meta-Llama-3-8B-Instruct", "embed_tokens,lm_head"),  # untied
    ("acme/house-model-7b", "embed_tokens,lm_head"),               # unknown
])
def test_mod004_silent(tmp_path, model, targets):
    path = write_file(tmp_path / "lf.yaml", LF_TIED.format(model=model, targets=targets))
    write_file(tmp_path / "requirements.txt", "peft==0.18.1\n")
    assert codes(path, "--select", "MOD004") == []


def test_mod004_reads_the_local_config(tmp_path):
    path = write_file(tmp_path / "lf.yaml", LF_TIED.format(model="models/m", targets="embed_tokens,lm_head"))
    write_file(tmp_path / "requirements.txt", "peft==0.18.1\n")
    write_file(tmp_path / "models" / "m" / "config.json", json.dumps({"model_type": "qwen2", "tie_word_embeddings": True}))
    assert codes(path, "--select", "MOD004") == ["MOD004"]
    write_file(tmp_path / "models" / "m" / "config.json", json.dumps({"model_type": "qwen2", "tie_word_embeddings": False}))
    from linter import models

    models.checkpoint_config.cache_clear()
    assert codes(path, "--select", "MOD004") == []


AXOLOTL_TOKENS = """base_model: {model}
adapter: lora
lora_target_linear: true
datasets:
  - path: mhenrichsen/alpaca_2k_test
    type: alpaca
{extra}tokens:
  - <|im_start|>
"""


@pytest.mark.parametrize("model, extra, fires", [
    ("meta-llama/Meta-Llama-3-8B", "", True),
    ("meta-llama/Meta-Llama-3-8B", "lora_modules_to_save:\n  - embed_tokens\n", True),
    ("meta-llama/Meta-Llama-3-8B", "lora_modules_to_save:\n  - embed_tokens\n  - lm_head\n", False),
    ("EleutherAI/pythia-1b", "lora_modules_to_save:\n  - embed_tokens\n  - lm_head\n", True),  # gpt_neox: embed_in/out
    ("EleutherAI/pythia-1b", "lora_modules_to_save:\n  - embed_in\n  - embed_out\n", False),
    ("acme/house-model-7b", "", True),                                    # nothing trains the embeddings at all
    ("acme/house-model-7b", "lora_modules_to_save:\n  - wte\n  - lm_head\n", False),  # names depend on the model
])
def test_mod005(tmp_path, model, extra, fires):
    path = write_file(tmp_path / "axolotl.yaml", AXOLOTL_TOKENS.format(model=model, extra=extra))
    assert codes(path, "--select", "MOD005") == (["MOD005"] if fires else [])


LF_BASE = """model_name_or_path: {model}
stage: sft
do_train: true
finetuning_type: {kind}
template: {template}
{extra}"""


@pytest.mark.parametrize("model, kind, template, extra, fires", [
    ("meta-llama/Meta-Llama-3-8B", "lora", "llama3", "", True),
    ("meta-llama/Llama-3.1-70B", "lora", "llama3", "", True),
    ("/data/models/Meta-Llama-3-8B", "lora", "llama3", "", True),               # a local copy, same name
    ("meta-llama/Meta-Llama-3-8B-Instruct", "lora", "llama3", "", False),      # trained its chat tokens
    ("NousResearch/Hermes-2-Pro-Llama-3-8B", "lora", "llama3", "", False),     # a derivative: not listed
    ("meta-llama/Meta-Llama-3-8B", "full", "llama3", "", False),               # embeddings train
    ("meta-llama/Meta-Llama-3-8B", "lora", "alpaca", "", False),               # no llama3 tokens
    ("meta-llama/Meta-Llama-3-8B", "lora", "llama3", "additional_target: embed_tokens,lm_head\n", False),
    ("meta-llama/Meta-Llama-3-8B", "lora", "llama3", "use_unsloth: true\n", False),  # Unsloth fixes them
    ("meta-llama/Llama-3.2-3B", "lora", "llama3", "", False),                  # undocumented: not listed
])
def test_mod006(tmp_path, model, kind, template, extra, fires):
    path = write_file(tmp_path / "lf.yaml", LF_BASE.format(model=model, kind=kind, template=template, extra=extra))
    assert codes(path, "--select", "MOD006") == (["MOD006"] if fires else [])



ACCELERATE_FSDP = """compute_environment: LOCAL_MACHINE
distributed_type: FSDP
num_processes: 8
fsdp_config:
  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP
  fsdp_transformer_layer_cls_to_wrap: LlamaDecoderLayer
  fsdp_sharding_strategy: FULL_SHARD
"""


def _accelerate_run(tmp_path, trainer_text):
    write_file(tmp_path / "trainlint.toml", '[[runs]]\nfiles = ["sft.yaml", "accelerate.yaml"]\n')
    write_file(tmp_path / "requirements.txt", "transformers==4.44.2\n")
    write_file(tmp_path / "accelerate.yaml", ACCELERATE_FSDP)
    write_file(tmp_path / "sft.yaml", trainer_text)
    return json.loads(trainlint("check", tmp_path, "--no-detect", "--select", "MOD003", "--format", "json").out)


def test_mod003_accelerate_names_replaced_by_the_training_configs(tmp_path):
    # TrainingArguments.__post_init__ writes FSDP_TRANSFORMER_CLS_TO_WRAP from its own fsdp_config
    # over the one accelerate launch set (4.44.2 training_args.py; 5.x passes it to the plugin).
    found = _accelerate_run(tmp_path, TRL_FSDP.format(model="Qwen/Qwen2.5-7B", options="full_shard auto_wrap",
                                                      cls="Qwen2DecoderLayer"))
    assert found == []
    # the training config's own names are still judged
    found = _accelerate_run(tmp_path, TRL_FSDP.format(model="Qwen/Qwen2.5-7B", options="full_shard auto_wrap",
                                                      cls="MistralDecoderLayer"))
    assert [(f["code"], f["file"].endswith("sft.yaml")) for f in found] == [("MOD003", True)]


def test_mod003_accelerate_names_judged_where_the_training_config_names_none(tmp_path):
    found = _accelerate_run(tmp_path, "model_name_or_path: Qwen/Qwen2.5-7B\ndataset_name: trl-lib/Capybara\n"
                                      "output_dir: out\n")
    assert [(f["code"], f["file"].endswith("accelerate.yaml")) for f in found] == [("MOD003", True)]


def test_mod003_llamafactory_wrap_classes_replace_the_accelerate_configs(tmp_path):
    lf = ("model_name_or_path: Qwen/Qwen2.5-7B\nstage: sft\ndo_train: true\nfinetuning_type: full\ntemplate: qwen\n"
          "dataset: alpaca_en_demo\noutput_dir: out\nfsdp: full_shard auto_wrap\nfsdp_config:\n"
          "  transformer_layer_cls_to_wrap: Qwen2DecoderLayer\n")
    assert _accelerate_run(tmp_path, lf) == []
    found = _accelerate_run(tmp_path, lf.replace("fsdp_config:\n  transformer_layer_cls_to_wrap: Qwen2DecoderLayer\n", ""))
    assert [f["code"] for f in found] == ["MOD003"]
