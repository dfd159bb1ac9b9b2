"""`ModelCallLimit` and `ToolCallLimit`: stop an agent that calls its model or tools too often.

Counts come from the checkpointed conversation, not from hook memory, so they survive a crash
and a process restart and need no extra state key:

* **run** scope — this invocation of the agent: its model calls so far (`ModelRequest.call_number`)
  and the tool calls requested by its replies in this invocation;
* **thread** scope — every reply the agent wrote in the conversation it sees (AI messages named
  after the agent). This is exact for a top-level agent invoked again and again on one thread. A
  nested agent sees only the final answers its earlier invocations handed back, and an agent with
  `include_contents="none"` starts each invocation from an empty conversation, so for those the
  thread scope counts only the current invocation's replies.

`exit="end"` ends the agent cleanly: its final answer becomes a message saying which limit was
reached. `exit="error"` raises `ModelCallLimitExceeded` / `ToolCallLimitExceeded`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from langchain_core.messages import AIMessage, BaseMessage

from graphflow.exceptions import CallLimitExceeded, ModelCallLimitExceeded, ToolCallLimitExceeded
from graphflow.hooks.base import ModelHook, ModelRequest
from graphflow.messages import LIMIT_MARK
from graphflow.state import MESSAGES

__all__ = ("LIMIT_MARK", "ModelCallLimit", "ToolCallLimit")

Exit = Literal["end", "error"]


def _check_limits(run_limit: int | None, thread_limit: int | None, exit: str, what: str) -> None:
    if run_limit is None and thread_limit is None:
        raise ValueError(f"{what}: give run_limit, thread_limit or both")
    for label, value in (("run_limit", run_limit), ("thread_limit", thread_limit)):
        if value is not None and value < 0:
            raise ValueError(f"{what}: {label} must be >= 0, got {value}")
    if exit not in ("end", "error"):
        raise ValueError(f"{what}: exit must be 'end' or 'error', got {exit!r}")


def _replies(request: ModelRequest) -> list[AIMessage]:
    """The agent's own model replies in the conversation (limit messages excluded)."""
    messages: Sequence[BaseMessage] = request.state.get(MESSAGES) or []
    return [
        m
        for m in messages
        if isinstance(m, AIMessage)
        and m.name == request.agent
        and LIMIT_MARK not in m.additional_kwargs
    ]


def _stop_message(request: ModelRequest, text: str, kind: str) -> AIMessage:
    return AIMessage(content=text, name=request.agent, additional_kwargs={LIMIT_MARK: kind})


def _reached(
    exit: Exit,
    error: type[CallLimitExceeded],
    request: ModelRequest,
    text: str,
    scope: str,
    limit: int,
    count: int,
) -> AIMessage:
    """A limit is reached: raise `error` (exit="error") or return the stop message."""
    if exit == "error":
        raise error(
            f"{text} Raise the limit or use exit='end' to finish with a message.",
            agent=request.agent,
            scope=scope,
            limit=limit,
            count=count,
        )
    kind = "model" if error is ModelCallLimitExceeded else "tool"
    return _stop_message(request, text, kind)


class ModelCallLimit(ModelHook):
    """Cap the model calls of an agent per invocation (`run_limit`) and per thread (`thread_limit`).

    Checked before each model call: when a limit is already reached the call is not made.
    """

    def __init__(
        self, *, run_limit: int | None = None, thread_limit: int | None = None, exit: Exit = "end"
    ) -> None:
        """Set the limits; `exit` says what happens when one is reached ("end" or "error")."""
        _check_limits(run_limit, thread_limit, exit, "ModelCallLimit")
        self.run_limit = run_limit
        """Most model calls in one invocation of the agent, or None."""
        self.thread_limit = thread_limit
        """Most model calls over the whole thread, or None."""
        self.exit: Exit = exit
        """`"end"`: finish the agent with a message; `"error"`: raise `ModelCallLimitExceeded`."""

    def before_model(self, request: ModelRequest) -> AIMessage | None:
        """Answer with a stop message (or raise) when a limit is reached."""
        for scope, limit, count in (
            ("run", self.run_limit, request.call_number),
            ("thread", self.thread_limit, len(_replies(request))),
        ):
            if limit is not None and count >= limit:
                text = (
                    f"Agent `{request.agent}` stopped: it reached its model call limit "
                    f"({scope} limit {limit})."
                )
                return _reached(
                    self.exit, ModelCallLimitExceeded, request, text, scope, limit, count
                )
        return None


class ToolCallLimit(ModelHook):
    """Cap the tool calls of an agent (all tools, or only `tool_name`) per invocation and thread.

    Checked when the model replies: a reply whose tool calls would go over a limit is not run.
    With `exit="end"` the reply is replaced by a final message saying the limit was reached (none
    of that reply's tool calls run); with `exit="error"` `ToolCallLimitExceeded` is raised.
    """

    def __init__(
        self,
        *,
        run_limit: int | None = None,
        thread_limit: int | None = None,
        tool_name: str | None = None,
        exit: Exit = "end",
    ) -> None:
        """Set the limits, optionally for one tool; `exit` is "end" or "error"."""
        _check_limits(run_limit, thread_limit, exit, "ToolCallLimit")
        self.run_limit = run_limit
        """Most tool calls in one invocation of the agent, or None."""
        self.thread_limit = thread_limit
        """Most tool calls over the whole thread, or None."""
        self.tool_name = tool_name
        """Count only calls of this tool (None: every tool)."""
        self.exit: Exit = exit
        """`"end"`: finish the agent with a message; `"error"`: raise `ToolCallLimitExceeded`."""

    @property
    def name(self) -> str:
        """`ToolCallLimit` or `ToolCallLimit[tool]`."""
        return f"ToolCallLimit[{self.tool_name}]" if self.tool_name else "ToolCallLimit"

    def _count(self, messages: Sequence[AIMessage]) -> int:
        return sum(
            1
            for m in messages
            for call in m.tool_calls
            if self.tool_name is None or call["name"] == self.tool_name
        )

    def after_model(self, request: ModelRequest, response: AIMessage) -> AIMessage | None:
        """Replace the reply with a stop message (or raise) when its calls exceed a limit."""
        asked = self._count([response])
        if not asked:
            return None
        replies = _replies(request)
        this_run = replies[len(replies) - request.call_number :] if request.call_number else []
        for scope, limit, count in (
            ("run", self.run_limit, self._count(this_run)),
            ("thread", self.thread_limit, self._count(replies)),
        ):
            if limit is not None and count + asked > limit:
                which = f"`{self.tool_name}` " if self.tool_name else ""
                text = (
                    f"Agent `{request.agent}` stopped: it reached its {which}tool call limit "
                    f"({scope} limit {limit}; {count} made, {asked} more requested)."
                )
                return _reached(
                    self.exit, ToolCallLimitExceeded, request, text, scope, limit, count
                )
        return None
