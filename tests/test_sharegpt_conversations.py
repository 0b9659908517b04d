"""TRN066: Axolotl ShareGPT datasets against the FastChat conversation templates of the fschat each
release pinned (linter/data/fastchat_conversations.json) and the 0.5.0 refusal."""

from __future__ import annotations

import json

import pytest

from conftest import trainlint


@pytest.fixture(autouse=True)
def _pins_only(nothing_installed):
    """Versions come from the pins each test writes."""


def messages(tmp_path, dataset: str, top: str = "", pin: str | None = None) -> list[str]:
    (tmp_path / "axolotl.yaml").write_text(
        f"base_model: NousResearch/Meta-Llama-3-8B\n{top}datasets:\n  - path: d\n{dataset}"
        "micro_batch_size: 1\nsequence_len: 2048\n")
    if pin:
        (tmp_path / "requirements.txt").write_text(f"axolotl=={pin}\n")
    result = trainlint("check", tmp_path / "axolotl.yaml", "--no-detect", "--format", "json", "--select", "TRN066")
    assert result.code in (0, 1), result.err
    return [finding["message"] for finding in json.loads(result.out)]


SHAREGPT = "    type: sharegpt\n"


@pytest.mark.parametrize("dataset, top, pin, fires", [
    (SHAREGPT, "chat_template: phi_3\n", None, True),       # filled with a post-#1664 name
    (SHAREGPT, "chat_template: qwen_25\n", "0.4.1", True),
    (SHAREGPT, "chat_template: chatml\n", None, False),     # Axolotl registers chatml
    (SHAREGPT, "chat_template: inst\n", None, False),       # accepted before the fill: older builds use vicuna
    (SHAREGPT + "    conversation: llama-3-instruct\n", "", None, True),
    (SHAREGPT + "    conversation: llama-3\n", "", None, False),  # a FastChat name
    (SHAREGPT + "    conversation: llama3\n", "", "0.4.0", True),  # Axolotl registered llama3 after v0.4.0
    (SHAREGPT + "    conversation: llama3\n", "", "0.4.1", False),
    (SHAREGPT + "    conversation: chatml\n", "", "0.5.0", True),  # refused at validation
    ("    type: sharegpt.load_role\n", "", "0.6.0", True),
    ("    type: chat_template\n", "chat_template: phi_3\n", "0.6.0", False),
    (SHAREGPT, "chat_template: phi_3\n", "0.3.0", False),   # before FastChat conversations
])
def test_sharegpt_datasets(tmp_path, dataset, top, pin, fires):
    assert bool(messages(tmp_path, dataset, top, pin)) is fires


def test_refusal_names_the_release(tmp_path):
    [message] = messages(tmp_path, SHAREGPT, "", "0.5.0")
    assert "axolotl 0.5.0" in message and "deprecated" in message
