"""The words of an approval: what a paused tool call asks, and what a human may answer.

One place for them: `HumanApproval` and the tool executor pause with `APPROVAL_REQUEST` and read
the answer with `graphflow.tools.approval.parse_decision`; the CLI (`graphflow approve`) and the
web UI build the answer with `approval_answer`. Imports nothing, so the CLI's parser can offer
the words without loading LangChain.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = (
    "ABORT",
    "ALIASES",
    "APPROVAL_REQUEST",
    "APPROVE",
    "DECISIONS",
    "EDIT",
    "FAILED_CALL_DECISIONS",
    "REJECT",
    "RETRY",
    "SKIP",
    "approval_answer",
    "is_approval_request",
)

APPROVAL_REQUEST = "tool_approval"
"""The `type` of the interrupt value a paused tool call raises."""

APPROVE, EDIT, REJECT, ABORT = "approve", "edit", "reject", "abort"
DECISIONS = (APPROVE, EDIT, REJECT, ABORT)
"""What a human may answer to a paused tool call (`edit` carries new `args`)."""

RETRY, SKIP = "retry", "skip"
FAILED_CALL_DECISIONS = (RETRY, SKIP, ABORT)
"""How the answers are worded to a call that failed and waits for a human (`ToolPolicy`)."""

ALIASES = {RETRY: APPROVE, SKIP: REJECT}
"""The failed-call words, as the decisions they stand for (`retry` with `args` is an edit)."""


def is_approval_request(value: Any) -> bool:
    """Whether an interrupt's value is a paused tool call waiting for a decision."""
    return isinstance(value, Mapping) and value.get("type") == APPROVAL_REQUEST


def approval_answer(
    decision: str, *, reason: str | None = None, args: Any = None
) -> dict[str, Any]:
    """The resume value that gives `decision` (with a rejection's `reason`, an edit's `args`).

    Raises:
        ValueError: `decision` is not one of `DECISIONS`.
    """
    decision = ALIASES.get(decision, decision)
    if decision not in DECISIONS:
        raise ValueError(f"unknown decision {decision!r}; use {', '.join(DECISIONS)}")
    answer: dict[str, Any] = {"decision": decision}
    if decision == EDIT:
        answer["args"] = args
    elif decision in (REJECT, ABORT) and reason is not None:
        answer["reason"] = reason
    return answer
