"""Fixtures shared by every test folder: a search tool, `run_mode` (sync and async runs), and a
run store with call counters for fault tests (`calls`, `db`, `store`, `threads_in`)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support.faults import Calls, stored_threads
from tests.support.helpers import search


@pytest.fixture
def search_tool():
    return search


@dataclass(frozen=True)
class RunMode:
    """Drives an agent through one of its two APIs, so one test body checks both.

    `sync` calls `invoke`/`resume`; `async` calls `ainvoke`/`aresume`, each call in its own event
    loop (as a script that calls `asyncio.run` per request would).
    """

    name: str

    @property
    def is_async(self) -> bool:
        return self.name == "async"

    def __str__(self) -> str:
        return self.name

    def invoke(self, agent: Any, input: Any, **kwargs: Any) -> Any:
        if self.is_async:
            return asyncio.run(agent.ainvoke(input, **kwargs))
        return agent.invoke(input, **kwargs)

    def resume(self, agent: Any, thread_id: str, value: Any = None, **kwargs: Any) -> Any:
        if self.is_async:
            return asyncio.run(agent.aresume(thread_id, value, **kwargs))
        return agent.resume(thread_id, value, **kwargs)


@pytest.fixture(params=["sync", "async"])
def run_mode(request: pytest.FixtureRequest) -> RunMode:
    """Runs the test twice: through `invoke`/`resume`, then through `ainvoke`/`aresume`."""
    return RunMode(request.param)


@pytest.fixture
def calls() -> Calls:
    return Calls()


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """Where a test's SQLite run store lives (not created)."""
    return tmp_path / "runs.db"


@pytest.fixture
def store(db: Path) -> str:
    """A `sqlite:///` URL for the test's own run store."""
    return f"sqlite:///{db}"


@pytest.fixture
def threads_in() -> Callable[[Path], list[str]]:
    return stored_threads


@pytest.fixture
def no_checkpointer_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    monkeypatch.delenv("GRAPHFLOW_CHECKPOINTER", raising=False)
    yield monkeypatch
