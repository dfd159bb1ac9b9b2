"""Which tool calls of a model turn run next: parallel-safe runs together, the rest one by one.

The calls of one model turn are cut, in call order, into consecutive runs of parallel-safe calls
(one superstep, concurrent) and single other calls (one superstep each). Every call stays its
own task, so each is a durable step: a resumed run re-runs only the calls without a result.
What is still to do is read from the messages alone (a call without a `ToolMessage`, or whose
message waits for a human), so the schedule needs no state of its own and survives restarts.

A tools task's routing sees only its own result, not its siblings' (LangGraph applies the
writes of a superstep together, after it). So each result records the ids of its batch
(`BATCH_KEY`): a task knows the turn goes on when a call outside its batch has no result yet,
or when a result waits for a human. Whoever then dispatches the next batch reads the full
state, after the superstep.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from graphflow.tools.errors import ToolErrorType
from graphflow.tools.result import tool_result

__all__ = (
    "AWAITING_APPROVAL",
    "BATCH_KEY",
    "awaiting_approval",
    "call_history",
    "next_tool_calls",
    "pending_tool_calls",
    "turn_unfinished",
)

AWAITING_APPROVAL = "graphflow_awaiting_approval"
"""`ToolMessage.additional_kwargs` flag: the call failed and waits for a human's decision."""
BATCH_KEY = "graphflow_tool_batch"
"""`ToolMessage.additional_kwargs` key: ids of the calls that ran in the same step."""


def awaiting_approval(message: BaseMessage | None) -> bool:
    """Whether `message` is a failed call's result that still waits for a human."""
    return isinstance(message, ToolMessage) and bool(
        message.additional_kwargs.get(AWAITING_APPROVAL)
    )


def pending_tool_calls(
    messages: Sequence[BaseMessage],
) -> list[tuple[dict[str, Any], ToolMessage | None]]:
    """The last model turn's calls still to run, in call order, with a result waiting for a human.

    Only a turn followed by nothing but tool results counts (a later user message closes it).
    """
    start = len(messages) - 1
    while start >= 0 and isinstance(messages[start], ToolMessage):
        start -= 1
    if start < 0 or not isinstance(messages[start], AIMessage):
        return []
    turn = messages[start]
    assert isinstance(turn, AIMessage)
    results: dict[Any, ToolMessage] = {
        m.tool_call_id: m for m in messages[start + 1 :] if isinstance(m, ToolMessage)
    }
    pending: list[tuple[dict[str, Any], ToolMessage | None]] = []
    for call in turn.tool_calls:
        result = results.get(call.get("id"))
        if result is None or awaiting_approval(result):
            pending.append((dict(call), result))
    return pending


def next_tool_calls(
    messages: Sequence[BaseMessage], parallel_safe: Callable[[str], bool]
) -> list[dict[str, Any]]:
    """The tool calls of the last model turn to run next (empty: the turn is done).

    `parallel_safe(tool_name)` says whether a tool's calls may overlap.
    """
    batch: list[dict[str, Any]] = []
    for call, result in pending_tool_calls(messages):
        if awaiting_approval(result) or not parallel_safe(call["name"]):
            return batch or [call]
        batch.append(call)
    return batch


def turn_unfinished(messages: Sequence[BaseMessage]) -> bool:
    """From a tools task's own view: do calls of its turn remain after its batch?"""
    pending = pending_tool_calls(messages)
    if any(awaiting_approval(result) for _, result in pending):
        return True
    last = messages[-1] if messages else None
    if not isinstance(last, ToolMessage):
        return bool(pending)
    batch = set(last.additional_kwargs.get(BATCH_KEY) or [last.tool_call_id])
    return any(call.get("id") not in batch for call, _ in pending)


def call_history(
    messages: Sequence[BaseMessage], call: dict[str, Any], batch: Sequence[str]
) -> dict[str, Any]:
    """What the executor needs to know about earlier results for `call` (plain, checkpointable).

    `batch` are the ids of the calls scheduled with it; `invalid_streak` counts the
    INVALID_PARAM results of the same tool in a row; `awaiting` is the call's own earlier
    result when it waits for a human.
    """
    awaiting = next(
        (
            m
            for m in reversed(messages)
            if isinstance(m, ToolMessage) and m.tool_call_id == call.get("id")
        ),
        None,
    )
    streak = 0
    for message in reversed(messages):
        if not isinstance(message, ToolMessage) or message.name != call["name"]:
            continue
        if message is awaiting:
            continue
        result = tool_result(message)
        if result is None or result.error_type != ToolErrorType.INVALID_PARAM:
            break
        streak += 1
    if not awaiting_approval(awaiting):
        awaiting = None
    return {"batch": list(batch), "invalid_streak": streak, "awaiting": awaiting}
