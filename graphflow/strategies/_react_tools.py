"""The tools step of a ReAct agent: one LangGraph task per tool call, scheduled in batches.

Every tool call is its own task (a `Send` to the `tools` node), so each is a durable step: a
resumed run never repeats a finished call, and a crash in the middle of a batch re-runs only the
calls that had not finished. The calls of one model turn run in call order as batches (see
`graphflow.tools.batches`): a run of consecutive parallel-safe calls is one superstep (they run
concurrently), any other call is a superstep of its own, so results land in call order and a call
that is not parallel-safe never overlaps another. The model step dispatches each batch after the
previous one (it reads the whole state; a tools task sees only its own result).

Each call runs under its tool's `ToolPolicy` (`graphflow.tools.executor`: timeout, retries by
error type, typed error results), inside the agent's tool hooks; a call the executor says ends
the run (`UNKNOWN`) raises `ToolError` — after its running batch siblings finished, so their
results are kept.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from langchain_core.messages import ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.errors import GraphBubbleUp
from langgraph.types import Send

from graphflow._internal.hook_calls import around
from graphflow.checkpoint.serde import stored_form
from graphflow.hooks.base import ToolCallRequest, ToolHook
from graphflow.state import EXIT_LOOP, MESSAGES, TOOL_CALL, TOOL_HISTORY, TOOLS_NODE
from graphflow.strategies import _branch_barrier as barrier
from graphflow.strategies._storable import ensure_storable
from graphflow.tools.batches import call_history, next_tool_calls, pending_tool_calls
from graphflow.tools.executor import arun_tool_call, run_tool_call
from graphflow.tools.exit_loop import is_exit_loop
from graphflow.tools.policy import is_parallel_safe, policy_for

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool

    from graphflow.agents.react import ReactAgent

__all__ = ("ToolStep", "pending_tool_calls")


class ToolStep:
    """The `tools` node of one ReAct agent and the scheduling of its calls."""

    def __init__(self, agent: ReactAgent) -> None:
        self.agent = agent
        self.hooks = [h for h in agent.call_hooks() if isinstance(h, ToolHook)]
        self.tools: list[BaseTool] = agent.tool_objects()
        self.by_name = {t.name: t for t in self.tools}
        self.policies = {
            t.name: policy_for(t.name, agent.tool_policies, agent.default_tool_policy, t)
            for t in self.tools
        }
        self._parallel_safe = {
            t.name: is_parallel_safe(t, self.policies[t.name]) for t in self.tools
        }

    # -- scheduling ----------------------------------------------------------------------------

    def parallel_safe(self, name: str) -> bool:
        """Whether calls of tool `name` may run concurrently with the turn's other calls."""
        return self._parallel_safe.get(name, False)

    def sends(self, state: Mapping[str, Any]) -> list[Send]:
        """The `Send`s of the turn's next batch of calls.

        A task is sent its call and what it needs of the call's past (the checkpoint stores each
        `Send`, so a copy of the whole state per call would cost a copy of the conversation per
        call); with tool hooks, which read `ToolCallRequest.state`, it is sent the state too.
        """
        messages = state.get(MESSAGES) or []
        calls = next_tool_calls(messages, self.parallel_safe)
        ids = [str(tc.get("id")) for tc in calls]
        base = {k: v for k, v in state.items() if k not in (TOOL_CALL, TOOL_HISTORY)}
        return [
            Send(
                TOOLS_NODE,
                {
                    **(base if self.hooks else {}),
                    TOOL_CALL: tc,
                    TOOL_HISTORY: call_history(messages, tc, ids),
                },
            )
            for tc in calls
        ]

    # -- one call ------------------------------------------------------------------------------

    def _request(self, payload: Mapping[str, Any]) -> ToolCallRequest:
        call = dict(payload[TOOL_CALL])
        state = (
            {k: v for k, v in payload.items() if k not in (TOOL_CALL, TOOL_HISTORY)}
            if self.hooks
            else {}
        )
        return ToolCallRequest(
            agent=self.agent.name, tool_call=call, tool=self.by_name.get(call["name"]), state=state
        )

    def _executor_args(self, req: ToolCallRequest, payload: Mapping[str, Any]) -> dict[str, Any]:
        name = req.tool_call["name"]
        return {
            "policy": self.policies.get(name) or self.agent.default_tool_policy,
            "agent": self.agent.name,
            "available": list(self.by_name),
            "history": payload.get(TOOL_HISTORY),
        }

    def _update(
        self, request: ToolCallRequest, message: ToolMessage, config: RunnableConfig
    ) -> dict[str, Any]:
        if message.artifact is not None:
            what = f"tool `{request.tool_call['name']}`"
            ensure_storable(  # (as a message stores it: dataclasses and models as dicts)
                {"artifact": stored_form(message.artifact)},
                agent=self.agent.name,
                config=config,
                what=what,
            )
        update: dict[str, Any] = {MESSAGES: [message]}
        if is_exit_loop(request.tool) and message.status != "error":
            update[EXIT_LOOP] = True
        return update

    @staticmethod
    def _batch(payload: Mapping[str, Any]) -> list[str]:
        return list((payload.get(TOOL_HISTORY) or {}).get("batch") or ())

    def run(self, payload: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        """Run one tool call (sync)."""
        request = self._request(payload)

        def execute(req: ToolCallRequest) -> ToolMessage:
            args = self._executor_args(req, payload)
            return run_tool_call(req.tool, req.tool_call, config=config, **args)

        handler: Callable[[ToolCallRequest], ToolMessage] = execute
        for hook in reversed(self.hooks):
            handler = _wrap(hook, handler)
        batch = self._batch(payload)
        if len(batch) <= 1:
            return self._update(request, handler(request), config)
        key = barrier.group_key(config)
        entry = barrier.enter(key, str(request.tool_call.get("id")), len(batch))
        try:
            message = handler(request)
        except GraphBubbleUp:
            barrier.finish(key, entry, None)
            raise
        except Exception:
            barrier.wait_for_siblings(key, entry)
            raise
        except BaseException:  # nothing to keep; siblings must not wait for this call
            barrier.finish(key, entry, None)
            raise
        barrier.finish(key, entry, {})
        return self._update(request, message, config)

    async def arun(self, payload: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        """Run one tool call (async)."""
        request = self._request(payload)

        async def execute(req: ToolCallRequest) -> ToolMessage:
            args = self._executor_args(req, payload)
            return await arun_tool_call(req.tool, req.tool_call, config=config, **args)

        handler: Any = execute
        for hook in reversed(self.hooks):
            handler = _awrap(hook, handler)
        batch = self._batch(payload)
        if len(batch) <= 1:
            return self._update(request, await handler(request), config)
        key = barrier.group_key(config)
        entry = barrier.enter(key, str(request.tool_call.get("id")), len(batch))
        try:
            message = await handler(request)
        except GraphBubbleUp:
            barrier.finish(key, entry, None)
            raise
        except Exception:
            await barrier.await_siblings(key, entry)
            raise
        except BaseException:
            barrier.finish(key, entry, None)
            raise
        barrier.finish(key, entry, {})
        return self._update(request, message, config)


def _wrap(
    hook: ToolHook, inner: Callable[[ToolCallRequest], ToolMessage]
) -> Callable[[ToolCallRequest], ToolMessage]:
    return around(hook, "wrap_tool_call", inner)


def _awrap(hook: ToolHook, inner: Any) -> Any:
    return around(hook, "awrap_tool_call", inner)
