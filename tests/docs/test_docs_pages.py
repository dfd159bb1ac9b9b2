"""Every python block of the docs runs as copied, alone — or says it continues the block above
and runs after it; links resolve."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.docs.blocks import CONTINUES, Block, chain, page_blocks

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
"""The concept pages."""
REFERENCE = ("openai-compatible.md", "architecture.md")
"""Reference pages (docs/openai-compatible.md's table is checked in tests/models, architecture.md's
by test_layers); their python blocks run here too."""
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
BLOCKS = [block for page in (*PAGES, *REFERENCE) for block in page_blocks(f"docs/{page}")]


def _alone(block: Block) -> str:
    return f"alone: {block.label}"


def _after(block: Block) -> str:
    return f"after the blocks it continues: {block.label}"


@pytest.fixture(scope="module")
def ran() -> dict[str, dict]:
    """Every block alone, and every continuation after the blocks it continues: each in a fresh
    process and directory (tests/docs/run_blocks.py), without an API key or a default store."""
    jobs = []
    for block in BLOCKS:
        jobs.append({"id": _alone(block), "blocks": [[block.label, block.code]]})
        if block.continues:
            blocks = chain(page_blocks(block.doc), block)
            jobs.append({"id": _after(block), "blocks": [[b.label, b.code] for b in blocks]})
    env = {
        k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "GRAPHFLOW_CHECKPOINTER")
    }
    env["PYTHONPATH"] = os.pathsep.join(filter(None, (str(ROOT), env.get("PYTHONPATH"))))
    done = subprocess.run(
        [sys.executable, "-m", "tests.docs.run_blocks"],
        input=json.dumps(jobs),
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=3600,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return {result["id"]: result for result in json.loads(done.stdout)}


def _report(result: dict) -> str:
    return f"{result['error']}\n--- output ---\n{result['output']}"


@pytest.mark.parametrize(
    "block", [b for b in BLOCKS if not b.continues], ids=lambda b: f"{b.doc}#{b.number}"
)
def test_block_runs_as_copied_alone(block: Block, ran: dict[str, dict]) -> None:
    result = ran[_alone(block)]
    assert result["ok"], (
        f"{block.label} fails in a new script of its own. Make it self-contained (its imports, "
        f"its own objects), or start it with `{CONTINUES}` if it needs the block before it:\n"
        + _report(result)
    )


@pytest.mark.parametrize(
    "block", [b for b in BLOCKS if b.continues], ids=lambda b: f"{b.doc}#{b.number}"
)
def test_continuation_runs_after_the_blocks_it_continues(
    block: Block, ran: dict[str, dict]
) -> None:
    after = ran[_after(block)]
    assert after["ok"], f"{block.label} fails after the blocks it continues:\n" + _report(after)
    alone = ran[_alone(block)]
    assert not alone["ok"], (
        f"{block.label} says it continues the block above, but runs alone: drop `{CONTINUES}`"
    )
    assert "NameError" in alone["error"], (
        f"{block.label} fails alone for another reason than a name from above:\n" + _report(alone)
    )


def test_a_page_starts_with_a_block_that_stands_alone() -> None:
    firsts = [f"docs/{p}" for p in (*PAGES, *REFERENCE) if page_blocks(f"docs/{p}")]
    assert not [d for d in firsts if page_blocks(d)[0].continues]
    assert any(b.continues for b in BLOCKS)  # the mark is in use, so the test above can fail
    for page in PAGES:
        assert page_blocks(f"docs/{page}"), f"docs/{page} has no python block"


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
