"""Versions a pinned framework release installs (linter/data/implied_pins.json, made by
bench/implied_pins.py from PyPI): `axolotl==0.8.0` requires bitsandbytes==0.45.4 and
transformers==4.50.3 exactly, so a checkout pinning only Axolotl still says which of them run."""

from __future__ import annotations

import json

import pytest
from packaging.version import Version

from conftest import trainlint
from linter import versions


@pytest.fixture(autouse=True)
def _pins_only(nothing_installed):
    """Versions come from the pins each test writes (conftest.nothing_installed)."""


def _pin(folder, text: str):
    (folder / ".git").mkdir()
    (folder / "requirements.txt").write_text(text)
    versions.forget()


def test_a_pinned_release_implies_its_exact_requirements(tmp_path):
    _pin(tmp_path, "axolotl==0.8.0\n")
    found = versions.find_version("transformers", tmp_path / "config.yml")
    assert (found.version, found.via) == ("4.50.3", "axolotl 0.8.0")
    assert found.origin == "required by axolotl 0.8.0, pinned in requirements.txt"
    assert versions.version_of("bitsandbytes", tmp_path / "config.yml") == (
        "0.45.4", f"{tmp_path / 'requirements.txt'}: axolotl 0.8.0 requires it")


def test_the_users_own_pin_wins(tmp_path):
    _pin(tmp_path, "axolotl==0.8.0\ntransformers==4.51.3\n")
    assert versions.version_of("transformers", tmp_path / "config.yml") == (
        "4.51.3", str(tmp_path / "requirements.txt"))


@pytest.mark.parametrize("pins, package", [
    ("axolotl==0.8.0\n", "deepspeed"),  # only in the `deepspeed` extra
    ("axolotl==0.19.0\n", "bitsandbytes"),  # behind a platform marker from 0.17.0
    ("axolotl==0.4.0\n", "transformers"),  # never on PyPI: not in the table
    ("axolotl>=0.8.0\n", "transformers"),  # a range says no release
])
def test_unknown_where_the_release_does_not_pin_it(tmp_path, pins, package):
    _pin(tmp_path, pins)
    assert versions.version_of(package, tmp_path / "config.yml") is None


def test_pins_of_the_framework_that_disagree_imply_nothing(tmp_path):
    _pin(tmp_path, "axolotl==0.8.0\n")
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\ndependencies = ["axolotl==0.12.0"]\n')
    versions.forget()
    assert versions.version_of("transformers", tmp_path / "config.yml") is None


_AXOLOTL_FSDP_8BIT = """\
base_model: mistralai/Mistral-7B-v0.1
datasets:
  - path: tatsu-lab/alpaca
    type: alpaca
sequence_len: 2048
micro_batch_size: 1
num_epochs: 1
learning_rate: 0.0002
optimizer: paged_adamw_8bit
bf16: true
fsdp:
  - full_shard
  - auto_wrap
fsdp_config:
  fsdp_transformer_layer_cls_to_wrap: MistralDecoderLayer
  fsdp_state_dict_type: FULL_STATE_DICT
output_dir: ./out
"""


@pytest.mark.parametrize("pins, fired", [
    ("axolotl==0.8.0\n", ["TRN020"]),  # bitsandbytes 0.45.4: before 0.49.2
    ("axolotl==0.8.0\nbitsandbytes==0.49.2\n", []),  # the user's own pin wins
    ("", []),  # nothing pinned: unknown, silent
])
def test_a_version_bound_rule_reads_the_implied_version(tmp_path, pins, fired):
    _pin(tmp_path, pins)
    (tmp_path / "axolotl.yml").write_text(_AXOLOTL_FSDP_8BIT)
    result = trainlint("check", tmp_path, "--no-detect", "--gpu", "A100", "--world-size", "2", "--format", "json")
    findings = [finding for finding in json.loads(result.out) if finding["code"] == "TRN020"]
    assert [finding["code"] for finding in findings] == fired
    if fired:
        assert f"bitsandbytes 0.45.4 ({tmp_path / 'requirements.txt'}: axolotl 0.8.0 requires it)" in findings[0]["message"]


def test_the_table_holds_exact_versions_of_the_packages_rules_ask_about():
    table = versions.implied_pins()
    assert set(table) == {"axolotl", "xtuner"}  # bench/implied_pins.py FRAMEWORKS
    for framework, releases in table.items():
        assert releases, framework
        for release, row in releases.items():
            Version(release)
            assert set(row["pins"]) <= {"transformers", "trl", "peft", "accelerate", "deepspeed", "bitsandbytes"}
            for version in row["pins"].values():
                Version(version)
