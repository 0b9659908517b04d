"""Issue 16, the framework's own config validation as a table (TRN034-TRN036): each row fires where
its check refuses the config, stays silent on the twin the check accepts, and a version-bounded row
is silent before the release that added the check and where the version is unknown."""

from __future__ import annotations

import json

import pytest

from conftest import trainlint

CODES = ("TRN034", "TRN035", "TRN036")

LLM = """model_type: llm
base_model: meta-llama/Llama-2-7b-hf
{extra}input_features:
  - name: question
    type: text
output_features:
  - name: answer
    type: {output}
"""
FINETUNE = "trainer:\n  type: finetune\n"


@pytest.fixture(autouse=True)
def _pins_only(nothing_installed):
    """Versions come from the pins each test writes (conftest.nothing_installed)."""


def lint(tmp_path, text: str, ludwig: str | None = None) -> list[tuple[str, str]]:
    (tmp_path / "train.yaml").write_text(text)
    if ludwig is not None:
        (tmp_path / "requirements.txt").write_text(f"ludwig=={ludwig}\n")
    result = trainlint("check", tmp_path / "train.yaml", "--no-detect", "--format", "json",
                       "--select", ",".join(CODES))
    assert result.code in (0, 1), result.err
    return [(finding["code"], finding["message"]) for finding in json.loads(result.out)]


def llm(output: str = "text", extra: str = "", trainer: str = FINETUNE) -> str:
    return LLM.format(extra=extra, output=output) + trainer


def test_finetune_category_output_fires_on_every_version(tmp_path):
    found = lint(tmp_path, llm("category"))
    assert [code for code, _ in found] == ["TRN034"]
    assert "requires the output feature to be a text feature" in found[0][1]


def test_zero_shot_category_output_is_accepted(tmp_path):
    # trainer.type none (the default): few-shot classification with a category output is fine.
    assert lint(tmp_path, llm("category", trainer="")) == []


def test_two_inputs_refused_unless_multimodal(tmp_path):
    two = llm().replace("output_features:", "  - name: context\n    type: text\noutput_features:")
    assert [code for code, _ in lint(tmp_path, two)] == ["TRN034"]
    assert lint(tmp_path, "is_multimodal: true\n" + two) == []


def test_grpo_row_is_bounded_by_its_release(tmp_path):
    config = llm("binary", trainer="trainer:\n  type: grpo\n")
    assert [code for code, _ in lint(tmp_path, config, "0.15.0")] == ["TRN034"]
    assert lint(tmp_path, config, "0.14.1") == []
    (tmp_path / "requirements.txt").unlink()
    assert lint(tmp_path, config) == []


ECD = """input_features:
  - name: question
    type: text
    encoder:
      type: auto_transformer
      pretrained_model_name_or_path: {encoder}
output_features:
  - name: answer
    type: {output}
"""


def test_ecd_text_to_text_with_pretrained_encoder(tmp_path):
    config = ECD.format(encoder="meta-llama/Llama-2-7b-hf", output="text")
    assert [code for code, _ in lint(tmp_path, config, "0.9.2")] == ["TRN034"]
    assert lint(tmp_path, config, "0.8.6") == []  # before PR #3792 it was accepted
    assert lint(tmp_path, ECD.format(encoder="bert-base-uncased", output="category"), "0.10.4") == []
    assert lint(tmp_path, "model_type: llm\nbase_model: x\n" + config, "0.10.4") == []


ECD_ENCODER = """{extra}input_features:
  - name: question
    type: text
{encoder}output_features:
  - name: answer
    type: text
"""


# Ludwig 0.10.4's ModelConfig.from_dict agrees with each case (bench/ludwig_oracle.py): the check
# tests hasattr(encoder, "pretrained_model_name_or_path") and its truthiness, after the schema
# filled in the encoder type's default checkpoint.
@pytest.mark.parametrize("encoder, extra", [
    ("    encoder:\n      type: bert\n", ""),  # bert's default: bert-base-uncased
    ("    encoder:\n      type: gpt2\n      trainable: false\n", ""),
    ("    encoder: roberta\n", ""),  # pre-0.6 string, nested by backward_compatibility
    ("    encoder: auto_transformer\n    pretrained_model_name_or_path: gpt2\n", ""),
    ("", "defaults:\n  text:\n    encoder:\n      type: distilbert\n"),
])
def test_ecd_text_to_text_with_a_default_checkpoint(tmp_path, encoder, extra):
    config = ECD_ENCODER.format(encoder=encoder, extra=extra)
    assert [code for code, _ in lint(tmp_path, config, "0.10.4")] == ["TRN034"]
    assert lint(tmp_path, config, "0.9.1") == []


@pytest.mark.parametrize("encoder", [
    "",  # parallel_cnn, the text default
    "    encoder:\n      type: parallel_cnn\n      pretrained_model_name_or_path: gpt2\n",  # no such field
    "    encoder:\n      pretrained_model_name_or_path: gpt2\n",  # no type: parallel_cnn
    "    encoder:\n      type: bert\n      pretrained_model_name_or_path: ''\n",  # falsy
    "    encoder:\n      type: BERT\n",  # not this check's refusal (the schema's enum is case-sensitive)
    "    encoder:\n      type: llm\n      base_model: gpt2\n",  # the LLM encoder has no such field
])
def test_ecd_text_to_text_without_a_checkpoint_is_silent(tmp_path, encoder):
    assert lint(tmp_path, ECD_ENCODER.format(encoder=encoder, extra=""), "0.10.4") == []


def test_adapter_needs_a_training_trainer(tmp_path):
    adapter = "adapter:\n  type: lora\n"
    assert [code for code, _ in lint(tmp_path, llm(extra=adapter, trainer=""))] == ["TRN035"]
    assert [code for code, _ in lint(tmp_path, llm(extra="adapter: lora\n", trainer=""))] == ["TRN035"]
    assert lint(tmp_path, llm(extra=adapter)) == []
    weights = "adapter:\n  type: lora\n  pretrained_adapter_weights: me/my-adapter\n"
    assert lint(tmp_path, llm(extra=weights, trainer="")) == []  # zero-shot with trained weights


def test_quantized_finetuning_needs_lora(tmp_path):
    quantized = "quantization:\n  bits: 4\n"
    assert [code for code, _ in lint(tmp_path, llm(extra=quantized))] == ["TRN035"]  # no adapter
    assert [code for code, _ in lint(tmp_path, llm(extra=quantized + "adapter:\n  type: ia3\n"))] == ["TRN035"]
    assert lint(tmp_path, llm(extra=quantized + "adapter:\n  type: lora\n")) == []
    assert lint(tmp_path, llm(extra=quantized + "adapter: lora\n")) == []
    assert lint(tmp_path, llm(extra=quantized + "adapter: LoRA\n", trainer="trainer:\n  type: Finetune\n")) == []
    assert lint(tmp_path, llm(extra=quantized + "adapter:\n  r: 8\n")) == []  # type not written: unknown
    assert lint(tmp_path, llm(extra=quantized, trainer="")) == []  # no training


def test_merge_into_4bit_is_bounded(tmp_path):
    merge = "quantization:\n  bits: {bits}\nadapter:\n  type: lora\n  postprocessor:\n" \
            "    merge_adapter_into_base_model: true\n"
    assert [code for code, _ in lint(tmp_path, llm(extra=merge.format(bits=4)), "0.8.5")] == ["TRN035"]
    assert lint(tmp_path, llm(extra=merge.format(bits=4)), "0.8.4") == []
    assert lint(tmp_path, llm(extra=merge.format(bits=8)), "0.10.4") == []


def test_merge_into_4bit_fires_unpinned(tmp_path):
    """adapter.postprocessor and the check both arrive in 0.8.5: every release that reads the key refuses it."""
    merge = "quantization:\n  bits: {bits}\nadapter:\n  type: lora\n  postprocessor:\n" \
            "    merge_adapter_into_base_model: true\n"
    found = lint(tmp_path, llm(extra=merge.format(bits=4)))
    assert [code for code, _ in found] == ["TRN035"]
    assert "refused from Ludwig 0.8.5, the release that added adapter.postprocessor" in found[0][1]
    assert lint(tmp_path, llm(extra=merge.format(bits=8))) == []
    no_training = lint(tmp_path, llm(extra=merge.format(bits=4), trainer=""))  # no training: no merge check
    assert not any("4-bit" in message for _, message in no_training)


def test_torchao_keys_fire_unpinned(tmp_path):
    no_mode = "quantization:\n  backend: torchao\nadapter: lora\n"
    found = lint(tmp_path, llm(extra=no_mode))
    assert [code for code, _ in found] == ["TRN035"]
    assert "refused from Ludwig 0.15.0" in found[0][1]
    assert lint(tmp_path, llm(extra=no_mode), "0.14.1") == []  # a release that never reads the key


def test_torchao_keys(tmp_path):
    no_mode = "quantization:\n  backend: torchao\nadapter: lora\n"
    assert [code for code, _ in lint(tmp_path, llm(extra=no_mode), "0.15.0")] == ["TRN035"]
    good = "quantization:\n  backend: torchao\n  mode: int4_weight_only\n  qat: true\nadapter:\n  type: lora\n"
    assert lint(tmp_path, llm(extra=good), "0.15.0") == []
    qat = "quantization:\n  bits: 4\n  qat: true\nadapter:\n  type: lora\n"
    assert [code for code, _ in lint(tmp_path, llm(extra=qat), "0.15.1")] == ["TRN035"]


def test_prompt_rows(tmp_path):
    def prompt(body: str) -> str:
        return llm(extra="prompt:\n" + body)
    answer = prompt('  template: "Q: {question} A: {answer}"\n')
    assert [(code, "0.9.0 (" in message and ") refuses it" in message)
            for code, message in lint(tmp_path, answer, "0.9.0")] == [("TRN036", True)]
    # before the output-column check (0.9) the answer is rendered into every training prompt, silently
    assert [(code, ") renders the answer into every training prompt" in message)
            for code, message in lint(tmp_path, answer, "0.8.6")] == [("TRN036", True)]
    assert lint(tmp_path, answer, "0.7.4") == []  # no LLM configs before 0.8
    no_refs = prompt('  template: "Answer the question."\n')
    assert [code for code, _ in lint(tmp_path, no_refs, "0.8.3")] == ["TRN036"]
    # 0.8 to 0.8.2 raise the same check at preprocessing
    assert [(code, "raises it at preprocessing" in message)
            for code, message in lint(tmp_path, no_refs, "0.8.2")] == [("TRN036", True)]
    context = prompt('  template: "{__task__} {question}"\n  task: classify\n  retrieval:\n    type: random\n'
                     '    k: 2\n')
    assert [code for code, _ in lint(tmp_path, context, "0.10.4")] == ["TRN036"]
    fine = prompt('  template: "{__task__} {__context__} {question}"\n  task: classify\n  retrieval:\n'
                  '    type: random\n    k: 2\n')
    assert lint(tmp_path, fine, "0.10.4") == []
    assert lint(tmp_path, prompt("  task: classify\n  retrieval:\n    type: random\n    k: 2\n"), "0.10.4") == []


def test_prompt_rows_unpinned(tmp_path):
    def prompt(body: str) -> str:
        return llm(extra="prompt:\n" + body)
    answer = lint(tmp_path, prompt('  template: "Q: {question} A: {answer}"\n'))
    assert [code for code, _ in answer] == ["TRN036"]
    assert "Ludwig 0.8.x renders the answer" in answer[0][1] and "0.9 and later refuse" in answer[0][1]
    no_task = lint(tmp_path, prompt('  template: "{question}"\n  task: classify\n'))
    assert [code for code, _ in no_task] == ["TRN036"]
    assert "Ludwig 0.8 to 0.8.2 raise it at preprocessing" in no_task[0][1]
    # retrieval with neither a template nor a task: 0.8 to 0.8.2 skip the prompt, so it needs a pin
    assert lint(tmp_path, prompt("  retrieval:\n    type: random\n    k: 2\n")) == []
    assert [code for code, _ in lint(tmp_path, prompt("  retrieval:\n    type: random\n    k: 2\n"), "0.8.3")] \
        == ["TRN036"]
    assert lint(tmp_path, prompt('  template: "Q: {question} A:"\n')) == []


# ---- PEF012: Ludwig's trainer never calls AdaLoRA's update_and_allocate -------------------------

def _pef012(tmp_path, text: str) -> list[str]:
    (tmp_path / "train.yaml").write_text(text)
    result = trainlint("check", tmp_path / "train.yaml", "--no-detect", "--format", "json", "--select", "PEF012")
    assert result.code in (0, 1), result.err
    return [finding["message"] for finding in json.loads(result.out)]


def test_pef012_fires_on_a_ludwig_adalora_adapter(tmp_path):
    found = _pef012(tmp_path, llm(extra="adapter:\n  type: adalora\n  init_r: 24\n  target_r: 4\n"))
    assert len(found) == 1 and "update_and_allocate" in found[0], found


@pytest.mark.parametrize("extra", ["adapter:\n  type: lora\n", "adapter:\n  type: ia3\n", ""])
def test_pef012_silent_without_adalora(tmp_path, extra):
    assert _pef012(tmp_path, llm(extra=extra)) == []


def test_pef012_silent_on_a_peft_adapter_config(tmp_path):
    # A saved adapter_config.json: the loop that trains it is a script's, which may call it.
    (tmp_path / "adapter_config.json").write_text(json.dumps(
        {"peft_type": "ADALORA", "init_r": 24, "target_r": 4, "total_step": 100, "target_modules": ["q_proj"]}))
    result = trainlint("check", tmp_path / "adapter_config.json", "--no-detect", "--format", "json",
                       "--select", "PEF012")
    assert json.loads(result.out) == []


# ---- PEF013 / PEF004: the AdaLoRA schedule Ludwig hands PEFT's AdaLoraConfig -----------------------

ADALORA = llm(extra="adapter:\n  type: adalora\n")


def _adalora(tmp_path, text: str, ludwig: str | None, peft: str | None, code: str) -> list[str]:
    (tmp_path / "train.yaml").write_text(text)
    pins = [f"ludwig=={ludwig}"] * bool(ludwig) + [f"peft=={peft}"] * bool(peft)
    (tmp_path / "requirements.txt").write_text("".join(pin + "\n" for pin in pins))
    result = trainlint("check", tmp_path / "train.yaml", "--no-detect", "--format", "json", "--select", code)
    assert result.code in (0, 1), result.err
    return [finding["message"] for finding in json.loads(result.out)]


def test_pef013_fires_before_ludwig_0_11_with_peft_0_15(tmp_path):
    found = _adalora(tmp_path, ADALORA, "0.10.4", "0.15.0", "PEF013")
    assert len(found) == 1 and "total_step" in found[0], found


@pytest.mark.parametrize("text, ludwig, peft", [
    (ADALORA, "0.11.0", "0.15.0"),  # Ludwig 0.11 defaults total_step to 10000
    (ADALORA, "0.10.4", "0.14.0"),  # PEFT before the check
    (ADALORA, None, "0.15.0"),  # Ludwig unknown
    (ADALORA, "0.10.4", None),  # PEFT unknown
    (ADALORA.replace("type: adalora\n", "type: adalora\n  total_step: 500\n"), "0.10.4", "0.15.0"),
])
def test_pef013_silent(tmp_path, text, ludwig, peft):
    assert _adalora(tmp_path, text, ludwig, peft, "PEF013") == []


def test_pef004_reads_ludwig_defaults_but_not_the_pre_0_15_failure(tmp_path):
    text = ADALORA.replace("type: adalora\n", "type: adalora\n  tinit: 6000\n  tfinal: 5000\n")
    assert len(_adalora(tmp_path, text, "0.11.0", "0.15.0", "PEF004")) == 1
    # PEFT 0.14 would fail in update_and_allocate, which Ludwig's trainer never calls
    assert _adalora(tmp_path, text, "0.11.0", "0.14.0", "PEF004") == []
    assert _adalora(tmp_path, text, None, "0.15.0", "PEF004") == []  # total_step default unknown


def test_loftq_init_without_its_block_is_refused_from_0_16(tmp_path):
    adapter = "adapter:\n  type: lora\n  init_lora_weights: loftq\n"
    found = lint(tmp_path, llm(extra=adapter))
    assert [code for code, _ in found] == ["TRN035"] and "refused from Ludwig 0.16.0" in found[0][1]
    assert lint(tmp_path, llm(extra=adapter + "  loftq_config: {loftq_bits: 4}\n")) == []
    assert lint(tmp_path, llm(extra=adapter), ludwig="0.15.1") == []  # the key is unknown there


def test_eva_init_without_its_block_is_refused_for_adalora_too(tmp_path):
    adapter = "adapter:\n  type: adalora\n  total_step: 100\n  init_lora_weights: eva\n"
    assert [code for code, _ in lint(tmp_path, llm(extra=adapter), ludwig="0.17.8")] == ["TRN035"]
    assert lint(tmp_path, llm(extra=adapter + "  eva_config: {}\n"), ludwig="0.17.8") == []


@pytest.mark.parametrize("retrieval, fires", [
    ("    k: 3\n", True),
    ("    model_name: all-MiniLM-L6-v2\n", True),
    ("    type: semantic\n", True),
    ("    type: semantic\n    model_name: all-MiniLM-L6-v2\n    k: 2\n", False),
    ("    type: random\n    k: 0\n", False),
])
def test_retrieval_settings_its_schema_refuses(tmp_path, retrieval, fires):
    prompt = "prompt:\n  template: 'Q: {question} {__context__}'\n  retrieval:\n" + retrieval
    found = [code for code, _ in lint(tmp_path, llm(extra=prompt))]
    assert found == (["TRN036"] if fires else [])
