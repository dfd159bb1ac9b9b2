"""Model-call failures become one clear `ModelCallError`, and the run stays resumable."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

import openai
import pytest
from langchain_core.exceptions import ModelRateLimitError as LangChainRateLimit
from langgraph.errors import GraphInterrupt

from graphflow import (
    FunctionAgent,
    LlmRoutingAgent,
    ModelRetry,
    ReactAgent,
    SequentialAgent,
)
from graphflow.cli import main as cli_main
from graphflow.exceptions import (
    AgentRunError,
    ModelAuthError,
    ModelCallError,
    ModelConnectionError,
    ModelRateLimitError,
    ModelRequestError,
    ModelServerError,
    ModelTimeoutError,
)
from graphflow.models import agent_path_of, explain_model_error, openai_model
from tests.models.openai_server import OpenAIServer


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _team(**settings: object) -> SequentialAgent:
    writer = ReactAgent(
        name="writer", model="openai:gpt-4o-mini", model_settings=dict(settings), output_key="out"
    )
    return SequentialAgent(
        name="team", sub_agents=[SequentialAgent(name="inner", sub_agents=[writer])]
    )


def test_unreachable_endpoint(clean_env) -> None:
    url = f"http://127.0.0.1:{_free_port()}/v1"
    clean_env.setenv("OPENAI_BASE_URL", url)
    clean_env.setenv("OPENAI_API_KEY", "sk-test")
    with pytest.raises(ModelConnectionError) as caught:
        _team(max_retries=0).invoke("hi", thread_id="t-1")
    error = caught.value
    message = str(error)
    assert message.startswith("Agent `inner/writer`: cannot reach the model endpoint")
    assert "Connection refused)" in message  # the transport's words, not only the SDK's
    assert f"model 'gpt-4o-mini' at {url}" in message
    assert f"OPENAI_BASE_URL (now {url})" in message
    assert "graphflow resume t-1" in message and "agent.resume('t-1')" in message
    assert "\n" not in message  # one line in the CLI
    assert (error.agent, error.agent_path, error.model, error.base_url) == (
        "writer",
        "inner/writer",
        "gpt-4o-mini",
        url,
    )
    assert error.thread_id == "t-1" and error.retryable and error.status_code is None
    assert isinstance(error, AgentRunError) and isinstance(error, ConnectionError)
    assert isinstance(error.__cause__, openai.APIConnectionError)


@pytest.mark.parametrize(
    ("mode", "kind", "status", "fix", "requests"),
    [
        ("auth_error", ModelAuthError, 401, "Check the API key (OPENAI_API_KEY)", 1),
        ("rate_limited", ModelRateLimitError, 429, "after 2 retries", 3),
        ("server_error", ModelServerError, 500, "after 2 retries", 3),
        ("unknown_model", ModelRequestError, 404, "Check the model name (GRAPHFLOW_MODEL", 1),
    ],
)
def test_http_errors_are_explained_and_the_run_resumes(
    make_server, clean_env, tmp_path: Path, mode, kind, status, fix, requests
) -> None:
    server: OpenAIServer = make_server(mode).start()
    clean_env.setenv("OPENAI_BASE_URL", server.base_url)
    clean_env.setenv("OPENAI_API_KEY", "sk-test")
    team = _team()
    url = f"sqlite:///{tmp_path}/runs.db"
    with pytest.raises(kind) as caught:
        team.invoke("hi", thread_id="t", checkpointer=url)
    assert caught.value.status_code == status
    assert f"HTTP {status}" in str(caught.value) and fix in str(caught.value)
    assert len(server.requests) == requests  # only transient errors are retried
    server.behaviour = "openai_strict"  # the endpoint is fixed
    result = team.resume("t", checkpointer=url)
    assert result["out"].startswith("gpt-4o-mini answers: hi")
    assert result["agent_status"]["team"] == "completed"


@pytest.mark.parametrize("streamed", [False, True], ids=["invoke", "stream"])
def test_a_reply_cut_off_half_way(make_server, clean_env, tmp_path: Path, streamed) -> None:
    server: OpenAIServer = make_server("cut_reply").start()
    clean_env.setenv("OPENAI_BASE_URL", server.base_url)
    clean_env.setenv("OPENAI_API_KEY", "sk-test")
    team = _team()
    url = f"sqlite:///{tmp_path}/runs.db"
    with pytest.raises(ModelConnectionError) as caught:
        if streamed:
            for _ in team.stream("hi", thread_id="t", checkpointer=url):
                pass
        else:
            team.invoke("hi", thread_id="t", checkpointer=url)
    message = str(caught.value)
    # a plain reply is retried by the client; a stream that broke off is not (and says so)
    what, sent = (
        ("in the middle of its streamed reply (model 'gpt-4o-mini' at {url})", 1)
        if streamed
        else ("before it replied in full (model 'gpt-4o-mini' at {url}, after 2 retries)", 3)
    )
    assert message.startswith(
        "Agent `inner/writer`: the model endpoint closed the connection "
        + what.format(url=server.base_url)
    )
    assert "peer closed connection without sending complete message body" in message
    assert "The server went away mid-request" in message and "agent.resume('t')" in message
    assert [r.outcome for r in server.requests] == ["cut"] * sent
    server.behaviour = "openai_strict"  # the server is back: the whole reply, not the cut one
    result = team.resume("t", checkpointer=url)
    assert result["out"].startswith("gpt-4o-mini answers: hi more0")


def test_timeout(make_server, clean_env) -> None:
    server = make_server("slow", delay=1.0).start()
    clean_env.setenv("GRAPHFLOW_MODEL_TIMEOUT", "0.2")
    agent = ReactAgent(
        name="slowpoke",
        model="openai:m",
        model_settings={"base_url": server.base_url, "max_retries": 0},
    )
    with pytest.raises(
        ModelTimeoutError, match=r"did not answer in time \(0\.2 s\).*GRAPHFLOW_MODEL_TIMEOUT"
    ) as caught:
        agent.invoke("hi")
    assert isinstance(caught.value, TimeoutError)


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_the_agents_model_timeout_names_the_path_endpoint_and_resume(
    make_server, clean_env, tmp_path: Path, mode
) -> None:
    # the agent's model_timeout bounds the whole call, the client's attempts included
    server: OpenAIServer = make_server("slow", delay=1.5).start()
    clean_env.setenv("OPENAI_BASE_URL", server.base_url)
    clean_env.setenv("OPENAI_API_KEY", "sk-test")
    writer = ReactAgent(name="writer", model="openai:gpt-4o-mini", model_timeout=0.4)
    team = SequentialAgent(
        name="team", sub_agents=[SequentialAgent(name="inner", sub_agents=[writer])]
    )
    url = f"sqlite:///{tmp_path}/runs.db"
    with pytest.raises(ModelTimeoutError) as caught:
        if mode == "sync":
            team.invoke("hi", thread_id="t", checkpointer=url)
        else:
            asyncio.run(team.ainvoke("hi", thread_id="t", checkpointer=url))
    error = caught.value
    message = str(error)
    assert message.startswith(
        "Agent `inner/writer`: the model call took longer than model_timeout=0.4 s and was "
        f"abandoned (model 'gpt-4o-mini' at {server.base_url}). Raise the agent's model_timeout "
        "(it bounds the whole call: the client's 120 s per attempt × 3 attempts should fit in it"
    )
    assert "ModelRetry" in message and "agent.resume('t')" in message and "\n" not in message
    assert (error.agent_path, error.base_url, error.thread_id) == (
        "inner/writer",
        server.base_url,
        "t",
    )
    server.delay = 0.0
    assert team.resume("t", checkpointer=url)["agent_status"]["team"] == "completed"


def test_a_router_falls_back_when_its_model_timeout_passes(make_server, clean_env) -> None:
    server: OpenAIServer = make_server("slow", delay=1.5).start()
    clean_env.setenv("OPENAI_BASE_URL", server.base_url)
    router = _router("human")
    router.model_timeout = 0.3
    assert router.invoke("refund please")["answer"] == "a human will call you"


def test_timeouts_are_retried_by_default(make_server, clean_env) -> None:
    server: OpenAIServer = make_server("slow", delay=1.0).start()
    clean_env.setenv("GRAPHFLOW_MODEL_TIMEOUT", "0.2")
    agent = ReactAgent(name="a", model="openai:m", model_settings={"base_url": server.base_url})
    with pytest.raises(ModelTimeoutError, match=r"\(0\.2 s\).*after 2 retries"):
        agent.invoke("hi")
    assert [r.retry for r in server.requests] == [0, 1, 2]


def test_retries_back_off(make_server, clean_env) -> None:
    # without Retry-After the client waits 0.5 s, then 1 s (less up to 25% jitter) ...
    server: OpenAIServer = make_server("rate_limited", retry_after_ms=None).start()
    agent = ReactAgent(name="a", model="openai:m", model_settings={"base_url": server.base_url})
    with pytest.raises(ModelRateLimitError, match=r"after 2 retries"):
        agent.invoke("hi")
    first, second, third = (r.at for r in server.requests)
    assert second - first >= 0.37 and third - second >= 0.74
    # ... and with one, it waits what the server asks (10 ms here)
    told: OpenAIServer = make_server("rate_limited", retry_after_ms=10).start()
    again = ReactAgent(name="a", model="openai:m", model_settings={"base_url": told.base_url})
    with pytest.raises(ModelRateLimitError):
        again.invoke("hi")
    assert len(told.requests) == 3 and told.requests[-1].at - told.requests[0].at < 0.37 + 0.74


def test_rate_limit_without_retries_then_model_retry_hook(make_server, clean_env) -> None:
    server = make_server("flaky_429").start()
    plain = ReactAgent(
        name="a", model="openai:m", model_settings={"base_url": server.base_url, "max_retries": 0}
    )
    with pytest.raises(
        ModelRateLimitError, match=r"rate limiting \(HTTP 429\).*GRAPHFLOW_MODEL_RETRIES"
    ):
        plain.invoke("hi")
    assert [r.outcome for r in server.requests] == ["429"]
    # the ModelRetry hook still sees the provider's own error and retries it
    fresh = make_server("flaky_429").start()
    hooked = ReactAgent(
        name="b",
        model="openai:m",
        model_settings={"base_url": fresh.base_url, "max_retries": 0},
        hooks=[ModelRetry(max_attempts=2, backoff=0)],
        output_key="out",
    )
    assert hooked.invoke("hi")["out"].startswith("m answers: hi")
    assert [r.outcome for r in fresh.requests] == ["429", "answered"]


def test_async_errors_are_explained_too(clean_env) -> None:
    url = f"http://127.0.0.1:{_free_port()}/v1"
    agent = ReactAgent(
        name="a", model="openai:m", model_settings={"base_url": url, "max_retries": 0}
    )
    with pytest.raises(ModelConnectionError, match=r"Agent `a`: cannot reach"):
        asyncio.run(agent.ainvoke("hi"))


def _router(fallback: str | None) -> LlmRoutingAgent:
    return LlmRoutingAgent(
        name="router",
        model="openai:m",
        sub_agents=[
            FunctionAgent(name="billing", fn=lambda s: "billing", output_key="b"),
            FunctionAgent(name="human", fn=lambda s: "a human will call you", output_key="h"),
        ],
        fallback=fallback,
        output_key="answer",
    )


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_router_fallback_catches_provider_errors(make_server, clean_env, mode) -> None:
    server = make_server("server_error").start()
    clean_env.setenv("OPENAI_BASE_URL", server.base_url)
    router = _router("human")
    run = router.invoke if mode == "sync" else (lambda x: asyncio.run(router.ainvoke(x)))
    assert run("refund please")["answer"] == "a human will call you"
    assert len(server.requests) == 3  # after the client's retries
    with pytest.raises(ModelServerError, match=r"Agent `router`: the model endpoint failed"):
        _router(None).invoke("refund please")


@pytest.mark.parametrize(
    ("mode", "kind", "fix"),
    [
        ("unreachable", ModelConnectionError, "Check that the server is running"),
        ("slow", ModelTimeoutError, "GRAPHFLOW_MODEL_TIMEOUT"),
        ("auth_error", ModelAuthError, "Check the API key (OPENAI_API_KEY)"),
        ("rate_limited", ModelRateLimitError, "GRAPHFLOW_MODEL_RETRIES"),
        ("server_error", ModelServerError, "check its logs"),
    ],
)
def test_cli_prints_one_line(
    make_server, clean_env, tmp_path: Path, capsys, mode, kind, fix
) -> None:
    if mode == "unreachable":
        url = f"http://127.0.0.1:{_free_port()}/v1"
    else:
        url = make_server(mode, delay=2.0).start().base_url
    clean_env.setenv("GRAPHFLOW_MODEL_TIMEOUT", "0.3")
    app = tmp_path / "app.py"
    app.write_text(
        "from graphflow import ReactAgent\n"
        f"agent = ReactAgent(name='a', model='openai:m', model_settings={{'base_url': {url!r}, "
        "'api_key': 'sk-test', 'max_retries': 1})\n"
    )
    code = cli_main(
        [
            "--checkpointer",
            f"sqlite:///{tmp_path}/runs.db",
            "run",
            f"{app}:agent",
            "hi",
            "--thread-id",
            "t9",
        ]
    )
    assert code == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert lines[0].startswith("graphflow: thread t9")
    assert len(lines) == 3  # the thread, the error, how to continue
    error = lines[1]
    assert error.startswith(f"graphflow: {kind.__name__}: Agent `a`:")
    assert f"model 'm' at {url}" in error and fix in error
    assert lines[-1].startswith("graphflow: the run can continue:") and " resume t9 " in lines[-1]
    assert "graphflow resume t9" in error


def test_explain_model_error_leaves_other_errors_alone() -> None:
    model = openai_model("m", base_url="http://127.0.0.1:9/v1")
    assert explain_model_error(ValueError("bug"), agent="a", model=model) is None
    assert explain_model_error(GraphInterrupt(), agent="a", model=model) is None
    assert explain_model_error(ModelAuthError("x"), agent="a", model=model) is None
    limited = explain_model_error(LangChainRateLimit("slow down"), agent="a", model=model)
    assert isinstance(limited, ModelRateLimitError) and limited.retryable
    assert isinstance(
        explain_model_error(ConnectionResetError(), agent="a", model=model), ModelConnectionError
    )
    assert isinstance(
        explain_model_error(TimeoutError(), agent="a", model=model), ModelTimeoutError
    )
    assert issubclass(ModelTimeoutError, ModelCallError) and issubclass(
        ModelCallError, AgentRunError
    )


def test_agent_path_of() -> None:
    config = {"configurable": {"checkpoint_ns": "inner:1|writer:2|model:3"}}
    assert agent_path_of("writer", config) == "inner/writer"
    assert agent_path_of("root", {"configurable": {"checkpoint_ns": "model:3"}}) == "root"
    assert agent_path_of("a", None) == "a"
