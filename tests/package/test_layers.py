"""graphflow's layers point one way: no import cycle, and each layer imports only what it may.

The check reads the package's source (AST): every `import graphflow...` counts, lazy imports in
functions included; imports under `if TYPE_CHECKING:` do not (they never run). What each layer
may import is the table of docs/architecture.md, read here row by row.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tests.support.imports import import_base

PACKAGE = Path(__file__).resolve().parents[2] / "graphflow"
ARCHITECTURE = PACKAGE.parent / "docs" / "architecture.md"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports() -> dict[str, set[str]]:
    modules = {_module_name(p): p for p in PACKAGE.rglob("*.py")}

    def resolve(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text())
        skipped = {
            id(inner)
            for node in ast.walk(tree)
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
            for inner in ast.walk(node)
        }
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        out: set[str] = set()
        for node in ast.walk(tree):
            if id(node) in skipped:
                continue
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = import_base(node, package)
                # `from pkg import sub` depends on the submodule; `from mod import name` on mod
                targets = [
                    f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base
                    for a in node.names
                ]
            for target in targets:
                if target.split(".")[0] == "graphflow" and (found := resolve(target)):
                    if found != name:
                        out.add(found)
        graph[name] = out
    return graph


GRAPH = _imports()


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycle() -> None:
    assert _cycles(GRAPH) == []


def test_the_cycle_check_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def _importers_of(prefix: str) -> set[str]:
    return {
        m
        for m, deps in GRAPH.items()
        if any(d == prefix or d.startswith(prefix + ".") for d in deps)
    }


@pytest.mark.parametrize(
    "upper",
    [
        "graphflow.strategies",
        "graphflow.runtime",
        "graphflow.visualize",
        "graphflow.events",
        "graphflow.spec",
        "graphflow.context",
        "graphflow.mcp",
        "graphflow.cli",
    ],
)
def test_agent_specs_import_nothing_above_them(upper: str) -> None:
    # agents/ are specs: building, running and drawing reach them through the runtime seam
    offenders = {m for m in _importers_of(upper) if m.startswith("graphflow.agents")}
    assert offenders == set()


def test_the_core_never_imports_the_builtin_hooks() -> None:
    core = ("graphflow.agents", "graphflow.strategies", "graphflow.runtime", "graphflow.state")
    offenders = {m for m in _importers_of("graphflow.hooks.builtins") if m.startswith(core)}
    assert offenders == set()


@pytest.mark.parametrize("leaf", ["graphflow.testing", "graphflow.cli"])
def test_leaves_are_imported_by_nothing(leaf: str) -> None:
    # a leaf package's own modules import each other; `python -m graphflow` starts the CLI
    inside = {m for m in GRAPH if m == leaf or m.startswith(leaf + ".")}
    assert _importers_of(leaf) - inside - {"graphflow.__main__"} == set()


def _layers() -> tuple[dict[str, str], dict[str, set[str]]]:
    """docs/architecture.md's table: module prefix -> layer, layer -> layers it may import."""
    rows = [
        [cell.strip() for cell in line.strip().strip("|").split("|")]
        for line in ARCHITECTURE.read_text().splitlines()
        if line.startswith("| ") and "`graphflow" in line
    ]
    owner: dict[str, str] = {}
    allowed: dict[str, set[str]] = {}
    for layer, modules, may in rows:
        for module in re.findall(r"`([\w.]+)`", modules):
            owner[module] = layer
        allowed[layer] = {name.strip() for name in may.split(",")} | {layer}
    return owner, allowed


OWNER, ALLOWED = _layers()


def _layer_of(module: str) -> str | None:
    best = max(
        (m for m in OWNER if module == m or module.startswith(m + ".")), key=len, default=None
    )
    return OWNER[best] if best else None


def test_the_architecture_table_is_read() -> None:
    assert len(ALLOWED) >= 10 and "runtime" in ALLOWED
    for may in ALLOWED.values():
        assert may <= set(ALLOWED), f"unknown layer in {may - set(ALLOWED)}"


def test_every_module_belongs_to_a_layer_of_the_table() -> None:
    homeless = sorted(m for m in GRAPH if _layer_of(m) is None)
    assert homeless == [], f"add these modules to a row of docs/architecture.md: {homeless}"


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_each_layer_imports_only_what_the_table_allows(layer: str) -> None:
    offenders = sorted(
        f"{module} -> {dep} ({_layer_of(dep)})"
        for module, deps in GRAPH.items()
        if _layer_of(module) == layer
        for dep in deps
        if _layer_of(dep) not in ALLOWED[layer]
    )
    assert offenders == [], f"{layer} may import only {sorted(ALLOWED[layer])}"


def test_the_table_check_finds_a_forbidden_import() -> None:
    # leaves may import only leaves: an edge from a leaf to the runtime is reported
    assert _layer_of("graphflow.state") == "leaves"
    assert "runtime" not in ALLOWED["leaves"]
