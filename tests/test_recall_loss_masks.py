"""Issue 16, TRN048: TRL assistant_only_loss with a chat template without {% generation %}
markers. Snapshot fixtures live in tests/rules/TRN048; these pin the TRL version bounds
(0.19.0, 1.1.0, per-template swap releases), the Hub cache read and the must-not-fire edges."""

from __future__ import annotations

import json

import pytest

from conftest import trainlint


pytestmark = pytest.mark.usefixtures("empty_hub_cache", "nothing_installed")


def _run(tmp_path, model, trl, extra=""):
    (tmp_path / "sft.yaml").write_text(f"model_name_or_path: {model}\ndataset_name: trl-lib/Capybara\n"
                                       f"output_dir: out\nassistant_only_loss: true\n{extra}", "utf-8")
    if trl:
        (tmp_path / "requirements.txt").write_text(f"trl=={trl}\n", "utf-8")
    out = trainlint("check", str(tmp_path / "sft.yaml"), "--select", "TRN048", "--no-detect", "--format", "json").out
    return [f["code"] for f in json.loads(out)]


@pytest.mark.parametrize("model, trl, fires", [
    ("Qwen/Qwen3-0.6B", "0.19.0", True),  # the incident (QwenLM/Qwen3#1522)
    ("Qwen/Qwen3-8B", "1.0.0", True),  # last release before the swap
    ("Qwen/Qwen3-8B", "1.1.0", False),  # PR #5470: qwen3 swapped for qwen3_training.jinja
    ("Qwen/Qwen3-4B-Instruct-2507", "1.3.0", True),  # swapped from 1.4.0 (#5574) only
    ("Qwen/Qwen3-4B-Instruct-2507", "1.4.0", False),
    ("meta-llama/Llama-3.1-8B-Instruct", "1.9.0", True),  # llama3_1 never swapped
    ("meta-llama/Meta-Llama-3-8B-Instruct", "1.1.0", False),  # llama3 swapped from 1.1.0 (#5493)
    ("meta-llama/Llama-3.1-8B-Instruct", "0.18.2", False),  # no assistant_only_loss yet
    ("meta-llama/Llama-3.1-8B-Instruct", "2.0.0", False),  # newer than the releases read: silent
    ("Qwen/Qwen3-0.6B", None, False),  # TRL version unknown: 1.1.0 on swap qwen3's template
    ("meta-llama/Llama-3.1-8B-Instruct", None, True),  # unknown, but no release swaps llama3_1: every one fails
    ("acme/unknown-chat-7b", None, False),
    ("Qwen/Qwen3-0.6B-Base", "0.19.0", False),  # not in the table
    ("acme/unknown-chat-7b", "0.19.0", False),
])
def test_trn048_versions_and_table(tmp_path, model, trl, fires):
    assert _run(tmp_path, model, trl) == (["TRN048"] if fires else [])


@pytest.mark.parametrize("extra", ["chat_template_path: train.jinja\n", "chat_template: '{{ messages }}'\n",
                                   "tokenizer_name_or_path: acme/tokenizer\n"])
def test_trn048_silent_when_the_template_is_replaced(tmp_path, extra):
    assert _run(tmp_path, "Qwen/Qwen3-0.6B", "0.19.0", extra) == []


def test_trn048_silent_without_assistant_only_loss(tmp_path):
    (tmp_path / "sft.yaml").write_text("model_name_or_path: Qwen/Qwen3-0.6B\nassistant_only_loss: false\n", "utf-8")
    (tmp_path / "requirements.txt").write_text("trl==0.19.0\n", "utf-8")
    out = trainlint("check", str(tmp_path / "sft.yaml"), "--select", "TRN048", "--no-detect", "--format", "json").out
    assert json.loads(out) == []


def _cache(monkeypatch, tmp_path, repo, files):
    cache = tmp_path / "hub"
    snapshot = cache / f"models--{repo.replace('/', '--')}" / "snapshots" / "abc"
    snapshot.mkdir(parents=True)
    (snapshot.parent.parent / "refs").mkdir()
    (snapshot.parent.parent / "refs" / "main").write_text("abc", "utf-8")
    for name, text in files.items():
        (snapshot / name).write_text(text, "utf-8")
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))


def test_trn048_reads_the_hub_cache_before_the_table(tmp_path, monkeypatch):
    marked = "{% for m in messages %}{% generation %}{{ m['content'] }}{% endgeneration %}{% endfor %}"
    _cache(monkeypatch, tmp_path, "Qwen/Qwen3-0.6B", {"tokenizer_config.json": json.dumps({"chat_template": marked})})
    (tmp_path / "cfg").mkdir()
    assert _run(tmp_path / "cfg", "Qwen/Qwen3-0.6B", "0.19.0") == []


def test_trn048_chat_template_jinja_wins_and_swap_by_text(tmp_path, monkeypatch):
    from linter.chat_templates import chat_template, training_swap

    _cache(monkeypatch, tmp_path, "acme/chat", {"tokenizer_config.json": json.dumps({"chat_template": "{% generation %}"}),
                                                 "chat_template.jinja": "{{ messages }}"})
    found = chat_template("acme/chat")
    assert found is not None and found.markers is False and found.source.endswith("chat_template.jinja")
    assert training_swap(found) is None
    (tmp_path / "cfg").mkdir()
    assert _run(tmp_path / "cfg", "acme/chat", "0.24.0") == ["TRN048"]
    assert _run(tmp_path / "cfg", "acme/chat", "1.5.0") == ["TRN048"]  # not an original TRL knows


def test_trn048_named_default_template(tmp_path):
    from linter.chat_templates import chat_template

    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "tokenizer_config.json").write_text(json.dumps({"chat_template": [
        {"name": "tool_use", "template": "{% generation %}"}, {"name": "default", "template": "{{ x }}"}]}), "utf-8")
    found = chat_template(str(folder))
    assert found is not None and found.markers is False


# TRN059: train_on_responses_only markers against the get_chat_template template's tokens.
_SCRIPT = '''from unsloth import FastLanguageModel
from unsloth.chat_templates import get_chat_template, train_on_responses_only
from trl import SFTTrainer
model, tokenizer = FastLanguageModel.from_pretrained("unsloth/Meta-Llama-3.1-8B-Instruct")
tokenizer = get_chat_template(tokenizer, {template})
texts = [tokenizer.apply_chat_template(c, tokenize=False) for c in conversations]
{extra}trainer = SFTTrainer(model=model, tokenizer=tokenizer, train_dataset=dataset)
trainer = train_on_responses_only(trainer, instruction_part={instruction!r}, response_part={response!r})
'''
_LLAMA3 = ("<|start_header_id|>user<|end_header_id|>\n\n", "<|start_header_id|>assistant<|end_header_id|>\n\n")
_CHATML = ("<|im_start|>user\n", "<|im_start|>assistant\n")


def _responses_only(tmp_path, template, markers, extra=""):
    (tmp_path / "train.py").write_text(_SCRIPT.format(template=template, instruction=markers[0],
                                                      response=markers[1], extra=extra), "utf-8")
    out = trainlint("check", str(tmp_path / "train.py"), "--select", "TRN059", "--no-detect", "--format", "json").out
    return [(f["code"], f["line"]) for f in json.loads(out)]


@pytest.mark.parametrize("template, markers, fires", [
    ('chat_template="chatml"', _LLAMA3, True),  # unslothai/unsloth#1128
    ('"chatml"', _LLAMA3, True),  # positional
    ('chat_template="llama-3.1"', _CHATML, False),  # one placeholder (bos) could be one missing token
    ('chat_template="qwen-2.5"', _LLAMA3, True),
    ('chat_template="chatml"', _CHATML, False),
    ('chat_template="llama-3.1"', _LLAMA3, False),
    ('chat_template="llama3"', _LLAMA3, False),
    ('chat_template="gemma"', ("<start_of_turn>user\n", "<start_of_turn>model\n"), False),
    ('chat_template="alpaca"', _CHATML, False),  # bos and eos placeholders: unknowable
    ('chat_template="chatml"', ("### Instruction:\n", "### Response:\n"), False),  # no special tokens to judge
    ('chat_template="acme"', _LLAMA3, False),  # not a template the table holds
    ('chat_template=name', _LLAMA3, False),  # computed
    ('chat_template=("{{ x }}", "</s>")', _LLAMA3, False),  # the user's own template
])
def test_trn059_markers_against_template(tmp_path, template, markers, fires):
    assert [code for code, _ in _responses_only(tmp_path, template, markers)] == (["TRN059"] if fires else [])


def test_trn059_instruction_marker_alone(tmp_path):
    assert _responses_only(tmp_path, 'chat_template="chatml"', (_LLAMA3[0], _CHATML[1])) == [("TRN059", 8)]


@pytest.mark.parametrize("extra", ['tokenizer.chat_template = open("t.jinja").read()\n',
                                   'tokenizer = get_chat_template(tokenizer, chat_template="llama-3.1")\n'])
def test_trn059_silent_when_the_template_may_change(tmp_path, extra):
    assert _responses_only(tmp_path, 'chat_template="chatml"', _LLAMA3, extra) == []


def test_trn059_silent_without_apply_chat_template(tmp_path):
    (tmp_path / "train.py").write_text(_SCRIPT.format(template='chat_template="chatml"', instruction=_LLAMA3[0],
                                                      response=_LLAMA3[1], extra="").replace(
        "tokenizer.apply_chat_template(c, tokenize=False)", "c"), "utf-8")
    out = trainlint("check", str(tmp_path / "train.py"), "--select", "TRN059", "--no-detect", "--format", "json").out
    assert json.loads(out) == []


def test_trn059_silent_when_the_template_only_renders_after_training(tmp_path):
    script = _SCRIPT.format(template='chat_template="chatml"', instruction=_LLAMA3[0], response=_LLAMA3[1], extra="")
    script = script.replace("texts = [tokenizer.apply_chat_template(c, tokenize=False) for c in conversations]\n", "")
    script += "trainer.train()\nprint(tokenizer.apply_chat_template(messages, add_generation_prompt=True))\n"
    (tmp_path / "train.py").write_text(script, "utf-8")
    out = trainlint("check", str(tmp_path / "train.py"), "--select", "TRN059", "--no-detect", "--format", "json").out
    assert json.loads(out) == []


@pytest.mark.parametrize("imports", [
    "from unsloth.chat_templates import get_chat_template\nfrom helpers import train_on_responses_only\n",
    "from unsloth.chat_templates import get_chat_template as gct, train_on_responses_only\n",
])
def test_trn059_silent_for_functions_not_from_unsloth(tmp_path, imports):
    script = _SCRIPT.format(template='chat_template="chatml"', instruction=_LLAMA3[0], response=_LLAMA3[1], extra="")
    script = script.replace("from unsloth.chat_templates import get_chat_template, train_on_responses_only\n", imports)
    (tmp_path / "train.py").write_text(script, "utf-8")
    out = trainlint("check", str(tmp_path / "train.py"), "--select", "TRN059", "--no-detect", "--format", "json").out
    assert json.loads(out) == []
