"""Unsloth training scripts (incident 5): read with ast, never executed; keyword values edited in place."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import FIXTURES, trainlint
from linter.engine import Options, Session

UNSLOTH = FIXTURES / "unsloth" / "train_tinyllama.py"
HEADER = "import torch\nfrom trl import SFTConfig, SFTTrainer\nfrom unsloth import FastLanguageModel\n"


def findings(path, gpu="A100"):
    return json.loads(trainlint("check", path, "--gpu", gpu, "--format", "json").out)


def codes(path, gpu="A100"):
    return sorted(f["code"] for f in findings(path, gpu))


def script(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "train.py"
    path.write_text(text)
    return path


def values(path: Path) -> dict:
    config = Session(Options(detect=False)).load(path, True).config
    return {key: field.value for key, field in config.fields.items() if key != "file.kind"}


def loader_script(loader: str = "dtype=torch.float16", args: str = "fp16=True, bf16=False",
                  peft: str = "r=16, lora_alpha=16") -> str:
    return (HEADER + f"model, tokenizer = FastLanguageModel.from_pretrained(model_name='unsloth/llama-3-8b', {loader})\n"
            f"model = FastLanguageModel.get_peft_model(model, {peft})\n"
            f"trainer = SFTTrainer(model=model, args=SFTConfig(output_dir='o', {args}))\n")


# ---- the incident ------------------------------------------------------------------------------


def test_pre002_and_its_fix_edit_the_keyword_values_in_place(tmp_path):
    path = script(tmp_path, UNSLOTH.read_text())
    found = findings(path)
    assert sorted(f["code"] for f in found) == ["PRE002", "QNT001"]
    pre002 = next(f for f in found if f["code"] == "PRE002")
    assert pre002["fix"]["applicability"] == "safe"
    # The non-ASCII text earlier on both edited lines does not shift the columns (characters).
    lines = UNSLOTH.read_text().splitlines()
    edits = {(e["line"], e["column"], e["end_column"], e["content"]) for e in pre002["fix"]["edits"]}
    dtype_line = next(i for i, line in enumerate(lines, 1) if "dtype=torch.float16" in line)
    flags_line = next(i for i, line in enumerate(lines, 1) if "fp16=True" in line)
    column = lines[dtype_line - 1].index("torch.float16") + 1
    assert (dtype_line, column, column + len("torch.float16"), "torch.bfloat16") in edits
    column = lines[flags_line - 1].index("True") + 1
    assert (flags_line, column, column + 4, "False") in edits

    original = UNSLOTH.read_bytes()
    trainlint("check", path, "--gpu", "A100", "--fix")
    expected = (original.replace('"./模型/tinyllama-bnb-4bit", dtype=torch.float16,  # « forcé »'.encode(),
                                 '"./模型/tinyllama-bnb-4bit", dtype=torch.bfloat16,  # « forcé »'.encode())
                .replace('"résultats/ü", fp16=True, bf16=False,  # « ici »'.encode(),
                         '"résultats/ü", fp16=False, bf16=True,  # « ici »'.encode()))
    assert expected != original
    assert path.read_bytes() == expected
    assert codes(path) == []
    trainlint("check", path, "--gpu", "A100", "--fix")
    assert path.read_bytes() == expected


def test_fix_keeps_crlf_and_bom(tmp_path):
    path = tmp_path / "train.py"
    original = b"\xef\xbb\xbf" + UNSLOTH.read_bytes().replace(b"\n", b"\r\n")
    path.write_bytes(original)
    trainlint("check", path, "--gpu", "A100", "--fix")
    expected = (original.replace(b"dtype=torch.float16", b"dtype=torch.bfloat16")
                .replace(b"fp16=True, bf16=False", b"fp16=False, bf16=True"))
    assert path.read_bytes() == expected


def test_parsed_values():
    assert values(UNSLOTH) == {
        "model.name": "./模型/tinyllama-bnb-4bit", "sequence.max_length": 2048, "model.load_dtype": "float16",
        "model.bf16_falls_back": True,
        "quantization.bits": 4, "quantization.compute_dtype": "float16", "quantization.quant_type": "nf4",
        "quantization.double_quant": True, "adapter.kind": "lora", "adapter.r": 16, "adapter.alpha": 16,
        "adapter.target_modules": ["q_proj", "v_proj"], "adapter.modules_to_save": None,
        "memory.gradient_checkpointing": True,
        "batch.micro": 2, "batch.grad_accum": 4, "sequence.packing": False, "optimizer.lr": 2e-4,
        "precision.fp16": True, "precision.bf16": False, "model.patched_types": ["llama", "mistral"],
        "model.fused_lora_types": ["llama", "mistral"], "adapter.layer_filters": False,
        "quantization.loader_built": True, "generation.colocated_vllm": False, "memory.loss_in_place": True,
        "memory.activation_offload": True, "checkpoint.eval_strategy": "no",
    }


def test_script_with_side_effects_is_never_executed(tmp_path):
    marker = tmp_path / "executed"
    path = script(tmp_path, UNSLOTH.read_text() + f"\nimport os\nos.system('touch {marker}')\n"
                                                  f"open({str(marker)!r}, 'w').write('x')\n")
    trainlint("check", path, "--gpu", "A100", "--fix")
    trainlint("check", tmp_path, "--gpu", "A100", "--diff")
    assert "torch.bfloat16" in path.read_text()
    assert not marker.exists()


# ---- Unsloth's own precision decisions ---------------------------------------------------------


def test_automatic_precision_is_not_flagged(tmp_path):
    path = script(tmp_path, loader_script("dtype=None", "fp16=not is_bfloat16_supported(), bf16=is_bfloat16_supported()"))
    assert values(path)["precision.fp16"] == "auto" and values(path)["model.load_dtype"] == "auto"
    assert codes(path, "T4") == []
    assert codes(path, "A100") == []


def test_loader_defaults():
    found = values(FIXTURES / "unsloth" / "train_tinyllama.py")
    assert found["quantization.bits"] == 4
    path_text = HEADER + "model, tok = FastLanguageModel.from_pretrained('unsloth/mistral-7b')\n"
    config = Session(Options(detect=False)).load(_write(path_text), True).config
    assert config.value("model.load_dtype") == "auto" and config.value("quantization.bits") == 4
    assert config.value("quantization.compute_dtype") == "auto"
    assert config.get("quantization.bits").origin.default_source.startswith("unsloth/models/loader.py")


def _write(text: str) -> Path:
    import tempfile

    folder = Path(tempfile.mkdtemp())
    path = folder / "train.py"
    path.write_text(text)
    return path


@pytest.mark.parametrize("loader, bits", [
    ("load_in_4bit=False", None),
    ("load_in_4bit=False, load_in_8bit=True", 8),
    ("load_in_8bit=True", None),  # Unsloth refuses 4- and 8-bit together (its default is 4-bit)
    ("full_finetuning=True", None),
    ("load_in_16bit=True, load_in_4bit=False", None),
    ("load_in_4bit=use_4bit", None),
    ("**options", None),
    ("quantization_config=bnb", None),
])
def test_quantization_bits_follow_the_loader(tmp_path, loader, bits):
    found = values(script(tmp_path, loader_script(f"dtype=None, {loader}")))
    assert found.get("quantization.bits") == bits


def test_full_finetuning_has_no_adapter(tmp_path):
    text = HEADER + ("model, tok = FastLanguageModel.from_pretrained('m', dtype=torch.bfloat16, load_in_4bit=True, "
                     "full_finetuning=True)\ntrainer = SFTTrainer(model=model, args=SFTConfig(bf16=True))\n")
    found = values(script(tmp_path, text))
    assert found["adapter.kind"] is None and "quantization.bits" not in found


def test_both_flags_off_with_a_float16_model_is_fp16_and_the_fix_adds_bf16(tmp_path):
    # Unsloth's patched trainer picks fp16 for a float16 model when fp16 and bf16 are both off.
    text = loader_script("dtype=torch.float16", "fp16=False")
    path = script(tmp_path, text)
    assert values(path)["precision.fp16"] is True
    pre002 = next(f for f in findings(path) if f["code"] == "PRE002")
    assert "fp16 mixed precision" in pre002["message"]
    trainlint("check", path, "--gpu", "A100", "--fix")
    assert path.read_text() == text.replace("dtype=torch.float16", "dtype=torch.bfloat16").replace(
        "fp16=False", "fp16=False, bf16=True")


def test_both_flags_off_with_an_automatic_model_dtype_is_automatic(tmp_path):
    path = script(tmp_path, loader_script("dtype=None", "learning_rate=2e-4"))
    assert values(path)["precision.fp16"] == "auto" and values(path)["precision.bf16"] == "auto"
    assert codes(path) == []


def test_plain_transformers_trainer_keeps_its_own_defaults(tmp_path):
    text = (HEADER.replace("from trl import SFTConfig, SFTTrainer", "from transformers import Trainer, TrainingArguments")
            + "model, tok = FastLanguageModel.from_pretrained('m', dtype=torch.float16)\n"
            + "trainer = Trainer(model=model, args=TrainingArguments(output_dir='o'))\n")
    found = values(script(tmp_path, text))
    assert "precision.fp16" not in found and "precision.bf16" not in found


def test_v100_bf16_script_is_moved_to_fp16_consistently(tmp_path):
    text = loader_script("dtype=torch.bfloat16", "fp16=False, bf16=True")
    path = script(tmp_path, text)
    assert "PRE001" in codes(path, "V100")
    trainlint("check", path, "--gpu", "V100", "--fix", "--unsafe-fixes")
    assert path.read_text() == text.replace("dtype=torch.bfloat16", "dtype=torch.float16").replace(
        "fp16=False, bf16=True", "fp16=True, bf16=False")


def test_a_computed_precision_flag_blocks_the_dtype_fix(tmp_path):
    # Unsloth raises TypeError for a bfloat16 model with fp16=True: with fp16 unknown, dtype stays.
    text = loader_script("dtype=torch.float16", "fp16=use_fp16")
    path = script(tmp_path, text)
    pre002 = next(f for f in findings(path) if f["code"] == "PRE002")
    assert pre002["fix"]["edits"] == [] and "computed" in pre002["fix"]["message"]
    trainlint("check", path, "--gpu", "A100", "--fix")
    assert path.read_text() == text


def test_noqa_suppresses_on_the_flagged_line(tmp_path):
    text = UNSLOTH.read_text().replace("fp16=True, bf16=False,  # « ici »", "fp16=True, bf16=False,  # noqa: PRE002")
    path = script(tmp_path, text)
    assert codes(path) == ["QNT001"]


# ---- which files are Unsloth scripts -----------------------------------------------------------


def test_scripts_without_unsloth_loader_are_not_claimed(tmp_path):
    (tmp_path / "helper.py").write_text("import unsloth\nprint(unsloth.__version__)\n")
    (tmp_path / "hf.py").write_text("from transformers import AutoModel\nm = AutoModel.from_pretrained('x')\n")
    result = trainlint("check", tmp_path, "--gpu", "A100", "--format", "json")
    assert json.loads(result.out) == []


def test_syntax_error_is_syn001_at_its_line(tmp_path):
    text = UNSLOTH.read_text() + "\ndef broken(:\n"
    path = script(tmp_path, text)
    [finding] = findings(path)
    assert finding["code"] == "SYN001" and finding["line"] == len(text.splitlines())


# ---- VER001 (INCIDENTS.md incident 5) ----------------------------------------------------------

def _pinned_script(tmp_path, pin, packing="False"):
    (tmp_path / "requirements.txt").write_text(f"torch\nunsloth=={pin}\ntrl==0.12.0\n")
    script = tmp_path / "train.py"
    text = (FIXTURES / "unsloth" / "train_tinyllama.py").read_text("utf-8").replace("packing=False", f"packing={packing}")
    script.write_text(text, "utf-8")
    return script


def _ver001(script):
    result = trainlint("check", script, "--gpu", "T4", "--format", "json")
    return [f for f in json.loads(result.out) if f["code"] == "VER001"]


def test_incident_5_unsloth_before_the_fix_is_ver001(tmp_path):
    [finding] = _ver001(_pinned_script(tmp_path, "2024.10.7"))
    assert "unsloth 2024.10.7" in finding["message"] and "unsloth>=2024.11.2" in finding["message"]
    assert finding["severity"] == "warning" and finding["fix"]["applicability"] == "display-only"
    assert finding["line"] == 19  # packing=False


def test_unsloth_with_the_fix_or_packing_or_bf16_is_not_ver001(tmp_path):
    assert _ver001(_pinned_script(tmp_path, "2024.11.2")) == []
    assert _ver001(_pinned_script(tmp_path / "", "2024.10.7", packing="True")) == []
    bf16 = _pinned_script(tmp_path, "2024.10.7")
    bf16.write_text(bf16.read_text("utf-8").replace("fp16=True, bf16=False", "fp16=False, bf16=True")
                    .replace("dtype=torch.float16", "dtype=torch.bfloat16"), "utf-8")
    assert _ver001(bf16) == []


def test_ver001_silent_when_the_unsloth_version_is_unknown(tmp_path, monkeypatch):
    from linter import versions

    monkeypatch.setattr(versions, "installed", lambda package: None)
    script = _pinned_script(tmp_path, "2024.10.7")
    (tmp_path / "requirements.txt").write_text("unsloth\n")
    assert _ver001(script) == []
    assert "VER001 skipped: the unsloth version is unknown" in trainlint("check", script, "--gpu", "T4", "--verbose").err


def test_a_bfloat16_dtype_on_a_gpu_without_bf16_is_loaded_as_float16_by_unsloth(tmp_path):
    """unsloth/models/loader.py and llama.py (every release since c3d6def64): from_pretrained with
    dtype=torch.bfloat16 on a GPU without bf16 warns "Will change to float16." and loads float16,
    4-bit compute included: no PRE001 for the dtype; bf16 mixed precision in the trainer still fails."""
    loader = ("from unsloth import FastLanguageModel\nimport torch\n"
              "model, tokenizer = FastLanguageModel.from_pretrained('unsloth/Qwen2.5-7B', max_seq_length=2048, "
              "dtype=torch.bfloat16, load_in_4bit=True)\n")
    assert "PRE001" not in codes(script(tmp_path, loader), gpu="V100")
    trainer = loader + ("from trl import SFTTrainer, SFTConfig\n"
                        "trainer = SFTTrainer(model=model, args=SFTConfig(bf16=True, output_dir='o'))\n")
    (tmp_path / "train.py").unlink()
    assert "PRE001" in codes(script(tmp_path, trainer), gpu="V100")


_INFERENCE = ('from unsloth import FastLanguageModel\n'
              'model, tokenizer = FastLanguageModel.from_pretrained("unsloth/Meta-Llama-3.1-70B-Instruct-bnb-4bit", '
              'max_seq_length=2048, dtype=None, load_in_4bit=True)\n'
              'FastLanguageModel.for_inference(model)\n'
              'print(model.generate(**tokenizer(["Hi"], return_tensors="pt")))\n')


def test_a_script_that_loads_only_to_generate_is_no_training_config(tmp_path):
    """for_inference and no trainer, training arguments, get_peft_model or save: nothing to check."""
    path = tmp_path / "get_models.py"
    path.write_text(_INFERENCE)
    loaded = Session(Options(gpu="A100")).load(path, explicit=False)
    assert getattr(loaded, "config", None) is None
    trained = tmp_path / "train.py"
    trained.write_text(_INFERENCE + "from trl import SFTTrainer, SFTConfig\n"
                       "SFTTrainer(model=model, args=SFTConfig(output_dir='o', fp16=True))\n")
    assert Session(Options(gpu="A100")).load(trained, explicit=False).config.framework == "unsloth"
    evaluated = tmp_path / "get_model.py"  # model.eval() and a text-generation pipeline, no trainer
    evaluated.write_text(_INFERENCE.replace("FastLanguageModel.for_inference(model)", "model.eval()"))
    assert getattr(Session(Options(gpu="A100")).load(evaluated, explicit=False), "config", None) is None
