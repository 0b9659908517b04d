"""Python configs and training scripts, read with `ast` only: never executed, never imported.

A `PythonDocument` gives adapters the module tree, the literal value of an expression (with
module-level constants assigned once followed by name), and spans in the Source's character
offsets. `ast` reports columns as UTF-8 *byte* offsets within a line; they are converted here,
so non-ASCII text earlier on a line cannot shift an edit.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any, Iterator

from .document import ParseError, RenderError
from .fixes import Edit
from .source import Source

UNKNOWN = object()  # a value that is not a literal: rules never fire on it
AUTO = "auto"

_TORCH_DTYPES = {"float16": "float16", "half": "float16", "bfloat16": "bfloat16", "float32": "float32",
                 "float": "float32"}
# Calls whose result the frameworks treat as "decide at launch from the GPU".
_AUTOMATIC_CALLS = {"is_bfloat16_supported", "is_bf16_supported", "is_torch_bf16_gpu_available"}


def call_name(node: ast.AST) -> str:
    """`dict`, `from_pretrained`, `AmpOptimWrapper`: the last name of a call's function."""
    function = node.func if isinstance(node, ast.Call) else node
    if isinstance(function, ast.Attribute):
        return function.attr
    return function.id if isinstance(function, ast.Name) else ""


def dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Attribute):
        return f"{dotted(node.value)}.{node.attr}"
    return node.id if isinstance(node, ast.Name) else ""


@dataclass(eq=False)
class PythonDocument:
    source: Source
    tree: ast.Module
    format: str = "python"
    constants: dict[str, ast.expr] = field(default_factory=dict)  # module-level names assigned once

    def span(self, node: ast.AST) -> tuple[int, int]:
        """Character offsets of a node in the Source's text."""
        return self._offset(node.lineno, node.col_offset), self._offset(node.end_lineno, node.end_col_offset)

    def _offset(self, line: int, byte_column: int) -> int:
        start = self.source.line_starts[line - 1]
        end = self.source.line_end(start)
        prefix = self.source.text[start:end].encode("utf-8")[:byte_column]
        return start + len(prefix.decode("utf-8", errors="ignore"))

    def text(self, node: ast.AST) -> str:
        start, end = self.span(node)
        return self.source.text[start:end]

    def resolve(self, node: ast.expr | None) -> ast.expr | None:
        """Follow a bare name to the module-level literal it was assigned once, if any."""
        seen = 0
        while isinstance(node, ast.Name) and node.id in self.constants and seen < 10:
            node = self.constants[node.id]
            seen += 1
        return node

    def literal(self, node: ast.expr | None) -> Any:
        """The value a literal expression denotes; dtypes canonical; UNKNOWN for anything computed."""
        node = self.resolve(node)
        if node is None:
            return UNKNOWN
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "torch":
            return _TORCH_DTYPES.get(node.attr, UNKNOWN)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            value = self.literal(node.operand)
            return -value if isinstance(value, (int, float)) and not isinstance(value, bool) else UNKNOWN
        if isinstance(node, (ast.List, ast.Tuple)):
            items = [self.literal(item) for item in node.elts]
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
        torch.bfloat16, 'fp16' -> 'bf16', True -> False). A name is followed to its module-level
        constant, which is where the edit goes."""
        node = self.resolve(node)
        original = self.text(node)
        if isinstance(value, bool) or value is None:
            text = repr(value)
        elif isinstance(value, str) and value in _TORCH_DTYPES.values():
            text = _spell_dtype(original, value)
        elif isinstance(value, (int, float, str)):
            quote = original[0] if original[:1] in ("'", '"') else "'"
            text = f"{quote}{value}{quote}" if isinstance(value, str) else repr(value)
        else:
            raise RenderError(f"cannot write {value!r} into Python")
        start, end = self.span(node)
        return Edit(self.source.path, start, end, text)

    def insert_keyword(self, call: ast.Call, name: str, value: Any, after: str | None = None) -> Edit:
        """Add `name=value` to a call, after the keyword `after` (else after the last argument),
        in the call's own style (`name=value` or `name = value`)."""
        anchor = keyword(call, after) if after else None
        arguments = [*call.args, *(item.value for item in call.keywords)]
        last = anchor.value if anchor is not None else (max(arguments, key=lambda n: (n.end_lineno, n.end_col_offset))
                                                        if arguments else None)
        if last is None:
            raise RenderError("cannot add a keyword to a call without arguments")
        spacing = " = " if any(" = " in self.text(item) for item in call.keywords if item.arg) else "="
        rendered = repr(value) if isinstance(value, (bool, int, float)) or value is None else repr(str(value))
        end = self.span(last)[1]
        return Edit(self.source.path, end, end, f", {name}{spacing}{rendered}")

    def calls(self, *names: str) -> Iterator[ast.Call]:
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Call) and call_name(node) in names:
                yield node

    def imports(self) -> set[str]:
        """Top-level package names this module imports."""
        found = set()
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Import):
                found.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module:
                found.add(node.module.split(".")[0])
        return found


_SHORT = {"float16": "fp16", "bfloat16": "bf16", "float32": "fp32"}


def _spell_dtype(original: str, dtype: str) -> str:
    """`dtype` in the spelling family of `original`: torch attribute, long or short string."""
    if original.startswith("torch."):
        return f"torch.{dtype}"
    quote = original[0] if original[:1] in ("'", '"') else "'"
    inner = original.strip("'\"").lower()
    return f"{quote}{_SHORT[dtype] if inner in _SHORT.values() else dtype}{quote}"


def keyword(call: ast.Call, name: str) -> ast.keyword | None:
    return next((item for item in call.keywords if item.arg == name), None)


def parse_python(source: Source) -> PythonDocument:
    try:
        tree = ast.parse(source.text, filename=str(source.path))
    except SyntaxError as error:
        line = max(error.lineno or 1, 1)
        offset = source.offset(min(line, len(source.line_starts)), max(error.offset or 1, 1))
        raise ParseError(f"invalid Python: {error.msg}", min(offset, len(source.text))) from None
    except (ValueError, RecursionError, MemoryError) as error:  # NUL bytes, absurd nesting
        raise ParseError(f"invalid Python: {str(error).splitlines()[0] if str(error) else type(error).__name__}", 0) from None
    document = PythonDocument(source, tree)
    assigned: dict[str, list[ast.expr]] = {}
    for statement in tree.body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name):
            assigned.setdefault(statement.targets[0].id, []).append(statement.value)
        elif isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name) and statement.value:
            assigned.setdefault(statement.target.id, []).append(statement.value)
    document.constants = {name: values[0] for name, values in assigned.items() if len(values) == 1}
    return document
