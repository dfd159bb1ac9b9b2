"""`HumanApproval`: pause before chosen tool calls until a human approves, edits or rejects them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import ToolMessage
from langgraph.types import interrupt

from graphflow._internal.approval import ABORT, EDIT, REJECT
from graphflow.exceptions import ToolError
from graphflow.hooks.base import AsyncToolHandler, ToolCallRequest, ToolHandler, ToolHook
from graphflow.tools.approval import APPROVAL_REQUEST, parse_decision

__all__ = ("APPROVAL_REQUEST", "HumanApproval", "parse_decision")


class HumanApproval(ToolHook):
    """A tool hook that asks a human before the named tools run.

    Each guarded call pauses the run with `langgraph.types.interrupt`; the interrupt's value is::

        {"type": "tool_approval", "agent": ..., "tool": ..., "args": {...},
         "tool_call_id": ..., "description": ...}

    Resume with one decision per pending call::

        agent.resume(thread_id, {"decision": "approve"})
        agent.resume(thread_id, {"decision": "edit", "args": {"amount": 10}})
        agent.resume(thread_id, {"decision": "reject", "reason": "too expensive"})
        agent.resume(thread_id, {"decision": "abort", "reason": "wrong customer"})  # ToolError

    When several calls of one model turn wait at once (each tool call is its own task, so each
    raises its own interrupt), answer them all in one resume keyed by interrupt id:
    `agent.resume(thread_id, {interrupt.id: decision, ...})` (ids are in the `__interrupt__`
    entry of the result, or in `agent.get_state(thread_id).interrupts`).

    A rejected call is not run: the model gets an error `ToolMessage` that says so and gives the
    reason, so it can adapt. The pause is a checkpoint, so it survives a process restart when the
    agent runs with a persistent checkpointer (e.g. `checkpointer="sqlite:///runs.db"`).
    """

    def __init__(self, tools: Mapping[str, str] | Sequence[str]) -> None:
        """Guard `tools`: a mapping of tool name -> what the reviewer is told, or a list of names."""
        self.tools: dict[str, str] = (
            dict(tools) if isinstance(tools, Mapping) else {name: "" for name in tools}
        )
        """Tool name -> description shown to the reviewer."""

    def wrap_tool_call(self, request: ToolCallRequest, handler: ToolHandler) -> ToolMessage:
        """Ask for a decision, then run, edit-and-run, or reject the call."""
        if request.tool_call["name"] not in self.tools:
            return handler(request)
        decision, payload = parse_decision(interrupt(self.approval_request(request)))
        if decision == ABORT:
            raise _aborted(request, payload)
        if decision == REJECT:
            return _rejected(request, payload)
        return handler(_edited(request, payload) if decision == EDIT else request)

    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: AsyncToolHandler
    ) -> ToolMessage:
        """Async twin of `wrap_tool_call`."""
        if request.tool_call["name"] not in self.tools:
            return await handler(request)
        decision, payload = parse_decision(interrupt(self.approval_request(request)))
        if decision == ABORT:
            raise _aborted(request, payload)
        if decision == REJECT:
            return _rejected(request, payload)
        return await handler(_edited(request, payload) if decision == EDIT else request)

    def approval_request(self, request: ToolCallRequest) -> dict[str, Any]:
        """The interrupt value shown to the reviewer for `request`."""
        call = request.tool_call
        return {
            "type": APPROVAL_REQUEST,
            "agent": request.agent,
            "tool": call["name"],
            "args": dict(call.get("args") or {}),
            "tool_call_id": call.get("id"),
            "description": self.tools.get(call["name"], ""),
        }


def _edited(request: ToolCallRequest, args: dict[str, Any]) -> ToolCallRequest:
    return request.override(tool_call={**request.tool_call, "args": args})


def _rejected(request: ToolCallRequest, reason: Any) -> ToolMessage:
    name = request.tool_call["name"]
    because = f": {reason}" if reason else " (no reason given)"
    return ToolMessage(
        content=(
            f"The call to tool `{name}` was rejected by a human reviewer{because}. It did not run; "
            "do not repeat it unchanged."
        ),
        tool_call_id=request.tool_call["id"],
        name=name,
        status="error",
    )


def _aborted(request: ToolCallRequest, reason: Any) -> ToolError:
    name = request.tool_call["name"]
    because = f": {reason}" if reason else " (no reason given)"
    return ToolError(
        f"Agent `{request.agent}`: a human reviewer aborted the run at the call to tool "
        f"`{name}`{because}. The checkpoints are kept; resume the thread to be asked again.",
        agent=request.agent,
        tool=name,
        tool_call_id=request.tool_call.get("id"),
    )
