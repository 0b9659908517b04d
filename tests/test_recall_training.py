"""Issue 16, trainer / DeepSpeed / accelerate / FSDP classes: each rule fires where the hazard is
written, in every framework that can write it, and stays silent on the clean twin and on the
version where the bug is fixed."""

from __future__ import annotations

import json

import pytest

from conftest import FIXTURES, corpus_run, trainlint


def findings(path, *args: str) -> list[dict]:
    result = trainlint("check", path, "--no-detect", "--format", "json", *args)
    assert result.code in (0, 1), result.err
    return json.loads(result.out)


def codes(path, *args: str) -> list[str]:
    return [finding["code"] for finding in findings(path, *args)]


@pytest.fixture(autouse=True)
def _pins_only(nothing_installed):
    """Versions come from the pins each test writes (conftest.nothing_installed)."""


@pytest.fixture
def write(tmp_path):
    def write(name: str, data: str | bytes):
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data.encode() if isinstance(data, str) else data)
        return path

    return write


# ---- DS002: one of the three batch numbers left out (class 13) -------------------------------

def test_ds002_missing_accumulation_no_gpu_count_fits(write):
    path = write("ds.json", '{"train_batch_size": 64, "train_micro_batch_size_per_gpu": 3}')
    found = findings(path)
    assert [f["code"] for f in found] == ["DS002"]
    assert "no gradient_accumulation_steps" in found[0]["message"] and "any number of GPUs" in found[0]["message"]
    assert found[0]["fix"] is None
    fits = write("fits.json", '{"train_batch_size": 64, "train_micro_batch_size_per_gpu": 4}')
    assert codes(fits) == []
    # 64 / (4 x 3 GPUs) leaves a remainder: DeepSpeed derives 5 and asserts 60 != 64.
    assert codes(fits, "--world-size", "3") == ["DS002"]
    assert codes(fits, "--world-size", "4") == []


def test_ds002_missing_micro_batch(write):
    path = write("ds.json", '{"train_batch_size": 30, "gradient_accumulation_steps": 4}')
    assert codes(path) == ["DS002"]
    assert codes(write("ok.json", '{"train_batch_size": 32, "gradient_accumulation_steps": 4}')) == []


def test_ds002_only_the_global_batch_needs_the_world_size(write):
    path = write("ds.json", '{"train_batch_size": 30, "zero_optimization": {"stage": 1}}')
    assert codes(path) == []
    assert codes(path, "--world-size", "4") == ["DS002"]
    assert codes(path, "--world-size", "3") == []


def test_ds002_silent_with_auto_or_without_a_global_batch(write):
    assert codes(write("a.json", '{"train_batch_size": "auto", "train_micro_batch_size_per_gpu": 3}')) == []
    assert codes(write("b.json", '{"train_batch_size": 64, "train_micro_batch_size_per_gpu": "auto"}')) == []
    assert codes(write("c.json", '{"train_micro_batch_size_per_gpu": 3, "gradient_accumulation_steps": 5}')) == []


def test_ds002_derived_number_through_an_hf_family_link(write):
    write("ds.json", '{"train_batch_size": 64, "train_micro_batch_size_per_gpu": 3}')
    primary = write("sft.yaml", "model_name_or_path: m\nstage: sft\nfinetuning_type: lora\n"
                    "per_device_train_batch_size: 3\ndeepspeed: ds.json\n")
    assert "DS002" in codes(primary, "--gpu", "A100")


# ---- DS005: ZeRO-2 overlap_comm on DeepSpeed before 0.19.0 (class 4) -------------------------

def test_ds005_fires_on_a_pinned_affected_release_and_fixes_unsafely(write):
    path = write("ds.json", (FIXTURES / "deepspeed" / "zero2_overlap_comm.json").read_bytes())
    write("requirements.txt", "torch==2.3.1\ndeepspeed==0.15.4\n")
    found = findings(path)
    assert [f["code"] for f in found] == ["DS005"]
    assert "0.15.4" in found[0]["message"] and (found[0]["line"], found[0]["column"]) == (9, 21)
    assert found[0]["fix"]["applicability"] == "unsafe"
    trainlint("check", path, "--no-detect", "--fix")
    assert path.read_bytes() == (FIXTURES / "deepspeed" / "zero2_overlap_comm.json").read_bytes()
    trainlint("check", path, "--no-detect", "--fix", "--unsafe-fixes")
    assert path.read_bytes() == (FIXTURES / "deepspeed" / "zero2_overlap_comm.json").read_bytes().replace(
        b'"overlap_comm": true', b'"overlap_comm": false')
    assert codes(path) == []


def test_ds005_silent_on_the_fixed_release_unknown_version_and_other_stages(write):
    data = (FIXTURES / "deepspeed" / "zero2_overlap_comm.json").read_bytes()
    fixed = write("fixed/ds.json", data)
    write("fixed/requirements.txt", "deepspeed==0.19.0\n")
    assert codes(fixed) == []
    unknown = write("unknown/ds.json", data)
    assert codes(unknown) == []
    stage3 = write("stage3/ds.json", data.replace(b'"stage": 2', b'"stage": 3'))
    write("stage3/requirements.txt", "deepspeed==0.15.4\n")
    assert codes(stage3) == []
    unset = write("unset/ds.json", data.replace(b'    "overlap_comm": true,\n', b""))
    write("unset/requirements.txt", "deepspeed==0.15.4\n")
    assert codes(unset) == []


def test_ds005_with_pins_that_disagree_fires_only_where_every_one_is_affected(write):
    """LLaVA-NeXT: requirements.txt deepspeed==0.12.2, pyproject.toml deepspeed==0.14.4. Which
    one runs is unknown, but both are before 0.19.0; with one at 0.19.0 the answer is unknown."""
    data = (FIXTURES / "deepspeed" / "zero2_overlap_comm.json").read_bytes()
    both = write("both/ds.json", data)
    write("both/requirements.txt", "deepspeed==0.12.2\n")
    write("both/pyproject.toml", '[project]\nname = "x"\ndependencies = ["deepspeed==0.14.4"]\n')
    [found] = findings(both)
    assert found["code"] == "DS005" and "DeepSpeed 0.12.2 or 0.14.4 (" in found["message"]
    split = write("split/ds.json", data)
    write("split/requirements.txt", "deepspeed==0.12.2\n")
    write("split/pyproject.toml", '[project]\nname = "x"\ndependencies = ["deepspeed==0.19.0"]\n')
    assert codes(split) == []


@pytest.mark.parametrize("primary_name, primary_text", [
    ("sft.yaml", "model_name_or_path: m\nstage: sft\nfinetuning_type: lora\nbf16: true\ndeepspeed: ds.json\n"),
    ("axolotl.yaml", "base_model: m\nmicro_batch_size: 2\nbf16: true\ndeepspeed: ds.json\n"),
    ("trl.yaml", "model_name_or_path: m\ndataset_name: d\nbf16: true\ndeepspeed: ds.json\n"),
    ("accelerate.yaml", "distributed_type: DEEPSPEED\ndeepspeed_config:\n  deepspeed_config_file: ds.json\n"),
])
def test_ds005_through_each_launcher(write, primary_name, primary_text):
    write("ds.json", (FIXTURES / "deepspeed" / "zero2_overlap_comm.json").read_bytes())
    write("requirements.txt", "deepspeed==0.14.0\n")
    primary = write(primary_name, primary_text)
    found = [f for f in findings(primary, "--gpu", "A100") if f["code"] == "DS005"]
    assert len(found) == 1 and found[0]["file"].endswith("ds.json")


# ---- DS006: accelerate DeepSpeed keys beside deepspeed_config_file (class 12) ----------------

def test_ds006_accelerate_keys_beside_a_config_file(write):
    path = write("accelerate.yaml", (FIXTURES / "hf" / "accelerate_ds_file_conflict.yaml").read_bytes())
    write("ds.json", '{"zero_optimization": {"stage": 2}, "gradient_accumulation_steps": "auto"}')
    found = [f for f in findings(path, "--gpu", "A100") if f["code"] == "DS006"]
    assert [(f["line"], f["column"]) for f in found] == [(5, 3), (7, 1)]
    assert "gradient_accumulation_steps" in found[0]["message"] and found[0]["fix"] is None
    assert "--mixed_precision" in found[1]["message"]


def test_ds006_silent_on_the_clean_twin_and_inline_settings(write):
    clean = write("clean.yaml", "compute_environment: LOCAL_MACHINE\ndistributed_type: DEEPSPEED\n"
                  "deepspeed_config:\n  deepspeed_config_file: ds.json\n  zero3_init_flag: true\nnum_processes: 8\n")
    write("ds.json", '{"zero_optimization": {"stage": 3}}')
    assert "DS006" not in codes(clean, "--gpu", "A100")
    inline = write("inline.yaml", "distributed_type: DEEPSPEED\ndeepspeed_config:\n  zero_stage: 2\n"
                   "  gradient_accumulation_steps: 4\nmixed_precision: bf16\n")
    assert "DS006" not in codes(inline, "--gpu", "A100")
    old = write("old/accelerate.yaml", (FIXTURES / "hf" / "accelerate_ds_file_conflict.yaml").read_bytes())
    write("old/requirements.txt", "accelerate==0.15.0\n")
    assert "DS006" not in codes(old, "--gpu", "A100")


# ---- DS013: accelerate's inline DeepSpeed settings against the trainer (class 12) -------------

ACCELERATE_INLINE = ("distributed_type: DEEPSPEED\nnum_processes: 2\ndeepspeed_config:\n  zero_stage: 2\n"
                     "  gradient_accumulation_steps: 1\n  gradient_clipping: 1.0\nmixed_precision: bf16\n")
TRL_GAS8 = ("model_name_or_path: Qwen/Qwen2.5-0.5B\ndataset_name: trl-lib/Capybara\noutput_dir: out\n"
            "gradient_accumulation_steps: 8\n")


def declare(write, *files):
    write("trainlint.toml", "[[runs]]\nfiles = [" + ", ".join(f'"{name}"' for name in files) + "]\n")


def test_ds013_gradient_accumulation_and_clipping_in_a_declared_run(write):
    path = write("sft.yaml", TRL_GAS8 + "max_grad_norm: 0.3\n")
    write("accelerate.yaml", ACCELERATE_INLINE)
    write("requirements.txt", "transformers==4.44.2\n")
    declare(write, "sft.yaml", "accelerate.yaml")
    found = [f for f in findings(path, "--gpu", "A100") if f["code"] == "DS013"]
    assert [(f["file"].rsplit("/", 1)[-1], f["line"]) for f in found] == [("accelerate.yaml", 5), ("accelerate.yaml", 6)]
    assert "gradient_accumulation_steps = 1" in found[0]["message"] and "= 8" in found[0]["message"]
    assert "max_grad_norm = 0.3" in found[1]["message"] and found[0]["fix"] is None
    # Without the declared run nothing joins the two files: silent.
    alone = write("alone/sft.yaml", TRL_GAS8 + "max_grad_norm: 0.3\n")
    write("alone/accelerate.yaml", ACCELERATE_INLINE)
    write("alone/requirements.txt", "transformers==4.44.2\n")
    assert "DS013" not in codes(alone.parent, "--gpu", "A100")


def test_ds013_silent_when_the_trainer_names_its_own_deepspeed_file(write):
    """TrainingArguments fills its own `deepspeed:` file and hands it to DeepSpeedPlugin as
    hf_ds_config: the launcher's inline values are not used (review of 2026-11-24, /tmp/rv/ds013)."""
    path = write("sft.yaml", TRL_GAS8 + "bf16: true\ndeepspeed: ds.json\n")
    write("ds.json", '{"gradient_accumulation_steps": "auto", "zero_optimization": {"stage": 2}}')
    write("accelerate.yaml", ACCELERATE_INLINE)
    write("requirements.txt", "transformers==4.44.2\n")
    declare(write, "sft.yaml", "accelerate.yaml")
    assert "DS013" not in codes(path, "--gpu", "A100")
    path.write_text(TRL_GAS8 + "bf16: true\n")
    assert "DS013" in codes(path, "--gpu", "A100")


def test_ds013_mixed_precision_when_the_trainer_sets_neither(write):
    path = write("train.yaml", "model_name_or_path: Qwen/Qwen2.5-0.5B\noutput_dir: out\n"
                 "per_device_train_batch_size: 2\ngradient_accumulation_steps: 1\n")
    write("accelerate.yaml", ACCELERATE_INLINE)
    write("requirements.txt", "transformers==4.44.2\n")
    declare(write, "train.yaml", "accelerate.yaml")
    found = [f for f in findings(path, "--gpu", "A100") if f["code"] == "DS013"]
    assert len(found) == 1 and "mixed_precision = bf16" in found[0]["message"]
    # TrainingArguments' own bf16 replaces accelerate's mixed_precision: nothing to compare.
    path.write_text(path.read_text() + "bf16: true\n")
    assert "DS013" not in codes(path, "--gpu", "A100")


@pytest.mark.parametrize("pins, accelerate", [
    ("transformers==4.29.2\n", ACCELERATE_INLINE),   # the Trainer ignored accelerate's plugin config
    ("", ACCELERATE_INLINE),                          # transformers unknown
    ("transformers==4.44.2\n", ACCELERATE_INLINE.replace("accumulation_steps: 1", "accumulation_steps: 8")),
    # unwritten: "auto" from accelerate 0.23.0 (PR #1901), 1 before
    ("transformers==4.44.2\naccelerate==0.23.0\n", "distributed_type: DEEPSPEED\ndeepspeed_config:\n  zero_stage: 2\n"),
    # a deepspeed_config_file holds the values (DS006 covers the keys beside it)
    ("transformers==4.44.2\n", "distributed_type: DEEPSPEED\ndeepspeed_config:\n  deepspeed_config_file: ds.json\n"),
])
def test_ds013_silent(write, pins, accelerate):
    path = write("sft.yaml", TRL_GAS8)
    write("accelerate.yaml", accelerate)
    write("ds.json", '{"zero_optimization": {"stage": 2}, "gradient_accumulation_steps": "auto"}')
    write("requirements.txt", pins)
    declare(write, "sft.yaml", "accelerate.yaml")
    assert "DS013" not in codes(path, "--gpu", "A100")


def test_declared_runs_read_a_yaml_by_content_and_a_json_as_deepspeed(write):
    from linter.engine import Options, Session

    path = write("sft.yaml", TRL_GAS8)
    write("accelerate.yaml", ACCELERATE_INLINE)
    write("ds.json", '{"optimizer": {"type": "AdamW"}}')  # no key only DeepSpeed has: still read as its config
    declare(write, "sft.yaml", "accelerate.yaml", "ds.json")
    session = Session(Options(detect=False))
    [run] = session.build_runs([session.load(path, True).config])
    assert [(config.framework, config.value("file.kind")) for config in run.linked] == \
        [("hf", "accelerate"), ("deepspeed", "deepspeed")]


def test_ds013_unwritten_accumulation_is_one_before_accelerate_0_23(write):
    path = write("sft.yaml", TRL_GAS8)
    write("accelerate.yaml", "distributed_type: DEEPSPEED\ndeepspeed_config:\n  zero_stage: 2\n")
    write("requirements.txt", "transformers==4.31.0\naccelerate==0.22.0\n")
    declare(write, "sft.yaml", "accelerate.yaml")
    found = [f for f in findings(path, "--gpu", "A100") if f["code"] == "DS013"]
    assert len(found) == 1 and "1 in accelerate 0.22.0" in found[0]["message"]


# ---- DS012: DeepSpeed "auto" values with no HF Trainer to fill them (class 10) ----------------

DS_AUTO = json.dumps({"train_micro_batch_size_per_gpu": "auto", "gradient_accumulation_steps": "auto",
                      "bf16": {"enabled": "auto"},
                      "optimizer": {"type": "AdamW", "params": {"lr": "auto", "betas": "auto", "eps": "auto"}},
                      "zero_optimization": {"stage": 2, "reduce_bucket_size": "auto", "sub_group_size": "auto"}})
LOOP = "import deepspeed\nimport torch\nmodel = torch.nn.Linear(4, 4)\n"


def auto_keys(path) -> list[str]:
    return [f["message"].split(" ", 1)[0] for f in findings(path) if f["code"] == "DS012"]


def test_ds012_deepspeed_initialize_names_what_deepspeed_reads_as_written(write):
    write("ds.json", DS_AUTO)
    path = write("train.py", LOOP + 'engine, *_ = deepspeed.initialize(model=model, '
                 'model_parameters=model.parameters(), config="ds.json")\n')
    # bf16.enabled and the ZeRO keys are left out: version-bound or dropped by DeepSpeed's ZeRO config.
    assert auto_keys(path) == ["train_micro_batch_size_per_gpu", "gradient_accumulation_steps",
                               "optimizer.params.lr", "optimizer.params.betas", "optimizer.params.eps"]
    own = write("own.py", LOOP + "opt = torch.optim.AdamW(model.parameters())\n"
                'engine, *_ = deepspeed.initialize(model=model, optimizer=opt, config_params="ds.json")\n')
    assert auto_keys(own) == ["train_micro_batch_size_per_gpu", "gradient_accumulation_steps"]


def test_ds012_accelerate_names_only_what_it_never_fills(write):
    write("ds.json", DS_AUTO)
    path = write("train.py", "from accelerate import Accelerator\nfrom accelerate.utils import DeepSpeedPlugin\n"
                 'accelerator = Accelerator(deepspeed_plugin=DeepSpeedPlugin(hf_ds_config="ds.json"))\n')
    assert auto_keys(path) == ["optimizer.params.betas", "optimizer.params.eps", "zero_optimization.sub_group_size"]


@pytest.mark.parametrize("script", [
    # an HF Trainer fills "auto" from TrainingArguments
    "from transformers import Trainer, TrainingArguments\nimport deepspeed\n"
    'deepspeed.initialize(config="ds.json")\nTrainer(args=TrainingArguments("out")).train()\n',
    # the script fills the values itself
    "import deepspeed\nfrom transformers.integrations import HfTrainerDeepSpeedConfig\n"
    'deepspeed.initialize(config="ds.json")\n',
    # a computed path: which file is unknown
    'import deepspeed, sys\ndeepspeed.initialize(config=sys.argv[1])\n',
    # the name appears again: the script may write the file first
    'import deepspeed, json\njson.dump({}, open("ds.json", "w"))\ndeepspeed.initialize(config="ds.json")\n',
    # a plugin that no Accelerator uses
    'from accelerate.utils import DeepSpeedPlugin\nplugin = DeepSpeedPlugin(hf_ds_config="ds.json")\n',
])
def test_ds012_silent_where_a_filler_may_be_involved(write, script):
    write("ds.json", DS_AUTO)
    assert auto_keys(write("train.py", script)) == []


def test_ds012_silent_on_a_config_read_alone_or_through_a_trainer_config(write):
    path = write("ds.json", DS_AUTO)
    assert "DS012" not in codes(path)
    trl = write("sft.yaml", "model_name_or_path: Qwen/Qwen2.5-0.5B\ndataset_name: trl-lib/Capybara\n"
                "deepspeed: ds.json\n")
    assert "DS012" not in codes(trl)


# ---- DS010: an unknown transformers is silent (issue 16 precision) ----------------------------

def test_ds010_needs_a_known_transformers(write):
    path = write("sft.yaml", "model_name_or_path: Qwen/Qwen2.5-0.5B\ndataset_name: trl-lib/Capybara\n"
                 "optim: adafactor\ndeepspeed: ds.json\n")
    write("ds.json", '{"zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}}}')
    assert "DS010" not in codes(path)
    result = trainlint("check", path, "--no-detect", "--verbose", "--select", "DS010")
    assert "DS010 skipped: the transformers version is unknown" in result.err
    write("requirements.txt", "transformers==4.44.2\n")
    assert "DS010" in codes(path)


# ---- TRN001: packed / padding-free batches without FlashAttention (class 11) -----------------

TRL_PACKING = (FIXTURES / "hf" / "trl_packing_sdpa.yaml").read_text()


def test_trn001_trl_packing_on_old_transformers(write):
    path = write("sft.yaml", TRL_PACKING)
    write("requirements.txt", "trl==0.19.1\ntransformers==4.52.4\n")
    found = [f for f in findings(path, "--gpu", "A100") if f["code"] == "TRN001"]
    assert len(found) == 1 and (found[0]["line"], found[0]["column"]) == (3, 10)
    assert "4.52.4" in found[0]["message"] and found[0]["fix"] is None


def test_trn001_trl_padding_free_with_attention_unset(write):
    path = write("sft.yaml", TRL_PACKING.replace("packing: true\nattn_implementation: sdpa\n", "padding_free: true\n"))
    write("requirements.txt", "trl==0.17.0\ntransformers==4.51.3\n")
    found = [f for f in findings(path, "--gpu", "A100") if f["code"] == "TRN001"]
    assert len(found) == 1 and "unset" in found[0]["message"] and found[0]["line"] == 3


def test_trn001_trl_old_torch_on_new_transformers(write):
    path = write("sft.yaml", TRL_PACKING)
    write("requirements.txt", "trl==0.21.0\ntransformers==4.55.0\ntorch==2.5.1\n")
    assert "TRN001" in codes(path, "--gpu", "A100")


@pytest.mark.parametrize("change, pins", [
    (("sdpa", "flash_attention_2"), "trl==0.19.1\ntransformers==4.52.4\n"),   # FlashAttention reads the boundaries
    (("sdpa", "sdpa"), "trl==0.19.1\ntransformers==4.53.1\ntorch==2.6.0\n"),  # transformers builds the mask
    (("sdpa", "sdpa"), "trl==0.18.2\ntransformers==4.52.4\n"),                # packing was wrapped before TRL 0.19
    (("packing: true", "packing: true\npacking_strategy: wrapped"), "trl==0.20.0\ntransformers==4.52.4\n"),
    (("sdpa", "sdpa"), "trl==0.19.1\n"),                                      # transformers unknown: silent
    (("packing: true", "padding_free: true"), "trl==0.15.2\ntransformers==4.48.0\n"),  # no padding_free yet
])
def test_trn001_trl_silent(write, change, pins):
    path = write("sft.yaml", TRL_PACKING.replace(*change))
    write("requirements.txt", pins)
    assert "TRN001" not in codes(path, "--gpu", "A100")


def test_trn001_axolotl_sample_packing_without_attention(write):
    data = (FIXTURES / "axolotl" / "sample_packing_no_attention.yaml").read_text()
    path = write("packed.yaml", data)
    found = [f for f in findings(path, "--gpu", "A100") if f["code"] == "TRN001"]
    assert len(found) == 1 and found[0]["line"] == 8
    for backend in ("attn_implementation: sdpa", "flash_attention: true", "sdp_attention: true",
                    "attn_implementation: flex_attention"):
        twin = write(f"twin_{backend.split(':')[0]}.yaml", data + backend + "\n")
        assert "TRN001" not in codes(twin, "--gpu", "A100"), backend
    unpacked = write("unpacked.yaml", data.replace("sample_packing: true", "sample_packing: false"))
    assert "TRN001" not in codes(unpacked, "--gpu", "A100")


def test_trn001_reviewed_corpus_findings(corpus):
    """Both axolotl examples pack samples with no attention backend; axolotl's own validator
    (check_sample_packing_without_attention) warns that this cross-contaminates samples."""
    found = {f["file"].split("corpus/", 1)[1] for f in json.loads(
        corpus_run("--gpu", "A100", "--format", "json")[0].out) if f["code"] == "TRN001"}
    assert found == {"axolotl-ai-cloud__axolotl/examples/archived/tiny-llama/lora-mps.yml",
                     "axolotl-ai-cloud__axolotl/examples/gemma3n/gemma-3n-e2b-qlora.yml"}


# ---- TRN002: pad_token = eos_token with a collator that masks padding (class 14) -------------

PAD_IS_EOS = (FIXTURES / "unsloth" / "pad_is_eos.py").read_text()


def test_trn002_fires_on_the_assignment(write):
    path = write("train.py", PAD_IS_EOS)
    found = [f for f in findings(path, "--gpu", "A100") if f["code"] == "TRN002"]
    assert len(found) == 1 and (found[0]["line"], found[0]["column"]) == (8, 1)
    assert "DataCollatorForLanguageModeling (line 13)" in found[0]["message"] and found[0]["fix"] is None


def test_trn002_completion_only_collator_and_module_attribute(write):
    completion = PAD_IS_EOS.replace("from trl import SFTTrainer", "from trl import DataCollatorForCompletionOnlyLM, SFTTrainer")
    completion = completion.replace("DataCollatorForLanguageModeling(tokenizer=tokenizer, mlm=False)",
                                    'DataCollatorForCompletionOnlyLM("### Response:", tokenizer=tokenizer)')
    assert "TRN002" in codes(write("completion.py", completion), "--gpu", "A100")
    attribute = PAD_IS_EOS.replace("from transformers import DataCollatorForLanguageModeling, TrainingArguments",
                                   "import transformers\nfrom transformers import TrainingArguments")
    attribute = attribute.replace("data_collator=DataCollatorForLanguageModeling(",
                                  "data_collator=transformers.DataCollatorForLanguageModeling(")
    assert "TRN002" in codes(write("attribute.py", attribute), "--gpu", "A100")


@pytest.mark.parametrize("old, new", [
    ("tokenizer.pad_token = tokenizer.eos_token\n", ""),                           # the tokenizer's own pad token
    ("tokenizer.pad_token = tokenizer.eos_token", 'tokenizer.pad_token = "<|reserved_special_token_0|>"'),
    ("mlm=False", "mlm=True"),                                                       # a masked-LM collator
    ("DataCollatorForLanguageModeling(tokenizer=tokenizer, mlm=False)",
     "DataCollatorForSeq2Seq(tokenizer=tokenizer)"),                                 # pads labels with -100 only
    ("from transformers import DataCollatorForLanguageModeling, TrainingArguments",  # TRL's own collator
     "from transformers import TrainingArguments\nfrom trl import DataCollatorForLanguageModeling"),
])
def test_trn002_silent_on_the_clean_twins(write, old, new):
    assert old in PAD_IS_EOS
    assert "TRN002" not in codes(write("train.py", PAD_IS_EOS.replace(old, new)), "--gpu", "A100")


# ---- TRN003: FSDP use_orig_params false with LoRA before transformers 4.39 (class 9) ---------

FSDP_LORA = (FIXTURES / "hf" / "trl_lora_fsdp_flat.yaml").read_text()


def test_trn003_fires_before_transformers_4_39(write):
    path = write("sft.yaml", FSDP_LORA)
    write("requirements.txt", "trl==0.8.1\ntransformers==4.38.2\n")
    found = [f for f in findings(path, "--gpu", "A100") if f["code"] == "TRN003"]
    assert len(found) == 1 and (found[0]["line"], found[0]["column"]) == (7, 20)
    assert found[0]["severity"] == "error" and found[0]["fix"] is None
    older_spelling = write("old/sft.yaml", FSDP_LORA.replace("  use_orig_params", "  fsdp_use_orig_params"))
    write("old/requirements.txt", "transformers==4.36.2\n")
    assert "TRN003" in codes(older_spelling, "--gpu", "A100")


@pytest.mark.parametrize("old, new, pins", [
    ("", "", "transformers==4.39.0\n"),                                    # the Trainer applies PEFT's policy
    ("", "", "trl==0.8.1\n"),                                              # transformers unknown
    ("use_orig_params: false", "use_orig_params: true", "transformers==4.38.2\n"),
    ("use_peft: true\n", "", "transformers==4.38.2\n"),                    # full fine-tune: uniform requires_grad
    ("fsdp: full_shard auto_wrap\n", "", "transformers==4.38.2\n"),        # no FSDP
])
def test_trn003_silent(write, old, new, pins):
    path = write("sft.yaml", FSDP_LORA.replace(old, new) if old else FSDP_LORA)
    write("requirements.txt", pins)
    assert "TRN003" not in codes(path, "--gpu", "A100")


def test_trn003_not_for_axolotl_which_wraps_lora_itself(write):
    path = write("axolotl.yaml", "base_model: NousResearch/Llama-2-7b-hf\nadapter: qlora\nload_in_4bit: true\n"
                 "micro_batch_size: 1\nfsdp:\n  - full_shard\n  - auto_wrap\nfsdp_config:\n"
                 "  fsdp_use_orig_params: false\nbf16: true\nflash_attention: true\n")
    write("requirements.txt", "transformers==4.38.2\n")
    assert "TRN003" not in codes(path, "--gpu", "A100")


# ---- TRN004: reentrant checkpointing + PEFT under GRPOTrainer of TRL 0.14-0.15 (class 6) ------

GRPO_PEFT = (FIXTURES / "hf" / "trl_grpo_peft_checkpointing.yaml").read_text()


def test_trn004_fires_on_trl_0_15(write):
    path = write("grpo.yaml", GRPO_PEFT)
    write("requirements.txt", "trl==0.15.2\ntransformers==4.49.0\n")
    found = [f for f in findings(path, "--gpu", "A100") if f["code"] == "TRN004"]
    assert len(found) == 1 and (found[0]["line"], found[0]["column"]) == (7, 25)
    assert "0.15.2" in found[0]["message"] and found[0]["fix"] is None
    explicit = write("explicit/grpo.yaml", GRPO_PEFT + "gradient_checkpointing_kwargs:\n  use_reentrant: true\n")
    write("explicit/requirements.txt", "trl==0.14.0\n")
    found = [f for f in findings(explicit, "--gpu", "A100") if f["code"] == "TRN004"]
    assert len(found) == 1 and found[0]["line"] == 10


@pytest.mark.parametrize("old, new, pins", [
    ("", "", "trl==0.16.0\n"),                                   # GRPOTrainer enables input grads
    ("", "", "trl==0.13.0\n"),                                   # no GRPOTrainer yet
    ("", "", "transformers==4.49.0\n"),                          # TRL unknown
    ("bf16: true\n", "bf16: true\ngradient_checkpointing_kwargs:\n  use_reentrant: false\n", "trl==0.15.2\n"),
    ("use_peft: true\n", "", "trl==0.15.2\n"),                   # full fine-tune: the embeddings train
    ("gradient_checkpointing: true\n", "", "trl==0.15.2\n"),     # TRL < 0.22: checkpointing off by default
    ("num_generations: 8\n", "", "trl==0.15.2\n"),               # an SFT config: SFTTrainer hooks the inputs
])
def test_trn004_silent(write, old, new, pins):
    path = write("grpo.yaml", GRPO_PEFT.replace(old, new) if old else GRPO_PEFT)
    write("requirements.txt", pins)
    assert "TRN004" not in codes(path, "--gpu", "A100")


# ---- TRN005: MoE under ZeRO-3 without leaf modules (class 7) ---------------------------------

MOE_ZERO3 = (FIXTURES / "hf" / "trl_mixtral_zero3.yaml").read_text()
ZERO3 = '{"zero_optimization": {"stage": 3}, "bf16": {"enabled": "auto"}}'


# The transformers releases whose MoE block skips experts with no tokens (read in each wheel's
# modeling_<type>.py): Mixtral 4.36-4.39 and from 4.52.0, Qwen2-MoE from 4.52.0, Qwen3-MoE from
# 4.53.0; 5.0.0 stacks the experts in one module.
@pytest.mark.parametrize("model, transformers", [
    ("mistralai/Mixtral-8x7B-v0.1", "4.36.2"),
    ("mistralai/Mixtral-8x7B-v0.1", "4.39.3"),
    ("mistralai/Mixtral-8x7B-v0.1", "4.52.0"),
    ("mistralai/Mixtral-8x7B-v0.1", "4.57.1"),
    ("Qwen/Qwen1.5-MoE-A2.7B", "4.52.4"),
    ("Qwen/Qwen3-30B-A3B", "4.53.0"),
])
def test_trn005_fires_where_empty_experts_are_skipped(write, model, transformers):
    path = write("sft.yaml", MOE_ZERO3.replace("mistralai/Mixtral-8x7B-v0.1", model))
    write("ds_z3.json", ZERO3)
    write("requirements.txt", f"deepspeed==0.15.4\ntransformers=={transformers}\n")
    found = [f for f in findings(path, "--gpu", "A100") if f["code"] == "TRN005"]
    assert len(found) == 1 and (found[0]["line"], found[0]["column"]) == (1, 21)
    assert found[0]["file"].endswith("sft.yaml") and found[0]["fix"] is None


@pytest.mark.parametrize("model, stage, pins", [
    ("mistralai/Mixtral-8x7B-v0.1", 3, "deepspeed==0.18.0\ntransformers==4.52.4\n"),  # DeepSpeed sets the leaves
    ("mistralai/Mixtral-8x7B-v0.1", 3, "deepspeed==0.15.4\ntransformers==5.0.0\n"),   # stacked experts
    ("mistralai/Mixtral-8x7B-v0.1", 3, "transformers==4.52.4\n"),                     # DeepSpeed unknown
    ("mistralai/Mixtral-8x7B-v0.1", 2, "deepspeed==0.15.4\ntransformers==4.52.4\n"),  # ZeRO-2 gathers nothing
    ("mistralai/Mistral-7B-v0.1", 3, "deepspeed==0.15.4\ntransformers==4.52.4\n"),    # dense model
    # 4.40.0-4.51.3 run every expert, even on no tokens: every rank gathers the same experts.
    ("mistralai/Mixtral-8x7B-v0.1", 3, "deepspeed==0.15.4\ntransformers==4.40.0\n"),
    ("mistralai/Mixtral-8x7B-v0.1", 3, "deepspeed==0.15.4\ntransformers==4.46.3\n"),
    ("mistralai/Mixtral-8x7B-v0.1", 3, "deepspeed==0.15.4\ntransformers==4.51.3\n"),
    ("Qwen/Qwen1.5-MoE-A2.7B", 3, "deepspeed==0.15.4\ntransformers==4.51.3\n"),
    ("Qwen/Qwen3-30B-A3B", 3, "deepspeed==0.15.4\ntransformers==4.52.4\n"),    # Qwen3-MoE skips from 4.53.0
])
def test_trn005_silent(write, model, stage, pins):
    path = write("sft.yaml", MOE_ZERO3.replace("mistralai/Mixtral-8x7B-v0.1", model))
    write("ds_z3.json", ZERO3.replace('"stage": 3', f'"stage": {stage}'))
    write("requirements.txt", pins)
    assert "TRN005" not in codes(path, "--gpu", "A100")


@pytest.mark.parametrize("name, text", [
    ("lf.yaml", "model_name_or_path: mistralai/Mixtral-8x7B-v0.1\nstage: sft\nfinetuning_type: lora\n"
                "deepspeed: ds_z3.json\n"),
    ("axolotl.yaml", "base_model: mistralai/Mixtral-8x7B-v0.1\nadapter: lora\nmicro_batch_size: 1\n"
                     "deepspeed: ds_z3.json\n"),
])
def test_trn005_not_for_launchers_that_set_leaf_modules(write, name, text):
    path = write(name, text)
    write("ds_z3.json", ZERO3)
    write("requirements.txt", "deepspeed==0.15.4\ntransformers==4.52.4\n")
    assert "TRN005" not in codes(path, "--gpu", "A100")


# ---- DS003: the scheduler's total_num_steps against the Trainer's step count (transformers#29348) ----

_DS_TOTAL = ('{"train_micro_batch_size_per_gpu": "auto", "scheduler": {"type": "WarmupDecayLR", '
             '"params": {"warmup_num_steps": "auto", "total_num_steps": %s}}}')
_AXOLOTL = "base_model: NousResearch/Llama-2-7b-hf\ndatasets:\n  - path: d\n    type: alpaca\nmicro_batch_size: 2\n"


def test_ds003_total_num_steps_zero_is_refused_whatever_the_dataset(write):
    write("ds.json", _DS_TOTAL % "0")
    trainer = write("train.yaml", "model_name_or_path: meta-llama/Llama-2-7b-hf\ndataset_name: d\noutput_dir: o\n"
                                  "deepspeed: ds.json\n")
    found = [f for f in findings(trainer, "--select", "DS003")]
    assert [f["code"] for f in found] == ["DS003"] and "at least 1 optimizer step" in found[0]["message"]


@pytest.mark.parametrize("trainer_text, fires", [
    (_AXOLOTL + "max_steps: 200\ndeepspeed: ds.json\n", True),  # Axolotl
    (_AXOLOTL + "max_steps: 500\ndeepspeed: ds.json\n", False),
    ("model_name_or_path: m\nstage: sft\ndo_train: true\nfinetuning_type: lora\nmax_steps: 100\n"
     "deepspeed: ds.json\n", True),  # LLaMA-Factory
    ("model_name_or_path: m\nstage: sft\ndo_train: true\nfinetuning_type: lora\nnum_train_epochs: 2\n"
     "deepspeed: ds.json\n", False),  # the step count depends on the dataset: unknown
])
def test_ds003_total_num_steps_against_a_written_max_steps(write, trainer_text, fires):
    write("ds.json", _DS_TOTAL % "500")
    trainer = write("train.yaml", trainer_text)
    assert (codes(trainer, "--select", "DS003") == ["DS003"]) is fires
