"""Issue 16, the model and hardware classes: fp16 on bf16 checkpoints (NUM003), LoRA targets the
architecture lacks (MOD001), Gemma 2 without soft-capping (MOD002), LLM.int8() below Turing
(QNT006), 8-bit under FSDP (QNT007), pre-quantized checkpoints under ZeRO-3/FSDP (QNT008).

Each rule fires on every framework where the hazard can be written (fixtures under
tests/fixtures/<framework>/recall/) and stays silent on the clean twin."""

from __future__ import annotations

import json
import shutil

import pytest

from conftest import FIXTURES, trainlint


pytestmark = pytest.mark.usefixtures("empty_hub_cache", "nothing_installed")


def findings(*args):
    return json.loads(trainlint("check", *args, "--no-detect", "--format", "json").out)


def codes(*args):
    return sorted(f["code"] for f in findings(*args))


@pytest.fixture
def recall_copy(tmp_path):
    """A copy of one framework's recall fixtures; returns the path of `name` inside it."""

    def copy(name: str, edit=None):
        framework, file = name.split("/", 1)
        target = tmp_path / framework
        shutil.copytree(FIXTURES / framework / "recall", target)
        path = target / file
        if edit is not None:
            path.write_text(edit(path.read_text("utf-8")), "utf-8")
        return path

    return copy


def _write_checkpoint(folder, **config):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(config), "utf-8")


# ---- class 1: fp16 training of a checkpoint trained in bf16 (NUM003) --------------------------

FP16_ON_BF16 = ["axolotl/qwen_fp16.yaml", "llamafactory/qwen_fp16.yaml", "hf/trainer_qwen_ds.yaml",
                "unsloth/qwen_fp16.py", "xtuner/internlm2_lora_8bit.py", "llamafactory/baichuan_lora_8bit.yaml"]


@pytest.mark.parametrize("name", FP16_ON_BF16)
def test_num003_fp16_on_a_bf16_checkpoint_without_bf16_targets(recall_copy, name):
    path = recall_copy(name)
    [num003] = [f for f in findings(path, "--gpu", "T4") if f["code"] == "NUM003"]
    assert "trained in bfloat16" in num003["message"] and "fp32" in num003["message"]
    assert num003["fix"]["applicability"] == "display-only" and not num003["fix"]["edits"]
    assert "NUM003" not in codes(path, "--gpu", "A100")  # PRE002 moves it to bf16 there
    assert "NUM003" not in codes(path, "--gpu", "T4,A100")


def test_num003_through_the_deepspeed_json_alone(recall_copy):
    path = recall_copy("hf/trainer_qwen_ds.yaml", lambda text: text.replace("fp16: true\n", ""))
    [num003] = [f for f in findings(path, "--gpu", "V100") if f["code"] == "NUM003"]
    assert num003["file"].endswith("recall_ds_fp16.json")


def test_num003_silent_for_a_float16_checkpoint_and_an_unknown_one(recall_copy):
    llama2 = recall_copy("axolotl/qwen_fp16.yaml", lambda text: text.replace(
        "Qwen/Qwen2.5-7B-Instruct", "meta-llama/Llama-2-7b-hf"))
    assert "NUM003" not in codes(llama2, "--gpu", "T4")
    unknown = llama2.parent / "unknown.yaml"
    unknown.write_text(llama2.read_text().replace("meta-llama/Llama-2-7b-hf", "acme/house-model-7b"))
    assert "NUM003" not in codes(unknown, "--gpu", "T4")


def test_num003_reads_the_local_checkpoint_before_the_table(recall_copy):
    path = recall_copy("llamafactory/qwen_fp16.yaml", lambda text: text.replace(
        "Qwen/Qwen2.5-7B-Instruct", "models/Qwen2.5-7B-Instruct"))
    _write_checkpoint(path.parent / "models" / "Qwen2.5-7B-Instruct", model_type="qwen2", torch_dtype="float16")
    assert "NUM003" not in codes(path, "--gpu", "T4")  # its own config.json says float16
    _write_checkpoint(path.parent / "models" / "Qwen2.5-7B-Instruct", model_type="qwen2", dtype="bfloat16")
    from linter import models

    models.checkpoint_config.cache_clear()
    [num003] = [f for f in findings(path, "--gpu", "T4") if f["code"] == "NUM003"]
    assert "config.json torch_dtype" in num003["message"]


def test_num003_reads_the_hugging_face_cache(recall_copy, tmp_path, monkeypatch):
    path = recall_copy("axolotl/qwen_fp16.yaml", lambda text: text.replace(
        "Qwen/Qwen2.5-7B-Instruct", "acme/house-model-7b"))
    assert "NUM003" not in codes(path, "--gpu", "T4")
    cache = tmp_path / "hub"
    repo = cache / "models--acme--house-model-7b"
    _write_checkpoint(repo / "snapshots" / "abc123", model_type="llama", torch_dtype="bfloat16")
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("abc123")
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    from linter import models

    models.checkpoint_config.cache_clear()
    [num003] = [f for f in findings(path, "--gpu", "T4") if f["code"] == "NUM003"]
    assert "snapshots/abc123/config.json torch_dtype" in num003["message"]


# ---- class 2: LoRA target modules the architecture does not have (MOD001) --------------------

MISSING_TARGETS = {
    "axolotl/chatglm_lora_8bit.yaml": ("q_proj", "query_key_value"),
    "llamafactory/baichuan_lora_8bit.yaml": ("q_proj", "W_pack"),
    "hf/trl_qwen1_8bit.yaml": ("q_proj", "c_attn"),
    "xtuner/internlm2_lora_8bit.py": ("'q_proj'", "'wqkv'"),
    "ludwig/pythia_lora_8bit.yaml": ("q_proj", "query_key_value"),
}


@pytest.mark.parametrize("name", sorted(MISSING_TARGETS))
def test_mod001_fires_and_its_clean_twin_does_not(recall_copy, name):
    path = recall_copy(name)
    [mod001] = [f for f in findings(path, "--gpu", "A100") if f["code"] == "MOD001"]
    assert mod001["severity"] == "error" and "not found in the base model" in mod001["message"]
    wrong, right = MISSING_TARGETS[name]
    assert right.strip("'") in mod001["message"]  # the architecture's own names are listed
    path.write_text(path.read_text().replace(wrong, right))
    assert "MOD001" not in codes(path, "--gpu", "A100")


def test_mod001_unsloth_script(recall_copy):
    path = recall_copy("unsloth/qwen_fp16.py", lambda text: text.replace(
        '["q_proj", "v_proj"]', '["c_attn"]'))
    assert "MOD001" in codes(path, "--gpu", "A100")


def test_mod001_silent_for_shorthands_partial_matches_and_linear_targets(recall_copy):
    path = recall_copy("axolotl/chatglm_lora_8bit.yaml")
    partial = path.read_text().replace("  - v_proj\n", "  - query_key_value\n")
    path.write_text(partial)
    assert "MOD001" not in codes(path, "--gpu", "A100")  # one name matches: PEFT does not raise
    path.write_text(partial.replace("  - query_key_value\n", "  - v_proj\n") + "lora_target_linear: true\n")
    assert "MOD001" not in codes(path, "--gpu", "A100")
    llamafactory = recall_copy("llamafactory/baichuan_lora_8bit.yaml", lambda text: text.replace(
        "lora_target: q_proj,v_proj", "lora_target: all"))
    assert "MOD001" not in codes(llamafactory, "--gpu", "A100")
    regex = llamafactory.parent / "trl.yaml"
    regex.write_text((FIXTURES / "hf" / "recall" / "trl_qwen1_8bit.yaml").read_text()
                     .replace("[q_proj, v_proj]", "[all-linear]"))
    assert "MOD001" not in codes(regex, "--gpu", "A100")


def test_mod001_reads_the_local_model_type_and_skips_saved_adapters(recall_copy, tmp_path):
    path = recall_copy("axolotl/chatglm_lora_8bit.yaml", lambda text: text.replace(
        "THUDM/chatglm3-6b", "./chatglm3-6b"))
    _write_checkpoint(path.parent / "chatglm3-6b", model_type="llama", torch_dtype="float16")
    assert "MOD001" not in codes(path, "--gpu", "A100")  # its own config.json: a llama
    saved = tmp_path / "adapter_config.json"
    saved.write_text(json.dumps({"peft_type": "LORA", "base_model_name_or_path": "THUDM/chatglm3-6b",
                                 "r": 8, "lora_alpha": 16, "target_modules": ["q_proj", "v_proj"]}))
    assert "MOD001" not in codes(saved, "--gpu", "A100")


def test_mod001_unknown_architecture_is_silent(recall_copy):
    path = recall_copy("axolotl/chatglm_lora_8bit.yaml", lambda text: text.replace(
        "THUDM/chatglm3-6b", "Qwen/Qwen2-VL-7B-Instruct"))
    assert "MOD001" not in codes(path, "--gpu", "A100")


# ---- class 3: LLM.int8() training below compute capability 7.5 (QNT006) ----------------------

INT8 = ["axolotl/chatglm_lora_8bit.yaml", "llamafactory/baichuan_lora_8bit.yaml", "hf/trl_qwen1_8bit.yaml",
        "xtuner/internlm2_lora_8bit.py", "ludwig/pythia_lora_8bit.yaml", "unsloth/llama_8bit.py"]


@pytest.mark.parametrize("name", INT8)
def test_qnt006_int8_on_volta_not_on_turing_or_ampere(recall_copy, name):
    path = recall_copy(name)
    [qnt006] = [f for f in findings(path, "--gpu", "V100") if f["code"] == "QNT006"]
    assert qnt006["targets"] == ["V100-16GB"] and "7.5" in qnt006["message"]
    assert "QNT006" in codes(path, "--gpu", "P100")
    assert "QNT006" not in codes(path, "--gpu", "T4")
    assert "QNT006" not in codes(path, "--gpu", "A100")


def test_qnt006_qnt007_bitsandbytes_only(recall_copy):
    path = recall_copy("llamafactory/baichuan_lora_8bit.yaml", lambda text: text.replace(
        "quantization_bit: 8\n", "quantization_bit: 8\nquantization_method: hqq\n") + "fsdp: full_shard\n")
    (path.parent / "requirements.txt").write_text("transformers==4.57.6\n")  # FSDP1: accelerate's default
    assert not {"QNT006", "QNT007"} & set(codes(path, "--gpu", "V100"))
    path.write_text(path.read_text().replace("quantization_method: hqq", "quantization_method: bnb"))
    assert {"QNT006", "QNT007"} <= set(codes(path, "--gpu", "V100"))


def test_qnt007_empty_fsdp_is_off(tmp_path):
    """Axolotl turns FSDP on only `if cfg.fsdp_config or cfg.fsdp:` (core/builders/base.py), and
    TrainingArguments treats an empty `fsdp` as off: `fsdp: []` / `fsdp: ""` shard nothing."""
    axolotl = ("base_model: meta-llama/Meta-Llama-3-8B\nload_in_8bit: true\nadapter: lora\nmicro_batch_size: 1\n"
               "num_epochs: 1\ndatasets:\n  - path: d\n    type: alpaca\nbf16: true\n")
    for empty in ("fsdp: []\n", "fsdp: []\nfsdp_config: {}\n"):
        path = tmp_path / "axolotl.yaml"
        path.write_text(axolotl + empty)
        assert "QNT007" not in codes(path, "--gpu", "A100"), empty
    path.write_text(axolotl + "fsdp:\n  - full_shard\n  - auto_wrap\n")
    assert "QNT007" in codes(path, "--gpu", "A100")
    factory = ("model_name_or_path: meta-llama/Meta-Llama-3-8B\nstage: sft\ndo_train: true\nfinetuning_type: lora\n"
               "quantization_bit: 8\ndataset: alpaca_en\ntemplate: llama3\noutput_dir: out\nbf16: true\n")
    (tmp_path / "requirements.txt").write_text("transformers==4.57.6\n")
    for empty in ('fsdp: ""\n', "fsdp: []\n", "fsdp: false\n"):
        path = tmp_path / "llamafactory.yaml"
        path.write_text(factory + empty)
        assert "QNT007" not in codes(path, "--gpu", "A100"), empty
    path.write_text(factory + "fsdp: full_shard\n")
    assert "QNT007" in codes(path, "--gpu", "A100")


def test_qnt006_silent_for_4bit_and_without_training(recall_copy):
    four_bit = recall_copy("llamafactory/baichuan_lora_8bit.yaml", lambda text: text.replace(
        "quantization_bit: 8", "quantization_bit: 4"))
    assert "QNT006" not in codes(four_bit, "--gpu", "V100")
    four_bit.write_text(four_bit.read_text().replace("quantization_bit: 4", "quantization_bit: 8")
                        .replace("do_train: true", "do_train: false"))
    assert "QNT006" not in codes(four_bit, "--gpu", "V100")


# ---- class 5: Gemma 2 trained without logit soft-capping (MOD002) ----------------------------

GEMMA2_SDPA = {
    "axolotl/gemma2_sdpa.yaml": (b"attn_implementation: sdpa", b"attn_implementation: eager"),
    "llamafactory/gemma2_sdpa.yaml": (b"flash_attn: sdpa", b"flash_attn: disabled"),
    "hf/trl_gemma2_sdpa.yaml": (b"attn_implementation: sdpa", b"attn_implementation: eager"),
    "xtuner/gemma2_sdpa_fp16.py": (b"attn_implementation='sdpa'", b"attn_implementation='eager'"),
}


@pytest.mark.parametrize("name", sorted(GEMMA2_SDPA))
def test_mod002_sdpa_fix_to_eager_exact_bytes(recall_copy, name):
    path = recall_copy(name)
    [mod002] = [f for f in findings(path, "--gpu", "A100") if f["code"] == "MOD002"]
    assert mod002["fix"]["applicability"] == "unsafe" and "soft-capping" in mod002["message"]
    original = path.read_bytes()
    trainlint("check", path, "--gpu", "A100", "--no-detect", "--select", "MOD002", "--fix", "--unsafe-fixes")
    before, after = GEMMA2_SDPA[name]
    assert path.read_bytes() == original.replace(before, after)
    assert "MOD002" not in codes(path, "--gpu", "A100")


def test_mod002_not_for_gemma_1_or_gemma_3(recall_copy):
    path = recall_copy("axolotl/gemma2_sdpa.yaml")
    for model in ("google/gemma-7b", "google/gemma-3-4b-it", "google/gemma-3-1b-pt"):
        path.write_text(path.read_text().replace("google/gemma-2-9b", model))
        assert "MOD002" not in codes(path, "--gpu", "A100"), model
        path.write_text(path.read_text().replace(model, "google/gemma-2-9b"))


@pytest.mark.parametrize("pin, fires", [("2.5.9.post1", True), ("2.6.3", False), (None, False)])
def test_mod002_flash_attention_bound(recall_copy, pin, fires):
    path = recall_copy("llamafactory/gemma2_sdpa.yaml",
                       lambda text: text.replace("flash_attn: sdpa", "flash_attn: fa2"))
    if pin is not None:
        (path.parent / "requirements.txt").write_text(f"flash-attn=={pin}\n")
    assert ("MOD002" in codes(path, "--gpu", "A100")) is fires


@pytest.mark.parametrize("pin, fires", [("4.44.2", True), ("4.46.3", False), ("4.57.6", True), ("5.20.2", True),
                                       ("5.23.0", False), (None, False)])
def test_mod002_trl_default_attention_by_transformers_release(recall_copy, pin, fires):
    path = recall_copy("hf/trl_gemma2_sdpa.yaml", lambda text: text.replace("attn_implementation: sdpa\n", ""))
    if pin is not None:
        (path.parent / "requirements.txt").write_text(f"transformers=={pin}\n")
    assert ("MOD002" in codes(path, "--gpu", "A100")) is fires
    if fires:
        trainlint("check", path, "--gpu", "A100", "--no-detect", "--select", "MOD002", "--fix", "--unsafe-fixes")
        assert "attn_implementation: eager\n" in path.read_text() and "MOD002" not in codes(path, "--gpu", "A100")


def test_mod002_unknown_transformers_is_a_verbose_note_and_a_saved_adapter_is_not_trl(recall_copy, tmp_path):
    path = recall_copy("hf/trl_gemma2_sdpa.yaml", lambda text: text.replace("attn_implementation: sdpa\n", ""))
    result = trainlint("check", path, "--gpu", "A100", "--no-detect", "--verbose")
    assert "MOD002" not in result.out and "MOD002 skipped: the transformers version is unknown" in result.err
    saved = tmp_path / "adapter_config.json"
    saved.write_text(json.dumps({"peft_type": "LORA", "base_model_name_or_path": "google/gemma-2-9b", "r": 8}))
    (tmp_path / "requirements.txt").write_text("transformers==4.57.6\n")
    assert "MOD002" not in codes(saved, "--gpu", "A100")


def test_mod002_sdpa_refused_from_transformers_5_21(recall_copy):
    path = recall_copy("hf/trl_gemma2_sdpa.yaml")
    (path.parent / "requirements.txt").write_text("transformers==5.23.0\n")
    [mod002] = [f for f in findings(path, "--gpu", "A100") if f["code"] == "MOD002"]
    assert "refuses sdpa for Gemma 2 at load" in mod002["message"]


def test_mod002_unknown_flash_attention_version_is_a_verbose_note(recall_copy):
    path = recall_copy("axolotl/gemma2_sdpa.yaml", lambda text: text.replace("sdpa", "flash_attention_2"))
    result = trainlint("check", path, "--gpu", "A100", "--no-detect", "--verbose")
    assert "MOD002" not in result.out
    assert "MOD002 skipped: the flash-attn version is unknown" in result.err


# ---- class 8: quantized weights under sharding (QNT007, QNT008) ------------------------------

def test_qnt007_8bit_under_fsdp1_on_every_gpu_not_fsdp2(recall_copy):
    path = recall_copy("axolotl/lora_8bit_fsdp.yaml")
    [qnt007] = [f for f in findings(path, "--gpu", "H100") if f["code"] == "QNT007"]
    assert qnt007["severity"] == "error" and "Cannot flatten integer dtype tensors" in qnt007["message"]
    path.write_text(path.read_text().replace("fsdp_config:\n", "fsdp_config:\n  fsdp_version: 2\n"))
    assert "QNT007" not in codes(path, "--gpu", "H100")
    path.write_text(path.read_text().replace("load_in_8bit: true", "load_in_4bit: true")
                    .replace("adapter: lora", "adapter: qlora").replace("  fsdp_version: 2\n", ""))
    assert "QNT007" not in codes(path, "--gpu", "H100")


def test_qnt007_trl_and_llamafactory(recall_copy):
    trl = recall_copy("hf/trl_qwen1_8bit.yaml", lambda text: text + 'fsdp: "full_shard auto_wrap"\n')
    pins = trl.parent / "requirements.txt"
    pins.write_text("transformers==4.57.6\n")  # FSDP1: accelerate's default
    assert "QNT007" in codes(trl, "--gpu", "A100")
    pins.write_text("transformers==5.10.0\n")  # TrainingArguments' fsdp_config version defaults to 2
    assert "QNT007" not in codes(trl, "--gpu", "A100")
    pins.unlink()  # unknown transformers: the FSDP version is unknown
    assert "QNT007" not in codes(trl, "--gpu", "A100")
    pins.write_text("transformers==5.9.0\n")
    assert "QNT007" in codes(trl, "--gpu", "A100")
    trl.write_text(trl.read_text() + "fsdp_config:\n  fsdp_version: 2\n")
    assert "QNT007" not in codes(trl, "--gpu", "A100")
    llamafactory = recall_copy("llamafactory/baichuan_lora_8bit.yaml", lambda text: text + "fsdp: full_shard\n")
    (llamafactory.parent / "requirements.txt").write_text("transformers==4.57.6\n")
    assert "QNT007" in codes(llamafactory, "--gpu", "A100")
    llamafactory.write_text(llamafactory.read_text().replace("fsdp: full_shard\n", ""))
    assert "QNT007" not in codes(llamafactory, "--gpu", "A100")


def test_qnt008_llamafactory_refuses_ptq_checkpoints_under_zero3(recall_copy):
    path = recall_copy("llamafactory/gptq_zero3.yaml")
    [qnt008] = [f for f in findings(path, "--gpu", "A100") if f["code"] == "QNT008"]
    assert "incompatible with PTQ-quantized models" in qnt008["message"]
    (path.parent / "ds_z3_config.json").write_text(
        (path.parent / "ds_z3_config.json").read_text().replace('"stage": 3', '"stage": 2'))
    assert "QNT008" not in codes(path, "--gpu", "A100")  # ZeRO-2 keeps whole parameters


def test_qnt008_llamafactory_dequantizes_fp8_and_needs_a_prequantized_model(recall_copy):
    path = recall_copy("llamafactory/gptq_zero3.yaml", lambda text: text.replace(
        "Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4", "./Qwen3-8B-FP8"))
    _write_checkpoint(path.parent / "Qwen3-8B-FP8", model_type="qwen3",
                      quantization_config={"quant_method": "fp8", "weight_block_size": [128, 128]})
    assert "QNT008" not in codes(path, "--gpu", "H100")
    path.write_text(path.read_text().replace("./Qwen3-8B-FP8", "Qwen/Qwen2.5-7B-Instruct"))
    assert "QNT008" not in codes(path, "--gpu", "A100")


def test_qnt008_saved_bnb_4bit_under_fsdp1(recall_copy):
    path = recall_copy("axolotl/bnb4bit_fsdp.yaml")
    [qnt008] = [f for f in findings(path, "--gpu", "A100") if f["code"] == "QNT008"]
    assert "uint8" in qnt008["message"]
    path.write_text(path.read_text().replace("fsdp_config:\n", "fsdp_config:\n  fsdp_version: 2\n"))
    assert "QNT008" not in codes(path, "--gpu", "A100")


def test_qnt008_reads_the_checkpoints_own_quant_storage(recall_copy):
    path = recall_copy("axolotl/bnb4bit_fsdp.yaml", lambda text: text.replace(
        "unsloth/llama-3-8b-bnb-4bit", "./llama-3-8b-4bit"))
    quantization = {"quant_method": "bitsandbytes", "load_in_4bit": True, "bnb_4bit_quant_storage": "bfloat16"}
    _write_checkpoint(path.parent / "llama-3-8b-4bit", model_type="llama", quantization_config=quantization)
    assert "QNT008" not in codes(path, "--gpu", "A100")
    quantization["bnb_4bit_quant_storage"] = "uint8"
    _write_checkpoint(path.parent / "llama-3-8b-4bit", model_type="llama", quantization_config=quantization)
    from linter import models

    models.checkpoint_config.cache_clear()
    assert "QNT008" in codes(path, "--gpu", "A100")


# MOD009: a slow SentencePiece tokenizer class for a checkpoint without tokenizer.model.
def _tokenizer_config(tmp_path, base, tokenizer_type="LlamaTokenizer", pins=("axolotl==0.4.0",), extra=""):
    (tmp_path / "config.yml").write_text(
        f"base_model: {base}\ntokenizer_type: {tokenizer_type}\n{extra}datasets:\n  - path: mhenrichsen/alpaca_2k_test\n"
        "    type: alpaca\n", "utf-8")
    if pins:
        (tmp_path / "requirements.txt").write_text("".join(f"{pin}\n" for pin in pins), "utf-8")
    return codes(str(tmp_path / "config.yml"), "--select", "MOD009")


@pytest.mark.parametrize("base, tokenizer_type, pins, fires", [
    ("meta-llama/Meta-Llama-3-8B", "LlamaTokenizer", ("axolotl==0.4.0",), True),
    ("meta-llama/Llama-3.1-8B-Instruct", "LlamaTokenizer", ("axolotl==0.13.2",), True),
    ("amazon/MistralLite", "LlamaTokenizer", ("axolotl==0.4.0",), True),  # axolotl-ai-cloud/axolotl#754
    ("meta-llama/Meta-Llama-3-8B", "LlamaTokenizer", ("transformers==4.40.1",), True),  # transformers#30607
    ("meta-llama/Meta-Llama-3-8B", "LlamaTokenizer", ("axolotl==0.14.0",), False),  # transformers 5 pinned
    ("meta-llama/Meta-Llama-3-8B", "LlamaTokenizer", ("transformers==5.0.0",), False),
    ("meta-llama/Meta-Llama-3-8B", "LlamaTokenizer", (), False),  # versions unknown
    ("meta-llama/Meta-Llama-3-8B", "AutoTokenizer", ("axolotl==0.4.0",), False),
    ("meta-llama/Meta-Llama-3-8B", "LlamaTokenizerFast", ("axolotl==0.4.0",), False),
    ("mistralai/Mistral-7B-v0.1", "LlamaTokenizer", ("axolotl==0.4.0",), False),  # ships tokenizer.model
    ("meta-llama/Llama-2-7b-hf", "LlamaTokenizer", ("axolotl==0.4.0",), False),
])
def test_mod009_table_and_versions(tmp_path, base, tokenizer_type, pins, fires):
    assert _tokenizer_config(tmp_path, base, tokenizer_type, pins) == (["MOD009"] if fires else [])


@pytest.mark.parametrize("files, fires", [
    (("tokenizer.json", "tokenizer_config.json"), True),
    (("tokenizer.json", "tokenizer.model"), False),
    (("config.json",), False),  # no tokenizer files at all: unknown
])
def test_mod009_local_folder(tmp_path, files, fires):
    (tmp_path / "ckpt").mkdir()
    for name in files:
        (tmp_path / "ckpt" / name).write_text("{}", "utf-8")
    assert _tokenizer_config(tmp_path, "./ckpt") == (["MOD009"] if fires else [])


def test_mod009_tokenizer_config_wins_over_base_model(tmp_path):
    (tmp_path / "tok").mkdir()
    (tmp_path / "tok" / "tokenizer.model").write_text("", "utf-8")
    assert _tokenizer_config(tmp_path, "meta-llama/Meta-Llama-3-8B", extra="tokenizer_config: ./tok\n") == []


@pytest.mark.parametrize("missing, present, fires", [
    (True, (), True),  # the Hub answered 404 for tokenizer.model
    (False, (), False),  # not downloaded yet: unknown, and the name is in no table row
    (False, ("tokenizer.model",), False),
])
def test_mod009_hub_cache(tmp_path, monkeypatch, missing, present, fires):
    hub = tmp_path / "hub"
    repo = hub / "models--acme--chat-7b"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text("abc123", "utf-8")
    (repo / "snapshots" / "abc123").mkdir(parents=True)
    (repo / "snapshots" / "abc123" / "tokenizer.json").write_text("{}", "utf-8")
    for name in present:
        (repo / "snapshots" / "abc123" / name).write_text("", "utf-8")
    if missing:
        (repo / ".no_exist" / "abc123").mkdir(parents=True)
        (repo / ".no_exist" / "abc123" / "tokenizer.model").write_text("", "utf-8")
    monkeypatch.setenv("HF_HUB_CACHE", str(hub))
    (tmp_path / "work").mkdir()
    assert _tokenizer_config(tmp_path / "work", "acme/chat-7b") == (["MOD009"] if fires else [])

# MOD008: FlashAttention-2 for a remote-code checkpoint that declares no FlashAttention-2 support
@pytest.mark.parametrize("model, attention, fires", [
    ("THUDM/chatglm3-6b-base", "flash_attention_2", True),
    ("THUDM/chatglm3-6b", "flash_attention_2", True),
    ("Qwen/Qwen-14B-Chat-Int4", "flash_attention_2", True),
    ("/models/qwen-7b", "flash_attention_2", True),
    ("THUDM/glm-4-9b-chat", "flash_attention_2", False),  # its modeling code sets _supports_flash_attn_2
    ("Qwen/Qwen1.5-7B", "flash_attention_2", False),
    ("deepseek-ai/DeepSeek-R1-Distill-Qwen-7B", "flash_attention_2", False),
    ("THUDM/chatglm3-6b", "sdpa", False),
])
def test_flash_attention_2_on_remote_code_without_it(tmp_path, model, attention, fires):
    path = tmp_path / "sft.yaml"
    path.write_text(f"model_name_or_path: {model}\ntrust_remote_code: true\ndataset_name: trl-lib/Capybara\n"
                    f"output_dir: out\nattn_implementation: {attention}\n")
    assert codes(str(path), "--select", "MOD008") == (["MOD008"] if fires else [])


@pytest.mark.parametrize("name", INT8)
@pytest.mark.parametrize("bitsandbytes, fires", [("0.43.0", True), ("0.44.1", True), ("0.45.0", False),
                                                 (None, False)])
def test_qnt006_int8_on_hopper_only_before_bitsandbytes_045(recall_copy, name, bitsandbytes, fires):
    """bitsandbytes < 0.45.0 runs int8 through cuBLASLt col_turing/col_ampere layouts, unsupported on sm_90
    (bitsandbytes#538, axolotl#1596); 0.45.0 (#1401) dropped them. Unknown version: silent."""
    path = recall_copy(name)
    if bitsandbytes:
        (path.parent / "requirements.txt").write_text(f"bitsandbytes=={bitsandbytes}\n")
    found = [f for f in findings(path, "--gpu", "H100") if f["code"] == "QNT006"]
    assert bool(found) is fires
    if fires:
        assert found[0]["targets"] == ["H100-80GB"] and "status 15" in found[0]["message"]


# MOD010: LoRA on the Mamba mixer's conv1d / out_proj (PEFT _check_lora_target_modules_mamba)
def _mamba_adapter(tmp_path, model, targets, peft=None, kind="LORA"):
    (tmp_path / "adapter_config.json").write_text(json.dumps(
        {"base_model_name_or_path": model, "peft_type": kind, "r": 16, "target_modules": targets}))
    if peft:
        (tmp_path / "requirements.txt").write_text(f"peft=={peft}\n")
    return codes(str(tmp_path / "adapter_config.json"), "--select", "MOD010")


@pytest.mark.parametrize("model, targets, peft, fires", [
    ("tiiuae/Falcon-H1-1.5B-Deep-Base", ["q_proj", "conv1d"], None, True),  # conv1d fails on every release
    ("tiiuae/Falcon-H1-1.5B-Deep-Base", ["q_proj", "out_proj"], None, False),  # out_proj: refused from 0.16 only
    ("tiiuae/Falcon-H1-1.5B-Deep-Base", ["q_proj", "out_proj"], "0.15.2", False),
    ("tiiuae/Falcon-H1-1.5B-Deep-Base", ["q_proj", "out_proj"], "0.16.0", True),
    ("tiiuae/Falcon-H1-1.5B-Deep-Base", ["q_proj", "model.layers.0.mamba.out_proj"], "0.17.0", True),
    ("tiiuae/Falcon-H1-1.5B-Deep-Base", ["q_proj", "o_proj", "in_proj"], "0.17.0", False),
    ("state-spaces/mamba-130m-hf", ["x_proj", "out_proj"], "0.16.0", True),
    ("nvidia/NVIDIA-Nemotron-Nano-9B-v2", ["q_proj", "out_proj"], "0.19.1", False),  # nemotron_h from 0.20.0
    ("nvidia/NVIDIA-Nemotron-Nano-9B-v2", ["q_proj", "out_proj"], "0.20.0", True),
    ("Qwen/Qwen2.5-7B", ["q_proj", "out_proj"], "0.17.0", False),  # not a Mamba model
])
def test_mod010_mamba_fused_targets(tmp_path, model, targets, peft, fires):
    assert _mamba_adapter(tmp_path, model, targets, peft) == (["MOD010"] if fires else [])


def test_mod010_only_lora_types(tmp_path):
    assert _mamba_adapter(tmp_path, "tiiuae/Falcon-H1-1.5B-Deep-Base", ["conv1d"], "0.17.0", kind="IA3") == []
    assert _mamba_adapter(tmp_path, "tiiuae/Falcon-H1-1.5B-Deep-Base", ["conv1d"], "0.17.0", kind="ADALORA") \
        == ["MOD010"]


def test_mod010_all_linear_takes_out_proj(tmp_path):
    """PEFT expands all-linear to every nn.Linear but the head: the mixer's out_proj too."""
    assert _mamba_adapter(tmp_path, "tiiuae/Falcon-H1-1.5B-Deep-Base", "all-linear", "0.16.0") == ["MOD010"]
    assert _mamba_adapter(tmp_path, "tiiuae/Falcon-H1-1.5B-Deep-Base", "all-linear", "0.15.2") == []
    assert _mamba_adapter(tmp_path, "tiiuae/Falcon-H1-1.5B-Deep-Base", "all-linear") == []
    (tmp_path / "adapter_config.json").write_text(json.dumps(
        {"base_model_name_or_path": "tiiuae/Falcon-H1-1.5B-Deep-Base", "peft_type": "LORA", "r": 16,
         "target_modules": "all-linear", "exclude_modules": ["out_proj"]}))
    assert codes(str(tmp_path / "adapter_config.json"), "--select", "MOD010") == []


def test_mod010_axolotl_target_linear(tmp_path):
    (tmp_path / "axolotl.yaml").write_text(
        "base_model: tiiuae/Falcon-H1-1.5B-Deep-Base\nadapter: qlora\nload_in_4bit: true\nlora_r: 16\n"
        "lora_alpha: 32\nlora_target_linear: true\nsequence_len: 2048\nmicro_batch_size: 1\nnum_epochs: 1\n"
        "learning_rate: 0.0002\noutput_dir: ./out\ndatasets:\n  - path: d\n    type: alpaca\n")
    (tmp_path / "requirements.txt").write_text("peft==0.17.0\naxolotl==0.12.0\n")
    assert codes(str(tmp_path / "axolotl.yaml"), "--select", "MOD010") == ["MOD010"]
