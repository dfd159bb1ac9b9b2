"""`FunctionAgent`: a plain Python function over state, placed in a flow like any agent."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from pydantic import Field, model_validator

from graphflow.agents.base import Agent

__all__ = ("FunctionAgent",)


class FunctionAgent(Agent):
    """A deterministic step (Lynxe's Func-Agent): list files, validate, deduplicate, write.

    `fn(state)` (sync or async) returns the value for `output_key`; without an `output_key` it
    returns a dict update whose keys must be declared in `writes`.
    """

    fn: Callable[[Mapping[str, Any]], Any | Awaitable[Any]]
    """The step: receives the state, returns the value (or an update dict)."""
    writes: list[str] = Field(default_factory=list)
    """Keys a dict update may write (besides `output_key`)."""

    @model_validator(mode="after")
    def _check(self) -> FunctionAgent:
        if self.instruction is not None:
            raise ValueError(
                f"FunctionAgent {self.name!r} calls no model, so it takes no instruction"
            )
        return self
