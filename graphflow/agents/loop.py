"""`LoopAgent`: a body of sub-agents repeats until a condition, an `exit_loop` call or a count."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pydantic import Field, model_validator

from graphflow.agents.base import Agent
from graphflow.agents.sequential import _flow_has_no_instruction
from graphflow.instructions import render_value

__all__ = ("LoopAgent", "output_contains")


class LoopAgent(Agent):
    """Repeat `sub_agents` (run in sequence) as a do-while loop.

    After each pass the loop stops when a sub-agent called `exit_loop` (innermost loop only),
    when `until(state)` is true, or when `max_iterations` passes are done. `{loop_iteration}`
    (0-based) is available to the body's instructions; `agent_status[name]` records why it stopped.
    """

    sub_agents: list[Agent] = Field(min_length=1)
    """The loop body, run in order on every pass."""
    max_iterations: int = Field(default=3, gt=0)
    """Stop after this many passes even if the exit condition never holds."""
    until: Callable[[Mapping[str, Any]], bool] | None = None
    """Predicate on state, checked after each pass; true ends the loop."""

    @model_validator(mode="after")
    def _check(self) -> LoopAgent:
        _flow_has_no_instruction(self)
        return self


def output_contains(key: str, token: str) -> Callable[[Mapping[str, Any]], bool]:
    """An `until` predicate: the value of `key` (rendered as text) contains `token`."""

    def predicate(state: Mapping[str, Any]) -> bool:
        return token in render_value(state.get(key))

    predicate.__name__ = f"output_contains({key!r}, {token!r})"
    predicate.reads = (key,)  # type: ignore[attr-defined]  # the one key it reads
    return predicate
