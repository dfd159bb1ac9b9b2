"""Fixtures for the tool tests: `mode` runs each test under sync `invoke` and `ainvoke`."""

from __future__ import annotations

import asyncio

import pytest


class Runner:
    """Runs and resumes agents under the test's mode."""

    def __init__(self, mode: str) -> None:
        self.mode = mode

    def __call__(self, agent, input, **kwargs):
        if self.mode == "sync":
            return agent.invoke(input, **kwargs)
        return asyncio.run(agent.ainvoke(input, **kwargs))

    def resume(self, agent, thread_id, value=None):
        if self.mode == "sync":
            return agent.resume(thread_id, value)
        return asyncio.run(agent.aresume(thread_id, value))


@pytest.fixture(params=["sync", "async"])
def mode(request):
    return request.param


@pytest.fixture
def run(mode):
    return Runner(mode)
