"""A whole run's figures for a list of runs: its agents' counts summed, and when it started.

Read exactly as the run overlay reads each agent (`_run._invocations`, then each agent's strategy
`read_run`), without the overlay's statuses, so a runs list pays only for the counts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from graphflow.strategies.registry import strategy_for
from graphflow.visualize._run import _invocations

if TYPE_CHECKING:
    from graphflow.agents.base import Agent

__all__ = ("RunTotals", "run_totals")


@dataclass(frozen=True, kw_only=True)
class RunTotals:
    """A run's model calls, tool calls and tokens (every agent's), and its first checkpoint."""

    model_calls: int = 0
    tool_calls: int = 0
    tokens: int | None = None
    """Tokens the models reported (`usage_metadata`); None when no call reported any."""
    started_at: str | None = None
    """When the thread's first checkpoint was written (ISO 8601)."""


def run_totals(root: Agent, saver: Any, thread_id: str) -> RunTotals:
    """`RunTotals` of `thread_id` in `saver` (a checkpoint saver) for the tree `root`."""
    invocations = _invocations(root, saver, thread_id)
    model_calls = tool_calls = 0
    tokens: int | None = None
    for agent in root.walk():
        counts = strategy_for(agent).read_run(agent, invocations.get(agent.name, []))
        model_calls += counts.model_calls or 0
        tool_calls += counts.tool_calls or 0
        if counts.tokens is not None:
            tokens = (tokens or 0) + counts.tokens
    own = next(iter(invocations.get(root.name, [])), [])  # the root's namespace (""), oldest first
    started = next((str(t.checkpoint["ts"]) for t in own if t.checkpoint.get("ts")), None)
    return RunTotals(
        model_calls=model_calls, tool_calls=tool_calls, tokens=tokens, started_at=started
    )
