"""`HumanApproval`: pause before chosen tool calls until a human approves, edits or rejects them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import ToolMessage
from langgraph.types import interrupt

from graphflow.hooks.base import AsyncToolHandler, ToolCallRequest, ToolHandler, ToolHook

__all__ = ("APPROVAL_REQUEST", "HumanApproval")

APPROVAL_REQUEST = "tool_approval"
"""The `type` of the interrupt value `HumanApproval` raises."""

_DECISIONS = ("approve", "edit", "reject")


class HumanApproval(ToolHook):
    """A tool hook that asks a human before the named tools run.

    Each guarded call pauses the run with `langgraph.types.interrupt`; the interrupt's value is::

        {"type": "tool_approval", "agent": ..., "tool": ..., "args": {...},
         "tool_call_id": ..., "description": ...}

    Resume with one decision per pending call::

        agent.resume(thread_id, {"decision": "approve"})
        agent.resume(thread_id, {"decision": "edit", "args": {"amount": 10}})
        agent.resume(thread_id, {"decision": "reject", "reason": "too expensive"})

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
        decision, payload = _parse(interrupt(self.approval_request(request)))
        if decision == "reject":
            return _rejected(request, payload)
        return handler(_edited(request, payload) if decision == "edit" else request)

    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: AsyncToolHandler
    ) -> ToolMessage:
        """Async twin of `wrap_tool_call`."""
        if request.tool_call["name"] not in self.tools:
            return await handler(request)
        decision, payload = _parse(interrupt(self.approval_request(request)))
        if decision == "reject":
            return _rejected(request, payload)
        return await handler(_edited(request, payload) if decision == "edit" else request)

    def validate_resume(self, interrupts: Sequence[Any], value: Any) -> None:
        """Refuse an answer to a pending approval that `wrap_tool_call` could not understand."""
        check_resume_value(interrupts, value)

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


def check_resume_value(interrupts: Sequence[Any], value: Any) -> None:
    """Raise the `ValueError` `HumanApproval` would raise for `value`, before it is sent.

    LangGraph saves a resume value in the thread before the hook reads it; a value the hook
    refuses would stay there and fail every later resume of the thread, a correct one included.
    `interrupts` are the thread's pending `Interrupt`s.
    """
    approvals = {
        i.id
        for i in interrupts
        if isinstance(i.value, Mapping) and i.value.get("type") == APPROVAL_REQUEST
    }
    if not approvals:
        return
    ids = {i.id for i in interrupts}
    if isinstance(value, Mapping) and value and all(k in ids for k in value):
        answers = [v for k, v in value.items() if k in approvals]
    elif approvals == ids:
        answers = [value]
    else:
        return
    for answer in answers:
        _parse(answer)


def _parse(value: Any) -> tuple[str, Any]:
    """Normalize a resume value into (decision, args-or-reason)."""
    if value is True or value == "approve":
        return "approve", None
    if value is False or value == "reject":
        return "reject", None
    if isinstance(value, Mapping):
        decision = value.get("decision", value.get("type"))
        if decision == "approve":
            return "approve", None
        if decision == "edit":
            args = value.get("args")
            if not isinstance(args, Mapping):
                raise ValueError(
                    "HumanApproval: an 'edit' decision needs the new arguments as a dict: "
                    "{'decision': 'edit', 'args': {...}}"
                )
            return "edit", dict(args)
        if decision == "reject":
            return "reject", value.get("reason")
    raise ValueError(
        f"HumanApproval: cannot understand the resume value {value!r}; resume with "
        "{'decision': 'approve'}, {'decision': 'edit', 'args': {...}} or "
        "{'decision': 'reject', 'reason': '...'}"
    )


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
