"""Fixtures of the UI tests: a SQLite store with seeded runs, the app, a served app, a browser."""

from __future__ import annotations

import socket
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent.parent / "visualize"))

import ui_targets  # noqa: E402

TARGET_KEY = "graphflow_target"


def seed(url: str, target: str, thread_id: str, input: Any = "go") -> dict[str, Any]:
    """Run `target` on `url` as `graphflow run` would (its target recorded in the checkpoints)."""
    agent = ui_targets.targets()[target]
    return agent.invoke(
        input, thread_id=thread_id, checkpointer=url, config={"metadata": {TARGET_KEY: target}}
    )


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


class Served:
    """A uvicorn server on 127.0.0.1 in a background thread."""

    def __init__(self, app: Any) -> None:
        import uvicorn

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(
            app, host="127.0.0.1", port=self.port, log_level="warning", timeout_graceful_shutdown=5
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> Served:
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the UI server did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        ui_targets.GATE.set()
        self.server.should_exit = True
        self.thread.join(timeout=30)


@pytest.fixture
def served(store: str, targets: dict[str, Any]) -> Iterator[Served]:
    from graphflow.ui import create_app

    with Served(create_app(targets, store)) as server:
        yield server


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """Debian's Chromium, headless, driven by Playwright (no browser download)."""
    from viz_support import CHROMIUM_ARGS, missing, program

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
