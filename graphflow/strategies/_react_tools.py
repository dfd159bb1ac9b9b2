"""The tools step of a ReAct agent: one LangGraph task per tool call, scheduled in groups.

Every tool call is its own task (a `Send` to the `tools` node), so each is a durable step: a
resumed run never repeats a finished call, and a crash in the middle of a batch re-runs only the
calls that had not finished. The calls of one model turn run in call order as groups: a run of
consecutive parallel-safe calls is one superstep (they run concurrently), any other call is a
superstep of its own. Results therefore land in call order, and a call that is not parallel-safe
never overlaps another. One failing call never cancels the others: a failure is a `ToolMessage`
with `status="error"` for the model to read.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.errors import GraphBubbleUp
from langgraph.types import Send

from graphflow.hooks.base import ToolCallRequest, ToolHook
from graphflow.state import EXIT_LOOP, MESSAGES, TOOL_CALL
from graphflow.tools.exit_loop import is_exit_loop

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool

    from graphflow.agents.react import ReactAgent

__all__ = ("ToolStep", "pending_calls")

TOOLS = "tools"


def pending_calls(messages: Sequence[BaseMessage]) -> list[Any]:
    """The tool calls of the latest model turn that have no result yet (in call order)."""
    answered: set[str | None] = set()
    for message in reversed(messages):
        if isinstance(message, ToolMessage):
            answered.add(message.tool_call_id)
            continue
        if isinstance(message, AIMessage) and message.tool_calls:
            return [tc for tc in message.tool_calls if tc["id"] not in answered]
        return []
    return []


class ToolStep:
    """The `tools` node of one ReAct agent and the scheduling of its calls."""

    def __init__(self, agent: ReactAgent) -> None:
        self.agent = agent
        self.hooks = [h for h in agent.call_hooks() if isinstance(h, ToolHook)]
        self.tools: list[BaseTool] = agent.tool_objects()
        self.by_name = {t.name: t for t in self.tools}

    # -- scheduling ----------------------------------------------------------------------------

    def parallel_safe(self, name: str) -> bool:
        """Whether calls of tool `name` may run concurrently with the turn's other calls."""
        return True

    def next_group(self, pending: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The calls to run now: the leading parallel-safe run, or the first call alone."""
        group: list[dict[str, Any]] = []
        for call in pending:
            if not self.parallel_safe(call["name"]):
                return group or [call]
            group.append(call)
        return group

    def sends(self, state: Mapping[str, Any], pending: list[dict[str, Any]]) -> list[Send]:
        """The `Send`s of the next group of `pending` calls.

        A task is sent only its call (the checkpoint stores each `Send`, so a copy of the whole
        state per call would cost a copy of the conversation per call); with tool hooks, which
        read `ToolCallRequest.state`, it is sent the state too.
        """
        if self.hooks:
            base = {k: v for k, v in state.items() if k != TOOL_CALL}
            return [Send(TOOLS, {**base, TOOL_CALL: tc}) for tc in self.next_group(pending)]
        return [Send(TOOLS, {TOOL_CALL: tc}) for tc in self.next_group(pending)]

    # -- one call ------------------------------------------------------------------------------

    def _request(self, payload: Mapping[str, Any]) -> ToolCallRequest:
        call = dict(payload[TOOL_CALL])
        state = {k: v for k, v in payload.items() if k != TOOL_CALL} if self.hooks else {}
        return ToolCallRequest(
            agent=self.agent.name, tool_call=call, tool=self.by_name.get(call["name"]), state=state
        )

    def _update(self, request: ToolCallRequest, message: ToolMessage) -> dict[str, Any]:
        update: dict[str, Any] = {MESSAGES: [message]}
        if is_exit_loop(request.tool) and message.status != "error":
            update[EXIT_LOOP] = True
        return update

    def _unknown(self, request: ToolCallRequest) -> ToolMessage:
        call = request.tool_call
        return ToolMessage(
            content=(
                f"Error: unknown tool {call['name']!r}. Available tools: "
                f"{', '.join(sorted(self.by_name)) or 'none'}."
            ),
            tool_call_id=call["id"],
            name=call["name"],
            status="error",
        )

    def run(self, payload: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        """Run one tool call (sync)."""
        request = self._request(payload)

        def execute(req: ToolCallRequest) -> ToolMessage:
            if req.tool is None:
                return self._unknown(req)
            try:
                return _as_tool_message(
                    req.tool.invoke({**req.tool_call, "type": "tool_call"}, config), req
                )
            except GraphBubbleUp:
                raise
            except Exception as exc:
                return _tool_error(req, exc)

        handler: Callable[[ToolCallRequest], ToolMessage] = execute
        for hook in reversed(self.hooks):
            handler = _wrap(hook, handler)
        return self._update(request, handler(request))

    async def arun(self, payload: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        """Run one tool call (async)."""
        request = self._request(payload)

        async def execute(req: ToolCallRequest) -> ToolMessage:
            if req.tool is None:
                return self._unknown(req)
            try:
                return _as_tool_message(
                    await req.tool.ainvoke({**req.tool_call, "type": "tool_call"}, config), req
                )
            except GraphBubbleUp:
                raise
            except Exception as exc:
                return _tool_error(req, exc)

        handler: Any = execute
        for hook in reversed(self.hooks):
            handler = _awrap(hook, handler)
        return self._update(request, await handler(request))


def _wrap(
    hook: ToolHook, inner: Callable[[ToolCallRequest], ToolMessage]
) -> Callable[[ToolCallRequest], ToolMessage]:
    return lambda req: hook.wrap_tool_call(req, inner)


def _awrap(hook: ToolHook, inner: Any) -> Any:
    async def call(req: ToolCallRequest) -> ToolMessage:
        return await hook.awrap_tool_call(req, inner)

    return call


def _as_tool_message(result: Any, request: ToolCallRequest) -> ToolMessage:
    if isinstance(result, ToolMessage):
        return result
    content = result if isinstance(result, str) else json.dumps(result, default=str)
    return ToolMessage(
        content=content, tool_call_id=request.tool_call["id"], name=request.tool_call["name"]
    )


def _tool_error(request: ToolCallRequest, exc: BaseException) -> ToolMessage:
    return ToolMessage(
        content=f"Error: {type(exc).__name__}: {exc}",
        tool_call_id=request.tool_call["id"],
        name=request.tool_call["name"],
        status="error",
    )
