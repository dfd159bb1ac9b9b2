"""Issue 9, point 6: an unreachable endpoint, a 401, a 429 and a 5xx become `ModelCallError`s
naming the agent path, the model, the endpoint and the resume command; the run stays resumable
and the resume repeats none of the calls that completed before the failure.

Against the local OpenAI-compatible server (tests/models/openai_server.py), over real HTTP.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from graphflow import FunctionAgent, ReactAgent, SequentialAgent
from graphflow.exceptions import (
    AgentRunError,
    ModelAuthError,
    ModelCallError,
    ModelConnectionError,
    ModelRateLimitError,
    ModelServerError,
)
from graphflow.models import forget_learned
from tests.models.openai_server import OpenAIServer


@pytest.fixture
def endpoint(monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenAIServer]:
    """A local server; OPENAI_BASE_URL / OPENAI_API_KEY point at it (nothing else is set)."""
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_BASE", "GRAPHFLOW_MODEL"):
        monkeypatch.delenv(name, raising=False)
    for name in ("GRAPHFLOW_MODEL_TIMEOUT", "GRAPHFLOW_MODEL_RETRIES", "GRAPHFLOW_PROVIDER"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    forget_learned()
    server = OpenAIServer("openai_strict").start()
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    yield server
    server.stop()
    forget_learned()


def _team(calls, retries: int) -> SequentialAgent:
    writer = ReactAgent(
        name="writer",
        model="openai:gpt-4o-mini",
        model_settings={"max_retries": retries},
        instruction="Write about {notes}.",
        output_key="draft",
    )
    return SequentialAgent(
        name="team",
        sub_agents=[
            FunctionAgent(name="prep", fn=calls.step("prep", "pumps"), output_key="notes"),
            SequentialAgent(name="inner", sub_agents=[writer]),
        ],
    )


# fault -> (how the server breaks, error class, words of the message, SDK retries, requests sent)
FAULTS = {
    "unreachable": ("stopped", ModelConnectionError, "cannot reach the model endpoint", 0, 0),
    "401": ("auth_error", ModelAuthError, "refused the credentials (HTTP 401)", 2, 1),
    "429": ("flaky_429", ModelRateLimitError, "rate limiting (HTTP 429)", 0, 1),
    "5xx": ("server_error", ModelServerError, "failed (HTTP 500)", 2, 3),
}


@pytest.mark.parametrize("fault", list(FAULTS))
def test_a_model_call_error_names_path_model_endpoint_and_the_run_resumes(
    fault: str, endpoint: OpenAIServer, store, calls
) -> None:
    mode, kind, says, retries, sent = FAULTS[fault]
    url = endpoint.base_url
    if mode == "stopped":
        endpoint.stop()  # the port stays reserved for the restart below
    else:
        endpoint.behaviour = mode
    team = _team(calls, retries)
    with pytest.raises(kind) as caught:
        team.invoke("go", thread_id="t-9", checkpointer=store)
    error = caught.value
    assert isinstance(error, ModelCallError) and isinstance(error, AgentRunError)
    assert (error.agent, error.agent_path, error.model, error.base_url) == (
        "writer",
        "inner/writer",
        "gpt-4o-mini",
        url,
    )
    assert error.thread_id == "t-9"
    message = str(error)
    assert message.startswith("Agent `inner/writer`: ")
    assert says in message and f"model 'gpt-4o-mini' at {url}" in message
    if retries and error.retryable:  # (a 401 is not retried: one request)
        assert f"at {url}, after {retries} retries)" in message
    assert "graphflow resume t-9" in message and "agent.resume('t-9')" in message
    assert "\n" not in message
    assert len(endpoint.requests) == sent
    # the fault is repaired; the run resumes and only the failed call is made again
    if mode == "stopped":
        endpoint.start()
    elif mode != "flaky_429":  # (flaky_429 answers every other request: the next one)
        endpoint.behaviour = "openai_strict"
    state = team.resume("t-9")
    assert state["draft"].startswith("gpt-4o-mini answers: Write about pumps.")
    assert calls["prep"] == 1
    assert len(endpoint.answered) == 1


def test_model_errors_in_async_runs_are_explained_too(endpoint: OpenAIServer, store, calls) -> None:
    import asyncio

    endpoint.behaviour = "auth_error"
    team = _team(calls, 0)
    with pytest.raises(ModelAuthError, match=r"^Agent `inner/writer`: .*OPENAI_API_KEY"):
        asyncio.run(team.ainvoke("go", thread_id="a", checkpointer=store))
    endpoint.behaviour = "openai_strict"
    assert asyncio.run(team.aresume("a", checkpointer=store))["draft"].startswith("gpt-4o-mini")
    assert calls["prep"] == 1
