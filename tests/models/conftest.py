"""Fixtures: a local OpenAI-compatible server per test, and an environment pointing at it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from graphflow.models import forget_learned, presets
from tests.models.openai_server import (
    BEHAVIOURS,
    OpenAIServer,
)


@pytest.fixture(autouse=True)
def _fresh_memory() -> Iterator[None]:
    # what `auto` learned about one test's server must not steer the next test, and presets
    # a test registers must not outlive it
    forget_learned()
    saved = (dict(presets._presets), dict(presets._ALIASES))
    yield
    forget_learned()
    presets._presets.clear()
    presets._presets.update(saved[0])
    presets._ALIASES.clear()
    presets._ALIASES.update(saved[1])


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in (
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "OPENAI_API_BASE",
        "GRAPHFLOW_MODEL",
        "GRAPHFLOW_MAX_TOKENS",
        "GRAPHFLOW_MODEL_TIMEOUT",
        "GRAPHFLOW_MODEL_RETRIES",
        "GRAPHFLOW_PROVIDER",
        "DASHSCOPE_API_KEY",
        "DEEPSEEK_API_KEY",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    return monkeypatch


@pytest.fixture(params=BEHAVIOURS)
def server(request: pytest.FixtureRequest) -> Iterator[OpenAIServer]:
    """A running server in each behaviour (the test runs once per behaviour)."""
    with OpenAIServer(request.param) as running:
        yield running


@pytest.fixture
def make_server() -> Iterator[type[OpenAIServer]]:
    """Start servers in any behaviour or error mode; all are stopped after the test."""
    started: list[OpenAIServer] = []

    class Started(OpenAIServer):
        def start(self) -> OpenAIServer:
            started.append(self)
            return super().start()

    yield Started
    for s in started:
        s.stop()


@pytest.fixture
def openai_env(clean_env: pytest.MonkeyPatch, server: OpenAIServer) -> OpenAIServer:
    """OPENAI_BASE_URL / OPENAI_API_KEY point at `server`."""
    clean_env.setenv("OPENAI_BASE_URL", server.base_url)
    clean_env.setenv("OPENAI_API_KEY", "sk-test")
    return server
