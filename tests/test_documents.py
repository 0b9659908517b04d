"""Sources, YAML and JSON documents: positions, PyYAML's meanings, edits that splice."""

from __future__ import annotations

from pathlib import Path

import pytest

from linter.adapters import set_path
from linter.document import ParseError
from linter.fixes import apply_edits
from linter.json_reader import parse_json
from linter.source import Source, SourceError
from linter.yaml_reader import parse_yaml, resolve_plain


def yaml(text: str):
    return parse_yaml(Source(Path("t.yaml"), text))


def json_doc(text: str):
    return parse_json(Source(Path("t.json"), text))


@pytest.mark.parametrize("text, value", [
    ("2e-5", "2e-5"), ("2.0e-5", 2.0e-5), ("NO", False), ("on", True), ("~", None), ("0755", 0o755),
    ("1_000", 1000), ("0x1F", 31), (".inf", float("inf")), ("auto", "auto"), ("1:30", 90), ("5", 5),
])
def test_plain_scalars_resolve_like_pyyaml(text, value):
    assert resolve_plain(text) == value


def test_quoted_and_tagged_scalars():
    document = yaml("a: '5'\nb: !!float 1\nd: &x 3\ne: *x\n")
    assert document.find("a").value == "5"
    assert document.find("b").value == 1.0
    assert document.find("d").value == 3 and document.find("d").decorated
    assert document.find("e").value == 3 and document.find("e").decorated


@pytest.mark.parametrize("text", ["c: !!python/object:os.system x\n", "c: !custom {x: 1}\n", "c: !!str [1]\n"])
def test_a_tag_safe_load_cannot_construct_is_a_parse_error_and_constructs_nothing(text):
    """yaml.safe_load raises ConstructorError on any tag SafeConstructor lacks (issue 19, fault 10)."""
    with pytest.raises(ParseError, match="no constructor for the tag"):
        yaml(text)


def test_yaml_error_has_position():
    with pytest.raises(ParseError) as error:
        yaml("a: [1\nb: 2\n")
    assert error.value.offset > 0


def test_json_positions_and_values():
    document = json_doc('{\n\t"a": {"b": [1, 2.5, NaN]},\n\t"c": "x\\u00e9"\n}')
    assert document.find("a", "b").plain()[:2] == [1, 2.5]
    assert document.find("c").value == "xé"
    node = document.find("c")
    assert document.source.position(node.start).line == 3


@pytest.mark.parametrize("text, message", [
    ('{"a": 1,}', "property name"), ('{"a" 1}', "':'"), ('[1 2]', "','"), ('{"a": x}', "value"),
    ('{"a": 1} 2', "extra data"), ('', "end of the file"), ('{"a": "\x01"}', "Invalid control"),
])
def test_json_errors(text, message):
    with pytest.raises(ParseError) as error:
        json_doc(text)
    assert message in error.value.message


def test_json_deep_nesting_is_an_error_not_a_crash():
    with pytest.raises(ParseError):
        json_doc("[" * 10000 + "]" * 10000)


def test_bom_is_kept_and_positions_ignore_it():
    source = Source.from_bytes(Path("x.yaml"), b"\xef\xbb\xbfa: 1\n")
    assert source.bom and source.text == "a: 1\n"
    assert source.encode("a: 2\n") == b"\xef\xbb\xbfa: 2\n"


def test_invalid_utf8_reports_line_and_column():
    with pytest.raises(SourceError) as error:
        Source.from_bytes(Path("x.yaml"), b"a: 1\nb: \xff\n")
    assert (error.value.line, error.value.column) == (2, 4)


def test_insert_into_mapping_inside_sequence_aligns_with_first_key():
    document = yaml("items:\n  - name: a\n    bits: 4\nnext: 1\n")
    mapping = document.find("items").items[0]
    edit = document.insert_pair(mapping, "extra", True)
    assert apply_edits(document.source.text, [edit]) == "items:\n  - name: a\n    bits: 4\n    extra: true\nnext: 1\n"


def test_insert_after_nested_block_goes_after_its_last_line():
    document = yaml("q:\n  a:\n    b: 1\n  # trailing\n\nz: 2\n")
    edit = set_path(document, ("q", "c"), "x")
    assert apply_edits(document.source.text, [edit]) == "q:\n  a:\n    b: 1\n  c: x\n  # trailing\n\nz: 2\n"


def test_insert_missing_parent_into_json_creates_block():
    document = json_doc('{\n    "a": 1\n}\n')
    edit = set_path(document, ("zero_optimization", "stage"), 1)
    assert apply_edits(document.source.text, [edit]) == '{\n    "a": 1,\n    "zero_optimization": {\n        "stage": 1\n    }\n}\n'


def test_string_values_that_would_misread_are_quoted():
    document = yaml("a: x\n")
    assert document.render_scalar("yes") == '"yes"'
    assert document.render_scalar("2e-5") == "2e-5"
    assert document.render_scalar("1.0") == '"1.0"'
    assert document.render_scalar("bfloat16") == "bfloat16"


def test_insert_missing_parent_into_block_yaml_creates_nested_block():
    document = yaml("base_model: m\nload_in_4bit: true\n")
    edit = set_path(document, ("bnb_config_kwargs", "bnb_4bit_quant_storage"), "bfloat16")
    assert apply_edits(document.source.text, [edit]) == (
        "base_model: m\nload_in_4bit: true\nbnb_config_kwargs:\n  bnb_4bit_quant_storage: bfloat16\n")


def test_value_for_a_key_written_empty_gets_a_space():
    document = yaml("fp16:\nbf16: true\n")
    edit = set_path(document, ("fp16",), False)
    assert apply_edits(document.source.text, [edit]) == "fp16: false\nbf16: true\n"


@pytest.mark.parametrize("header, expected_header", [("|", "|-"), ("|+", "|-"), (">2", ">2-"), ("|-", "|-")])
def test_insert_after_a_block_scalar_ending_the_file_keeps_its_value(header, expected_header):
    """Without a final newline the scalar has no trailing "\\n"; a line after it would add one under
    clip or keep chomping (a real Axolotl chat_template_jinja changed this way; issue 19, fault 4)."""
    import yaml as pyyaml

    text = f"base_model: m\nchat_template_jinja: {header}\n  {{{{ bos }}}}\n  {{{{ eos }}}}"
    document = yaml(text)
    fixed = apply_edits(text, [set_path(document, ("bf16",), True)])
    assert fixed == f"base_model: m\nchat_template_jinja: {expected_header}\n  {{{{ bos }}}}\n  {{{{ eos }}}}\nbf16: true"
    before, after = pyyaml.safe_load(text), pyyaml.safe_load(fixed)
    assert after.pop("bf16") is True and after == before


@pytest.mark.parametrize("value", ["0b_", "0x_", "=", "2001-01-01", "9" * 5000])
def test_strings_plain_yaml_would_misread_or_refuse_are_quoted(value):
    """A string whose plain spelling safe_load would read as another type, or refuse to load
    (`0b_` raises in int()), is written quoted; rendering never raises."""
    document = yaml("a: x\n")
    rendered = document.render_scalar(value)
    assert rendered.startswith('"') and yaml(f"a: {rendered}\n").find("a").value == value
