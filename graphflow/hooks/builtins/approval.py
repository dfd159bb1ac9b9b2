"""`HumanApproval`: pause before chosen tool calls until a human approves, edits or rejects them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import ToolMessage
from langgraph.types import interrupt

from graphflow.exceptions import ToolError
from graphflow.hooks.base import AsyncToolHandler, ToolCallRequest, ToolHandler, ToolHook

__all__ = ("APPROVAL_REQUEST", "HumanApproval", "parse_decision")

APPROVAL_REQUEST = "tool_approval"
"""The `type` of the interrupt value `HumanApproval` raises."""

_DECISIONS = ("approve", "edit", "reject", "abort")


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
        decision, payload = _parse(interrupt(self.approval_request(request)))
        if decision == "abort":
            raise _aborted(request, payload)
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
        if decision == "abort":
            raise _aborted(request, payload)
        if decision == "reject":
            return _rejected(request, payload)
        return await handler(_edited(request, payload) if decision == "edit" else request)

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


def parse_decision(value: Any) -> tuple[str, Any]:
    """Normalize a resume value into (decision, args-or-reason).

    Decisions: `approve` (alias `retry`), `edit` (with `args`), `reject` (alias `skip`; its
    `reason` or `message` is passed on), `abort` (with an optional `reason`).
    """
    if value is True or value in ("approve", "retry"):
        return "approve", None
    if value is False or value in ("reject", "skip"):
        return "reject", None
    if value == "abort":
        return "abort", None
    if isinstance(value, Mapping):
        decision = value.get("decision", value.get("type"))
        if decision in ("approve", "retry") and "args" not in value:
            return "approve", None
        if decision == "edit" or (decision == "retry" and "args" in value):
            args = value.get("args")
            if not isinstance(args, Mapping):
                raise ValueError(
                    "HumanApproval: an 'edit' decision needs the new arguments as a dict: "
                    "{'decision': 'edit', 'args': {...}}"
                )
            return "edit", dict(args)
        if decision in ("reject", "skip"):
            return "reject", value.get("reason", value.get("message"))
        if decision == "abort":
            return "abort", value.get("reason", value.get("message"))
    raise ValueError(
        f"HumanApproval: cannot understand the resume value {value!r}; resume with "
        "{'decision': 'approve'}, {'decision': 'edit', 'args': {...}}, "
        "{'decision': 'reject', 'reason': '...'} or {'decision': 'abort', 'reason': '...'} "
        "(for a failed call: 'retry', 'skip' with a 'message', or 'abort')"
    )


_parse = parse_decision


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
