"""Fixtures shared by every test folder: a search tool, and `run_mode` (sync and async runs)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import pytest
from shared_helpers import search  # this folder is on sys.path: see shared_helpers' docstring


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
