"""A parallel tree whose branches fail once each, shared by the parallel-resume tests."""

from __future__ import annotations

from typing import Any

from langchain_core.tools import tool

from graphflow import FunctionAgent, ParallelAgent, ReactAgent, SequentialAgent
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
