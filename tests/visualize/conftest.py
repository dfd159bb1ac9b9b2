"""Fixtures of the visualize tests: snapshots, real renderers, a headless Chromium.

External programs (Graphviz `dot`, PlantUML, Chromium) and npm `mermaid` are installed by
`.ci/setup_viz.sh`. Locally a test that needs a missing one is skipped; with CI set it fails.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

REPO = Path(__file__).resolve().parents[2]
SNAPSHOTS = Path(__file__).parent / "snapshots"
MERMAID_JS = REPO / ".cache" / "npm" / "node_modules" / "mermaid" / "dist" / "mermaid.min.js"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def missing(what: str) -> None:
    """Skip locally, fail under CI (CI installs everything with .ci/setup_viz.sh)."""
    message = f"{what} is not installed (run .ci/setup_viz.sh)"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


def program(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        missing(f"the `{name}` program")
    assert path is not None
    return path


def check_snapshot(name: str, text: str) -> None:
    """Compare with tests/visualize/snapshots/<name>; GRAPHFLOW_UPDATE_SNAPSHOTS=1 rewrites it."""
    path = SNAPSHOTS / name
    if os.environ.get("GRAPHFLOW_UPDATE_SNAPSHOTS"):
        SNAPSHOTS.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return
    assert path.exists(), f"no snapshot {name}: GRAPHFLOW_UPDATE_SNAPSHOTS=1 pytest tests/visualize"
    assert text == path.read_text(encoding="utf-8"), (
        f"{name} changed; if intended: GRAPHFLOW_UPDATE_SNAPSHOTS=1 pytest tests/visualize"
    )


@pytest.fixture(scope="session")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """Debian's Chromium, headless, driven by Playwright (no browser download)."""
    chromium = program("chromium")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing("the playwright Python package")
    profile = tmp_path_factory.mktemp("chromium-profile")
    with sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            str(profile), executable_path=chromium, headless=True, args=CHROMIUM_ARGS
        )
        yield context
        context.close()


@pytest.fixture(scope="session")
def mermaid_js() -> Path:
    if not MERMAID_JS.exists():
        missing(f"npm mermaid ({MERMAID_JS})")
    return MERMAID_JS
