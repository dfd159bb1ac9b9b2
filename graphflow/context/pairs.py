"""Tool-call pairing: every tool result follows its call, every call has its result.

Providers reject a request that holds a tool result whose call is gone, or a call without its
result ("No tool call found", langchain #34282, #38352). A context policy cuts and rewrites
conversations, so every request it builds is checked here before it is sent, and repaired rather
than sent broken: a result without its call is dropped; a call without a result gets a short
stand-in result saying so (the call itself stays, so the model's reasoning stays readable).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

__all__ = ("MISSING_RESULT", "PairProblem", "check_tool_pairs", "repair_tool_pairs")

MISSING_RESULT = "[no result recorded for this tool call]"
"""Content of the stand-in result `repair_tool_pairs` adds for an unanswered call."""


@dataclass(frozen=True, kw_only=True)
class PairProblem:
    """One broken pairing in a message list."""

    index: int
    """Position of the offending message."""
    kind: str
    """`orphan_result` (a result without its call), `missing_result` (a call without its result)
    or `duplicate_result` (a second result for one call)."""
    tool_call_id: str
    """The call id concerned."""


def check_tool_pairs(messages: Sequence[BaseMessage]) -> list[PairProblem]:
    """Every pairing problem in `messages` (empty when the list is safe to send)."""
    problems: list[PairProblem] = []
    open_calls: dict[str, int] = {}  # call id -> index of its AI message, in the current block
    answered: set[str] = set()
    for index, message in enumerate(messages):
        if isinstance(message, ToolMessage):
            call_id = message.tool_call_id
            if call_id in answered:
                problems.append(
                    PairProblem(index=index, kind="duplicate_result", tool_call_id=call_id)
                )
            elif call_id not in open_calls:
                problems.append(
                    PairProblem(index=index, kind="orphan_result", tool_call_id=call_id)
                )
            else:
                answered.add(call_id)
            continue
        problems.extend(_unanswered(open_calls, answered))
        open_calls, answered = {}, set()
        if isinstance(message, AIMessage):
            open_calls = {str(call["id"]): index for call in message.tool_calls if call.get("id")}
    problems.extend(_unanswered(open_calls, answered))
    return problems


def _unanswered(open_calls: dict[str, int], answered: set[str]) -> list[PairProblem]:
    return [
        PairProblem(index=index, kind="missing_result", tool_call_id=call_id)
        for call_id, index in open_calls.items()
        if call_id not in answered
    ]


def repair_tool_pairs(messages: Sequence[BaseMessage]) -> tuple[list[BaseMessage], int]:
    """A copy of `messages` with every pairing problem repaired, and how many were repaired.

    Results must directly follow the AI message that called them (the rule OpenAI and Anthropic
    enforce). A result elsewhere, or a second result for one call, is dropped; a call with no
    result in the block after it gets a `MISSING_RESULT` stand-in at the end of the block.
    """
    out: list[BaseMessage] = []
    repairs = 0
    index = 0
    while index < len(messages):
        message = messages[index]
        index += 1
        if isinstance(message, ToolMessage):
            repairs += 1  # a result outside any block: its call is gone
            continue
        out.append(message)
        if not isinstance(message, AIMessage) or not message.tool_calls:
            continue
        block: dict[str, ToolMessage] = {}
        while index < len(messages) and isinstance(messages[index], ToolMessage):
            result = messages[index]
            assert isinstance(result, ToolMessage)
            index += 1
            wanted = any(call.get("id") == result.tool_call_id for call in message.tool_calls)
            if not wanted or result.tool_call_id in block:
                repairs += 1
                continue
            block[result.tool_call_id] = result
        out.extend(block.values())
        for call in message.tool_calls:
            if (call.get("id") or "") not in block:
                repairs += 1
                out.append(
                    ToolMessage(
                        content=MISSING_RESULT,
                        tool_call_id=call.get("id") or "",
                        name=call["name"],
                        status="error",
                    )
                )
    return out, repairs
