"""Real `ChatOpenAI` clients over HTTP against the local server, in every behaviour.

Each test runs once per behaviour of `openai_server.BEHAVIOURS` (the `server` fixture).
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, AIMessageChunk, ToolMessage
from langchain_core.tools import tool
from pydantic import BaseModel, Field

from graphflow import FunctionAgent, LlmRoutingAgent, ReactAgent, SequentialAgent
from graphflow.events import ModelToken, RunFinished, ToolCallFinished
from graphflow.exceptions import ModelConnectionError
from graphflow.models import CompatibleChatOpenAI
from tests.models.openai_server import OpenAIServer

ROOT = Path(__file__).resolve().parents[2]


def _load_example(name: str) -> Any:
    """examples/competitive_analysis.py, imported afresh (it picks its models at import)."""
    spec = importlib.util.spec_from_file_location(
        name, ROOT / "examples" / "competitive_analysis.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules.pop(name, None)
    return module


def _chat_requests(server: OpenAIServer) -> list[dict[str, Any]]:
    return [r.body for r in server.answered]


def test_competitive_analysis_team_runs_on_openai_models(openai_env: OpenAIServer) -> None:
    example = _load_example(f"competitive_analysis_{openai_env.behaviour}")
    assert example.research_model == "openai:gpt-4o-mini"

    result = example.pipeline.invoke("Huawei Pura X", thread_id="team", checkpointer="memory:")

    assert result["agent_status"]["competitive_analysis"] == "completed"
    assert result["agent_status"]["refine"] in ("until", "max_iterations")
    # the researcher called web_search once, got its result, then answered in text
    assert "Huawei Pura X" in result["research_data"]
    assert "gpt-4o-mini answers:" in result["draft_article"]
    bodies = _chat_requests(openai_env)
    with_tool_result = [b for b in bodies if any(m["role"] == "tool" for m in b["messages"])]
    assert len(with_tool_result) == 1
    tool_message = next(m for m in with_tool_result[0]["messages"] if m["role"] == "tool")
    assert "offline search results" in tool_message["content"]
    # researcher x2, then writer and reviewer once per pass
    passes = 1 if result["agent_status"]["refine"] == "until" else 3
    assert len(bodies) == 2 + 2 * passes


class Verdict(BaseModel):
    """A product verdict."""

    product: str = Field(description="The product name.")
    score: int = Field(ge=1, le=10)
    strengths: list[str]


@pytest.mark.parametrize("tools", [False, True], ids=["no_tools", "with_tool"])
def test_output_schema_agent_returns_a_validated_object(
    openai_env: OpenAIServer, tools: bool
) -> None:
    @tool
    def lookup(product: str) -> str:
        """Look a product up."""
        return f"{product}: 16:10 screen"

    agent = ReactAgent(
        name="rater",
        model="openai:gpt-4o-mini",
        tools=[lookup] if tools else [],
        output_schema=Verdict,
        output_key="verdict",
    )
    result = agent.invoke("Rate the Huawei Pura X")

    verdict = result["verdict"]
    assert isinstance(verdict, Verdict)
    assert verdict.score == 1 and verdict.strengths == ["strengths"]
    final = _chat_requests(openai_env)[-1]
    fmt = final.get("response_format") or {}
    if openai_env.behaviour == "no_json_schema":
        # json_schema was rejected (a 500 naming response_format) and auto moved on
        assert fmt.get("type") != "json_schema"
        assert any(r.outcome == "500" for r in openai_env.requests)
    else:
        assert fmt.get("type") == "json_schema"
        assert fmt["json_schema"]["name"] == "Verdict"


def _router(server: OpenAIServer) -> tuple[LlmRoutingAgent, dict[str, list[str]]]:
    ran: dict[str, list[str]] = {"billing": [], "support": []}

    def record(name: str) -> Any:
        def fn(state: dict[str, Any]) -> str:
            ran[name].append(state["input"])
            return f"{name} handled it"

        return fn

    router = LlmRoutingAgent(
        name="router",
        model="openai:gpt-4o-mini",
        sub_agents=[
            FunctionAgent(
                name="billing",
                fn=record("billing"),
                description="Payments, refunds.",
                output_key="billing_out",
            ),
            FunctionAgent(
                name="support",
                fn=record("support"),
                description="Bugs, how-tos.",
                output_key="support_out",
            ),
        ],
        output_key="answer",
    )
    return router, ran


def test_router_chooses_with_structured_output(openai_env: OpenAIServer) -> None:
    router, ran = _router(openai_env)

    result = router.invoke("I need support: the app crashes")

    assert result["answer"] == "support handled it"
    assert ran == {"billing": [], "support": ["I need support: the app crashes"]}
    # and a second choice, in a new thread, goes where the request says
    assert router.invoke("billing: refund my order")["answer"] == "billing handled it"
    if openai_env.behaviour == "no_json_schema":
        assert any(r.outcome == "500" for r in openai_env.requests)
        answered = _chat_requests(openai_env)
        assert all((b.get("response_format") or {}).get("type") != "json_schema" for b in answered)
        # remembered: the second routing did not try json_schema again
        rejected = [r for r in openai_env.requests if r.outcome == "500"]
        assert [r.retry for r in rejected] == [0, 1, 2]  # one request, retried twice by the SDK


def _weather_tool(calls: list[str]) -> Any:
    @tool
    def get_weather(city: str) -> str:
        """The weather in a city."""
        calls.append(city)
        return f"sunny in {city}"

    return get_weather


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_tool_round_trip(openai_env: OpenAIServer, mode: str) -> None:
    calls: list[str] = []
    get_weather = _weather_tool(calls)
    agent = ReactAgent(
        name="weather",
        model="openai:gpt-4o-mini",
        tools=[get_weather],
        output_key="answer",
        return_reasoning_contents=True,
    )
    run = agent.invoke if mode == "sync" else (lambda x: asyncio.run(agent.ainvoke(x)))
    result = run("Weather in Paris?")

    assert calls == ["city"]
    tool_messages = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert [(m.name, m.content, m.status) for m in tool_messages] == [
        ("get_weather", "sunny in city", "success")
    ]
    assert result["answer"].startswith("gpt-4o-mini answers: Weather in Paris?")
    second = _chat_requests(openai_env)[-1]["messages"]
    assistant = next(m for m in second if m["role"] == "assistant")
    assert assistant["tool_calls"][0]["function"]["name"] == "get_weather"
    if openai_env.behaviour == "no_null_content":
        assert assistant["content"] == ""  # learned from the first rejection
    else:
        assert assistant["content"] is None  # OpenAI's own shape, kept where it works


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_token_streaming_with_a_tool_call(openai_env: OpenAIServer, mode: str) -> None:
    calls: list[str] = []
    get_weather = _weather_tool(calls)
    agent = ReactAgent(
        name="weather", model="openai:gpt-4o-mini", tools=[get_weather], output_key="answer"
    )

    async def collect() -> list[Any]:
        return [
            e
            async for e in agent.astream("Weather in Rome?", thread_id="s", stream_mode="messages")
        ]

    events = (
        list(agent.stream("Weather in Rome?", thread_id="s", stream_mode="messages"))
        if mode == "sync"
        else asyncio.run(collect())
    )
    chunks = [chunk for _, (chunk, _meta) in events if isinstance(chunk, AIMessageChunk)]
    bodies = _chat_requests(openai_env)
    assert len(bodies) == 2 and all(b.get("stream") for b in bodies)
    # the answer arrived token by token ...
    text_chunks = [c.content for c in chunks if c.content]
    assert len(text_chunks) > 5
    answer = agent.get_state("s").values["answer"]
    assert "".join(text_chunks).endswith(answer)
    # ... and the streamed tool call kept its name (repeated-name chunks are repaired)
    names = "".join(tc["name"] or "" for c in chunks for tc in c.tool_call_chunks)
    assert names == "get_weather"
    assert calls == ["city"]


def test_typed_events_stream_tokens_and_the_tool_call(openai_env: OpenAIServer) -> None:
    calls: list[str] = []
    agent = ReactAgent(
        name="weather",
        model="openai:gpt-4o-mini",
        tools=[_weather_tool(calls)],
        output_key="answer",
    )
    events = list(agent.stream("Weather in Rome?", thread_id="e"))

    assert [(e.name, e.error) for e in events if isinstance(e, ToolCallFinished)] == [
        ("get_weather", None)
    ]
    tokens = [e.text for e in events if isinstance(e, ModelToken)]
    assert len(tokens) > 5 and all(e.agent_path == ("weather",) for e in events[1:-1])
    final = events[-1]
    assert isinstance(final, RunFinished) and "".join(tokens).endswith(final.state["answer"])
    assert calls == ["city"]


def test_max_tokens_reaches_the_server(openai_env: OpenAIServer) -> None:
    agent = ReactAgent(
        name="brief",
        model="openai:gpt-4o-mini",
        model_settings={"max_tokens": 6},
        output_key="answer",
    )
    assert len(agent.invoke("Say a lot")["answer"].split()) == 6
    body = _chat_requests(openai_env)[-1]
    assert body.get("max_tokens") == 6 and "max_completion_tokens" not in body


def test_resume_after_the_server_was_stopped_mid_run(
    openai_env: OpenAIServer, tmp_path: Path
) -> None:
    server = openai_env
    lookups: list[str] = []

    @tool
    def lookup(product: str) -> str:
        """Look a product up (and, the first time, take the model server down)."""
        lookups.append(product)
        server.stop()
        return f"{product}: 16:10 screen"

    researcher = ReactAgent(
        name="researcher",
        model="openai:gpt-4o-mini",
        model_settings={"max_retries": 1},
        tools=[lookup],
        instruction="Research {input}.",
        output_key="facts",
        include_contents="none",
    )
    writer = ReactAgent(
        name="writer",
        model="openai:gpt-4o-mini",
        instruction="Write about {facts}",
        output_key="report",
        include_contents="none",
    )
    team = SequentialAgent(name="team", sub_agents=[researcher, writer])
    url = f"sqlite:///{tmp_path}/runs.db"

    with pytest.raises(ModelConnectionError) as failure:
        team.invoke("Pura X", thread_id="crash", checkpointer=url)
    message = str(failure.value)
    assert "researcher" in message and server.base_url in message
    assert "agent.resume('crash')" in message and "graphflow resume" in message
    answered_before = len(server.answered)
    assert answered_before == 1  # the tool call

    server.start()  # same port
    result = team.resume("crash", checkpointer=url)

    assert result["agent_status"]["team"] == "completed"
    assert lookups == ["Research Pura X."]  # the tool did not run again
    assert result["report"].startswith("gpt-4o-mini answers: Write about")
    answered = server.answered[answered_before:]
    assert len(answered) == 2  # the researcher's second call and the writer: nothing repeated
    assert any(m["role"] == "tool" for m in answered[0].body["messages"])


def test_compatible_model_is_a_real_chat_openai(openai_env: OpenAIServer) -> None:
    from langchain_openai import ChatOpenAI

    agent = ReactAgent(name="a", model="openai:gpt-4o-mini")
    model = agent.chat_model()
    assert isinstance(model, CompatibleChatOpenAI) and isinstance(model, ChatOpenAI)
    assert model.openai_api_base == openai_env.base_url
    reply = model.invoke("hello")
    assert isinstance(reply, AIMessage) and reply.content.startswith("gpt-4o-mini answers: hello")
    assert json.loads(json.dumps(_chat_requests(openai_env)[-1]))["model"] == "gpt-4o-mini"


def test_router_function_calling_and_prompt_methods(openai_env: OpenAIServer) -> None:
    for method in ("function_calling", "prompt"):
        router, ran = _router(openai_env)
        router.structured_output = method  # type: ignore[assignment]
        assert router.invoke("support please")["answer"] == "support handled it"
    bodies = _chat_requests(openai_env)
    assert bodies[0]["tool_choice"] == {"type": "function", "function": {"name": "Route"}}
    assert "tools" not in bodies[-1] and "response_format" not in bodies[-1]
