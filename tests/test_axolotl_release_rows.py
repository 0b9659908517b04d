"""The Axolotl rows of the release-bug table (rules/axolotl_release_rows.py): each fires on the
releases the history names, stays silent on the fixed release, outside the hazard, and where a
version is unknown (except the rows every release fails)."""

from __future__ import annotations

import json

import pytest

from conftest import FIXTURES, trainlint
from linter import versions

INCIDENTS = FIXTURES / "incidents"
DPO = "axolotl-dpo-excess-length-truncate-ignored"
SFT = "axolotl-excess-length-truncate-not-applied"
KTO = "axolotl-kto-user-defined-crash"
LORA_DIR = "axolotl-lora-model-dir-frozen"
WARMUP = "axolotl-warmup-zero-ignored"
# The KTO fixture's fields moved under `type:` (the mapping form docs/rlhf.qmd writes from 0.18.0)
_FIELDS = ('field_prompt: "prompt"', 'field_system: "system"', 'field_completion: "completion"',
           'field_label: "label"', 'prompt_format: "{prompt}"', 'completion_format: "{completion}"')
_KTO_MAPPING = ("type: user_defined.default\n\n" + "".join(f"    {line}\n" for line in _FIELDS),
                "type:\n" + "".join(f"      {line}\n" for line in _FIELDS))


@pytest.fixture(autouse=True)
def _pins_only(nothing_installed):
    """Versions come from the pins each test writes (conftest.nothing_installed)."""


def _codes(folder, incident: str, pins: str | None, *replaces: tuple[str, str]) -> list[str]:
    for source in sorted((INCIDENTS / incident).iterdir()):
        if source.name in ("expect.txt", "target.txt", "flags.txt") or (
                source.name == "requirements.txt" and pins is not None):
            continue
        text = source.read_text()
        for old, new in replaces if source.suffix == ".yaml" else ():
            assert old in text, old
            text = text.replace(old, new)
        (folder / source.name).write_text(text)
    if pins is not None:
        (folder / "requirements.txt").write_text(pins)
    versions.forget()
    result = trainlint("check", folder, "--no-detect", "--format", "json", "--select", "TRN073,TRN074")
    assert result.code in (0, 1), result.err
    return [finding["code"] for finding in json.loads(result.out)]


@pytest.mark.parametrize("incident, pins, replaces, expected", [
    # RL loader ignores excess_length_strategy: 0.12.2 to 0.16.1 (raise accepted from 0.13.1)
    (DPO, "axolotl==0.16.1\n", (), ["TRN074"]),
    (DPO, "axolotl==0.12.2\n", (), ["TRN074"]),
    (DPO, "axolotl==0.12.1\n", (), []),
    (DPO, "axolotl==0.17.0\n", (), []),
    (DPO, "", (), []),
    (DPO, "axolotl==0.16.1\n", (("rl: dpo", "rl: kto"),), ["TRN074"]),
    (DPO, "axolotl==0.16.1\n", (("rl: dpo", "rl: orpo"),), ["TRN074"]),
    (DPO, "axolotl==0.16.1\n", (("rl: dpo", "rl: grpo"),), []),  # GRPO keeps every sample
    (DPO, "axolotl==0.16.1\n", (("excess_length_strategy: truncate", "excess_length_strategy: drop"),), []),
    (DPO, "axolotl==0.16.1\n", (("excess_length_strategy: truncate", "excess_length_strategy: raise"),), ["TRN074"]),
    (DPO, "axolotl==0.13.0\n", (("excess_length_strategy: truncate", "excess_length_strategy: raise"),), []),
    (DPO, "axolotl==0.16.1\n", (("sample_packing: false", "skip_prepare_dataset: true"),), []),
    # SFT truncation through dataset.filter: 0.12.2 to 0.14.0
    (SFT, "axolotl==0.14.0\n", (), ["TRN074"]),
    (SFT, "axolotl==0.12.2\n", (), ["TRN074"]),
    (SFT, "axolotl==0.15.0\n", (), []),
    (SFT, "", (), []),
    (SFT, "axolotl==0.14.0\n", (("sample_packing: false", "sample_packing: true"),), ["TRN074"]),
    (SFT, "axolotl==0.14.0\n", (("excess_length_strategy: truncate", "excess_length_strategy: Truncate"),), ["TRN074"]),
    (SFT, "axolotl==0.14.0\n", (("excess_length_strategy: truncate", "excess_length_strategy: drop"),), []),
    (SFT, "axolotl==0.14.0\n", (("sample_packing: false", "skip_prepare_dataset: true"),), []),
    # a string user_defined type under rl: every release from 0.5.0 (kto, orpo unpinned; dpo pinned only)
    (KTO, None, (), ["TRN073"]),
    (KTO, "", (), ["TRN073"]),
    (KTO, "axolotl==0.18.0\n", (), ["TRN073"]),
    (KTO, "", (("rl: kto", "rl: orpo"),), ["TRN073"]),
    (KTO, "", (("rl: kto", "rl: dpo"),), []),
    (KTO, "axolotl==0.16.0\n", (("rl: kto", "rl: dpo"),), ["TRN073"]),
    (KTO, "axolotl==0.4.0\n", (("rl: kto", "rl: dpo"),), []),
    (KTO, "axolotl==0.16.0\n", (("rl: kto", "rl: grpo"),), []),
    (KTO, "axolotl==0.16.0\n", (("type: user_defined.default", "type: chat_template"),), []),
    # the KTO `type:` mapping: 0.5.0 to 0.17.x
    (KTO, "axolotl==0.17.0\n", (_KTO_MAPPING,), ["TRN073"]),
    (KTO, "axolotl==0.18.0\n", (_KTO_MAPPING,), []),
    (KTO, "", (_KTO_MAPPING,), []),
    (KTO, "axolotl==0.17.0\n", (_KTO_MAPPING, ("rl: kto", "rl: dpo")), []),
    (KTO, "", (_KTO_MAPPING, ("rl: kto", "rl: orpo")), ["TRN073"]),  # no ORPO user-defined strategy
    # lora_model_dir loaded frozen (no is_trainable): up to 0.2.0
    (LORA_DIR, "axolotl==0.2.0\n", (), ["TRN074"]),
    (LORA_DIR, "axolotl==0.1.0\n", (), ["TRN074"]),
    (LORA_DIR, "axolotl==0.2.1\n", (), []),
    (LORA_DIR, None, (), []),
    (LORA_DIR, "axolotl==0.2.0\n", (("lora_model_dir: ./lora-out-stage1\n", ""),), []),
    (LORA_DIR, "axolotl==0.2.0\n", (("adapter: lora", "adapter: qlora"),), ["TRN074"]),
    (LORA_DIR, "axolotl==0.2.0\n", (("adapter: lora", "adapter: llama-adapter"),), []),
    # warmup 0 replaced by the default warmup: 0.10.0 to 0.12.2
    (WARMUP, "axolotl==0.12.2\n", (), ["TRN074"]),
    (WARMUP, "axolotl==0.10.0\n", (), ["TRN074"]),
    (WARMUP, "axolotl==0.9.2\n", (), []),
    (WARMUP, "axolotl==0.13.0\n", (), []),
    (WARMUP, None, (), []),
    (WARMUP, "axolotl==0.12.2\n", (("warmup_steps: 0", "warmup_steps: 10"),), []),
    (WARMUP, "axolotl==0.12.2\n", (("warmup_steps: 0", "warmup_ratio: 0.0"),), ["TRN074"]),
    (WARMUP, "axolotl==0.12.2\n", (("warmup_steps: 0", "warmup_steps: 0\nwarmup_ratio: 0.1"),), []),
    (WARMUP, "axolotl==0.12.2\n", (("lr_scheduler: cosine", "lr_scheduler: constant"),), []),
    (WARMUP, "axolotl==0.12.2\n", (("lr_scheduler: cosine", "lr_scheduler: one_cycle"),), ["TRN074"]),
])
def test_axolotl_release_rows(tmp_path, incident, pins, replaces, expected):
    assert _codes(tmp_path, incident, pins, *replaces) == expected
