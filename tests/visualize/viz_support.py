"""Helpers of the visualize tests: snapshots, real renderers, paths.

External programs (Graphviz `dot`, PlantUML, Chromium) and npm `mermaid` are installed by
`.ci/setup_viz.sh`. Locally a test that needs a missing one is skipped; with CI set it fails.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SNAPSHOTS = Path(__file__).parent / "snapshots"
MERMAID_JS = REPO / ".cache" / "viz-npm" / "node_modules" / "mermaid" / "dist" / "mermaid.min.js"
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
