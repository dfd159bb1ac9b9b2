"""Model replies are checked (issue 20, point 2), through real HTTP on 127.0.0.1.

Each model kind a user may hold is tried: graphflow's `openai_model(...)`, a plain LangChain
`ChatOpenAI`, and an `init_chat_model` result; each gets the same checks and the same fixes.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI

from graphflow import ReactAgent, SequentialAgent
from graphflow.exceptions import ModelRateLimitError, ModelServerError
from graphflow.models import chat_openai, openai_model
from tests.models.openai_server import MODEL_KINDS, PAD_WORDS, model_of_kind


@pytest.fixture(autouse=True)
def _quick_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    # bad replies back off 0.5 s, 1 s...: the same logic, without the wait
    monkeypatch.setattr(chat_openai, "reply_backoff", lambda attempt: 0.0)


def _run(agent: Any, streamed: bool, **kwargs: Any) -> dict[str, Any]:
    if not streamed:
        return agent.invoke("Weather in Rome?", **kwargs)
    for _ in agent.stream("Weather in Rome?", **kwargs):
        pass
    return agent.get_state(kwargs["thread_id"]).values


# -- tool-call ids -------------------------------------------------------------------------------


@pytest.mark.parametrize("streamed", [False, True], ids=["invoke", "stream"])
@pytest.mark.parametrize("kind", MODEL_KINDS)
@pytest.mark.parametrize("mode", ["empty_tool_ids", "missing_tool_ids", "duplicate_tool_ids"])
def test_every_tool_call_runs_under_an_id_of_its_own(make_server, mode, kind, streamed) -> None:
    server = make_server(mode).start()
    ran: list[str] = []

    @tool
    def get_weather(city: str) -> str:
        """The weather in a city."""
        ran.append(city)
        return f"sunny in {city} #{len(ran)}"

    agent = ReactAgent(
        name="weather", model=model_of_kind(kind, server), tools=[get_weather], output_key="answer"
    )
    state = _run(agent, streamed, thread_id="t")
    assert len(ran) == 2  # both calls ran: none merged into the other, none dropped
    assert state["answer"].startswith("m answers: Weather in Rome?")
    # what the model was sent back: each call answered once, under its own non-empty id
    messages = server.requests[-1].body["messages"]
    (turn,) = [m for m in messages if m.get("tool_calls")]
    ids = [c["id"] for c in turn["tool_calls"]]
    assert len(set(ids)) == 2 and all(ids)
    results = [m for m in messages if m["role"] == "tool"]
    assert [r["tool_call_id"] for r in results] == ids
    assert {r["content"] for r in results} == {"sunny in city #1", "sunny in city #2"}


# -- unusable 200 replies ------------------------------------------------------------------------


@pytest.mark.parametrize("streamed", [False, True], ids=["invoke", "stream"])
@pytest.mark.parametrize(
    ("mode", "what"),
    [
        ("invalid_json", "not valid JSON"),
        ("html_page", "502 Bad Gateway"),
        ("empty_choices", "no"),
    ],
)
def test_an_unusable_200_is_a_model_server_error_after_retries(
    make_server, clean_env, tmp_path, mode, what, streamed
) -> None:
    server = make_server(mode).start()
    writer = ReactAgent(name="writer", model=openai_model("m", base_url=server.base_url))
    team = SequentialAgent(name="team", sub_agents=[writer])
    url = f"sqlite:///{tmp_path}/runs.db"
    with pytest.raises(ModelServerError) as caught:
        _run(team, streamed, thread_id="t", checkpointer=url)
    error = caught.value
    message = str(error)
    assert message.startswith(
        "Agent `writer`: the model endpoint sent a reply that cannot be used (HTTP 200: "
    )
    assert f"(model 'm' at {server.base_url}, after 2 retries)" in message
    if streamed and mode == "html_page":
        what = "held no chunks"  # an event-stream parser sees no event in a page
    assert what in message and "agent.resume('t')" in message and "\n" not in message
    assert (error.agent, error.base_url, error.status_code, error.retryable) == (
        "writer",
        server.base_url,
        200,
        True,
    )
    assert len(server.requests) == 3  # retried like a server error
    assert [r.status for r in team.runs(checkpointer=url)] == ["failed"]
    server.behaviour = "openai_strict"  # fixed: the run resumes
    assert team.resume("t", checkpointer=url)["agent_status"]["writer"] == "completed"


@pytest.mark.parametrize("kind", MODEL_KINDS)
@pytest.mark.parametrize("mode", ["invalid_json", "html_page", "empty_choices"])
def test_one_unusable_200_is_retried_away(make_server, mode, kind) -> None:
    server = make_server(mode, faults=1).start()
    agent = ReactAgent(name="writer", model=model_of_kind(kind, server), output_key="out")
    assert agent.invoke("hi")["out"].startswith("m answers: hi")
    assert len(server.requests) == 2


# -- streams cut without a finish_reason ---------------------------------------------------------


@pytest.mark.parametrize("kind", MODEL_KINDS)
def test_a_stream_cut_without_finish_reason_is_retried_not_answered(make_server, kind) -> None:
    server = make_server("no_finish_reason", faults=1).start()
    agent = ReactAgent(name="writer", model=model_of_kind(kind, server), output_key="out")
    state = _run(agent, True, thread_id="t")
    # the whole reply, not the half that came first
    assert len(state["out"].split()) == PAD_WORDS
    assert state["agent_status"]["writer"] == "completed"
    assert len(server.requests) == 2


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_stream_always_cut_is_a_clear_error_never_empty(make_server, tmp_path, mode) -> None:
    server = make_server("no_finish_reason").start()
    writer = ReactAgent(name="writer", model=openai_model("m", base_url=server.base_url))
    team = SequentialAgent(name="team", sub_agents=[writer])
    url = f"sqlite:///{tmp_path}/runs.db"

    async def astream() -> None:
        async for _ in team.astream("hi", thread_id="t", checkpointer=url):
            pass

    with pytest.raises(ModelServerError, match=r"ended without a finish_reason") as caught:
        if mode == "sync":
            _run(team, True, thread_id="t", checkpointer=url)
        else:
            asyncio.run(astream())
    assert "after 2 retries" in str(caught.value)
    assert len(server.requests) == 3
    assert [r.status for r in team.runs(checkpointer=url)] == ["failed"]


# -- error messages ------------------------------------------------------------------------------


def test_error_messages_keep_the_servers_detail(make_server, clean_env) -> None:
    detail = "Traceback (most recent call last):\n  File 'engine.py'\nCUDA out of memory. " + (
        "x" * 3000
    )
    server = make_server("server_error", error_text=detail).start()
    agent = ReactAgent(
        name="writer", model=openai_model("m", base_url=server.base_url, max_retries=0)
    )
    with pytest.raises(ModelServerError) as caught:
        agent.invoke("hi")
    message = str(caught.value)
    assert "Traceback (most recent call last): File 'engine.py' CUDA out of memory" in message
    assert "more characters)" in message and len(message) < 2000 and "\n" not in message


def test_a_retry_after_beyond_the_limit_says_it_was_not_retried(make_server, clean_env) -> None:
    server = make_server("rate_limited", retry_after=3600).start()
    agent = ReactAgent(name="writer", model=openai_model("m", base_url=server.base_url))
    with pytest.raises(ModelRateLimitError) as caught:
        agent.invoke("hi")
    message = str(caught.value)
    assert len(server.requests) == 1
    assert "after 2 retries" not in message
    assert "not retried: the server asked to wait 3600 s, more than the client's limit" in message


def test_the_retry_count_is_the_one_made(make_server, clean_env) -> None:
    server = make_server("server_error").start()
    agent = ReactAgent(
        name="writer", model=openai_model("m", base_url=server.base_url, max_retries=1)
    )
    with pytest.raises(ModelServerError, match=r"after 1 retry\)"):
        agent.invoke("hi")
    assert len(server.requests) == 2


# -- llama.cpp quirks for every model kind -------------------------------------------------------


@pytest.mark.parametrize("streamed", [False, True], ids=["invoke", "stream"])
@pytest.mark.parametrize("kind", MODEL_KINDS)
def test_llamacpp_quirks_are_handled_for_every_model_kind(make_server, kind, streamed) -> None:
    server = make_server("llamacpp").start()

    @tool
    def get_weather(city: str) -> str:
        """The weather in a city."""
        return f"sunny in {city}"

    model = model_of_kind(kind, server, max_retries=0, max_tokens=5)
    given_class = type(model)
    agent = ReactAgent(name="weather", model=model, tools=[get_weather], output_key="answer")
    state = _run(agent, streamed, thread_id="t")
    # the tool round trip went through (content "" after the one null rejection), the
    # streamed name was not doubled, and max_tokens was read by the server
    assert state["answer"] == "m answers: Weather in Rome?"
    tool_results = [m for m in state["messages"] if m.type == "tool"]
    assert [m.content for m in tool_results] == ["sunny in city"]
    assert all("max_tokens" in r.body for r in server.requests)
    assert not any("max_completion_tokens" in r.body for r in server.requests)
    assert type(model) is given_class  # the user's model is not changed


def test_compatible_keeps_the_class_and_clients(make_server) -> None:
    server = make_server("openai_strict").start()
    plain = ChatOpenAI(model="m", base_url=server.base_url, api_key="sk")  # type: ignore[arg-type]
    adapted = chat_openai.compatible(plain)
    assert isinstance(adapted, ChatOpenAI) and isinstance(adapted, chat_openai.CompatibleMixin)
    assert adapted is not plain and type(plain) is ChatOpenAI
    assert adapted.root_client is plain.root_client
    assert chat_openai.compatible(adapted) is adapted
    assert adapted.invoke("hi").content.startswith("m answers: hi")
