"""A kind is known in its homes only: `graphflow/agents/` and the kind's own strategy module.

Everything else (drawings, events, the run overlay, the CLI) asks the kind's strategy, so a kind
registered with `register_strategy` gets what a built-in kind gets. This test reads the package's
source (AST) for `isinstance` / `issubclass` / `type(x) is` on a built-in agent class anywhere
else.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "graphflow"

HOMES = {
    "ReactAgent": {
        "strategies/react.py",
        "strategies/_react_model.py",
        "strategies/_react_tools.py",
    },
    "SequentialAgent": {"strategies/sequential.py"},
    "ParallelAgent": {"strategies/parallel.py"},
    "LoopAgent": {"strategies/loop.py"},
    "LlmRoutingAgent": {"strategies/routing.py"},
    "FunctionAgent": {"strategies/function.py"},
}


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} | {
        n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)
    }


def kind_checks(source: str) -> list[tuple[int, str]]:
    """(line, kind) of every class test on a built-in kind in `source`."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        tested: ast.AST | None = None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id in ("isinstance", "issubclass") and len(node.args) == 2:
                tested = node.args[1]
        elif isinstance(node, ast.Compare) and any(
            isinstance(op, ast.Is | ast.IsNot | ast.Eq | ast.NotEq | ast.In) for op in node.ops
        ):
            left = node.left
            if isinstance(left, ast.Call) and getattr(left.func, "id", None) == "type":
                tested = ast.Tuple(elts=list(node.comparators))
        elif isinstance(node, ast.MatchClass):
            tested = node.cls
        if tested is not None:
            found.extend((node.lineno, k) for k in sorted(_names(tested) & set(HOMES)))
    return found


def test_no_builtin_kind_is_tested_outside_its_home() -> None:
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        if relative.startswith("agents/"):
            continue
        for line, kind in kind_checks(path.read_text(encoding="utf-8")):
            if relative not in HOMES[kind]:
                offenders.append(f"graphflow/{relative}:{line} tests for {kind}")
    assert offenders == [], "ask the kind's strategy instead:\n" + "\n".join(offenders)


def test_the_check_finds_class_tests() -> None:
    source = (
        "if isinstance(agent, LoopAgent): pass\n"
        "ok = isinstance(a, ParallelAgent | agents.LlmRoutingAgent)\n"
        "same = type(a) is FunctionAgent\n"
        "sub = issubclass(k, (ReactAgent, SequentialAgent))\n"
        "fine = isinstance(a, dict)\n"
    )
    assert kind_checks(source) == [
        (1, "LoopAgent"),
        (2, "LlmRoutingAgent"),
        (2, "ParallelAgent"),
        (3, "FunctionAgent"),
        (4, "ReactAgent"),
        (4, "SequentialAgent"),
    ]
