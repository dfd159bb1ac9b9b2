"""SequentialAgent: order, visibility of earlier outputs, output_key, build-time dataflow."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from graphflow import (
    DataflowError,
    FunctionAgent,
    ParallelAgent,
    ReactAgent,
    SequentialAgent,
)
from graphflow.messages import is_instruction
from graphflow.testing import ScriptedChatModel


def _pipeline(order: list[str]) -> tuple[SequentialAgent, ScriptedChatModel, ScriptedChatModel]:
    m1 = ScriptedChatModel(replies=["outline: A, B"])
    m2 = ScriptedChatModel(replies=["final report"])

    def record(state: dict[str, Any]) -> str:
        order.append("count")
        return str(len(state["outline"]))

    first = ReactAgent(name="planner", model=m1, instruction="Plan {input}.", output_key="outline")
    middle = FunctionAgent(name="counter", fn=record, output_key="outline_len")
    last = ReactAgent(
        name="writer",
        model=m2,
        instruction="Write from {outline} ({outline_len} chars) about {input}.",
        output_key="report",
    )
    return (
        SequentialAgent(name="seq", sub_agents=[first, middle, last], output_key="result"),
        m1,
        m2,
    )


def test_runs_in_order_and_each_sees_earlier_outputs() -> None:
    order: list[str] = []
    seq, m1, m2 = _pipeline(order)
    result = seq.invoke("fold phones", thread_id="t")
    assert m1.calls == 1 and m2.calls == 1 and order == ["count"]
    # the planner's instruction rendered the input
    assert m1.requests[0][-1].content == "Plan fold phones."
    assert is_instruction(m1.requests[0][-1])
    # the writer saw both earlier outputs in its instruction, and the planner's answer in context
    writer_req = m2.requests[0]
    assert writer_req[-1].content == "Write from outline: A, B (13 chars) about fold phones."
    assert [type(m) for m in writer_req[:-1]] == [HumanMessage, AIMessage]
    assert writer_req[1].content == "outline: A, B"
    assert result["outline"] == "outline: A, B"
    assert result["outline_len"] == "13"
    assert result["report"] == "final report"
    # the sequential's output_key receives the last sub-agent's result
    assert result["result"] == "final report"
    assert result["agent_status"]["seq"] == "completed"
    # conversation: user, planner final, writer final (instructions do not leak)
    assert [(type(m).__name__, m.content) for m in result["messages"]] == [
        ("HumanMessage", "fold phones"),
        ("AIMessage", "outline: A, B"),
        ("AIMessage", "final report"),
    ]


def test_order_of_execution_is_declaration_order() -> None:
    trace: list[str] = []

    def step(name: str):
        def fn(state: dict[str, Any]) -> str:
            trace.append(name)
            return name

        return fn

    seq = SequentialAgent(
        name="seq",
        sub_agents=[
            FunctionAgent(name=n, fn=step(n), output_key=f"{n}_out") for n in ("c", "a", "b")
        ],
        output_key="last",
    )
    result = seq.invoke("x")
    assert trace == ["c", "a", "b"]
    assert result["last"] == "b"


def test_async_sequential() -> None:
    order: list[str] = []
    seq, _, m2 = _pipeline(order)
    result = asyncio.run(seq.ainvoke("tablets"))
    assert result["result"] == "final report"
    assert "tablets" in m2.requests[0][-1].content


def test_output_key_of_last_flow_child() -> None:
    fan = ParallelAgent(
        name="fan",
        sub_agents=[
            FunctionAgent(name="x", fn=lambda s: 1, output_key="x_out"),
            FunctionAgent(name="y", fn=lambda s: 2, output_key="y_out"),
        ],
        merge="list",
        output_key="both",
    )
    seq = SequentialAgent(
        name="seq",
        sub_agents=[FunctionAgent(name="pre", fn=lambda s: 0, output_key="pre_out"), fan],
        output_key="result",
    )
    assert seq.invoke("go")["result"] == [1, 2]


def test_placeholder_written_only_by_later_agent_is_build_error() -> None:
    m = ScriptedChatModel(replies=["x", "y"])
    seq = SequentialAgent(
        name="seq",
        sub_agents=[
            ReactAgent(
                name="early", model=m, instruction="Use {later_out}.", output_key="early_out"
            ),
            ReactAgent(name="late", model=m, output_key="later_out"),
        ],
    )
    with pytest.raises(DataflowError) as err:
        seq.invoke("go")
    msg = str(err.value)
    assert "early" in msg and "later_out" in msg and "not before" in msg
    assert m.calls == 0


def test_unknown_placeholder_is_build_error_naming_known_keys() -> None:
    m = ScriptedChatModel(replies=["x"])
    seq = SequentialAgent(
        name="seq",
        sub_agents=[
            ReactAgent(name="a", model=m, output_key="a_out"),
            ReactAgent(name="b", model=m, instruction="{nobody_writes_this}", output_key="b_out"),
        ],
    )
    with pytest.raises(DataflowError) as err:
        seq.compile()
    msg = str(err.value)
    assert "`b`" in msg and "nobody_writes_this" in msg and "a_out" in msg
    assert m.calls == 0


def test_optional_placeholder_from_later_agent_is_fine() -> None:
    m = ScriptedChatModel(replies=["x", "y"])
    seq = SequentialAgent(
        name="seq",
        sub_agents=[
            ReactAgent(name="a", model=m, instruction="Prev: {b_out?}.", output_key="a_out"),
            ReactAgent(name="b", model=m, output_key="b_out"),
        ],
    )
    seq.invoke("go")
    assert m.requests[0][-1].content == "Prev: ."


def test_duplicate_names_are_build_error() -> None:
    m = ScriptedChatModel(replies=["x"])
    seq = SequentialAgent(
        name="seq",
        sub_agents=[
            ReactAgent(name="twin", model=m, output_key="one"),
            ReactAgent(name="twin", model=m, output_key="two"),
        ],
    )
    with pytest.raises(DataflowError, match="twin"):
        seq.invoke("go")
    assert m.calls == 0


def test_same_agent_object_twice_is_build_error() -> None:
    m = ScriptedChatModel(replies=["x"])
    a = ReactAgent(name="a", model=m, output_key="one")
    with pytest.raises(DataflowError, match="same agent object"):
        SequentialAgent(name="seq", sub_agents=[a, a]).compile()


def test_agent_name_equal_to_state_key_is_build_error() -> None:
    m = ScriptedChatModel(replies=["x"])
    seq = SequentialAgent(
        name="seq",
        sub_agents=[
            ReactAgent(name="summary", model=m, output_key="notes"),
            ReactAgent(name="other", model=m, output_key="summary"),
        ],
    )
    with pytest.raises(DataflowError, match="summary"):
        seq.compile()


def test_flow_agents_take_no_instruction() -> None:
    with pytest.raises(ValueError, match="no instruction"):
        SequentialAgent(
            name="seq",
            instruction="hi",
            sub_agents=[FunctionAgent(name="f", fn=lambda s: 1, output_key="x")],
        )
