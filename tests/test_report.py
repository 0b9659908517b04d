"""The JSON report validates against schemas/report.schema.json."""

from __future__ import annotations

import json

import jsonschema

from conftest import ROOT, trainlint

SCHEMA = json.loads((ROOT / "schemas" / "report.schema.json").read_text())


def test_json_report_validates(tmp_path):
    (tmp_path / "ds.json").write_text('{"fp16": {"enabled": true}, "zero_optimization": {"stage": 2, '
                                      '"offload_param": {"device": "cpu"}}}')
    (tmp_path / "bad.json").write_text('{"train_batch_size": X}')
    (tmp_path / "l.yaml").write_text("model_type: llm\nbase_model: m\nquantization:\n  bits: 4\n")
    findings = json.loads(trainlint("check", tmp_path, "--gpu", "A100", "--format", "json").out)
    assert {f["code"] for f in findings} == {"PRE002", "DS001", "DS004", "SYN001", "QNT001", "QNT005"}
    jsonschema.validate(findings, SCHEMA)


def test_schema_rejects_a_malformed_report():
    bad = [{"code": "PRE002", "severity": "fatal"}]
    try:
        jsonschema.validate(bad, SCHEMA)
    except jsonschema.ValidationError:
        return
    raise AssertionError("the schema accepted a malformed report")
