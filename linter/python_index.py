"""One walk of a Python config's syntax tree, indexing what PythonDocument answers from: names
bound at module level, mutations, calls and imports (a 10 MB script is walked once, not once per
question)."""

from __future__ import annotations

import ast
from collections import Counter


def call_name(node: ast.AST) -> str:
    """`dict`, `from_pretrained`, `AmpOptimWrapper`: the last name of a call's function (or of
    a name, attribute, or a registry string such as 'AmpOptimWrapper')."""
    function = node.func if isinstance(node, ast.Call) else node
    if isinstance(function, ast.Attribute):
        return function.attr
    if isinstance(function, ast.Name):
        return function.id
    if isinstance(function, ast.Constant) and isinstance(function.value, str):
        return function.value.rsplit(".", 1)[-1]
    return ""


def imported_name(document, node: ast.AST | None) -> str | None:
    """The dotted name an import gives `node`, a name or an attribute of one: `PagedAdamW32bit`
    after `from bitsandbytes.optim import PagedAdamW32bit`, or `bnb.optim.PagedAdamW32bit` after
    `import bitsandbytes as bnb`, is "bitsandbytes.optim.PagedAdamW32bit"; `transformers.Trainer`
    after `import transformers` is "transformers.Trainer". None for anything else, and for a name
    the file also binds some other way, in any scope (an assignment, a def or class, a parameter,
    an import of something else, a star import after it): see `_resolved`."""
    attributes = []
    while isinstance(node, ast.Attribute):
        attributes.append(node.attr)
        node = node.value
    found = document.imported.get(node.id) if isinstance(node, ast.Name) else None
    return ".".join([found, *reversed(attributes)]) if found else None


def _resolved(imported: dict[str, set[str]], first: dict[str, int], other: set[str],
              last_star: int) -> dict[str, str]:
    """Local name -> the dotted name its imports give it, where every binding of the name in the
    file is an import of that one thing (the same import at module level and in a function is
    one thing) and no module-level star import comes after the first of them."""
    return {name: next(iter(targets)) for name, targets in imported.items()
            if len(targets) == 1 and name not in other and first[name] > last_star}


_MUTATORS = {"update", "setdefault", "pop", "popitem", "clear", "append", "extend", "insert", "remove",
             "sort", "reverse", "__setitem__", "__delitem__", "merge_from_dict"}
_SCOPE_WRITERS = {"exec", "eval", "globals", "vars", "locals"}
_NAMED_BINDINGS = (ast.ExceptHandler, ast.MatchAs, ast.MatchStar, ast.MatchMapping)  # `except E as name`, `case x`


def _parameters(arguments: ast.arguments) -> list[str]:
    return [item.arg for item in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs,
                                  arguments.vararg, arguments.kwarg) if item is not None]


def index(document) -> None:
    """Everything the adapters ask of the tree, in one walk (issue 19: a 10 MB script was walked
    ~13 times, 55 s): calls by name, imported packages, name reads (and the keyword each is
    passed as), the names imports give (every binding of a name, in any scope, for imported_name),
    and, for the constants, mutations, scope writers and module-scope bindings.

    Each node is visited once with a flag: is it evaluated in module scope? Function and class
    bodies are not; their names, decorators, defaults, bases and keywords are. Iterative, so a
    deep expression cannot exhaust the stack.
    """
    calls: dict[str, list[ast.Call]] = {}
    imports: set[str] = set()
    uses: Counter = Counter()
    passed: dict[int, str | None] = {}  # id of a Name passed as a keyword argument -> the keyword
    bindings: Counter = Counter()
    mutated: set[str] = set()
    star_lines: list[int] = []
    scope_writer = False
    attribute_assignments: list[ast.Assign] = []  # `x.attr = y.attr`, for facts such as pad = eos
    from_imports: list[ast.ImportFrom] = []
    call_assignments: dict[int, ast.Assign] = {}  # `model, tokenizer = loader(...)`, by the call's id
    imported: dict[str, set[str]] = {}  # name an import binds, in any scope -> the dotted names it gets
    first_import: dict[str, int] = {}  # name -> the line of its first import
    other: set[str] = set()  # names bound in any scope by anything but an absolute import

    def root_name(node: ast.AST) -> str | None:
        while isinstance(node, (ast.Attribute, ast.Subscript)):
            node = node.value
        return node.id if isinstance(node, ast.Name) else None

    Name, Call, Attribute, Subscript = ast.Name, ast.Call, ast.Attribute, ast.Subscript
    Load = ast.Load
    functions = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    iter_child_nodes = ast.iter_child_nodes
    pending: list[tuple[ast.AST, bool]] = [(document.tree, True)]
    pop, push = pending.pop, pending.append
    while pending:
        node, module_scope = pop()
        kind = node.__class__
        if kind is Name:
            context = node.ctx.__class__
            if context is Load:
                uses[node.id, passed.get(id(node))] += 1
            else:
                other.add(node.id)
                if module_scope:
                    bindings[node.id] += 1
            continue
        if kind is Call:
            calls.setdefault(call_name(node), []).append(node)
            function = node.func
            if function.__class__ is Attribute and function.attr in _MUTATORS:
                name = root_name(function.value)
                if name:
                    mutated.add(name)
            elif function.__class__ is Name and function.id in _SCOPE_WRITERS:
                scope_writer = True
            for item in node.keywords:
                if item.value.__class__ is Name:
                    passed[id(item.value)] = item.arg
        elif kind is Attribute or kind is Subscript:
            if node.ctx.__class__ is not Load:  # Store or Del: `name.attr = `, `del name[k]`
                name = root_name(node.value)
                if name:
                    mutated.add(name)
        elif kind is ast.Assign:
            if node.value.__class__ is Attribute:
                attribute_assignments.append(node)
            elif node.value.__class__ is Call:
                call_assignments[id(node.value)] = node
        elif kind is ast.Global:
            bindings.update(node.names)
        elif kind is ast.Import or kind is ast.ImportFrom:
            if kind is ast.Import:
                imports.update(alias.name.split(".")[0] for alias in node.names)
                for alias in node.names:
                    local = alias.asname or alias.name.split(".")[0]
                    imported.setdefault(local, set()).add(alias.name if alias.asname else local)
                    first_import.setdefault(local, node.lineno)
            elif node.module and not node.level:
                imports.add(node.module.split(".")[0])
                from_imports.append(node)
                for alias in node.names:
                    if alias.name != "*":
                        imported.setdefault(alias.asname or alias.name, set()).add(f"{node.module}.{alias.name}")
                        first_import.setdefault(alias.asname or alias.name, node.lineno)
            else:  # relative: a module of the script's own package
                other.update(alias.asname or alias.name for alias in node.names)
            if module_scope:
                for alias in node.names:
                    if alias.name == "*":
                        star_lines.append(node.lineno)
                    else:
                        bindings[alias.asname or alias.name.split(".")[0]] += 1
        elif kind in functions:
            other.add(node.name)
            if kind is not ast.ClassDef:
                other.update(_parameters(node.args))
            if module_scope:
                bindings[node.name] += 1
                outside = [*node.decorator_list]
                if kind is ast.ClassDef:
                    outside += [*node.bases, *node.keywords]
                else:
                    outside += [*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)]
                inside = {id(item) for item in outside}
                for child in iter_child_nodes(node):
                    push((child, id(child) in inside))
                continue
        elif kind is ast.Lambda:
            other.update(_parameters(node.args))
            if module_scope:
                inside = {id(item) for item in node.args.defaults}
                for child in iter_child_nodes(node):
                    push((child, id(child) in inside))
                continue
        elif kind in _NAMED_BINDINGS:
            name = node.rest if kind is ast.MatchMapping else node.name
            if name:
                other.add(name)
                if module_scope:
                    bindings[name] += 1
        for child in iter_child_nodes(node):
            push((child, module_scope))

    document._calls = calls
    document._imports = imports
    by_position = lambda node: (node.lineno, node.col_offset)  # noqa: E731
    document.attribute_assignments = sorted(attribute_assignments, key=by_position)
    document.from_imports = sorted(from_imports, key=by_position)
    document.call_assignments = call_assignments
    document._uses = uses
    document.star_import = bool(star_lines)
    document.bound = frozenset(bindings)
    last_star = max(star_lines, default=0)
    document.imported = _resolved(imported, first_import, other, last_star)
    document.constants = {}
    if scope_writer:
        return
    constants = {}
    for statement in document.tree.body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
                and isinstance(statement.targets[0], ast.Name):
            name, value = statement.targets[0].id, statement.value
        elif isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name) and statement.value:
            name, value = statement.target.id, statement.value
        else:
            continue
        if bindings[name] == 1 and name not in mutated and statement.lineno > last_star:
            constants[name] = value
    document.constants = constants
