"""One home per meaning: private modules stay in their package, errors live in `exceptions.py`.

The checks read the package's source (AST), lazy imports and `TYPE_CHECKING` imports included:

* A private module (`graphflow.tools._x`) or a private name (`from graphflow.x import _y`) is
  imported only from inside the package that holds it. What several packages share lives in
  `graphflow._internal` or in a public module.
* Every exception class graphflow defines is defined in `graphflow/exceptions.py`, and every one
  there sits under exactly one of the two roots: `GraphflowConfigError` (what can be known
  before a run) or `AgentRunError` (failures during one).
* The interrupt type of a paused tool call is spelled in one place.
"""

from __future__ import annotations

import ast
import builtins
import inspect
from pathlib import Path

from tests.support.imports import import_base

PACKAGE = Path(__file__).resolve().parents[2] / "graphflow"
SHARED = "_internal"


def _private(part: str) -> bool:
    return part.startswith("_") and not part.startswith("__")


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def _owner(target: str, name: str | None, packages: set[str]) -> str | None:
    """The package (or top-level module) a private import belongs to; None: nothing private.

    `graphflow.tools._executor` belongs to `graphflow.tools`; the private name `_hide` of
    `graphflow.tools.result` too; a private module or name at the top (`graphflow._public`,
    `graphflow.exceptions._hide`) belongs to that module alone.
    """
    parts = target.split(".")
    for i, part in enumerate(parts[1:], start=1):
        if _private(part):
            return ".".join(parts[:i] if i > 1 else parts[:2])
    if name is not None and _private(name):
        owner = target if target in packages else target.rpartition(".")[0]
        return target if owner == "graphflow" else owner
    return None


def reached_privates(
    module: str, is_package: bool, source: str, known: set[str], packages: set[str]
) -> list[str]:
    """`line: what` for every private module or name of another package that `source` imports.

    `module` is the importing module's dotted name; `known` the dotted names of the package's
    modules (to tell `from pkg import sub` from `from mod import name`), `packages` those that
    are packages.
    """
    package = module if is_package else module.rpartition(".")[0]
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        targets: list[tuple[str, str | None]] = []  # (module, imported name or None)
        if isinstance(node, ast.Import):
            targets = [(a.name, None) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = import_base(node, package)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                targets.append((sub, None) if sub in known else (base, alias.name))
        for target, name in targets:
            if target.split(".")[0] != "graphflow":
                continue
            owner = _owner(target, name, packages)
            if owner is None or owner == f"graphflow.{SHARED}":
                continue  # public, or graphflow._internal: shared by design
            if module == owner or module.startswith(owner + "."):
                continue  # inside its own package
            if module == "graphflow" and owner.count(".") == 1:
                continue  # the package's own wiring (`graphflow/__init__` loads `_public`)
            found.append(f"{node.lineno}: {target}" + (f".{name}" if name else ""))
    return found


def test_no_private_module_is_reached_across_packages() -> None:
    modules = _modules()
    packages = {m for m, path in modules.items() if path.name == "__init__.py"}
    offenders = [
        f"{path.relative_to(PACKAGE.parent)}:{where}"
        for module, path in sorted(modules.items())
        for where in reached_privates(
            module, module in packages, path.read_text(encoding="utf-8"), set(modules), packages
        )
    ]
    assert offenders == [], (
        "a private module or name of another package is imported; give what packages share a "
        "home in graphflow/_internal or a public module:\n" + "\n".join(offenders)
    )


def test_the_private_import_check_finds_crossings() -> None:
    known = {
        "graphflow",
        "graphflow.hooks",
        "graphflow.hooks._runner",
        "graphflow.tools",
        "graphflow.tools._executor",
        "graphflow.tools.result",
        "graphflow.exceptions",
        "graphflow._internal",
        "graphflow._internal.workers",
        "graphflow._public",
    }
    source = (
        "from graphflow.hooks._runner import call_sync\n"  # 1: another package's private module
        "from graphflow.tools import _executor\n"  # 2: the same, as `from pkg import mod`
        "from graphflow.exceptions import _hide\n"  # 3: another module's private name
        "from graphflow._internal.workers import submit\n"  # shared by design
        "from graphflow.tools.result import RESULT_KEY\n"  # public
        "from graphflow.strategies._node import node\n"  # same package
        "from ._agent_hooks import guarded\n"  # same package, relative
        "import graphflow.tools._executor as ex\n"  # 8: another package's private module
    )
    packages = {"graphflow", "graphflow.hooks", "graphflow.tools", "graphflow._internal"}
    found = reached_privates("graphflow.strategies.react", False, source, known, packages)
    assert found == [
        "1: graphflow.hooks._runner.call_sync",
        "2: graphflow.tools._executor",
        "3: graphflow.exceptions._hide",
        "8: graphflow.tools._executor",
    ]
    # the package's own wiring: `graphflow/__init__` loads `graphflow._public`
    wiring = "from graphflow import _public\n"
    assert reached_privates("graphflow", True, wiring, known, packages) == []
    # ... which no other module may do
    assert reached_privates("graphflow.cli._app", False, wiring, known, packages) == [
        "1: graphflow._public"
    ]


# -- exceptions ------------------------------------------------------------------------------

_BUILTIN_ERRORS = {
    name
    for name, value in vars(builtins).items()
    if inspect.isclass(value) and issubclass(value, BaseException)
}
_FOREIGN_SUFFIXES = ("Error", "Exception", "Exit", "Interrupt", "Warning", "BubbleUp")


def exception_classes(sources: dict[str, str]) -> dict[str, list[tuple[str, int]]]:
    """Class name -> [(file, line)] of every exception class defined in `sources` (file -> text).

    A class is an exception when a base is a builtin exception, another exception class of
    `sources`, or a foreign class named like one (`yaml.MarkedYAMLError`, `GraphBubbleUp`).
    """
    classes: list[tuple[str, int, str, list[str]]] = []
    for file, text in sources.items():
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ClassDef):
                bases = [ast.unparse(b).rpartition(".")[2] for b in node.bases]
                classes.append((node.name, node.lineno, file, bases))
    errors: set[str] = set()
    changed = True
    while changed:
        changed = False
        for name, _, _, bases in classes:
            if name in errors:
                continue
            if any(
                b in _BUILTIN_ERRORS or b in errors or b.endswith(_FOREIGN_SUFFIXES) for b in bases
            ):
                errors.add(name)
                changed = True
    found: dict[str, list[tuple[str, int]]] = {}
    for name, line, file, _ in classes:
        if name in errors:
            found.setdefault(name, []).append((file, line))
    return found


def test_every_exception_class_is_defined_in_exceptions_py() -> None:
    sources = {
        path.relative_to(PACKAGE).as_posix(): path.read_text(encoding="utf-8")
        for path in sorted(PACKAGE.rglob("*.py"))
    }
    found = exception_classes(sources)
    elsewhere = sorted(
        f"graphflow/{file}:{line} {name}"
        for name, places in found.items()
        for file, line in places
        if file != "exceptions.py"
    )
    assert elsewhere == [], "define (and document) these in graphflow/exceptions.py:\n" + "\n".join(
        elsewhere
    )
    assert {"GraphflowError", "ToolError", "SpecError", "CliError"} <= set(found)


def test_the_exception_check_finds_exception_classes() -> None:
    found = exception_classes(
        {
            "a.py": "class A(ValueError): pass\nclass B(A): pass\nclass C: pass\n",
            "b.py": "class D(yaml.MarkedYAMLError): pass\nclass E(B, dict): pass\n",
        }
    )
    assert found == {"A": [("a.py", 1)], "B": [("a.py", 2)], "D": [("b.py", 1)], "E": [("b.py", 2)]}


def test_every_exception_sits_under_exactly_one_root() -> None:
    from graphflow import exceptions as e

    roots = (e.GraphflowConfigError, e.AgentRunError)
    defined = [
        value
        for value in vars(e).values()
        if inspect.isclass(value)
        and issubclass(value, BaseException)
        and value.__module__ == e.__name__
    ]
    assert len(defined) >= 40
    homeless = [
        cls.__name__
        for cls in defined
        if cls is not e.GraphflowError
        and cls not in roots
        and sum(issubclass(cls, root) for root in roots) != 1
    ]
    assert homeless == [], f"put each under GraphflowConfigError or AgentRunError: {homeless}"
    assert {cls.__name__ for cls in defined} == set(e.__all__)


def test_old_import_paths_and_builtin_bases_still_work() -> None:
    from graphflow.exceptions import (
        AbandonedModelCall,
        CheckpointTypeError,
        MCPSessionLostError,
        ModelTimeoutError,
        RunStateError,
        SpecError,
    )
    from graphflow.models.timeout import AbandonedModelCall as from_timeout
    from graphflow.spec import SpecError as from_spec

    assert from_timeout is AbandonedModelCall and from_spec is SpecError
    assert issubclass(AbandonedModelCall, ModelTimeoutError) and issubclass(
        AbandonedModelCall, TimeoutError
    )
    assert issubclass(RunStateError, LookupError)
    assert issubclass(CheckpointTypeError, TypeError)
    assert issubclass(MCPSessionLostError, ConnectionError)


# -- approval words ----------------------------------------------------------------------------


def test_the_approval_request_type_is_spelled_once() -> None:
    from graphflow._internal.approval import APPROVAL_REQUEST

    places = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {
            id(n.value)
            for n in ast.walk(tree)
            if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)
        }
        places.extend(
            f"{path.relative_to(PACKAGE).as_posix()}:{n.lineno}"
            for n in ast.walk(tree)
            if isinstance(n, ast.Constant)
            and n.value == APPROVAL_REQUEST
            and id(n) not in docstrings
        )
    assert len(places) == 1 and places[0].startswith("_internal/approval.py:"), places
