"""The layering holds: no import cycles, small modules, a thin facade, one key catalogue that
rules and adapters agree on, and a rule-pack API that is enough on its own."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from linter.catalogue import KEYS, UnknownKey

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("linter", "rules")
NAMESPACES = {key.split(".")[0] for key in KEYS}
IR_KEY = re.compile(r"^[a-z]+\.[a-z0-9_]+$")


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The project modules `name` imports, at any depth of its code (lazy imports count)."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            targets = [base, *(f"{base}.{alias.name}" for alias in node.names)]
        else:
            continue
        found.update(target for target in targets if target in modules and target != name)
    return found


def test_no_import_cycles():
    modules = _modules()
    graph = {name: _imports(name, path, modules) for name, path in modules.items()}
    # A package's __init__ importing its own submodules is how Python packages load them; the
    # reverse (a submodule importing its package) is an upward import like any other.
    for name in graph:
        graph[name] = {target for target in graph[name] if not target.startswith(name + ".")}
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(name: str) -> None:
        state[name] = 1
        stack.append(name)
        for target in sorted(graph[name]):
            if state.get(target) == 1:
                cycle = stack[stack.index(target):] + [target]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if target not in state:
                visit(target)
        stack.pop()
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name)


def test_modules_are_small_and_the_facade_thin():
    long = {str(path.relative_to(ROOT)): n for path in _modules().values()
            if (n := len(path.read_text("utf-8").splitlines())) > 400}
    assert long == {}, f"modules over 400 lines: {long}"
    assert len((ROOT / "linter" / "engine.py").read_text("utf-8").splitlines()) <= 200


def _key_constants(paths) -> dict[str, set[str]]:
    """String constants that name an IR key (a catalogue namespace, a dot, a name), by file."""
    found: dict[str, set[str]] = {}
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and IR_KEY.match(node.value) \
                    and node.value.split(".")[0] in NAMESPACES:
                found.setdefault(node.value, set()).add(path.name)
    return found


# The calls through which adapters record a fact: the first argument that names an IR key is it.
_WRITERS = {"Binding", "take", "set", "record", "default", "record_literal", "Field"}


def _written_keys(paths) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in paths:
        tree = ast.parse(path.read_text("utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name not in _WRITERS:
                continue
            key = next((arg.value for arg in node.args if isinstance(arg, ast.Constant)
                        and isinstance(arg.value, str) and IR_KEY.match(arg.value)), None)
            if key is not None:
                found.setdefault(key, set()).add(path.name)
        # Tables of keys an adapter records in a loop (`for key, name in (("parallel.offload_param", ...`).
        for node in ast.walk(tree):
            if isinstance(node, ast.For) and isinstance(node.iter, (ast.Tuple, ast.List, ast.Dict)):
                for constant in ast.walk(node.iter):
                    if isinstance(constant, ast.Constant) and isinstance(constant.value, str) \
                            and constant.value in KEYS:
                        found.setdefault(constant.value, set()).add(path.name)
    return found


ADAPTER_FILES = [*(ROOT / "linter" / "adapters").glob("*.py"), ROOT / "linter" / "runs.py"]


def test_rules_read_only_catalogue_keys_that_some_adapter_writes():
    read = _key_constants([*(ROOT / "rules").glob("*.py"), ROOT / "linter" / "memory.py"])
    written = _written_keys(ADAPTER_FILES)
    assert set(read) - set(KEYS) == set(), "rules read keys missing from linter/ir_keys.py"
    assert {key: read[key] for key in set(read) - set(written)} == {}, "rules read keys no adapter writes"


def test_adapters_write_only_catalogue_keys():
    written = _written_keys(ADAPTER_FILES)
    assert {key: files for key, files in written.items() if key not in KEYS} == {}


def test_an_unknown_key_fails_loudly_on_read_and_write():
    from linter.ir import ConfigIR, Field, Origin

    config = ConfigIR(Path("c.yaml"), "hf")
    with pytest.raises(UnknownKey, match="precision.fp61"):
        config.value("precision.fp61")
    with pytest.raises(UnknownKey):
        config.set("model.familly", Field("llama", Origin(None)))


def test_every_catalogue_key_has_a_type_and_meaning():
    assert all(key.type and key.meaning for key in KEYS.values())


def test_every_ir_key_is_declared_once():
    # A second row for a key (linter/ir_keys.py or linter/checked_keys.py) silently replaces the
    # first one's type, and a framework's value of the other type then never reaches the rules
    # (Axolotl's written-or-not rpo_alpha once replaced TRL's numeric one).
    from linter.ir_keys import IR_KEYS

    names = [name for name, _, _ in IR_KEYS]
    assert sorted({name for name in names if names.count(name) > 1}) == []


def test_example_pack_uses_only_the_public_api():
    source = (ROOT / "tests" / "example_pack" / "trainlint_example_pack" / "__init__.py").read_text("utf-8")
    imported = {node.module for node in ast.walk(ast.parse(source)) if isinstance(node, ast.ImportFrom)}
    imported |= {alias.name for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Import)
                 for alias in node.names}
    assert {name for name in imported if name.startswith("linter")} == {"linter.api"}


def test_findings_and_fixes_are_immutable():
    from linter.api import Applicability, Finding, Fix, Span

    finding = Finding("X001", "x", "warning", "m", Span(Path("c"), 0, 0, 1, 1, 1, 1), "hf",
                      fix=Fix(Applicability.SAFE, "f"))
    with pytest.raises(AttributeError):
        finding.severity = "error"
    with pytest.raises(AttributeError):
        finding.fix.message = "changed"


def test_one_binding_makes_a_key_fixable(tmp_path):
    """Making a key fixable in an adapter is one binding: parsing, rendering and the message
    spelling all follow from it."""
    from linter.adapters import Binding, Reader
    from linter.adapters.ludwig import LudwigAdapter
    from linter.changes import SetValue
    from linter.fixes import apply_edits
    from linter.source import Source
    from linter.yaml_reader import parse_yaml

    class WithWarmup(LudwigAdapter):
        bindings = (*LudwigAdapter.bindings,
                    Binding("scheduler.warmup_steps", "trainer.learning_rate_scheduler.warmup_evaluations"))

        def parse(self, document):
            config = super().parse(document)
            Reader(config, document).bind(self.bindings[-1:])
            return config

    path = tmp_path / "ludwig.yaml"
    path.write_text("model_type: llm\nbase_model: m\ninput_features: []\ntrainer:\n  batch_size: 2\n")
    adapter = WithWarmup()
    document = parse_yaml(Source.read(path))
    config = adapter.parse(document)
    [edit] = adapter.render(document, config, SetValue(config, "scheduler.warmup_steps", 3))
    text = apply_edits(document.source.text, [edit])
    assert text.endswith("trainer:\n  batch_size: 2\n  learning_rate_scheduler:\n    warmup_evaluations: 3\n")
    reparsed = adapter.parse(parse_yaml(Source.read(path).with_text(text)))
    assert SetValue(config, "scheduler.warmup_steps", 3).reads_as_intended(reparsed)
    assert reparsed.written_as("scheduler.warmup_steps") == "trainer.learning_rate_scheduler.warmup_evaluations"
