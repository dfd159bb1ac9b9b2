"""FunctionAgent: sync/async functions, output_key, declared dict updates, between LLM steps."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.messages import AIMessage

from graphflow import AgentRunError, FunctionAgent, ParallelAgent, ReactAgent, SequentialAgent
from graphflow.testing import ScriptedChatModel


def _sync_fn(state: dict[str, Any]) -> str:
    return state["input"].upper()


async def _async_fn(state: dict[str, Any]) -> str:
    await asyncio.sleep(0.01)
    return state["input"][::-1]


@pytest.mark.parametrize("fn, expected", [(_sync_fn, "ABC"), (_async_fn, "cba")])
def test_function_agent_sync_invoke(fn: Any, expected: str) -> None:
    agent = FunctionAgent(name="f", fn=fn, output_key="out")
    result = agent.invoke("abc")
    assert result["out"] == expected
    assert result["agent_status"]["f"] == "completed"


@pytest.mark.parametrize("fn, expected", [(_sync_fn, "ABC"), (_async_fn, "cba")])
def test_function_agent_ainvoke(fn: Any, expected: str) -> None:
    agent = FunctionAgent(name="f", fn=fn, output_key="out")
    assert asyncio.run(agent.ainvoke("abc"))["out"] == expected


def test_function_agent_can_return_structured_value() -> None:
    agent = FunctionAgent(name="f", fn=lambda s: {"n": 1, "items": [1, 2]}, output_key="out")
    assert agent.invoke("x")["out"] == {"n": 1, "items": [1, 2]}


@pytest.mark.parametrize("use_async", [False, True])
def test_dict_update_with_declared_writes(use_async: bool) -> None:
    def fn(state: dict[str, Any]) -> dict[str, Any]:
        return {"files": ["a.py", "b.py"], "count": 2}

    async def afn(state: dict[str, Any]) -> dict[str, Any]:
        return fn(state)

    agent = FunctionAgent(name="lister", fn=afn if use_async else fn, writes=["files", "count"])
    result = asyncio.run(agent.ainvoke("x")) if use_async else agent.invoke("x")
    assert result["files"] == ["a.py", "b.py"]
    assert result["count"] == 2


def test_dict_update_with_undeclared_key_is_run_error() -> None:
    agent = FunctionAgent(name="lister", fn=lambda s: {"files": [], "sneaky": 1}, writes=["files"])
    with pytest.raises(AgentRunError) as err:
        agent.invoke("x")
    assert "sneaky" in str(err.value) and "lister" in str(err.value) and "writes" in str(err.value)


def test_non_dict_without_output_key_is_run_error() -> None:
    agent = FunctionAgent(name="f", fn=lambda s: 42)
    with pytest.raises(AgentRunError, match="output_key"):
        agent.invoke("x")


def test_function_agent_rejects_instruction() -> None:
    with pytest.raises(ValueError, match="instruction"):
        FunctionAgent(name="f", fn=_sync_fn, instruction="hi")


@pytest.mark.parametrize("use_async_fn", [False, True])
def test_function_between_llm_steps(use_async_fn: bool, run_mode) -> None:
    m1 = ScriptedChatModel(replies=["b, a, b, c"])
    m2 = ScriptedChatModel(replies=["summary of a,b,c"])

    def dedupe(state: dict[str, Any]) -> str:
        items = [x.strip() for x in state["raw"].split(",")]
        return ",".join(sorted(set(items)))

    async def adedupe(state: dict[str, Any]) -> str:
        return dedupe(state)

    seq = SequentialAgent(
        name="seq",
        sub_agents=[
            ReactAgent(name="gather", model=m1, output_key="raw"),
            FunctionAgent(
                name="dedupe", fn=adedupe if use_async_fn else dedupe, output_key="clean"
            ),
            ReactAgent(
                name="summarize", model=m2, instruction="Summarize {clean}.", output_key="summary"
            ),
        ],
    )
    result = run_mode.invoke(seq, "go")
    assert result["clean"] == "a,b,c"
    assert m2.requests[0][-1].content == "Summarize a,b,c."
    assert result["summary"] == "summary of a,b,c"
    # a FunctionAgent adds no messages to the conversation
    assert [m.content for m in result["messages"]] == ["go", "b, a, b, c", "summary of a,b,c"]


def test_function_agent_exception_propagates() -> None:
    def boom(state: dict[str, Any]) -> str:
        raise ValueError("bad data")

    seq = SequentialAgent(name="seq", sub_agents=[FunctionAgent(name="f", fn=boom, output_key="o")])
    with pytest.raises(ValueError, match="bad data"):
        seq.invoke("x")


# -- FunctionAgents as parallel branches ---------------------------------------------------------


def test_function_agents_in_parallel(run_mode) -> None:
    async def slow(state: Any) -> str:
        await asyncio.sleep(0.01)
        return "async value"

    fan = ParallelAgent(
        name="fan",
        sub_agents=[
            FunctionAgent(name="a1", fn=slow, output_key="ao"),
            FunctionAgent(name="a2", fn=slow, output_key="bo"),
            FunctionAgent(name="nothing", fn=lambda s: None),
            FunctionAgent(
                name="talker",
                fn=lambda s: {"messages": [AIMessage(content="from fn")]},
                writes=["messages"],
            ),
        ],
        output_key="merged",
    )
    result = run_mode.invoke(fan, "x", checkpointer=False)
    assert result["merged"] == {"ao": "async value", "bo": "async value"}
    assert [m.content for m in result["messages"]] == ["x", "from fn"]
    assert result["agent_status"]["nothing"] == "completed"
