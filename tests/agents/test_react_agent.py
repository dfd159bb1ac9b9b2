"""ReactAgent: the model ⇄ tools loop, its exact requests, limits, structured output, tool errors."""

import os
import threading
import time
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.errors import GraphRecursionError
from pydantic import BaseModel

from graphflow import (
    GraphflowConfigError,
    OutputValidationError,
    ReactAgent,
    SequentialAgent,
    is_instruction,
)
from graphflow.hooks.base import AgentHook, ModelHook
from graphflow.hooks.builtins.limits import ModelCallLimit
from graphflow.testing import ScriptedChatModel, tool_call, tool_calls
from graphflow.tools import ToolPolicy
from tests.support.helpers import search


class Verdict(BaseModel):
    title: str
    score: int


def _pairs_intact(messages):
    """Every tool call has exactly one result, and every tool result answers a call."""
    call_ids = [tc["id"] for m in messages if isinstance(m, AIMessage) for tc in m.tool_calls]
    result_ids = [m.tool_call_id for m in messages if isinstance(m, ToolMessage)]
    return sorted(call_ids) == sorted(result_ids) and len(set(call_ids)) == len(call_ids)


def test_model_tools_loop_and_exact_request(search_tool):
    model = ScriptedChatModel(
        replies=[tool_call("search", {"query": "Pura X"}), "Pura X is a foldable."]
    )
    agent = ReactAgent(
        name="researcher",
        model=model,
        tools=[search_tool],
        system_prompt="You research products.",
        instruction="Research {input}.",
        output_key="research_data",
    )
    result = agent.invoke("Huawei Pura X", thread_id="t")

    assert model.calls == 2
    first = model.requests[0]
    assert [type(m) for m in first] == [SystemMessage, HumanMessage, HumanMessage]
    assert first[0].content == "You research products."
    assert first[1].content == "Huawei Pura X" and not is_instruction(first[1])
    assert first[2].content == "Research Huawei Pura X." and is_instruction(first[2])
    assert model.request_tools == [["search"], ["search"]]

    second = model.requests[1]
    assert [type(m) for m in second] == [
        SystemMessage,
        HumanMessage,
        HumanMessage,
        AIMessage,
        ToolMessage,
    ]
    assert second[3].tool_calls[0]["name"] == "search"
    assert second[4].content == "results for Pura X"
    assert second[4].tool_call_id == second[3].tool_calls[0]["id"]

    assert result["research_data"] == "Pura X is a foldable."
    assert result["agent_status"]["researcher"] == "completed"
    assert result["messages"][-1].content == "Pura X is a foldable."
    # the system prompt is sent, never stored in state
    assert not any(isinstance(m, SystemMessage) for m in result["messages"])


def test_plain_function_tools_are_wrapped():
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    model = ScriptedChatModel(replies=[tool_call("add", {"a": 2, "b": 3}), "5"])
    result = ReactAgent(name="calc", model=model, tools=[add], output_key="sum").invoke("2+3")
    assert model.requests[1][-1].content == "5"
    assert result["sum"] == "5"


def test_max_iterations_ends_with_clear_message(search_tool):
    model = ScriptedChatModel(fn=lambda messages, n: tool_call("search", {"query": f"q{n}"}))
    agent = ReactAgent(
        name="looper", model=model, tools=[search_tool], max_iterations=3, output_key="out"
    )
    try:
        result = agent.invoke("go")
    except GraphRecursionError:  # pragma: no cover - the contract forbids this
        pytest.fail("max_iterations must not surface as a GraphRecursionError")

    assert model.calls == 3
    assert result["agent_status"]["looper"] == "max_iterations"
    final = result["messages"][-1]
    assert isinstance(final, AIMessage) and not final.tool_calls
    assert "max_iterations=3" in final.content and "looper" in final.content
    assert result["out"] == final.content
    assert _pairs_intact(result["messages"])
    assert sum(isinstance(m, ToolMessage) for m in result["messages"]) == 3


def test_output_schema_valid_json_gives_pydantic_object():
    model = ScriptedChatModel(replies=['{"title": "Pura X", "score": 9}'])
    agent = ReactAgent(name="rater", model=model, output_schema=Verdict, output_key="verdict")
    result = agent.invoke("rate it")
    assert result["verdict"] == Verdict(title="Pura X", score=9)
    assert isinstance(result["verdict"], Verdict)
    # the schema is described to the model
    assert any(isinstance(m, SystemMessage) and "score" in m.content for m in model.requests[0])


def test_output_schema_fenced_json_is_accepted():
    model = ScriptedChatModel(replies=['Here:\n```json\n{"title": "a", "score": 1}\n```'])
    agent = ReactAgent(name="rater", model=model, output_schema=Verdict, output_key="verdict")
    assert agent.invoke("x")["verdict"] == Verdict(title="a", score=1)


def test_output_schema_invalid_once_is_reasked_with_feedback():
    model = ScriptedChatModel(replies=["not json at all", '{"title": "ok", "score": 2}'])
    agent = ReactAgent(name="rater", model=model, output_schema=Verdict, output_key="verdict")
    result = agent.invoke("rate it")
    assert model.calls == 2
    retry = model.requests[1]
    assert retry[-2].content == "not json at all"
    feedback = retry[-1]
    assert isinstance(feedback, HumanMessage)
    assert "did not match" in feedback.content and "score" in feedback.content
    assert result["verdict"] == Verdict(title="ok", score=2)
    assert result["agent_status"]["rater"] == "completed"


def test_output_schema_invalid_twice_raises():
    model = ScriptedChatModel(replies=['{"title": "x"}', '{"score": "high"}', "unused"])
    agent = ReactAgent(name="rater", model=model, output_schema=Verdict, output_key="verdict")
    with pytest.raises(OutputValidationError, match=r"rater.*Verdict") as info:
        agent.invoke("rate it")
    assert info.value.agent == "rater"
    assert model.calls == 2


def test_openai_string_without_key_fails_at_the_first_call(monkeypatch):
    # building, compiling and drawing need no credentials (issue 20); the first call names them
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    agent = ReactAgent(name="writer", model="openai:gpt-4o-mini")
    agent.compile()
    with pytest.raises(GraphflowConfigError, match=r"writer.*OPENAI_API_KEY"):
        agent.invoke("hi")
    assert "OPENAI_API_KEY" not in os.environ


@pytest.mark.parametrize("model", ["anthropic:claude-3", "gpt-4o-mini"])
def test_unknown_provider_string_fails_at_construction(model):
    with pytest.raises(GraphflowConfigError, match="model"):
        ReactAgent(name="writer", model=model)


def test_tool_error_goes_back_to_the_model():
    @tool
    def fragile(x: int) -> str:
        """Fail always."""
        raise PermissionError("disk on fire")  # typed: returned to the model (UNKNOWN would stop)

    model = ScriptedChatModel(replies=[tool_call("fragile", {"x": 1}), "recovered"])
    result = ReactAgent(name="a", model=model, tools=[fragile], output_key="o").invoke("go")
    error = model.requests[1][-1]
    assert isinstance(error, ToolMessage)
    assert error.status == "error"
    assert "disk on fire" in error.content
    assert error.tool_call_id == model.requests[1][-2].tool_calls[0]["id"]
    assert result["o"] == "recovered"


def test_unknown_tool_name_gives_error_tool_message(search_tool):
    model = ScriptedChatModel(replies=[tool_call("serch", {"query": "x"}), "sorry"])
    result = ReactAgent(name="a", model=model, tools=[search_tool], output_key="o").invoke("go")
    error = model.requests[1][-1]
    assert isinstance(error, ToolMessage) and error.status == "error"
    assert "serch" in error.content and "search" in error.content
    assert result["o"] == "sorry"
    assert _pairs_intact(result["messages"])


def test_several_tool_calls_run_as_separate_concurrent_tasks_in_call_order():
    barrier = threading.Barrier(2, timeout=5)

    @tool
    def slow(x: int) -> str:
        """Slow tool."""
        barrier.wait()  # only passes if the other call runs at the same time
        time.sleep(0.2)
        return f"slow {x}"

    @tool
    def fast(x: int) -> str:
        """Fast tool."""
        barrier.wait()
        return f"fast {x}"

    reply = tool_calls(("slow", {"x": 1}), ("fast", {"x": 2}))
    model = ScriptedChatModel(replies=[reply, "both done"])
    agent = ReactAgent(
        name="multi",
        model=model,
        tools=[slow, fast],
        output_key="o",
        default_tool_policy=ToolPolicy(parallel_safe=True),  # concurrency is opt-in
    )
    tool_updates = [
        chunk for namespace, chunk in agent.stream("go", stream_mode="updates") if "tools" in chunk
    ]
    assert len(tool_updates) == 2  # one task per call

    results = [m for m in model.requests[1] if isinstance(m, ToolMessage)]
    assert [m.content for m in results] == ["slow 1", "fast 2"]
    assert [m.tool_call_id for m in results] == [tc["id"] for tc in reply.tool_calls]
    assert all(m.status != "error" for m in results)


async def test_ainvoke_runs_the_loop(search_tool):
    model = ScriptedChatModel(replies=[tool_call("search", {"query": "a"}), "done"])
    agent = ReactAgent(name="r", model=model, tools=[search_tool], output_key="o")
    result = await agent.ainvoke("go")
    assert result["o"] == "done"
    assert model.requests[1][-1].content == "results for a"


# -- the model step writes the final answer ------------------------------------------------------


class _Out(BaseModel):
    title: str
    n: int


class _Spy(AgentHook):
    def __init__(self) -> None:
        self.seen: list[tuple[Any, Any]] = []

    def after_agent(self, state: dict[str, Any], ctx: Any) -> None:
        self.seen.append((ctx.reason, state.get("out")))


@tool
def ping(x: str) -> str:
    """Ping."""
    return "pong"


def test_react_structured_output_written_by_model_step(run_mode) -> None:
    spy = _Spy()
    agent = ReactAgent(
        name="a",
        model=ScriptedChatModel(replies=["not json", '```json\n{"title": "x", "n": 2}\n```']),
        output_schema=_Out,
        output_key="out",
        hooks=[spy],
    )
    out = run_mode.invoke(agent, "go", thread_id=f"schema-{run_mode}")
    assert out["out"] == _Out(title="x", n=2)
    assert out["agent_status"]["a"] == "completed"
    assert spy.seen == [("completed", _Out(title="x", n=2))]


def test_react_max_iterations_and_call_limit_and_short_circuit() -> None:
    spy = _Spy()
    agent = ReactAgent(
        name="a",
        model=ScriptedChatModel(replies=[tool_call("ping", {"x": "1"})] * 5),
        tools=[ping],
        max_iterations=2,
        output_key="out",
        hooks=[spy],
    )
    out = agent.invoke("go")
    assert "max_iterations=2" in out["out"]
    assert spy.seen[0][0] == "max_iterations"

    agent = ReactAgent(
        name="a",
        model=ScriptedChatModel(replies=[tool_call("ping", {"x": "1"})] * 5),
        tools=[ping],
        output_schema=_Out,
        output_key="out",
        hooks=[ModelCallLimit(run_limit=1)],
    )
    out = agent.invoke("go")
    assert out["out"] is None
    assert "model call limit" in out["messages"][-1].text

    class Cached(ModelHook):
        def before_model(self, request: Any) -> AIMessage:
            return AIMessage(content='{"title": "s", "n": 3}')

    spy = _Spy()
    agent = ReactAgent(
        name="a",
        model=ScriptedChatModel(replies=[]),
        output_schema=_Out,
        output_key="out",
        hooks=[Cached(), spy],
    )
    assert agent.invoke("go")["out"] == _Out(title="s", n=3)
    assert spy.seen == [("completed", _Out(title="s", n=3))]


# -- max_iterations=1 with a tool call -----------------------------------------------------------


def test_max_iterations_one_with_tool_call_hands_back_stop_message() -> None:
    model = ScriptedChatModel(replies=[tool_call("search", {"query": "q"})])
    ran: list[str] = []

    @tool
    def probe(query: str) -> str:
        """Probe."""
        ran.append(query)
        return "probed"

    seq = SequentialAgent(
        name="seq",
        sub_agents=[
            ReactAgent(
                name="r", model=model, tools=[search, probe], max_iterations=1, output_key="ro"
            )
        ],
    )
    model.replies = [tool_call("probe", {"query": "q"})]
    result = seq.invoke("go", checkpointer=False)
    assert ran == ["q"]  # the tool ran
    assert model.calls == 1
    assert result["agent_status"]["r"] == "max_iterations"
    last = result["messages"][-1]
    assert isinstance(last, AIMessage) and last.name == "r"
    assert "max_iterations=1" in last.content
    assert result["ro"] == last.content
    assert len(result["messages"]) == 2  # user message + the stop message only
