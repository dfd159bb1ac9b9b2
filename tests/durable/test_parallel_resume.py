"""A failed parallel branch resumes from its own last checkpoint, not from its start."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.tools import tool

from graphflow import FunctionAgent, ParallelAgent, ParallelBranchError, ReactAgent, SequentialAgent
from graphflow.testing import ScriptedChatModel, tool_call


@tool
def lookup(query: str) -> str:
    """Look something up."""
    LOOKUPS.append(query)
    return f"found {query}"


LOOKUPS: list[str] = []


class Flaky:
    """A model script: two tool rounds, then a final answer; the 3rd call fails once."""

    def __init__(self) -> None:
        self.failed = False

    def __call__(self, messages: list[Any], n: int) -> Any:
        if n < 2:
            return tool_call("lookup", {"query": f"q{n}"})
        if not self.failed:
            self.failed = True
            return ConnectionError("model endpoint reset")
        return "final answer"


def _tree() -> tuple[ParallelAgent, ScriptedChatModel, ScriptedChatModel, list[str]]:
    LOOKUPS.clear()
    steps: list[str] = []
    flaky = ScriptedChatModel(fn=Flaky())
    steady = ScriptedChatModel(fn=lambda m, n: f"steady {n}")

    def first(state: dict[str, Any]) -> str:
        steps.append("first")
        return "one"

    def second(state: dict[str, Any]) -> str:
        steps.append("second")
        if steps.count("second") == 1:
            raise RuntimeError("disk full")
        return "two"

    fan = ParallelAgent(
        name="fan",
        sub_agents=[
            ReactAgent(name="researcher", model=flaky, tools=[lookup], output_key="research"),
            SequentialAgent(
                name="steps",
                sub_agents=[
                    FunctionAgent(name="first", fn=first, output_key="one"),
                    FunctionAgent(name="second", fn=second, output_key="two"),
                ],
            ),
            ReactAgent(name="writer", model=steady, output_key="draft"),
        ],
        output_key="merged",
    )
    return fan, flaky, steady, steps


def test_failed_branches_continue_from_their_last_checkpoint(tmp_path, run_mode) -> None:
    fan, flaky, steady, steps = _tree()
    url = f"sqlite:///{tmp_path}/runs.db"

    async def arun() -> dict[str, Any]:
        with pytest.raises(ParallelBranchError):
            await fan.ainvoke("go", thread_id="t", checkpointer=url)
        return await fan.aresume("t", checkpointer=url)

    if not run_mode.is_async:
        with pytest.raises(ParallelBranchError) as err:
            fan.invoke("go", thread_id="t", checkpointer=url)
        assert err.value.agent == "fan"
        # both failed tasks of the step are re-run by one resume
        result = fan.resume("t", checkpointer=url)
    else:
        result = asyncio.run(arun())

    assert result["merged"] == {
        "research": "final answer",
        "two": "two",
        "draft": "steady 0",
    }
    # the ReAct branch failed at its 3rd model call: calls 1-2 and both tool calls are not redone
    assert flaky.calls == 4
    assert LOOKUPS == ["q0", "q1"]
    # the Sequential branch failed in its 2nd step: the 1st step is not redone
    assert steps.count("first") == 1
    assert steps.count("second") == 2
    # the healthy branch ran once
    assert steady.calls == 1
