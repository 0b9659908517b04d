"""Python configs and training scripts, read with `ast` only: never executed, never imported.

A `PythonDocument` gives adapters the module tree, literal values and spans in character offsets.

Positions: `ast` numbers lines the way Python's tokenizer splits them (`\\n`, `\\r\\n` and a
lone `\\r`) and reports columns as UTF-8 *byte* offsets within a line. Both are converted here,
so non-ASCII text earlier on a line, or a stray carriage return, cannot shift an edit.

Names: a module-level name stands for its literal only when the module binds it exactly once,
by a plain top-level `name = value`, and nothing can change it later — no second binding
anywhere in module scope (another assignment, `+=`, a loop or `with` target, an import, a
`global` statement in a function), no mutation (`name[...] = `, `name.attr = `, `name.update(...)`),
no star import after it and no `exec`/`globals()`. Anything else is unknown, and rules never
fire on an unknown value.
"""

from __future__ import annotations

import ast
import bisect
import re
import warnings
from collections import Counter
from collections.abc import Iterator
from typing import Any

from .document import ParseError, RenderError
from .fixes import Edit
from .python_index import call_name, index  # noqa: F401 (call_name: adapters read it here)
from .source import Source

UNKNOWN = object()  # a value computed at run time: rules never fire on it
AUTO = "auto"

# torch attribute -> canonical dtype (torch.half is float16, torch.float is float32).
_TORCH_DTYPES = {"float16": "float16", "half": "float16", "bfloat16": "bfloat16", "float32": "float32",
                 "float": "float32"}
# Calls whose result decides precision at launch from the GPU: read as "auto".
_AUTOMATIC_CALLS = {"is_bfloat16_supported", "is_bf16_supported", "is_torch_bf16_gpu_available"}
# Methods that change a dict or list in place: a name they are called on is not a constant.
# Calls that can rebind any module-level name.
# Keywords that take a dtype: a constant shared only by such keywords may be edited in place.
DTYPE_KEYWORDS = {"torch_dtype", "dtype", "bnb_4bit_compute_dtype", "bnb_4bit_quant_storage"}
_MAX_DEPTH = 50  # nesting followed by literal(); deeper is unknown (and never a config value)
_NEWLINES = re.compile(r"\r\n|\r|\n")
_STRING_PREFIX = re.compile(r"[rRuUbB]*('''|\"\"\"|'|\")")




def keyword(call: ast.Call, name: str) -> ast.keyword | None:
    """The keyword argument `name` of a call; with duplicates (a SyntaxError) never reached."""
    return next((item for item in call.keywords if item.arg == name), None)


def is_open(call: ast.Call) -> bool:
    """A call with `**kwargs` or `*args`: an argument it does not spell out may still be passed."""
    return any(item.arg is None for item in call.keywords) or any(isinstance(item, ast.Starred) for item in call.args)


class PythonDocument:
    __slots__ = ("source", "tree", "format", "constants", "star_import", "bound", "_line_starts", "_uses", "_ascii",
                 "_calls", "_imports", "attribute_assignments", "call_assignments", "from_imports",
                 "imported")

    def __init__(self, source: Source, tree: ast.Module, format: str = "python",
                 constants: dict[str, ast.expr] | None = None, star_import: bool = False,
                 bound: frozenset = frozenset(), _line_starts: list[int] | None = None,
                 _uses: Counter | None = None):
        self.source = source
        self.tree = tree
        self.format = format
        self.constants = constants if constants is not None else {}
        self.star_import = star_import  # `from m import *` anywhere in module scope
        self.bound = bound  # every name module scope binds (constants or not)
        self._line_starts = _line_starts if _line_starts is not None else []
        self._uses = _uses
        self._ascii = self.source.text.isascii()  # then byte columns are character columns
        # Filled by the one walk over the tree (`_index`): calls by call_name, imported packages.
        self._calls: dict[str, list[ast.Call]] | None = None
        self._imports: set[str] = set()
        self.attribute_assignments: list[ast.Assign] = []
        self.call_assignments: dict[int, ast.Assign] = {}  # id of a call -> `target = call(...)`
        self.from_imports: list[ast.ImportFrom] = []
        self.imported: dict[str, str] = {}  # local name -> the dotted name its imports give it (imported_name)

    # ---- positions ---------------------------------------------------------------------------

    @property
    def line_starts(self) -> list[int]:
        """Offsets where Python's lines start (it also breaks lines at a lone carriage return)."""
        if not self._line_starts:
            self._line_starts = _line_starts(self.source.text)
        return self._line_starts

    def offset(self, line: int, byte_column: int) -> int:
        """The character offset of `ast`'s (line, UTF-8 byte column)."""
        starts = self.line_starts
        start = starts[min(max(line, 1), len(starts)) - 1]
        text = self.source.text
        if self._ascii:
            return start + byte_column
        prefix = text[start : start + byte_column].encode("utf-8")[:byte_column]
        return start + len(prefix.decode("utf-8", errors="ignore"))

    def span(self, node: ast.AST) -> tuple[int, int]:
        """Character offsets of a node in the Source's text."""
        return self.offset(node.lineno, node.col_offset), self.offset(node.end_lineno, node.end_col_offset)

    def text(self, node: ast.AST) -> str:
        start, end = self.span(node)
        return self.source.text[start:end]

    # ---- values ------------------------------------------------------------------------------

    def resolve(self, node: ast.expr | None) -> ast.expr | None:
        """Follow a bare name to the module-level expression it stands for, if it is a constant."""
        for _ in range(_MAX_DEPTH):
            if not (isinstance(node, ast.Name) and node.id in self.constants):
                break
            node = self.constants[node.id]
        return node

    def literal(self, node: ast.expr | None, depth: int = 0) -> Any:
        """The value a literal expression denotes (torch dtypes as canonical names, launch-time
        checks as "auto"); UNKNOWN for anything computed."""
        node = self.resolve(node)
        if node is None or depth > _MAX_DEPTH:
            return UNKNOWN
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "torch":
            return _TORCH_DTYPES.get(node.attr, UNKNOWN)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            value = self.literal(node.operand, depth + 1)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return -value if isinstance(node.op, ast.USub) else value
            return UNKNOWN
        if isinstance(node, (ast.List, ast.Tuple)):
            items = [self.literal(item, depth + 1) for item in node.elts]
            return UNKNOWN if any(item is UNKNOWN for item in items) else items
        if isinstance(node, ast.Call) and call_name(node) in _AUTOMATIC_CALLS:
            return AUTO
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not) and isinstance(node.operand, ast.Call) \
                and call_name(node.operand) in _AUTOMATIC_CALLS:
            return AUTO
        return UNKNOWN

    # ---- edits -------------------------------------------------------------------------------

    def replace(self, node: ast.expr, value: Any) -> Edit:
        """Replace a literal with `value`, spelled the way the original was (torch.float16 ->
        torch.bfloat16, 'float16' -> 'bfloat16', True -> False, the same quotes).

        A name is followed to its module-level constant, which is where the edit goes, provided
        nothing else reads that constant (or, for a dtype, only other dtype keywords do)."""
        target = self.resolve(node)
        if target is not node:
            self._check_shared(node, value)
        original = self.text(target)
        if isinstance(value, bool) or value is None:
            text = repr(value)
        elif isinstance(value, str) and value in _TORCH_DTYPES.values():
            text = _spell_dtype(original, target, value)
        elif isinstance(value, (int, float)):
            text = repr(value)
        elif isinstance(value, str):
            prefix, quote = _string_style(original)
            text = f"{prefix}{quote}{value}{quote}" if "\\" not in value and quote not in value else repr(value)
        else:
            raise RenderError(f"cannot write {value!r} into Python")
        start, end = self.span(target)
        return Edit(self.source.path, start, end, text)

    def _check_shared(self, node: ast.expr, value: Any) -> None:
        names = []
        while isinstance(node, ast.Name) and node.id in self.constants and len(names) < _MAX_DEPTH:
            names.append(node.id)
            node = self.constants[node.id]
        is_dtype = isinstance(value, str) and value in _TORCH_DTYPES.values()
        for name in names:
            readers = [(argument, count) for (used, argument), count in self._reads().items() if used == name]
            if sum(count for _, count in readers) <= 1:
                continue
            if not (is_dtype and all(argument in DTYPE_KEYWORDS for argument, _ in readers)):
                raise RenderError(f"the value comes from `{name}`, which other code also reads: change it by hand")

    def _reads(self) -> Counter:
        """(name, keyword it is passed as, or None) -> how often the module reads that name."""
        if self._uses is None:
            index(self)
        return self._uses

    def insert_keyword(self, call: ast.Call, name: str, value: Any, after: str | None = None,
                       spelled: str | None = None) -> list[Edit]:
        """Add `name=value` (the value as `spelled`, else its repr) to a call, after the keyword
        `after` (else after the last argument), in the call's own style: `name=value` or
        `name = value`, and on a line of its own where the arguments are one per line."""
        if is_open(call):
            raise RenderError(f"the call unpacks arguments (**kwargs), which may already hold {name}: add it by hand")
        items = sorted([*call.args, *call.keywords], key=lambda item: (item.lineno, item.col_offset))
        anchor = (keyword(call, after) if after else None) or (items[-1] if items else None)
        if anchor is None:
            raise RenderError("cannot add a keyword to a call without arguments")
        spacing = " = " if any(" = " in self.text(item) for item in call.keywords if item.arg) else "="
        rendered = f"{name}{spacing}{spelled if spelled is not None else repr(value)}"
        text = self.source.text
        _, end = self.span(anchor.value if isinstance(anchor, ast.keyword) else anchor)
        anchor_start = self.offset(anchor.lineno, anchor.col_offset)
        line_start = self._line_start(anchor_start)
        own_line = not text[line_start:anchor_start].strip() and self.span(call)[0] < line_start
        line_end = self._line_end(end)
        rest = text[end:line_end].lstrip(" \t")
        newline = _NEWLINES.match(text, line_end).group() if line_end < len(text) else self.source.newline
        if own_line and rest.startswith(","):
            # `fp16=True,  # comment` -> a new line after that one, with its own trailing comma.
            insert_at = line_end + len(newline)
            indent = text[line_start:anchor_start]
            return [Edit(self.source.path, insert_at, insert_at, f"{indent}{rendered},{newline}")]
        if own_line and (not rest or rest.startswith("#")):
            # The last argument, without a trailing comma: a comma after it, the new one below
            # (after its comment, if it has one).
            indent = text[line_start:anchor_start]
            below = f"{newline}{indent}{rendered}"
            if not rest:
                return [Edit(self.source.path, end, end, "," + below)]
            return [Edit(self.source.path, end, end, ","), Edit(self.source.path, line_end, line_end, below)]
        return [Edit(self.source.path, end, end, f", {rendered}")]

    def _line_start(self, offset: int) -> int:
        starts = self.line_starts
        return starts[bisect.bisect_right(starts, offset) - 1]

    def _line_end(self, offset: int) -> int:
        """Offset of the line break (in Python's sense) ending the line holding `offset`."""
        match = _NEWLINES.search(self.source.text, offset)
        return match.start() if match else len(self.source.text)

    # ---- structure ---------------------------------------------------------------------------

    def calls(self, *names: str) -> Iterator[ast.Call]:
        """Calls to functions of these names, in source order."""
        if self._calls is None:
            index(self)
        found = [call for name in dict.fromkeys(names) for call in self._calls.get(name, ())]
        return iter(sorted(found, key=lambda node: (node.lineno, node.col_offset)))

    def call_names(self) -> set[str]:
        """The names of every function the module calls (see call_name)."""
        if self._calls is None:
            index(self)
        return set(self._calls)

    def imports(self) -> set[str]:
        """Top-level package names this module imports."""
        if self._calls is None:
            index(self)
        return self._imports


def _string_style(original: str) -> tuple[str, str]:
    """The prefix (r, u, ...) and quotes of a string literal's text; plain single quotes otherwise."""
    match = _STRING_PREFIX.match(original)
    return (original[: match.start(1)], match.group(1)) if match else ("", "'")


_SHORT = {"float16": "fp16", "bfloat16": "bf16", "float32": "fp32"}


def _spell_dtype(original: str, node: ast.expr, dtype: str) -> str:
    """`dtype` in the spelling family of `original`: a torch attribute, or a long or short string."""
    if isinstance(node, ast.Attribute):
        return f"torch.{dtype}"
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        prefix, quote = _string_style(original)
        short = node.value.strip().lower() in _SHORT.values()
        return f"{prefix}{quote}{_SHORT[dtype] if short else dtype}{quote}"
    if isinstance(node, ast.Constant) and node.value is None:
        return repr(dtype)  # `dtype=None` (the default written out): the name as a string
    raise RenderError(f"`{original}` is not a dtype to respell")


# ---- parsing -----------------------------------------------------------------------------------


def parse_python(source: Source) -> PythonDocument:
    """Parse with `ast` (compiling nothing, importing nothing); a SyntaxError becomes a
    ParseError at its character offset."""
    if len(source.text) > MAX_PYTHON_CHARS:
        raise ParseError(f"file is {len(source.text):,} characters, over the {MAX_PYTHON_CHARS:,}-character limit "
                         "for Python files (its syntax tree would take ~200 bytes per character); skipped", 0)
    try:
        with warnings.catch_warnings(), _collector_paused():
            warnings.simplefilter("ignore")  # invalid escape sequences and the like: not ours to report
            tree = ast.parse(source.text, filename=str(source.path))
    except SyntaxError as error:
        raise ParseError(f"invalid Python: {error.msg}", _error_offset(source, error)) from None
    except (ValueError, RecursionError, MemoryError, OverflowError) as error:  # NUL bytes, absurd nesting
        first_line = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise ParseError(f"invalid Python: {first_line}", 0) from None
    document = PythonDocument(source, tree)
    index(document)
    return document


# `ast` holds ~200 bytes of syntax tree per character of dense code: a 10 MB script is ~2 GB
# (issue 19, fault 11). Real training scripts and XTuner configs are tens of kilobytes.
MAX_PYTHON_CHARS = 2 * 1024 * 1024


class _collector_paused:
    """The cyclic garbage collector off while `ast` builds a tree (millions of objects, no
    cycles): its passes over the growing heap doubled the parse time of a large file."""

    def __enter__(self):
        import gc

        self.was_enabled = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc_info):
        import gc

        if self.was_enabled:
            gc.enable()
        return False


def _line_starts(text: str) -> list[int]:
    return [0, *(match.end() for match in _NEWLINES.finditer(text))]


def _error_offset(source: Source, error: SyntaxError) -> int:
    """SyntaxError's line is in Python's line numbering and, since Python 3.10, its offset is in
    characters (1-based), counted on that line."""
    starts = _line_starts(source.text)
    start = starts[min(max(error.lineno or 1, 1), len(starts)) - 1]
    line_break = _NEWLINES.search(source.text, start)
    return min(start + max((error.offset or 1) - 1, 0), line_break.start() if line_break else len(source.text))
