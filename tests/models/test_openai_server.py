"""The test server reproduces each quirk: a plain `ChatOpenAI` breaks exactly where issue 10 says.

These keep the matrix honest: if the server stopped misbehaving, the graphflow tests that pass
against it would prove nothing.
"""

from __future__ import annotations

import httpx
import openai
import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from pydantic import BaseModel, Field

from graphflow import ReactAgent
from graphflow.events import ToolCallFinished
from graphflow.models import openai_model
from tests.models.openai_server import OpenAIServer, instance


@tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


HISTORY = [
    HumanMessage(content="Weather in Paris?"),
    AIMessage(
        content="", tool_calls=[{"name": "get_weather", "args": {"city": "Paris"}, "id": "c1"}]
    ),
    ToolMessage(content="sunny", tool_call_id="c1"),
]


def _plain(server: OpenAIServer, **kwargs: object) -> ChatOpenAI:
    return ChatOpenAI(model="m", base_url=server.base_url, api_key="sk", max_retries=0, **kwargs)  # type: ignore[arg-type]


def test_repeated_stream_names_break_plain_chat_openai(make_server) -> None:
    server = make_server("repeat_tool_names").start()
    bound = _plain(server).bind_tools([get_weather])
    merged = None
    for chunk in bound.stream("Weather in Paris?"):
        merged = chunk if merged is None else merged + chunk
    assert merged is not None
    assert merged.tool_calls[0]["name"].startswith("get_weatherget_weather")
    # the compatible model repairs it
    fixed = openai_model("m", base_url=server.base_url).bind_tools([get_weather])
    merged = None
    for chunk in fixed.stream("Weather in Paris?"):
        merged = chunk if merged is None else merged + chunk
    assert merged is not None and merged.tool_calls[0]["name"] == "get_weather"


def test_a_plain_chat_openai_in_an_agent_gets_the_repair(make_server) -> None:
    # the same plain ChatOpenAI, given to an agent: graphflow adapts it (issue 20), so the
    # streamed name is repaired and the tool runs; the user's own instance is left as it was
    server = make_server("repeat_tool_names").start()
    plain = _plain(server)
    agent = ReactAgent(name="weather", model=plain, tools=[get_weather], output_key="answer")
    finished = [
        e
        for e in agent.stream("Weather in Rome?", thread_id="t")
        if isinstance(e, ToolCallFinished)
    ]
    (call,) = finished
    assert call.name == "get_weather" and call.error is None and call.result == "sunny in city"
    assert agent.get_state("t").values["answer"].startswith("m answers: Weather in Rome?")
    assert type(plain) is ChatOpenAI


def test_null_content_is_rejected(make_server) -> None:
    server = make_server("no_null_content").start()
    with pytest.raises(openai.InternalServerError) as caught:
        _plain(server).invoke(HISTORY)
    assert "Input should be a valid string" in str(caught.value.body)  # the message is bare
    assert server.requests[0].body["messages"][1]["content"] is None


def test_max_completion_tokens_is_ignored(make_server) -> None:
    server = make_server("ignore_max_completion_tokens").start()
    reply = _plain(server, max_tokens=5).invoke("Say a lot")
    assert "max_completion_tokens" in server.requests[0].body
    assert len(str(reply.content).split()) > 5
    short = openai_model("m", base_url=server.base_url, max_tokens=5).invoke("Say a lot")
    assert len(str(short.content).split()) == 5


class Choice(BaseModel):
    agent: str


def test_json_schema_is_rejected(make_server) -> None:
    server = make_server("no_json_schema").start()
    structured = _plain(server).with_structured_output(Choice, method="json_schema")
    with pytest.raises(openai.InternalServerError) as caught:
        structured.invoke("choose")
    assert "Input should be 'text' or 'json_object'" in str(caught.value.body)


def test_alternating_failures(make_server) -> None:
    for mode, error in (
        ("flaky_429", openai.RateLimitError),
        ("drop_connection", openai.APIConnectionError),
    ):
        server = make_server(mode).start()
        with pytest.raises(error):
            _plain(server).invoke("hi")
        assert _plain(server).invoke("hi").content  # the next one is answered
        assert [r.outcome for r in server.requests] == [
            "429" if mode == "flaky_429" else "dropped",
            "answered",
        ]


def test_strict_validation(make_server) -> None:
    server = make_server("openai_strict").start()
    url = f"{server.base_url}/chat/completions"
    base = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    cases = [
        ({**base, "bogus": 1}, "Unrecognized request argument supplied: bogus"),
        ({**base, "response_format": {"type": "json_object"}}, "must contain the word 'json'"),
        (
            {**base, "response_format": {"type": "json_schema", "json_schema": {}}},
            "json_schema.name",
        ),
        ({**base, "tool_choice": "required"}, "only allowed when 'tools' are specified"),
        (
            {"model": "m", "messages": [{"role": "user", "content": None}]},
            "expected a string, got null",
        ),
        (
            {
                "model": "m",
                "messages": [
                    {"role": "user", "content": "hi"},
                    {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {
                                "id": "c1",
                                "type": "function",
                                "function": {"name": "f", "arguments": "{}"},
                            }
                        ],
                    },
                    {"role": "user", "content": "well?"},
                ],
            },
            "must be followed by tool messages",
        ),
    ]
    for body, message in cases:
        response = httpx.post(url, json=body)
        assert response.status_code == 400, body
        assert message in response.json()["error"]["message"]
    assert httpx.post(url, json=base).status_code == 200


def test_replies_follow_the_request(make_server) -> None:
    server = make_server("openai_strict").start()
    bound = _plain(server).bind_tools([get_weather])
    first = bound.invoke("Weather in Paris?")
    assert first.tool_calls[0]["name"] == "get_weather" and first.content == ""
    after = bound.invoke([*HISTORY])
    assert not after.tool_calls and str(after.content).startswith("m answers: Weather in Paris?")


class Inner(BaseModel):
    tags: list[str] = Field(min_length=2)
    level: int = Field(ge=3)


class Outer(BaseModel):
    route: str = Field(json_schema_extra={"enum": ["billing", "support"]})
    query: str | None = None
    inner: Inner
    ratio: float
    ok: bool


def test_instances_are_valid() -> None:
    schema = Outer.model_json_schema()
    value = instance(schema, schema, "please route to SUPPORT")
    parsed = Outer.model_validate(value)
    assert parsed.route == "support" and parsed.query == "please route to SUPPORT"
    assert parsed.inner.tags == ["tags", "tags"] and parsed.inner.level == 3
