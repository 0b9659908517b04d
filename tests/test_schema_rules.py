"""SCH001-SCH003 and the schema validator.

The rule mechanics are tested against small schemas written here (so a change to a shipped
schema does not move these tests); the shipped schemas are checked for validity, for agreement
between trainlint's validator and the jsonschema package, and against the corpus.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import CORPUS, ROOT, trainlint
from linter import schema as schemas

DEEPSPEED = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "x-trainlint": {"loader": "json.load", "numeric-strings": "kept", "unknown-keys": "dropped-silently"},
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "train_micro_batch_size_per_gpu": {"anyOf": [{"type": "integer", "minimum": 1}, {"const": "auto"}]},
        "gradient_accumulation_steps": {"anyOf": [{"type": "integer"}, {"const": "auto"}]},
        "zero_optimization": {"$ref": "#/$defs/zero"},
        "bf16": {"type": "object", "properties": {"enabled": {"type": ["boolean", "string"]}}},
    },
    "$defs": {"zero": {"type": "object", "additionalProperties": False,
                       "properties": {"stage": {"enum": [0, 1, 2, 3]}, "overlap_comm": {"type": "boolean"},
                                      "contiguous_gradients": {"type": "boolean"}}}},
}
LUDWIG = {
    "type": "object",
    "x-trainlint": {"loader": "yaml.safe_load", "numeric-strings": "kept"},
    "additionalProperties": False,
    "properties": {
        "model_type": {"enum": ["llm", "ecd"]}, "base_model": {"type": "string"},
        "trainer": {"type": "object", "properties": {"learning_rate": {"type": "number"}}},
    },
}
LLAMAFACTORY = {
    "type": "object",
    "x-trainlint": {"loader": "yaml.safe_load then HfArgumentParser.parse_dict", "numeric-strings": "kept"},
    "additionalProperties": False,
    "properties": {
        "model_name_or_path": {"type": "string"}, "stage": {"enum": ["pt", "sft", "rm", "ppo", "dpo", "kto"]},
        "finetuning_type": {"enum": ["lora", "oft", "freeze", "full"]}, "do_train": {"type": "boolean"},
        "learning_rate": {"type": "number"}, "bf16": {"type": "boolean"}, "quantization_bit": {"enum": [2, 3, 4, 5, 6, 8, None]},
        "report_to": {"type": ["string", "array", "null"]}, "output_dir": {"type": "string"},
    },
}


@pytest.fixture
def shipped(tmp_path, monkeypatch):
    """Schemas written here stand in for the shipped ones."""
    folder = tmp_path / "schemas"
    folder.mkdir()
    for name, body in (("deepspeed", DEEPSPEED), ("llamafactory", LLAMAFACTORY), ("ludwig", LUDWIG)):
        (folder / f"{name}.schema.json").write_text(json.dumps(body))
    monkeypatch.setattr(schemas, "SCHEMA_DIRS", (folder,))
    _clear_schema_caches()
    yield folder
    # The adapters keep the shipped schemas' top-level keys (to tell a DeepSpeed or TRL file by its
    # keys): a stand-in's keys left there made a later corpus run miss 4 DeepSpeed files.
    _clear_schema_caches()


def _clear_schema_caches():
    from linter.adapters import deepspeed, hf_kinds

    schemas.load.cache_clear()
    deepspeed._schema_keys.cache_clear()
    hf_kinds._framework_fields.cache_clear()


def check(path, *args):
    result = trainlint("check", path, "--select", "SCH", "--format", "json", "--no-detect", *args)
    assert result.code in (0, 1), result.err
    return json.loads(result.out)


def test_unknown_deepspeed_key_is_an_error_whose_close_match_is_a_hint_never_an_edit(shipped, tmp_path):
    path = tmp_path / "ds.json"
    text = '{\n  "train_micro_batch_size_per_gpu": 4,\n  "zero_optimization": {"stage": 2, "overlap_com": true}\n}\n'
    path.write_text(text)
    [finding] = check(path)
    assert finding["code"] == "SCH001" and finding["severity"] == "error"
    assert "zero_optimization.overlap_com" in finding["message"] and "did you mean 'overlap_comm'" in finding["message"]
    assert (finding["line"], finding["column"]) == (3, 37)  # the key itself
    assert finding["fix"] is None
    assert trainlint("check", path, "--select", "SCH", "--fix", "--unsafe-fixes", "--no-detect").code == 1
    assert path.read_text() == text


def test_a_documented_rename_is_a_safe_fix_only_where_the_pinned_release_refuses_the_old_key(tmp_path, monkeypatch):
    from linter import versions

    monkeypatch.setattr(versions, "installed", lambda package: None)  # versions come from the pins written here
    text = "model_name_or_path: m\ndataset_name: d\nmax_seq_length: 1024\n"

    def project(name: str, pin: str | None):
        folder = tmp_path / name
        folder.mkdir()
        if pin:
            (folder / "requirements.txt").write_text(pin + "\n")
        (folder / "sft.yaml").write_text(text)
        return folder / "sft.yaml"

    assert check(project("unpinned", None)) == []  # no version known: an older TRL accepts it
    assert check(project("old", "trl==0.19.1")) == []  # renamed in 0.16, removed in 0.20: 0.19 reads it
    path = project("new", "trl==0.21.0")
    [finding] = check(path)
    assert "max_seq_length was renamed max_length in trl 0.16.0 and removed in 0.20.0" in finding["message"]
    assert finding["fix"]["applicability"] == "safe"
    assert trainlint("check", path, "--select", "SCH", "--fix", "--no-detect").code == 0
    assert path.read_text() == text.replace("max_seq_length", "max_length")


def test_no_rename_when_the_close_key_is_already_there_or_nothing_is_close(shipped, tmp_path):
    path = tmp_path / "ds.json"
    path.write_text('{"zero_optimization": {"overlap_comm": true, "overlap_com": true, "banana": 1}}')
    findings = check(path)
    assert [f["code"] for f in findings] == ["SCH001", "SCH001"]
    assert all(f["fix"] is None for f in findings)
    assert "did you mean" not in next(f for f in findings if "banana" in f["message"])["message"]


def test_invalid_values_are_sch002_at_the_value(shipped, tmp_path):
    path = tmp_path / "ds.json"
    path.write_text('{"train_micro_batch_size_per_gpu": 0, "zero_optimization": {"stage": 4},\n'
                    ' "gradient_accumulation_steps": "8", "bf16": {"enabled": true}}')
    findings = {f["message"].split(":")[0]: f for f in check(path)}
    assert set(findings) == {"train_micro_batch_size_per_gpu", "zero_optimization.stage", "gradient_accumulation_steps"}
    assert all(f["code"] == "SCH002" and f["severity"] == "error" and f["fix"] is None for f in findings.values())
    assert "4 is not one of [0, 1, 2, 3]" in findings["zero_optimization.stage"]["message"]
    assert "expected integer or string" in findings["gradient_accumulation_steps"]["message"] or \
        "expected integer" in findings["gradient_accumulation_steps"]["message"]


def test_a_boolean_written_0_or_1_is_no_error_where_the_loader_reads_it_as_that_boolean(shipped, tmp_path):
    """LLaMA-Factory's parse_dict keeps `do_train: 1` and tests it by truthiness (eighth held-out set,
    a repository's eval configs); a field the framework compares by identity (`do_eval is False`) is
    still reported for that value, and a format whose loader refuses an integer (Ludwig's JSON-schema
    check, here the schema with no boolean-ints) is unchanged."""
    body = dict(LLAMAFACTORY, **{"x-trainlint": dict(LLAMAFACTORY["x-trainlint"], **{"boolean-ints": {
        "read-as": "truthiness", "identity": {"0": ["do_eval"]}}})})
    body["properties"] = dict(LLAMAFACTORY["properties"], do_eval={"type": "boolean"})
    (shipped / "llamafactory.schema.json").write_text(json.dumps(body))
    schemas.load.cache_clear()
    path = tmp_path / "eval.yaml"
    path.write_text("model_name_or_path: m\nstage: sft\ndo_train: 0\ndo_eval: 1\nbf16: 1\n")
    assert check(path) == []
    path.write_text("model_name_or_path: m\nstage: sft\ndo_train: 2\ndo_eval: 0\n")
    assert sorted(f["message"].split(":")[0] for f in check(path)) == ["do_eval", "do_train"]
    (shipped / "llamafactory.schema.json").write_text(json.dumps(LLAMAFACTORY))
    schemas.load.cache_clear()
    path.write_text("model_name_or_path: m\nstage: sft\ndo_train: 1\n")
    [finding] = check(path)
    assert finding["code"] == "SCH002" and "expected boolean, got number 1" in finding["message"]


def test_valid_files_have_no_schema_findings(shipped, tmp_path):
    path = tmp_path / "ds.json"
    path.write_text('{"train_micro_batch_size_per_gpu": "auto", "zero_optimization": {"stage": 3}, '
                    '"bf16": {"enabled": "auto"}}')
    assert check(path) == []


def test_yaml11_float_is_sch003_with_a_safe_fix_where_the_loader_keeps_strings(shipped, tmp_path):
    path = tmp_path / "model.yaml"
    text = "model_type: llm\nbase_model: m\ntrainer:\n  learning_rate: 2e-5  # peak\n"
    path.write_text(text)
    [finding] = check(path)
    assert finding["code"] == "SCH003" and finding["severity"] == "warning"
    assert "YAML 1.1 reads `2e-5` as the string '2e-5'" in finding["message"] and "2.0e-5" in finding["message"]
    assert (finding["line"], finding["column"]) == (4, 18)
    assert trainlint("check", path, "--select", "SCH", "--fix", "--no-detect").code == 0
    assert path.read_text() == text.replace("2e-5  #", "2.0e-5  #")
    assert check(path) == []


def test_unsigned_exponent_and_a_quoted_number(shipped, tmp_path):
    path = tmp_path / "model.yaml"
    path.write_text("model_type: llm\nbase_model: m\ntrainer:\n  learning_rate: 1.0e5\n")
    [finding] = check(path)
    assert finding["code"] == "SCH003" and "write 1.0e+5" in finding["message"]
    path.write_text("model_type: llm\nbase_model: m\ntrainer:\n  learning_rate: '2e-5'\n")  # quoted: a string
    [finding] = check(path)
    assert finding["code"] == "SCH002"


def test_no_sch003_where_the_framework_converts_numeric_strings(shipped, tmp_path, monkeypatch):
    body = dict(LUDWIG, **{"x-trainlint": {"loader": "pydantic", "numeric-strings": "coerced"}})
    (shipped / "ludwig.schema.json").write_text(json.dumps(body))
    schemas.load.cache_clear()
    path = tmp_path / "model.yaml"
    path.write_text("model_type: llm\nbase_model: m\ntrainer:\n  learning_rate: 2e-5\n")
    assert check(path) == []


def test_llamafactory_reads_exponent_floats_as_omegaconf_does(shipped, tmp_path):
    """LLaMA-Factory >= 0.9.4 loads YAML with OmegaConf, whose float resolver reads `2e-5` and
    `1.0e5` as floats: no SCH003 even where numeric strings are kept; a quoted one stays a string."""
    path = tmp_path / "sft.yaml"
    path.write_text("model_name_or_path: m\nstage: sft\nlearning_rate: 2e-5\noutput_dir: 1_0e5\n")
    [finding] = check(path)
    assert finding["code"] == "SCH002" and finding["line"] == 4  # output_dir: the float 1e6, not a path
    path.write_text("model_name_or_path: m\nstage: sft\nlearning_rate: '2e-5'\n")
    [finding] = check(path)
    assert finding["code"] == "SCH002" and 'got string "2e-5"' in finding["message"]


def test_yaml11_boolean_where_a_string_is_meant(shipped, tmp_path):
    path = tmp_path / "sft.yaml"
    text = "model_name_or_path: m\nstage: sft\nreport_to: NO\n"
    path.write_text(text)
    [finding] = check(path)
    assert finding["code"] == "SCH003" and 'write "NO"' in finding["message"]
    trainlint("check", path, "--select", "SCH", "--fix", "--no-detect")
    assert path.read_text() == text.replace("NO", '"NO"')


def test_unknown_key_in_yaml_is_named_with_a_hint_and_left_alone(shipped, tmp_path):
    path = tmp_path / "sft.yaml"
    text = "model_name_or_path: m\nstage: sft\nlerning_rate: 1.0e-4   # tuned\nbf16: true\n"
    path.write_text(text)
    [finding] = check(path)
    assert finding["code"] == "SCH001" and finding["severity"] == "warning"
    assert "did you mean 'learning_rate'" in finding["message"] and finding["fix"] is None
    trainlint("check", path, "--select", "SCH", "--fix", "--unsafe-fixes", "--no-detect")
    assert path.read_text() == text


def test_keys_of_the_projects_own_argument_classes_are_known(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "train.py").write_text(
        "from dataclasses import dataclass, field\nfrom transformers import HfArgumentParser, TrainingArguments\n"
        "@dataclass\nclass ScriptArguments:\n    dataset_mixer: dict = field(default_factory=dict)\n"
        "    chat_template: str = ''\n\nparser = HfArgumentParser((ScriptArguments, TrainingArguments))\n")
    path = tmp_path / "recipe.yaml"
    path.write_text("model_name_or_path: m\ndataset_name: d\ndataset_mixer: {a: 1.0}\nchat_template: x\n"
                    "bf16: true\nlerning_rate: 1.0e-4\n")
    [finding] = check(path)
    assert "lerning_rate" in finding["message"] and finding["severity"] == "info"
    assert "this repository's own argument classes read this file" in finding["message"]


def test_a_value_typed_by_the_projects_own_argument_class_is_not_checked_against_the_framework_schema(tmp_path):
    """A GRPO recipe read by HfArgumentParser((ModelArguments, DataArguments, GRPOConfig)), where the
    project's ModelArguments declares `lora_r: int | None`: `lora_r:` (null) is a declared value;
    TRL's ModelConfig, whose lora_r is an int, is not among the parser's classes (seventh held-out
    set, blind)."""
    recipe = "model_name_or_path: m\npeft_enabled: false\nlora_r:\nlora_alpha:\nlearning_rate: 1.0e-6\nbf16: true\n"
    alone = tmp_path / "alone"
    alone.mkdir()
    (alone / "grpo.yaml").write_text(recipe)
    assert {finding["message"].split(":")[0] for finding in check(alone / "grpo.yaml") if finding["code"] == "SCH002"} \
        == {"lora_r", "lora_alpha"}  # no project class: TRL's ModelConfig types them
    project = tmp_path / "project"
    project.mkdir()
    path = project / "grpo.yaml"
    path.write_text(recipe)
    (project / ".git").mkdir()
    (project / "run_grpo.py").write_text(
        "from dataclasses import dataclass, field\nfrom transformers import HfArgumentParser\nfrom trl import GRPOConfig\n"
        "@dataclass\nclass ModelArguments:\n    model_name_or_path: str | None = None\n    peft_enabled: bool = False\n"
        "    lora_r: int | None = field(default=16)\n    lora_alpha: int | None = 32\n\n"
        "parser = HfArgumentParser((ModelArguments, GRPOConfig))\n")
    assert [finding for finding in check(path) if finding["code"] == "SCH002"] == []
    result = trainlint("check", path, "--select", "SCH002", "--verbose", "--no-detect")
    assert "lora_r not checked against the trl schema: a field of the repository's own argument classes" in result.err


def test_keys_of_argument_classes_imported_from_another_package_are_not_reported(tmp_path):
    """notus: run_dpo.py reads the recipes with H4ArgumentParser and classes of the installed
    alignment package (no class of the repository): their fields are not known here."""
    recipe = ("model_name_or_path: m\ndataset_mixer: {a: 1.0}\ndataset_splits: [train]\n"
              "preprocessing_num_workers: 12\nbf16: true\nlearning_rate: 1.0e-4\nper_device_train_batch_size: 2\n"
              "gradient_accumulation_steps: 4\nnum_train_epochs: 1\nbeta: 0.1\n")
    for name, imports in (("installed", "from alignment import DataArguments, DPOConfig, H4ArgumentParser, "
                                        "ModelArguments\n"),
                          ("plain", "from trl import DPOConfig, ModelConfig as ModelArguments, ScriptArguments as "
                                    "DataArguments\nfrom transformers import HfArgumentParser as H4ArgumentParser\n")):
        root = tmp_path / name
        (root / ".git").mkdir(parents=True)
        (root / "run_dpo.py").write_text(imports + "parser = H4ArgumentParser((ModelArguments, DataArguments, DPOConfig))\n")
        (root / "recipe.yaml").write_text(recipe)
    assert check(tmp_path / "installed" / "recipe.yaml") == []
    assert {f["message"].split()[2] for f in check(tmp_path / "plain" / "recipe.yaml")} == {
        "dataset_mixer", "dataset_splits", "preprocessing_num_workers"}


def test_rules_have_full_documentation():
    for code in ("SCH001", "SCH002", "SCH003"):
        text = trainlint("rule", code).out
        for heading in ("What it does", "Why is this bad?", "Example", "Fix safety", "References"):
            assert heading in text, (code, heading)


# ---- the shipped schemas ---------------------------------------------------------------------

SHIPPED = sorted(path for path in (ROOT / "schemas").glob("*.schema.json") if path.name != "report.schema.json")


@pytest.mark.parametrize("path", SHIPPED, ids=lambda path: path.name)
def test_shipped_schema_is_valid_and_names_its_source(path):
    import jsonschema

    body = json.loads(path.read_text())
    jsonschema.Draft202012Validator.check_schema(body)
    assert body["x-trainlint"]["numeric-strings"] in ("kept", "coerced")
    assert body["x-trainlint"]["loader"] and body["description"]


def test_validator_agrees_with_jsonschema_on_the_corpus():
    """trainlint's own subset validator and the jsonschema package agree on every corpus file:
    the same files are valid, and the same keys are unknown. (Where a value fails every branch of
    an anyOf, jsonschema reports the anyOf and trainlint the closest branch's error, so other
    error paths are compared file by file, not path by path.)"""
    import jsonschema

    from linter.engine import Options, Session

    if not CORPUS.is_dir():
        pytest.skip(f"the shared corpus is not beside this checkout ({CORPUS})")
    if not SHIPPED:
        pytest.skip("no format schemas shipped yet")
    session = Session(Options(detect=False))
    compared = 0
    for path in sorted(CORPUS.rglob("*")):
        if path.suffix not in (".yaml", ".yml", ".json"):
            continue
        config = session.load(path, True).config
        schema = schemas.load(config.schema) if config else None
        if schema is None or schema.coerces_numeric_strings:
            continue  # trainlint coerces numeric strings before validating; jsonschema cannot
        tree = config.key_tree
        ours = schema.validate(tree.value)
        theirs = list(jsonschema.Draft202012Validator(schema.root).iter_errors(tree.value))
        assert bool(ours) == bool(theirs), (path, [e.message for e in ours], [e.message for e in theirs])
        unknown_ours = {error.path for error in ours if error.kind == "unknown-key"}
        unknown_theirs = {tuple(error.absolute_path) + (key,) for error in theirs
                          if error.validator == "additionalProperties" for key in _extra_keys(error)}
        assert unknown_ours == unknown_theirs, path
        compared += 1
    assert compared > 50


def _extra_keys(error) -> list:
    import re

    properties = error.schema.get("properties", {})
    patterns = error.schema.get("patternProperties", {})
    return [key for key in error.instance if key not in properties
            and not any(re.search(pattern, key) for pattern in patterns)]


def test_corpus_schema_findings_are_the_reviewed_ones():
    """`trainlint check ../shared/corpus --gpu H100 --select SCH`: every finding is one reviewed in
    tests/corpus_schema_verdicts.tsv (file, code, message, verdict): a real mistake in the upstream
    file. A new finding is either a schema bug or a new verdict to record."""
    if not CORPUS.is_dir():
        pytest.skip(f"the shared corpus is not beside this checkout ({CORPUS})")
    result = trainlint("check", CORPUS, "--gpu", "H100", "--select", "SCH", "--format", "json")
    found = sorted((str(Path(f["file"]).resolve().relative_to(CORPUS.resolve())), f["code"], f["message"])
                   for f in json.loads(result.out))
    rows = [line.split("\t") for line in VERDICTS.read_text("utf-8").splitlines()[1:] if line]
    assert all(len(row) == 4 and row[3].startswith("real:") for row in rows)
    assert found == sorted((file, code, message) for file, code, message, _ in rows)


VERDICTS = Path(__file__).parent / "corpus_schema_verdicts.tsv"


def test_no_quoting_fix_where_the_quoted_word_is_invalid_too(shipped, tmp_path):
    body = dict(LLAMAFACTORY)
    body["properties"] = dict(LLAMAFACTORY["properties"], report_to={"enum": ["none", "wandb"]})
    (shipped / "llamafactory.schema.json").write_text(json.dumps(body))
    schemas.load.cache_clear()
    path = tmp_path / "sft.yaml"
    path.write_text("model_name_or_path: m\nstage: sft\nreport_to: NO\n")
    [finding] = check(path)
    assert finding["code"] == "SCH003" and finding["fix"] is None
    assert '"NO" is not accepted there either' in finding["message"]


def test_shipped_llamafactory_schema_knows_its_keys_and_reads_floats_like_omegaconf(tmp_path):
    """LLaMA-Factory >= 0.9.4 loads YAML with OmegaConf, whose resolver reads `1e-4` as a float:
    no SCH003 there; a misspelt key is SCH001 naming the real one."""
    path = tmp_path / "llama3_lora_sft.yaml"
    text = ("model_name_or_path: meta-llama/Meta-Llama-3-8B-Instruct\nstage: sft\ndo_train: true\n"
            "finetuning_type: lora\nlora_rnak: 8\nlora_target: all\ndataset: identity\ntemplate: llama3\n"
            "output_dir: saves/x\nper_device_train_batch_size: 1\nlearning_rate: 1e-4\nbf16: true\n")
    path.write_text(text)
    [finding] = check(path)
    assert (finding["code"], finding["line"]) == ("SCH001", 5) and "'lora_rank'" in finding["message"]
    path.write_text(text.replace("lora_rnak", "lora_rank"))
    assert check(path) == []


# ---- schemas/ludwig-llm.schema.json: the llm branch of the Ludwig schema, cut for speed ----------

def _ludwig_llm_subset(full: dict) -> dict:
    """The full schema's root with only its `model_type: llm` branch and the $defs that branch
    reaches: what `model_type: llm` files are validated against (the same checks; a fifth of the
    JSON to parse on every lint)."""
    def refs(node, found):
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "$ref" and isinstance(value, str) and value.startswith("#/$defs/"):
                    found.add(value[len("#/$defs/"):])
                else:
                    refs(value, found)
        elif isinstance(node, list):
            for value in node:
                refs(value, found)

    seen, todo = set(), ["llm_config"]
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            found = set()
            refs(full["$defs"][name], found)
            todo.extend(sorted(found - seen))
    (branch,) = [part for part in full["allOf"] if part.get("then") == {"$ref": "#/$defs/llm_config"}]
    options = dict(full["x-trainlint"], name="ludwig",
                   subset="the model_type: llm branch of ludwig.schema.json and the $defs it reaches "
                          "(generated by tests/test_schema_rules.py; TRAINLINT_UPDATE_SCHEMAS=1 rewrites it)")
    root = {key: value for key, value in full.items() if key not in ("allOf", "$defs", "x-trainlint")}
    root.update({"$id": "https://trainlint.dev/schemas/ludwig-llm.schema.json", "title": "Ludwig model config (LLM)",
                 "x-trainlint": options, "allOf": [{key: branch[key] for key in ("if", "then")}],
                 "$defs": {name: full["$defs"][name] for name in sorted(seen)}})
    return root


def test_ludwig_llm_schema_is_the_llm_branch_of_the_full_one():
    import os

    directory = Path(__file__).resolve().parents[1] / "schemas"
    expected = json.dumps(_ludwig_llm_subset(json.loads((directory / "ludwig.schema.json").read_text("utf-8"))),
                          separators=(",", ":"), ensure_ascii=False) + "\n"
    shipped = directory / "ludwig-llm.schema.json"
    if os.environ.get("TRAINLINT_UPDATE_SCHEMAS"):
        shipped.write_text(expected, "utf-8")
    assert shipped.read_text("utf-8") == expected, "regenerate with TRAINLINT_UPDATE_SCHEMAS=1"


def test_ludwig_llm_files_validate_against_the_cut_schema_with_the_same_findings(tmp_path):
    config = tmp_path / "llm.yaml"
    config.write_text("model_type: llm\nbase_model: meta-llama/Llama-2-7b-hf\ninput_features:\n  - name: p\n"
                      "    type: text\noutput_features:\n  - name: r\n    type: text\ntrainer:\n  type: finetune\n"
                      "  epochs: three\n  batch_sizee: 2\n")
    result = trainlint("check", config, "--no-detect", "--select", "SCH", "--format", "json")
    found = sorted((f["code"], f["line"], f["message"]) for f in json.loads(result.out))
    assert [code for code, _, _ in found] == ["SCH001", "SCH002"]
    assert all("(ludwig schema)" in message or "ludwig" in message for _, _, message in found)


def test_removed_axolotl_keys_and_values_are_reported_only_at_or_after_the_removing_release(tmp_path, monkeypatch):
    """Keys and values a released Axolotl read (x-trainlint removed-keys / removed-values, from
    its history): a pin before the removal reads them, no pin is unknown, a later pin does not."""
    from linter import versions

    monkeypatch.setattr(versions, "installed", lambda package: None)  # versions come from the pins written here
    text = ("base_model: m\nmicro_batch_size: 2\neval_table_max_new_tokens: 64\nunsloth_lora_mlp: true\n"
            "datasets:\n  - path: d.jsonl\n    type: sharegpt.load_role\n")

    def project(name: str, pin: str | None):
        folder = tmp_path / name
        folder.mkdir()
        if pin:
            (folder / "requirements.txt").write_text(pin + "\n")
        (folder / "axolotl.yaml").write_text(text)
        return folder / "axolotl.yaml"

    assert check(project("unpinned", None)) == []
    assert check(project("old", "axolotl==0.4.0")) == []  # all three read by 0.4.0
    middle = {(f["code"], f["line"]): f for f in check(project("middle", "axolotl==0.12.0"))}
    assert set(middle) == {("SCH001", 3), ("SCH002", 7)}  # the unsloth_* fields are read until 0.17.0
    assert "removed in axolotl 0.5.0; use eval_max_new_tokens" in middle["SCH001", 3]["message"]
    assert middle["SCH001", 3]["severity"] == "warning"  # dropped by model_dump, not refused
    assert "'sharegpt.load_role' was removed in axolotl 0.5.0" in middle["SCH002", 7]["message"]
    new = {(f["code"], f["line"]): f for f in check(project("new", "axolotl==0.17.0"))}
    assert new["SCH001", 4]["severity"] == "error"  # check_deprecated_unsloth_fields raises for true


def test_axolotl_keys_read_before_pydantic_validation_are_judged_by_the_pin(tmp_path, monkeypatch):
    """`debug` (and three more) were read by v0.4.0 from the raw YAML; v0.5.0's pydantic
    validation drops keys no field declares: silent unpinned, reported from 0.5.0 on."""
    from linter import versions

    monkeypatch.setattr(versions, "installed", lambda package: None)
    text = "base_model: m\nmicro_batch_size: 2\ndebug: true\ndatasets:\n  - path: d.jsonl\n    type: alpaca\n"
    found = {}
    for name, pin in (("unpinned", None), ("old", "axolotl==0.4.0"), ("new", "axolotl==0.5.0")):
        folder = tmp_path / name
        folder.mkdir()
        if pin:
            (folder / "requirements.txt").write_text(pin + "\n")
        (folder / "axolotl.yaml").write_text(text)
        found[name] = [f for f in check(folder / "axolotl.yaml") if f["code"] == "SCH001"]
    assert found["unpinned"] == [] and found["old"] == []
    assert [f["line"] for f in found["new"]] == [3]
    assert "removed in axolotl 0.5.0; use the --debug command-line flag" in found["new"][0]["message"]


def test_accelerate_fsdp_backward_prefetch_policy_is_judged_by_the_pin_of_its_install_script(tmp_path, monkeypatch):
    """fsdp_config.fsdp_backward_prefetch_policy: the key until v0.25.0, a deprecated alias from
    v0.26.0, ignored from v1.0.0 (x-trainlint removed-keys, a nested path). The pin may sit in
    an install script (`pip install accelerate==0.33.0`)."""
    from linter import versions

    monkeypatch.setattr(versions, "installed", lambda package: None)
    text = ("compute_environment: LOCAL_MACHINE\ndistributed_type: FSDP\nfsdp_config:\n"
            "  fsdp_backward_prefetch_policy: BACKWARD_PRE\n  fsdp_sharding_strategy: 1\nnum_processes: 2\n")
    found = {}
    for name, pin in (("unpinned", None), ("old", "pip install accelerate==0.33.0"),
                      ("new", "pip install accelerate==1.0.1")):
        folder = tmp_path / name
        (folder / "accelerate_config").mkdir(parents=True)
        if pin:
            (folder / "install.sh").write_text("#!/bin/bash\npip install transformers==4.51.3\n" + pin + "\n")
        (folder / "accelerate_config" / "fsdp.yaml").write_text(text)
        found[name] = [f for f in check(folder / "accelerate_config" / "fsdp.yaml") if f["code"] == "SCH001"]
    assert found["unpinned"] == [] and found["old"] == []
    assert [(f["line"], f["severity"]) for f in found["new"]] == [(4, "warning")]
    assert found["new"][0]["message"].startswith(
        "fsdp_config.fsdp_backward_prefetch_policy was removed in accelerate 1.0.0; use "
        "fsdp_config.fsdp_backward_prefetch; accelerate 1.0.1 (")
    assert found["new"][0]["message"].endswith("install.sh) ignores it")


def test_accelerate_takes_null_counts_that_the_launch_command_fills(tmp_path):
    path = tmp_path / "accelerate_config.yaml"
    path.write_text("compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\nmachine_rank: null\n"
                    "num_machines: null\nnum_processes: null\nmixed_precision: bf16\n")
    assert check(path) == []
    path.write_text("compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\nnum_machines: two\n")
    assert [f["code"] for f in check(path)] == ["SCH002"]


def test_llamafactory_evaluation_strategy_is_judged_by_the_transformers_that_reads_it(tmp_path, monkeypatch):
    """LLaMA-Factory hands TrainingArguments keys to transformers: `evaluation_strategy` was read
    until transformers 4.51.0 (a field through the 4.50.3 wheel, although its warning promised
    removal in 4.46), so an unpinned file is not told it is unknown (second held-out set:
    OpenBMB/MiniCPM's LLaMA-Factory examples)."""
    from linter import versions

    monkeypatch.setattr(versions, "installed", lambda package: None)
    text = ("model_name_or_path: Qwen/Qwen2.5-0.5B\nstage: sft\ndo_train: true\nfinetuning_type: lora\n"
            "dataset: alpaca_en_demo\ntemplate: qwen\noutput_dir: out\nevaluation_strategy: steps\n")

    def project(name: str, pin: str | None):
        folder = tmp_path / name
        folder.mkdir()
        if pin:
            (folder / "requirements.txt").write_text(pin + "\n")
        (folder / "train.yaml").write_text(text)
        return folder / "train.yaml"

    assert check(project("unpinned", None)) == []
    assert check(project("old", "transformers==4.45.2")) == []
    assert check(project("deprecated", "transformers==4.50.3")) == []  # still a field: accepted
    [finding] = check(project("new", "transformers==4.51.0"))
    assert "evaluation_strategy was renamed eval_strategy in transformers 4.41.0 and removed in 4.51.0" in finding["message"]


def test_trl_keys_removed_in_0_18_are_judged_by_the_pin(tmp_path, monkeypatch):
    """TRL's PR #3364 (a8cfca6d0, 'Remove deprecated', v0.18.0) dropped SFTConfig's use_liger (and
    three packing keys) and GRPOConfig's colocated-vLLM keys (vllm_device, ...), fields of every
    release before: an unpinned or older-pinned recipe is not told they are unknown (fifth held-out
    set: a project pinning trl 0.16.0 writes use_liger); from 0.18.0 they are reported as removed."""
    from linter import versions

    monkeypatch.setattr(versions, "installed", lambda package: None)
    text = ("model_name_or_path: Qwen/Qwen2.5-0.5B\ndataset_name: trl-lib/Capybara\nlearning_rate: 2.0e-5\n"
            "use_liger: true\nvllm_device: auto\nper_device_train_batch_size: 2\nnum_generations: 8\n"
            "output_dir: out\n")

    def project(name: str, pin: str | None):
        folder = tmp_path / name
        folder.mkdir()
        if pin:
            (folder / "requirements.txt").write_text(pin + "\n")
        (folder / "config.yaml").write_text(text)
        return folder / "config.yaml"

    def unknown(path):
        return {f["line"]: f["message"] for f in check(path) if f["code"] == "SCH001"}

    assert unknown(project("unpinned", None)) == {}
    assert unknown(project("old", "trl==0.16.0")) == {}
    new = unknown(project("new", "trl==0.18.0"))
    assert set(new) == {4, 5}
    assert new[4].startswith("use_liger was removed in trl 0.18.0; use use_liger_kernel; trl 0.18.0 (")
    assert new[5].startswith("vllm_device was removed in trl 0.18.0")


def test_axolotl_values_refused_from_a_release_are_judged_by_the_pin(tmp_path, monkeypatch):
    """`flash_attn_rms_norm: true` and `s2_attention: true` were read by every Axolotl through
    v0.16.x; PR #3664 (v0.17.0) made a validator raise for a truthy value. An unpinned file of
    2024 is not told it is invalid (fifth held-out set); a pin of 0.17.0 or newer is."""
    from linter import versions

    monkeypatch.setattr(versions, "installed", lambda package: None)
    text = ("base_model: m\nmicro_batch_size: 2\nflash_attention: true\nflash_attn_rms_norm: true\n"
            "datasets:\n  - path: d.jsonl\n    type: alpaca\n")
    found = {}
    for name, pin in (("unpinned", None), ("old", "axolotl==0.16.1"), ("new", "axolotl==0.17.0")):
        folder = tmp_path / name
        folder.mkdir()
        if pin:
            (folder / "requirements.txt").write_text(pin + "\n")
        (folder / "axolotl.yaml").write_text(text)
        found[name] = [f for f in check(folder / "axolotl.yaml") if f["code"] == "SCH002"]
    assert found["unpinned"] == [] and found["old"] == []
    [refused] = found["new"]
    assert refused["line"] == 4 and "True was removed in axolotl 0.17.0" in refused["message"]


def test_axolotl_fractional_logging_steps_is_refused_from_the_typed_schema_on(tmp_path, monkeypatch):
    """`logging_steps: 0.2` went to TrainingArguments (a ratio of the total steps) through v0.4.0;
    v0.5.0's pydantic config (PR #1239) types it int and refuses the fraction. An unpinned homework
    of January 2024 (tenth held-out set) is not told it is invalid; a pin of 0.5.0 or newer is."""
    from linter import versions

    monkeypatch.setattr(versions, "installed", lambda package: None)
    text = ("base_model: m\nmicro_batch_size: 2\nlogging_steps: 0.2\n"
            "datasets:\n  - path: d.jsonl\n    type: alpaca\n")
    found = {}
    for name, pin in (("unpinned", None), ("old", "axolotl==0.4.0"), ("new", "axolotl==0.5.0"), ("whole", None)):
        folder = tmp_path / name
        folder.mkdir()
        if pin:
            (folder / "requirements.txt").write_text(pin + "\n")
        (folder / "axolotl.yaml").write_text(text.replace("0.2", "10") if name == "whole" else text)
        found[name] = [f for f in check(folder / "axolotl.yaml") if f["code"] == "SCH002"]
    assert found["unpinned"] == [] and found["old"] == [] and found["whole"] == []
    [refused] = found["new"]
    assert refused["line"] == 3 and "0.2 was removed in axolotl 0.5.0; use an integer number of steps" in refused["message"]


def test_accelerate_unquoted_no_is_a_misread_only_where_num_processes_is_not_written(tmp_path):
    """An unquoted `distributed_type: NO` loads as False, which ClusterConfig does not convert;
    accelerate launch only compares the value with the multi-process types, so False runs the
    single-process launcher, as NO does. Only process_config's num_processes default (1, set by
    comparing with the string) misses it: SCH003 stands where num_processes is not written."""
    head = "compute_environment: LOCAL_MACHINE\ndistributed_type: NO\nmixed_precision: bf16\n"
    written = tmp_path / "written" / "default_config.yaml"
    missing = tmp_path / "missing" / "default_config.yaml"
    for path, tail in ((written, "num_machines: 1\nnum_processes: 1\n"), (missing, "num_machines: 1\n")):
        path.parent.mkdir()
        path.write_text(head + tail)
    assert check(written) == []
    assert [(f["code"], f["line"]) for f in check(missing)] == [("SCH003", 2)]


def test_no_unknown_key_where_the_parser_call_ignores_extra_keys(tmp_path):
    """A Hydra-composed recipe read by `HfArgumentParser(...).parse_dict(cfg, allow_extra_keys=True)`
    (fifth held-out set): keys no dataclass field takes (Hydra's `defaults`, a variable its root
    config interpolates) are ignored by design, read by other code: not reported (noted)."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    script = ("from dataclasses import dataclass\nfrom transformers import HfArgumentParser\n"
              "from trl import GRPOConfig\n\n\n@dataclass\nclass ScriptArguments:\n    dataset_mixer: dict = None\n\n\n"
              "def main(cfg):\n    parser = HfArgumentParser((ScriptArguments, GRPOConfig))\n"
              "    return parser.parse_dict(cfg{extra})\n")
    recipe = ("defaults:\n  - _self_\nexp_name: grpo_run\nmodel_name_or_path: Qwen/Qwen2.5-0.5B\n"
              "dataset_mixer:\n  d: 1.0\nbf16: true\nlearning_rate: 1.0e-6\nlr_scheduler_type: cosine\n"
              "per_device_train_batch_size: 2\ngradient_accumulation_steps: 4\nnum_generations: 4\n"
              "max_prompt_length: 256\nmax_completion_length: 512\nnum_train_epochs: 1\noutput_dir: out\n")
    (root / "src").mkdir()
    (root / "recipes").mkdir()
    (root / "recipes" / "grpo.yaml").write_text(recipe)
    from linter import project_args

    found = {}
    for name, extra in (("lenient", ", allow_extra_keys=True"), ("strict", "")):
        (root / "src" / "grpo.py").write_text(script.replace("{extra}", extra))
        project_args._scan.cache_clear()
        found[name] = sorted(f["message"].split(" for ")[0] for f in check(root / "recipes" / "grpo.yaml")
                             if f["code"] == "SCH001")
    assert found["lenient"] == []
    assert found["strict"] == ["unknown key defaults", "unknown key exp_name"]
    # a recipe naming none of the project's fields is read by the same lenient parser calls
    (root / "recipes" / "plain.yaml").write_text(recipe.replace("dataset_mixer:\n  d: 1.0\n", ""))
    (root / "src" / "grpo.py").write_text(script.replace("{extra}", ", allow_extra_keys=True"))
    project_args._scan.cache_clear()
    assert [f for f in check(root / "recipes" / "plain.yaml") if f["code"] == "SCH001"] == []


@pytest.mark.parametrize("pin", ["deepspeed==0.6.1", "deepspeed==0.16.5", None])
def test_a_zero_key_written_at_the_top_level_is_reported_for_every_deepspeed_release(tmp_path, pin):
    """deepspeedai/DeepSpeed#1935: offload_optimizer beside zero_optimization is dropped without a
    word by every release (no release reads a ZeRO field at the top level), so a pin older than
    the schema's 0.16.5 does not silence it; inside the block it is no finding."""
    folder = tmp_path / "run"
    folder.mkdir()
    if pin:
        (folder / "requirements.txt").write_text(pin + "\n")
    misplaced = {"zero_optimization": {"stage": 2}, "offload_optimizer": {"device": "cpu"}}
    (folder / "ds.json").write_text(json.dumps(misplaced, indent=1))
    result = trainlint("check", str(folder), "--select", "SCH001", "--gpu", "A100")
    assert "ds.json:5:2: SCH001 offload_optimizer is a key of zero_optimization, written at the top level" \
        in result.out, result.out
    assert "ignores it here, in every release; move it into zero_optimization" in result.out
    placed = {"zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}}}
    (folder / "ds.json").write_text(json.dumps(placed, indent=1))
    assert "SCH001" not in trainlint("check", str(folder), "--select", "SCH001", "--gpu", "A100").out


def test_an_unknown_key_of_one_block_names_that_block_as_a_hint(shipped):
    schema = schemas.load("deepspeed")
    assert schema.block_of("overlap_comm") == "zero_optimization"
    assert schema.block_of("enabled") == "bf16"
    assert schema.block_of("train_micro_batch_size_per_gpu") is None  # a top-level key itself
