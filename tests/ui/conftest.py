"""Fixtures of the UI tests: a SQLite store with seeded runs, the app, a served app, a browser."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.ui import ui_targets
from tests.ui.ui_support import Served, seed  # noqa: E402


@pytest.fixture
def store(tmp_path: Path) -> str:
    """A SQLite store holding a finished pipe run, an interrupted payer run and an evil answer."""
    ui_targets.PAID.clear()
    ui_targets.GATE.clear()
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    seed(url, "pipe", "pipe-1")
    seed(url, "payer", "pay-1")
    seed(url, "evil", "evil-1")
    return url


@pytest.fixture
def targets() -> dict[str, Any]:
    return ui_targets.targets()


@pytest.fixture
def served(store: str, targets: dict[str, Any]) -> Iterator[Served]:
    from graphflow.ui import create_app

    with Served(create_app(targets, store)) as server:
        yield server


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """Debian's Chromium, headless, driven by Playwright (no browser download)."""
    from tests.visualize.viz_support import CHROMIUM_ARGS, missing, program

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
