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

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from graphflow.context import _settings
from graphflow.context._pipeline import MAX_RECORDS
from graphflow.context._view import text_of
from graphflow.context.policy import ContextPolicy
from graphflow.context.step import ContextStep, StepContext
from graphflow.messages import NOTE_MARK

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


class LoopBreaker(ContextPolicy, ContextStep):
    """Detect `repeats` identical tool calls with identical results, and say so to the model.

    A policy on its own and a step of a `ContextPipeline` (usually the last: its note ends the
    request).
    """

    def __init__(self, repeats: int = 3, *, offload: Any = None) -> None:
        """Flag a loop after `repeats` (at least 2) identical calls and results in a row.

        Raises:
            GraphflowConfigError: `repeats` is not a whole number of at least 2.
        """
        _settings.whole("LoopBreaker", "repeats", repeats, minimum=2)
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

    def apply(self, messages: list[BaseMessage], context: StepContext) -> list[BaseMessage]:
        """`messages` with a note at the end when the history ends in a loop."""
        loop = self.detect(context.history)
        if loop is None:
            return messages
        if loop.repeats == self.repeats:  # a new streak (a longer one was recorded already)
            work = context._work
            work.stats["loops_detected"] = int(work.stats.get("loops_detected", 0)) + 1
            loops = list(work.record.get("loops") or [])
            loops.append(
                {
                    "tool": loop.tool,
                    "args": loop.args,
                    "call_id": loop.call_id,
                    "repeats": loop.repeats,
                }
            )
            work.record["loops"] = loops[-MAX_RECORDS:]
            context.event("loop_detected", tool=loop.tool, repeats=loop.repeats)
        note = HumanMessage(content=loop.note(), additional_kwargs={NOTE_MARK: "loop"})
        return [*messages, note]


def _signature(call: Any, results: dict[str, str]) -> tuple[str, str, str] | None:
    result = results.get(call.get("id") or "")
    if result is None:
        return None
    return call["name"], json.dumps(call.get("args") or {}, sort_keys=True, default=str), result
