"""LoopAgent: do-while semantics, until, exit_loop, max_iterations, {loop_iteration}, nesting."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.messages import AIMessage

from graphflow import (
    DataflowError,
    FunctionAgent,
    LoopAgent,
    ParallelAgent,
    ReactAgent,
    SequentialAgent,
    exit_loop,
    output_contains,
)
from graphflow.testing import ScriptedChatModel, tool_call
from tests.support.helpers import assert_tool_pairs_intact


class Counter:
    def __init__(self, value: Any = "x") -> None:
        self.calls = 0
        self.value = value

    def __call__(self, state: dict[str, Any]) -> Any:
        self.calls += 1
        return self.value(self.calls, state) if callable(self.value) else self.value


def test_do_while_body_runs_once_even_if_until_initially_true() -> None:
    body = Counter("done")
    loop = LoopAgent(
        name="loop",
        sub_agents=[FunctionAgent(name="body", fn=body, output_key="out")],
        max_iterations=5,
        until=lambda state: True,
    )
    result = loop.invoke("x")
    assert body.calls == 1
    assert result["agent_status"]["loop"] == "until"


def test_until_checked_after_each_pass() -> None:
    seen: list[Any] = []
    body = Counter(lambda n, s: n)

    def until(state: dict[str, Any]) -> bool:
        seen.append(state["count"])
        return state["count"] >= 3

    loop = LoopAgent(
        name="loop",
        sub_agents=[FunctionAgent(name="body", fn=body, output_key="count")],
        max_iterations=10,
        until=until,
        output_key="final",
    )
    result = loop.invoke("x")
    assert body.calls == 3
    assert seen == [1, 2, 3]
    assert result["agent_status"]["loop"] == "until"
    assert result["final"] == 3


def test_until_output_contains_with_react_agents() -> None:
    writer_model = ScriptedChatModel(replies=["v1", "v2", "v3"])
    critic_model = ScriptedChatModel(replies=["meh", "APPROVE it"])
    loop = LoopAgent(
        name="refine",
        sub_agents=[
            ReactAgent(name="writer", model=writer_model, output_key="draft"),
            ReactAgent(
                name="critic", model=critic_model, output_key="verdict", instruction="Judge {draft}"
            ),
        ],
        max_iterations=5,
        until=output_contains("verdict", "APPROVE"),
    )
    result = loop.invoke("go")
    assert writer_model.calls == 2 and critic_model.calls == 2
    assert result["draft"] == "v2"
    assert result["agent_status"]["refine"] == "until"


def test_max_iterations_stops_without_error() -> None:
    body = Counter("never good")
    loop = LoopAgent(
        name="loop",
        sub_agents=[FunctionAgent(name="body", fn=body, output_key="out")],
        max_iterations=3,
        until=lambda s: False,
    )
    result = loop.invoke("x")
    assert body.calls == 3
    assert result["agent_status"]["loop"] == "max_iterations"
    assert result["out"] == "never good"


def test_max_iterations_async() -> None:
    body = Counter("again")
    loop = LoopAgent(
        name="loop",
        sub_agents=[FunctionAgent(name="body", fn=body, output_key="out")],
        max_iterations=4,
    )
    result = asyncio.run(loop.ainvoke("x"))
    assert body.calls == 4
    assert result["agent_status"]["loop"] == "max_iterations"


def test_loop_iteration_renders_in_instructions() -> None:
    model = ScriptedChatModel(fn=lambda m, n: f"answer {n}")
    loop = LoopAgent(
        name="loop",
        sub_agents=[
            ReactAgent(
                name="worker",
                model=model,
                instruction="Pass {loop_iteration} of {input}.",
                output_key="out",
                include_contents="none",
            )
        ],
        max_iterations=3,
    )
    loop.invoke("task")
    assert [r[-1].content for r in model.requests] == [
        "Pass 0 of task.",
        "Pass 1 of task.",
        "Pass 2 of task.",
    ]


def test_loop_iteration_visible_to_function_agents() -> None:
    seen: list[int] = []
    loop = LoopAgent(
        name="loop",
        sub_agents=[
            FunctionAgent(
                name="f", fn=lambda s: seen.append(s["loop_iteration"]) or "ok", output_key="out"
            )
        ],
        max_iterations=3,
    )
    loop.invoke("x")
    assert seen == [0, 1, 2]


def test_loop_iteration_outside_loop_is_build_error() -> None:
    model = ScriptedChatModel(replies=["x"])
    agent = SequentialAgent(
        name="seq",
        sub_agents=[
            ReactAgent(name="w", model=model, instruction="{loop_iteration}", output_key="o")
        ],
    )
    with pytest.raises(DataflowError, match="loop_iteration"):
        agent.compile()


def test_exit_loop_ends_loop_and_skips_rest_of_pass() -> None:
    # pass 0: decider answers normally; pass 1: decider calls exit_loop -> tail is skipped
    decider_model = ScriptedChatModel(replies=["keep going", tool_call("exit_loop"), "unused"])
    tail = Counter("tail ran")
    loop = LoopAgent(
        name="loop",
        sub_agents=[
            ReactAgent(
                name="decider", model=decider_model, tools=[exit_loop], output_key="decision"
            ),
            FunctionAgent(name="tail", fn=tail, output_key="tail_out"),
        ],
        max_iterations=5,
    )
    result = loop.invoke("go")
    assert decider_model.calls == 2  # exit_loop ends the ReAct agent without another model call
    assert tail.calls == 1  # pass 0 only
    assert result["agent_status"]["loop"] == "exit_loop"
    assert "exit_loop" in decider_model.request_tools[0]


def test_exit_loop_exits_only_innermost_loop() -> None:
    inner_model = ScriptedChatModel(fn=lambda m, n: tool_call("exit_loop"))
    skipped = Counter("should not run")
    outer_tail = Counter(lambda n, s: f"outer tail {n}")
    inner = LoopAgent(
        name="inner",
        sub_agents=[
            ReactAgent(
                name="exiter", model=inner_model, tools=[exit_loop], output_key="exiter_out"
            ),
            FunctionAgent(name="skipped", fn=skipped, output_key="skipped_out"),
        ],
        max_iterations=5,
    )
    outer = LoopAgent(
        name="outer",
        sub_agents=[inner, FunctionAgent(name="outer_tail", fn=outer_tail, output_key="tail_out")],
        max_iterations=3,
    )
    result = outer.invoke("go")
    assert inner_model.calls == 3  # one inner pass per outer pass
    assert skipped.calls == 0
    assert outer_tail.calls == 3  # the outer loop continued after each inner exit
    assert result["agent_status"]["inner"] == "exit_loop"
    assert result["agent_status"]["outer"] == "max_iterations"
    assert result["tail_out"] == "outer tail 3"


def test_exit_loop_async() -> None:
    model = ScriptedChatModel(replies=[tool_call("exit_loop")])
    tail = Counter()
    loop = LoopAgent(
        name="loop",
        sub_agents=[
            ReactAgent(name="decider", model=model, tools=[exit_loop], output_key="d"),
            FunctionAgent(name="tail", fn=tail, output_key="t"),
        ],
        max_iterations=5,
    )
    result = asyncio.run(loop.ainvoke("go"))
    assert tail.calls == 0
    assert result["agent_status"]["loop"] == "exit_loop"


def test_exit_loop_outside_loop_is_build_error() -> None:
    model = ScriptedChatModel(replies=[tool_call("exit_loop")])
    seq = SequentialAgent(
        name="seq",
        sub_agents=[ReactAgent(name="rogue", model=model, tools=[exit_loop], output_key="o")],
    )
    with pytest.raises(DataflowError) as err:
        seq.invoke("go")
    assert "rogue" in str(err.value) and "exit_loop" in str(err.value)
    assert model.calls == 0
    with pytest.raises(DataflowError):
        ReactAgent(name="solo", model=model, tools=[exit_loop]).compile()


def test_loops_nest_and_iteration_is_innermost() -> None:
    seen: list[tuple[str, int]] = []

    def rec(tag: str):
        def fn(state: dict[str, Any]) -> str:
            seen.append((tag, state["loop_iteration"]))
            return tag

        return fn

    inner = LoopAgent(
        name="inner",
        sub_agents=[FunctionAgent(name="i", fn=rec("i"), output_key="i_out")],
        max_iterations=2,
    )
    outer = LoopAgent(
        name="outer",
        sub_agents=[FunctionAgent(name="o", fn=rec("o"), output_key="o_out"), inner],
        max_iterations=2,
    )
    result = outer.invoke("x")
    assert [t for t, _ in seen] == ["o", "i", "i", "o", "i", "i"]
    assert [i for t, i in seen if t == "i"] == [0, 1, 0, 1]
    assert result["agent_status"]["inner"] == "max_iterations"
    assert result["agent_status"]["outer"] == "max_iterations"


def test_loop_output_key_gets_last_body_result() -> None:
    loop = LoopAgent(
        name="loop",
        sub_agents=[
            FunctionAgent(name="a", fn=Counter(lambda n, s: f"a{n}"), output_key="a_out"),
            FunctionAgent(name="b", fn=Counter(lambda n, s: f"b{n}"), output_key="b_out"),
        ],
        max_iterations=2,
        output_key="final",
    )
    assert loop.invoke("x")["final"] == "b2"


# -- exit_loop deep inside a loop, and with no text ----------------------------------------------


def test_exit_loop_from_react_in_parallel_in_loop() -> None:
    exiter = ScriptedChatModel(fn=lambda m, n: tool_call("exit_loop") if n == 1 else f"ex {n}")
    other = ScriptedChatModel(fn=lambda m, n: f"other {n}")
    loop = LoopAgent(
        name="loop",
        sub_agents=[
            ParallelAgent(
                name="fan",
                sub_agents=[
                    ReactAgent(name="ex", model=exiter, tools=[exit_loop], output_key="ex_out"),
                    ReactAgent(name="ot", model=other, output_key="ot_out"),
                ],
            )
        ],
        max_iterations=5,
    )
    result = loop.invoke("go", checkpointer=False)
    assert result["agent_status"]["loop"] == "exit_loop"
    assert result["loop_iteration"] == 1
    assert (exiter.calls, other.calls) == (2, 2)
    assert_tool_pairs_intact(result["messages"])
    assert "gf_exit_loop" not in result


def test_exit_loop_from_nested_sequential_skips_rest_of_pass() -> None:
    model = ScriptedChatModel(fn=lambda m, n: tool_call("exit_loop") if n == 1 else f"a {n}")
    ran: list[str] = []
    loop = LoopAgent(
        name="loop",
        sub_agents=[
            SequentialAgent(
                name="seq",
                sub_agents=[
                    ReactAgent(name="ex", model=model, tools=[exit_loop], output_key="ex_out"),
                    FunctionAgent(
                        name="inner_after", fn=lambda s: ran.append("in") or 1, output_key="i"
                    ),
                ],
            ),
            FunctionAgent(name="outer_after", fn=lambda s: ran.append("out") or 2, output_key="o"),
        ],
        max_iterations=5,
    )
    outer = SequentialAgent(name="root", sub_agents=[loop])
    result = outer.invoke("go", checkpointer=False)
    assert ran == ["in", "out"]  # pass 0 only; pass 1 exits after `ex`
    assert result["agent_status"]["loop"] == "exit_loop"
    assert result["agent_status"]["root"] == "completed"
    assert model.calls == 2


def test_silent_exit_loop_keeps_the_previous_output_and_hands_back_nothing_empty() -> None:
    # pass 0: a real answer; pass 1: only the exit_loop call, with no text
    model = ScriptedChatModel(replies=["draft one", tool_call("exit_loop", {}), "unused"])
    worker = ReactAgent(name="worker", model=model, tools=[exit_loop], output_key="draft")
    loop = LoopAgent(name="loop", sub_agents=[worker], max_iterations=5)
    result = loop.invoke("go")
    assert result["agent_status"]["loop"] == "exit_loop"
    assert result["draft"] == "draft one"
    finals = [m for m in result["messages"] if isinstance(m, AIMessage)]
    assert [m.text for m in finals] == ["draft one"]
    assert all(not m.tool_calls for m in finals)
