"""The ast-only Python reader: character spans, literals, constants, edits, syntax errors."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from linter.document import ParseError, RenderError
from linter.fixes import apply_edits
from linter.python_index import imported_name
from linter.python_reader import AUTO, UNKNOWN, parse_python
from linter.source import Source


def parse(text: str):
    return parse_python(Source(Path("config.py"), text))


def value_of(document, name: str, argument: str):
    call = document.constants[name]
    return next(item.value for item in call.keywords if item.arg == argument)


def edited(document, edits) -> str:
    return apply_edits(document.source.text, edits if isinstance(edits, list) else [edits])


# ---- positions ---------------------------------------------------------------------------------


def test_non_ascii_earlier_on_the_line_does_not_shift_spans():
    text = "import torch\nx = dict(path='résumé/模型', dtype=torch.float16)  # « é »\n"
    document = parse(text)
    node = value_of(document, "x", "dtype")
    start, end = document.span(node)
    assert text[start:end] == "torch.float16"
    assert edited(document, document.replace(node, "bfloat16")) == text.replace("torch.float16", "torch.bfloat16")


def test_astral_characters_count_as_one_character():
    text = "x = dict(tag='🦥🦥', fp16=True)\n"
    document = parse(text)
    start, end = document.span(value_of(document, "x", "fp16"))
    assert text[start:end] == "True"


def test_lone_carriage_return_is_a_python_line_break():
    # Python's tokenizer ends a line at a lone \r; the Source's own line table does not.
    text = "a = 1\rx = dict(fp16=True)\r\ny = 'é'\n"
    document = parse(text)
    start, end = document.span(value_of(document, "x", "fp16"))
    assert text[start:end] == "True"


def test_multiline_values_span_their_lines():
    text = "x = dict(t=[\n  'q_proj',\n  'v_proj'])\n"
    document = parse(text)
    start, end = document.span(value_of(document, "x", "t"))
    assert text[start:end] == "[\n  'q_proj',\n  'v_proj']"


# ---- literals ----------------------------------------------------------------------------------


def test_literal_values():
    document = parse(
        "import torch\n"
        "x = dict(a=torch.bfloat16, b=torch.half, c=torch.float, d=-1, e=(0.9, 0.999), f='fp16', g=None,\n"
        "         h=not is_bfloat16_supported(), i=is_bfloat16_supported(), j=f(), k=torch.float16 if c else None,\n"
        "         l=torch.cuda.is_bf16_supported(), m=[1, g()], n=+2.5, o=-True)\n")
    values = {item.arg: document.literal(item.value) for item in document.constants["x"].keywords}
    assert values == {"a": "bfloat16", "b": "float16", "c": "float32", "d": -1, "e": [0.9, 0.999], "f": "fp16",
                      "g": None, "h": AUTO, "i": AUTO, "j": UNKNOWN, "k": UNKNOWN, "l": AUTO, "m": UNKNOWN,
                      "n": 2.5, "o": UNKNOWN}


def test_constants_assigned_once_resolve_through_names():
    document = parse("lr = 2e-4\nrate = lr\nx = dict(lr=rate)\n")
    assert document.literal(value_of(document, "x", "lr")) == 2e-4


@pytest.mark.parametrize("change", [
    "lr = 1e-3",  # assigned twice
    "lr += 1",
    "if flag:\n    lr = 1e-3",
    "for lr in range(3):\n    pass",
    "with open('f') as lr:\n    pass",
    "import lr",
    "from m import lr",
    "def set_lr():\n    global lr\n    lr = 1",
    "exec('lr = 1')",
    "globals()['lr'] = 1",
    "from m import *",  # a star import after the assignment may rebind it
    "try:\n    pass\nexcept E as lr:\n    pass",
    "(lr := 3)",
])
def test_a_name_that_may_change_is_unknown(change):
    document = parse(f"lr = 2e-4\n{change}\nx = dict(lr=lr)\n")
    assert "lr" not in document.constants
    assert document.literal(ast.Name("lr", ast.Load())) is UNKNOWN


@pytest.mark.parametrize("change", ["model['lr'] = 1", "model.update(lr=1)", "model.lr = 1", "del model['lr']",
                                    "def f():\n    model['lr'] = 1"])
def test_a_mutated_dict_is_not_a_constant(change):
    document = parse(f"model = dict(lr=2e-4)\n{change}\n")
    assert "model" not in document.constants


def test_a_star_import_before_the_assignment_does_not_matter_and_locals_are_not_module_bindings():
    document = parse("from m import *\nlr = 2e-4\ndef f(lr=0):\n    lr = 3\n    return lr\nx = dict(lr=lr)\n")
    assert document.literal(value_of(document, "x", "lr")) == 2e-4
    assert document.star_import


def test_absurd_nesting_is_unknown_not_a_crash():
    document = parse("x = dict(a=" + "-" * 500 + "1, b=" + "[" * 150 + "]" * 150 + ")\n")
    assert document.literal(value_of(document, "x", "a")) is UNKNOWN
    assert document.literal(value_of(document, "x", "b")) is UNKNOWN


# ---- edits -------------------------------------------------------------------------------------


@pytest.mark.parametrize("original, value, expected", [
    ("torch.float16", "bfloat16", "torch.bfloat16"),
    ("torch.half", "bfloat16", "torch.bfloat16"),
    ("'float16'", "bfloat16", "'bfloat16'"),
    ('"float16"', "bfloat16", '"bfloat16"'),
    ("'fp16'", "bfloat16", "'bf16'"),
    ("r'float16'", "bfloat16", "r'bfloat16'"),
    ("True", False, "False"),
    ("0", 1.0, "1.0"),
    ("'flash_attention_2'", "sdpa", "'sdpa'"),
])
def test_replace_keeps_the_spelling_family(original, value, expected):
    document = parse(f"import torch\nx = dict(v={original})\n")
    assert document.replace(value_of(document, "x", "v"), value).content == expected


def test_replace_through_a_name_edits_the_constant():
    text = "amp_dtype = 'float16'\noptim_wrapper = dict(dtype=amp_dtype)\n"
    document = parse(text)
    result = edited(document, document.replace(value_of(document, "optim_wrapper", "dtype"), "bfloat16"))
    assert result == "amp_dtype = 'bfloat16'\noptim_wrapper = dict(dtype=amp_dtype)\n"


def test_a_constant_other_code_reads_is_not_edited():
    document = parse("size = 4\nloader = dict(batch_size=size)\nother = dict(workers=size)\n")
    with pytest.raises(RenderError, match="other code also reads"):
        document.replace(value_of(document, "loader", "batch_size"), 1)


def test_a_dtype_constant_shared_only_by_dtype_keywords_is_edited():
    text = ("import torch\nhalf = torch.float16\n"
            "llm = dict(torch_dtype=half, quantization_config=dict(bnb_4bit_compute_dtype=half))\n")
    document = parse(text)
    result = edited(document, document.replace(value_of(document, "llm", "torch_dtype"), "bfloat16"))
    assert result == text.replace("half = torch.float16", "half = torch.bfloat16")


def test_insert_keyword_inline():
    text = "args = SFTConfig(output_dir='o', fp16=False)\n"
    document = parse(text)
    edits = document.insert_keyword(document.constants["args"], "bf16", True, after="fp16")
    assert edited(document, edits) == "args = SFTConfig(output_dir='o', fp16=False, bf16=True)\n"


def test_insert_keyword_on_its_own_line_after_a_trailing_comma():
    text = "args = SFTConfig(\n    fp16=False,  # é\n    output_dir='o',\n)\n"
    document = parse(text)
    edits = document.insert_keyword(document.constants["args"], "bf16", True, after="fp16")
    assert edited(document, edits) == "args = SFTConfig(\n    fp16=False,  # é\n    bf16=True,\n    output_dir='o',\n)\n"


def test_insert_keyword_after_a_last_argument_without_comma_keeps_its_comment_and_crlf():
    text = "args = SFTConfig(\r\n    output_dir = 'o',\r\n    fp16 = False  # note\r\n)\r\n"
    document = parse(text)
    edits = document.insert_keyword(document.constants["args"], "bf16", True)
    assert edited(document, edits) == (
        "args = SFTConfig(\r\n    output_dir = 'o',\r\n    fp16 = False,  # note\r\n    bf16 = True\r\n)\r\n")


def test_insert_keyword_refuses_a_call_with_unpacked_arguments():
    document = parse("args = SFTConfig(fp16=False, **extra)\n")
    with pytest.raises(RenderError, match="unpacks"):
        document.insert_keyword(document.constants["args"], "bf16", True)


# ---- syntax errors -----------------------------------------------------------------------------


def test_syntax_error_becomes_parse_error_at_its_character_offset():
    text = "x = 'é'\ny = dict(a='éé模🦥',, b=2)\n"
    with pytest.raises(ParseError) as caught:
        parse(text)
    assert caught.value.message.startswith("invalid Python")
    assert text[caught.value.offset] == ","
    assert caught.value.offset == text.index(",,") + 1


def test_syntax_error_after_a_lone_carriage_return():
    text = "a = 1\rb = (\n"
    with pytest.raises(ParseError) as caught:
        parse(text)
    assert 6 <= caught.value.offset <= len(text)


def test_nul_bytes_are_a_parse_error():
    with pytest.raises(ParseError):
        parse("x = 1\0\n")


def test_parsing_prints_no_warnings(capfd):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        parse("pattern = '\\d+'\nx = dict(a=1)\n")
    assert capfd.readouterr().err == ""


def test_the_tree_is_only_parsed(tmp_path):
    marker = tmp_path / "ran"
    document = parse(f"open({str(marker)!r}, 'w').write('x')\n__import__('os').system('touch {marker}')\n")
    assert isinstance(document.tree, ast.Module)
    assert not marker.exists()


# ---- imports -----------------------------------------------------------------------------------

def test_imported_name():
    document = parse("from bitsandbytes.optim import PagedAdamW32bit\nimport bitsandbytes as bnb\n"
                     "from torch.optim import AdamW\nAdamW = None\nimport bitsandbytes.optim\nimport transformers\n"
                     "from trl import SFTConfig\nfrom . import helpers\nimport os.path as osp\n"
                     "def main(lr, *rest, Trainer=None):\n    from trl import SFTConfig\n    from peft import LoraConfig\n"
                     "class LoraConfig: pass\n")

    def name(text):
        return imported_name(document, ast.parse(text).body[0].value)

    assert name("PagedAdamW32bit") == "bitsandbytes.optim.PagedAdamW32bit"
    assert name("bnb.optim.Lion8bit") == "bitsandbytes.optim.Lion8bit"
    assert name("bitsandbytes.optim.AdamW") == "bitsandbytes.optim.AdamW"
    assert name("transformers.TrainingArguments") == "transformers.TrainingArguments"
    assert name("osp.join") == "os.path.join"
    assert name("SFTConfig") == "trl.SFTConfig"  # imported twice, the same class both times
    assert name("AdamW") is None  # bound twice
    assert name("LoraConfig") is None  # a class of the script's own shadows it
    assert name("helpers") is None  # a module of the script's own package
    assert name("Trainer") is None and name("lr") is None  # parameters
    assert name("Missing") is None


def test_imported_name_refuses_rebound_names():
    def name(source, text):
        return imported_name(parse(source), ast.parse(text).body[0].value)

    assert name("from transformers import Trainer\nfrom trl import Trainer\n", "Trainer") is None  # two things
    assert name("try:\n    from trl import SFTConfig\nexcept ImportError:\n    SFTConfig = None\n", "SFTConfig") is None
    assert name("from transformers import Trainer\nfrom mylib import *\n", "Trainer") is None  # may rebind it
    assert name("from mylib import *\nfrom transformers import Trainer\n", "Trainer") == "transformers.Trainer"
    assert name("import transformers\nfor transformers in []: pass\n", "transformers.Trainer") is None
    assert name("from transformers import Trainer\ndef f():\n    Trainer = 1\n", "Trainer") is None
