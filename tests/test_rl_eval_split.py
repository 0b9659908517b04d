"""TRN026 rl-val-set-size-ignored: an `rl` config with val_set_size and no test_datasets, on an
Axolotl from 0.4.0 (`rl`, f243c2186) and before 0.9.0 (c513487d1, #2572): the preference-data
loader split nothing off (utils/data/rl.py), so the run never evaluates."""

from __future__ import annotations

import json

import pytest

from conftest import FIXTURES, trainlint

BASE = {
    "base_model": "mistralai/Mistral-7B-v0.1",
    "rl": "dpo",
    "datasets": [{"path": "Intel/orca_dpo_pairs", "split": "train", "type": "chatml.intel"}],
    "val_set_size": 0.1,
    "micro_batch_size": 2,
    "evals_per_epoch": 4,
}
_TEST_SETS = [{"path": "Intel/orca_dpo_pairs", "split": "train[90%:]", "type": "chatml.intel"}]


def _config(tmp_path, settings: dict | None = None, pin: str | None = "0.8.1"):
    merged = {**BASE, **(settings or {})}
    path = tmp_path / "axolotl.yaml"
    path.write_text("".join(f"{key}: {json.dumps(value)}\n" for key, value in merged.items() if value is not None))
    if pin:
        (tmp_path / "requirements.txt").write_text(f"axolotl=={pin}\n")
    return path


def _messages(path, *extra) -> list[str]:
    result = trainlint("check", path, "--no-detect", "--format", "json", "--select", "TRN026", *extra)
    assert result.code in (0, 1), result.err
    return [finding["message"] for finding in json.loads(result.out)]


# RLType in v0.8.1 (utils/schemas/enums.py): every kind takes the preference-data loader (cli/train.py `if cfg.rl:`)
@pytest.mark.parametrize("kind", ["dpo", "ipo", "kto", "orpo", "simpo", "grpo"])
def test_every_rl_kind_fires_before_0_9(tmp_path, kind):
    found = _messages(_config(tmp_path, {"rl": kind}))
    assert len(found) == 1 and "axolotl 0.8.1" in found[0] and "never evaluates" in found[0], found


@pytest.mark.parametrize("pin", ["0.4.0", "0.5.0", "0.7.1", "0.8.0"])
def test_fires_from_the_first_rl_release(tmp_path, pin):
    assert len(_messages(_config(tmp_path, pin=pin))) == 1


@pytest.mark.parametrize("pin", ["0.9.0", "0.9.1", "0.12.0", "0.3.0"])
def test_silent_where_the_split_happens_or_rl_is_not_read(tmp_path, pin):
    assert _messages(_config(tmp_path, pin=pin)) == []


@pytest.mark.parametrize("settings", [
    {"val_set_size": 0, "test_datasets": _TEST_SETS},  # the eval set comes from test_datasets
    {"val_set_size": 0},  # nothing asked for
    {"val_set_size": None},  # the default, 0.0
    {"rl": None},  # the SFT loader splits val_set_size off (utils/data/sft.py)
])
def test_silent_without_the_hazard(tmp_path, settings):
    assert _messages(_config(tmp_path, settings)) == []


def test_unknown_version_is_silent_with_a_note(tmp_path):
    path = _config(tmp_path, pin=None)
    assert _messages(path) == []
    result = trainlint("check", path, "--no-detect", "--select", "TRN026", "--verbose")
    assert "TRN026 skipped: the axolotl version is unknown" in result.err


def test_incident_caught():
    found = _messages(FIXTURES / "incidents" / "axolotl-rl-val-set-size-ignored" / "train.yaml")
    assert len(found) == 1 and "axolotl 0.8.1 (" in found[0], found
