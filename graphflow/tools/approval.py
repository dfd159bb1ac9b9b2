"""Answers to a paused tool call: the decisions a human may give, and their check.

Both pauses for a tool call — `HumanApproval` before a guarded tool, and a `ToolPolicy` recovery
after a failure that needs a human — raise an interrupt of type `tool_approval` and read their
answer with `parse_decision`. The words themselves (the request type, the decisions and their
aliases) are `graphflow._internal.approval`'s, shared with the CLI and the web UI. The runtime checks every answer with `check_resume_value` before it
is stored (LangGraph saves a resume value before the paused code reads it, so a refused answer
would wedge the thread).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from graphflow._internal.approval import (
    ABORT,
    ALIASES,
    APPROVAL_REQUEST,
    APPROVE,
    EDIT,
    REJECT,
    RETRY,
    is_approval_request,
)

__all__ = ("APPROVAL_REQUEST", "check_resume_value", "parse_decision")


def check_resume_value(interrupts: Sequence[Any], value: Any) -> None:
    """Raise the `ValueError` a paused tool call would raise for `value`, before it is sent.

    LangGraph saves a resume value in the thread before the hook reads it; a value the hook
    refuses would stay there and fail every later resume of the thread, a correct one included.
    `interrupts` are the thread's pending `Interrupt`s.
    """
    approvals = {i.id for i in interrupts if is_approval_request(i.value)}
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
        parse_decision(answer)


def parse_decision(value: Any) -> tuple[str, Any]:
    """Normalize a resume value into (decision, args-or-reason).

    Decisions: `approve` (alias `retry`), `edit` (with `args`), `reject` (alias `skip`; its
    `reason` or `message` is passed on), `abort` (with an optional `reason`).
    """
    if value is True or value is False:
        return (APPROVE if value else REJECT), None
    if isinstance(value, str) and ALIASES.get(value, value) in (APPROVE, REJECT, ABORT):
        return ALIASES.get(value, value), None
    if isinstance(value, Mapping):
        given = value.get("decision", value.get("type"))
        decision = ALIASES.get(given, given) if isinstance(given, str) else given
        if decision == APPROVE and "args" not in value:
            return APPROVE, None
        if decision == EDIT or (given == RETRY and "args" in value):
            args = value.get("args")
            if not isinstance(args, Mapping):
                raise ValueError(
                    "HumanApproval: an 'edit' decision needs the new arguments as a dict: "
                    "{'decision': 'edit', 'args': {...}}"
                )
            return EDIT, dict(args)
        if decision in (REJECT, ABORT):
            return decision, value.get("reason", value.get("message"))
    raise ValueError(
        f"HumanApproval: cannot understand the resume value {value!r}; resume with "
        "{'decision': 'approve'}, {'decision': 'edit', 'args': {...}}, "
        "{'decision': 'reject', 'reason': '...'} or {'decision': 'abort', 'reason': '...'} "
        "(for a failed call: 'retry', 'skip' with a 'message', or 'abort')"
    )
