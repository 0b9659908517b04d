"""SARIF and JSON output: checked against the formats' documented fields (SARIF 2.1.0 and GitHub
code scanning's requirements), and single valid documents with every option."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import jsonschema
import pytest

from conftest import ROOT, trainlint

FP16_ZERO2 = '{\n  "fp16": {"enabled": true},\n  "zero_optimization": {"stage": 2}\n}\n'
SARIF_SCHEMA = json.loads((ROOT / "schemas" / "vendor" / "sarif-schema-2.1.0.json").read_text())
REPORT_SCHEMA = json.loads((ROOT / "schemas" / "report.schema.json").read_text())


@pytest.fixture
def repo(tmp_path, monkeypatch):
    """A git work tree with configs in a subfolder whose name needs percent-encoding."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    configs = root / "configs dir"
    configs.mkdir()
    (configs / "ds #1.json").write_text(FP16_ZERO2)
    (configs / "bad.json").write_text('{"train_batch_size": X}')
    monkeypatch.chdir(configs)
    monkeypatch.delenv("GITHUB_WORKSPACE", raising=False)
    return root


def sarif_run(*args) -> dict:
    result = trainlint("check", *args, "--format", "sarif")
    log = json.loads(result.out)
    jsonschema.Draft4Validator(SARIF_SCHEMA).validate(log)
    return log["runs"][0]


def test_sarif_uris_are_root_relative_percent_encoded_with_a_base_id(repo):
    run = sarif_run(".", "--gpu", "A100")
    assert run["originalUriBaseIds"] == {"SRCROOT": {"uri": repo.resolve().as_uri() + "/"}}
    locations = {r["ruleId"]: r["locations"][0]["physicalLocation"]["artifactLocation"] for r in run["results"]}
    assert locations["PRE002"] == {"uri": "configs%20dir/ds%20%231.json", "uriBaseId": "SRCROOT"}
    assert locations["SYN001"] == {"uri": "configs%20dir/bad.json", "uriBaseId": "SRCROOT"}
    fix_location = next(r for r in run["results"] if r["ruleId"] == "PRE002")["fixes"][0]["artifactChanges"][0]
    assert fix_location["artifactLocation"] == locations["PRE002"]


def test_sarif_file_outside_the_root_is_an_absolute_file_uri(repo, tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "ds.json").write_text(FP16_ZERO2)
    run = sarif_run(outside / "ds.json", "--gpu", "A100")
    location = run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert location == {"uri": (outside / "ds.json").resolve().as_uri()}


def test_sarif_github_workspace_is_the_root(repo, monkeypatch):
    monkeypatch.setenv("GITHUB_WORKSPACE", str(repo / "configs dir"))
    run = sarif_run(".", "--gpu", "A100")
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]}
    assert uris == {"ds%20%231.json", "bad.json"}


def test_sarif_rules_have_help_uri_to_a_shipped_page_and_a_one_line_short_description(repo):
    from linter import registry, report

    run = sarif_run(".", "--gpu", "A100")
    rules = run["tool"]["driver"]["rules"]
    assert [rule["id"] for rule in rules] == [rule.code for rule in registry.all_rules()]
    for rule in rules:
        assert rule["helpUri"] == report.RULE_DOCS_URL.format(code=rule["id"])
        assert rule["helpUri"].endswith(f"/docs/rules/{rule['id']}.md")
        assert (ROOT / "docs" / "rules" / f"{rule['id']}.md").is_file()
        short = rule["shortDescription"]["text"]
        assert "\n" not in short and 0 < len(short) <= 120, short
    assert run["tool"]["driver"]["informationUri"] == report.REPOSITORY_URL
    long_rule = next(rule for rule in rules if rule["id"] == "MEM001")
    assert long_rule["shortDescription"]["text"].endswith("…")
    assert len(long_rule["fullDescription"]["text"]) > 120


def test_sarif_help_uri_base_can_be_set(repo, monkeypatch):
    monkeypatch.setenv("TRAINLINT_RULE_DOCS_URL", "https://example.org/tl/docs/rules/")
    rules = sarif_run(".", "--gpu", "A100")["tool"]["driver"]["rules"]
    assert {rule["helpUri"] for rule in rules} == {f"https://example.org/tl/docs/rules/{rule['id']}.md" for rule in rules}


def test_sarif_results_meet_github_code_scanning_requirements(repo):
    """docs.github.com "SARIF support for code scanning": each result needs ruleId, message.text,
    a physical location with a uri and region.startLine; partialFingerprints keep alerts stable."""
    run = sarif_run(".", "--gpu", "A100")
    assert {r["ruleId"] for r in run["results"]} == {"PRE002", "DS001", "SYN001"}
    fingerprints = set()
    for result in run["results"]:
        assert result["message"]["text"]
        region = result["locations"][0]["physicalLocation"]["region"]
        assert region["startLine"] >= 1
        # never empty: SYN001 is a point, shown as one column
        assert (region["endLine"], region["endColumn"]) > (region["startLine"], region["startColumn"])
        fingerprint = result["partialFingerprints"]["trainlint/v1"]
        assert fingerprint not in fingerprints
        fingerprints.add(fingerprint)
    syn = next(r for r in run["results"] if r["ruleId"] == "SYN001")
    assert syn["locations"][0]["physicalLocation"]["region"] == {
        "startLine": 1, "startColumn": 22, "endLine": 1, "endColumn": 23}


def test_sarif_fingerprints_survive_lines_moving(repo):
    before = sarif_run("ds #1.json", "--gpu", "A100")["results"]
    path = repo / "configs dir" / "ds #1.json"
    path.write_text("\n\n" + FP16_ZERO2)
    after = sarif_run("ds #1.json", "--gpu", "A100")["results"]
    assert [r["partialFingerprints"] for r in before] == [r["partialFingerprints"] for r in after]
    assert before[0]["locations"][0]["physicalLocation"]["region"]["startLine"] + 2 == \
        after[0]["locations"][0]["physicalLocation"]["region"]["startLine"]


def test_sarif_automation_id_names_the_targets_and_can_be_overridden(repo):
    assert sarif_run(".", "--gpu", "A100,V100")["automationDetails"] == {"id": "trainlint/A100-40GB+V100-16GB/"}
    assert sarif_run(".", "--gpu", "sm_90")["automationDetails"] == {"id": "trainlint/cc_9.0/"}
    assert sarif_run(".", "--no-detect")["automationDetails"] == {"id": "trainlint/no-target/"}
    assert sarif_run(".", "--gpu", "A100", "--automation-id", "ci/a100/")["automationDetails"] == {"id": "ci/a100/"}


# ---- one document whatever the options ------------------------------------------------------------

def test_json_with_show_fixes_and_fix_is_one_document(tmp_path):
    (tmp_path / "ds.json").write_text(FP16_ZERO2)
    result = trainlint("check", tmp_path, "--gpu", "A100", "--fix", "--show-fixes", "--format", "json")
    document = json.loads(result.out)
    jsonschema.validate(document, REPORT_SCHEMA)
    assert document["applied_fixes"] == [{"file": str(tmp_path / "ds.json"), "code": "PRE002",
                                          "name": "fp16-where-bf16", "count": 1}]
    assert document["findings"] == []  # DS001 went away with fp16


def test_json_statistics_is_json(tmp_path):
    (tmp_path / "ds.json").write_text(FP16_ZERO2)
    (tmp_path / "other.json").write_text(FP16_ZERO2)
    result = trainlint("check", tmp_path, "--gpu", "A100", "--statistics", "--format", "json")
    rows = json.loads(result.out)
    jsonschema.validate(rows, REPORT_SCHEMA)
    assert rows == [{"code": "DS001", "name": "zero2-fp16", "count": 2, "fixable": False},
                    {"code": "PRE002", "name": "fp16-where-bf16", "count": 2, "fixable": True}]
    assert result.code == 1


def test_sarif_with_statistics_show_fixes_and_fix_is_one_document(tmp_path):
    (tmp_path / "ds.json").write_text(FP16_ZERO2)
    run = sarif_run(tmp_path, "--gpu", "A100", "--fix", "--show-fixes", "--statistics", "--unsafe-fixes")
    assert run["properties"]["appliedFixes"] == [
        {"file": str(tmp_path / "ds.json"), "code": "DS001", "name": "zero2-fp16", "count": 1},
        {"file": str(tmp_path / "ds.json"), "code": "PRE002", "name": "fp16-where-bf16", "count": 1}] or \
        sorted(f["code"] for f in run["properties"]["appliedFixes"]) == ["DS001", "PRE002"]
    assert run["properties"]["statistics"] == []
    assert run["results"] == []


def test_plain_json_report_is_still_the_findings_array(tmp_path):
    (tmp_path / "ds.json").write_text(FP16_ZERO2)
    findings = json.loads(trainlint("check", tmp_path, "--gpu", "A100", "--format", "json").out)
    assert isinstance(findings, list) and {f["code"] for f in findings} == {"PRE002", "DS001"}
