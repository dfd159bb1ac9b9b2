"""`LoopBreaker`: tell a stuck agent plainly that its last tool calls all returned the same.

When the last `repeats` tool calls have the same tool, the same arguments and the same result,
the next request ends with a short note saying so, and the loop is recorded in `gf_context`
(`ContextStats.loops_detected`) and in a `graphflow_context` custom stream event. The agent is not
stopped — combine with `ModelCallLimit` for a hard stop.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from graphflow.context._pipeline import Parts
from graphflow.context._view import text_of
from graphflow.context.policy import ContextPolicy

__all__ = ("LoopBreaker", "LoopEvent")


@dataclass(frozen=True, kw_only=True)
class LoopEvent:
    """A run of identical tool calls with identical results."""

    tool: str
    """The tool called again and again."""
    args: dict[str, Any]
    """Its arguments, the same each time."""
    call_id: str
    """The id of the last call of the run."""
    repeats: int
    """How many identical calls in a row."""

    def note(self) -> str:
        """What the model is told."""
        args = json.dumps(self.args, sort_keys=True, default=str)
        return (
            f"[graphflow] Loop detected: your last {self.repeats} calls to `{self.tool}` used the "
            f"same arguments ({args}) and returned the same result each time. Calling it again "
            "will not give you anything new. Use the result you already have, try a different "
            "tool or different arguments, or give your final answer."
        )


class LoopBreaker(ContextPolicy):
    """Detect `repeats` identical tool calls with identical results, and say so to the model."""

    def __init__(self, repeats: int = 3, *, offload: Any = None) -> None:
        """Flag a loop after `repeats` (at least 2) identical calls and results in a row."""
        if repeats < 2:
            raise ValueError(f"LoopBreaker: repeats={repeats}; it must be at least 2")
        super().__init__(offload=offload)
        self.repeats = repeats
        """Identical calls in a row that count as a loop."""

    def detect(self, history: Sequence[BaseMessage]) -> LoopEvent | None:
        """The loop at the end of `history`, if its last `repeats` calls are identical."""
        results = {m.tool_call_id: text_of(m) for m in history if isinstance(m, ToolMessage)}
        calls = [c for m in history if isinstance(m, AIMessage) for c in m.tool_calls]
        if len(calls) < self.repeats:
            return None
        last = calls[-1]
        signature = _signature(last, results)
        if signature is None:
            return None
        streak = 0
        for call in reversed(calls):
            if _signature(call, results) != signature:
                break
            streak += 1
        if streak < self.repeats:
            return None
        return LoopEvent(
            tool=last["name"],
            args=dict(last.get("args") or {}),
            call_id=last.get("id") or "",
            repeats=streak,
        )

    def _parts(self) -> Parts:
        return Parts(loop_breaker=self, offload=self.offload, written=self._written)


def _signature(call: Any, results: dict[str, str]) -> tuple[str, str, str] | None:
    result = results.get(call.get("id") or "")
    if result is None:
        return None
    return call["name"], json.dumps(call.get("args") or {}, sort_keys=True, default=str), result
