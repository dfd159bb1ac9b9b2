"""Every concept page's python blocks run, in order, as one script per page; links resolve."""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGES = (
    "agents.md",
    "data-between-agents.md",
    "hooks.md",
    "context.md",
    "tools-and-mcp.md",
    "durable-runs.md",
    "drawing.md",
    "events-and-cli.md",
    "specs.md",
    "langgraph-server.md",
    "testing.md",
    "batch.md",
    "ui.md",
)
"""The concept pages (docs/openai-compatible.md has its own test in tests/models)."""
REFERENCE = ("openai-compatible.md", "architecture.md")
"""Pages without a script of their own (architecture.md's table is read by test_layers)."""
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def _blocks(page: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", (DOCS / page).read_text(), re.DOTALL)


@pytest.mark.parametrize("page", PAGES)
def test_page_code_runs(page: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("GRAPHFLOW_CHECKPOINTER", raising=False)
    monkeypatch.syspath_prepend(str(tmp_path))
    blocks = _blocks(page)
    assert blocks, f"docs/{page} has no python block"
    # the page runs as a module of its own, as a reader's script would
    module = types.ModuleType(f"docs_{page[:-3].replace('-', '_')}")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    for number, code in enumerate(blocks, 1):
        source = compile(code, f"docs/{page} (python block {number})", "exec", dont_inherit=True)
        exec(source, module.__dict__)


def test_every_page_is_linked_from_the_readme() -> None:
    readme = (ROOT / "README.md").read_text()
    linked = set(LINK.findall(readme))
    missing = [p for p in (*PAGES, *REFERENCE) if f"docs/{p}" not in linked]
    assert not missing, f"README.md does not link {missing}"
    assert set(p.name for p in DOCS.glob("*.md")) == {*PAGES, *REFERENCE}


@pytest.mark.parametrize(
    "doc",
    ["README.md", "benchmarks/README.md", *(f"docs/{p}" for p in (*PAGES, *REFERENCE))],
)
def test_relative_links_resolve(doc: str) -> None:
    path = ROOT / doc
    for target in LINK.findall(path.read_text()):
        if "://" in target:
            continue
        assert (path.parent / target).exists(), f"{doc} links {target}, which does not exist"
