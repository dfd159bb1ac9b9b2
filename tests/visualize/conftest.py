"""Fixtures of the visualize tests: a headless Chromium (Debian's, driven by Playwright), npm mermaid."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.visualize.viz_support import CHROMIUM_ARGS, MERMAID_JS, missing, program


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """Debian's Chromium, headless, driven by Playwright (no browser download).

    Module-scoped: Playwright's sync API keeps an event loop running on the main thread while it
    is open, which would break later tests that call `asyncio.run`.
    """
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
