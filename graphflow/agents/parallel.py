"""`ParallelAgent`: sub-agents run concurrently from the same state; results are merged."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from pydantic import Field, model_validator

from graphflow.agents.base import Agent
from graphflow.agents.sequential import _flow_has_no_instruction

__all__ = ("MergeStrategy", "ParallelAgent")

MergeStrategy = Literal["dict", "list", "concat"] | Callable[[dict[str, Any]], Any]


class ParallelAgent(Agent):
    """Run `sub_agents` concurrently; wall time is about the slowest branch, not the sum.

    Branches must write distinct output keys (checked when the tree is built). A failing branch
    is reported as `ParallelBranchError` after the others finish; their outputs are kept and a
    `resume()` re-runs only the failed branches.
    """

    sub_agents: list[Agent] = Field(min_length=1)
    """The branches; any agent kind, flows included."""
    merge: MergeStrategy = "dict"
    """How branch results are merged into `merge_output_key`: `dict` (output key -> value),
    `list` (declaration order), `concat` (texts joined by blank lines), or a function receiving
    the output key -> value dict in declaration order."""
    merge_output_key: str | None = None
    """Where the merged result goes; defaults to `output_key`. None for both: no merged value."""
    max_concurrency: int | None = Field(default=None, gt=0)
    """At most this many branches run at once."""

    @model_validator(mode="after")
    def _check(self) -> ParallelAgent:
        _flow_has_no_instruction(self)
        return self

    @property
    def merged_key(self) -> str | None:
        """The key the merge writes."""
        return self.merge_output_key or self.output_key
