"""Hook base classes: agent hooks (their own graph nodes), model hooks and tool hooks.

* `AgentHook.before_agent` / `after_agent` run as **separate nodes** around an agent's work, so
  they fire once per agent invocation however many model/tool rounds happen inside. They may
  return a state update, or skip the agent with `HookResult(jump_to="end", update=...)`.
  `after_agent` always runs and `ctx.reason` says why the agent ended.
* `ModelHook` methods run once per model call inside the ReAct model node.
* `ToolHook.wrap_tool_call` runs once per tool call inside the tools node.

Every method has an async twin (`abefore_agent`, ...). Override either: the async twin defaults to
the sync method, and a hook that defines only the async method still works under sync `invoke`.
Several hooks — several instances of one class included — run in list order; after-hooks run in
reverse order, and wrappers nest with the first hook outermost.

A hook may pause the run with LangGraph's `interrupt(...)`. As with any LangGraph node, resuming
re-runs the hook from its start and `interrupt` then returns the answer, so code *before* the
`interrupt` call runs again and should be idempotent; a completed hook never runs again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from graphflow._internal.hook_calls import overrides
from graphflow._internal.workers import run_coroutine

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.runnables import RunnableConfig
    from langchain_core.tools import BaseTool

__all__ = (
    "AgentContext",
    "AgentHook",
    "AsyncModelHandler",
    "AsyncToolHandler",
    "EndReason",
    "Hook",
    "HookResult",
    "ModelHandler",
    "ModelHook",
    "ModelRequest",
    "ToolCallRequest",
    "ToolHandler",
    "ToolHook",
)

R = TypeVar("R")

EndReason = Literal["completed", "skipped", "max_iterations", "error", "until", "exit_loop"]


@dataclass(frozen=True, kw_only=True)
class HookResult:
    """What a hook returns to change the run: a state update, and optionally a jump."""

    update: dict[str, Any] = field(default_factory=dict)
    """State keys to write (an agent's `output_key` included)."""
    jump_to: Literal["end"] | None = None
    """`"end"` skips the agent's work (before_agent) or ends its ReAct loop (before_model)."""


@dataclass(frozen=True, kw_only=True)
class AgentContext:
    """Where an agent hook is running."""

    agent: str
    """Name of the agent the hook belongs to."""
    config: RunnableConfig
    """The LangGraph run config (thread id, callbacks...)."""
    reason: EndReason | None = None
    """For `after_agent`: why the agent ended."""
    error: BaseException | None = None
    """For `after_agent` with reason `error`: what failed."""


@dataclass(kw_only=True)
class ModelRequest:
    """One model call, as the ReAct model node is about to make it. Hooks may replace fields."""

    agent: str
    """Name of the agent making the call."""
    model: BaseChatModel
    """The chat model to call (a hook may swap it, e.g. for a fallback)."""
    messages: list[BaseMessage]
    """The messages to send, system prompt first."""
    tools: list[BaseTool]
    """The tools bound for this call."""
    settings: dict[str, Any]
    """Extra keyword arguments bound to the model (temperature, ...)."""
    state: dict[str, Any]
    """The agent's state (read-only by convention)."""
    call_number: int
    """0-based index of this model call within the agent invocation."""
    timeout: float | None = None
    """Seconds the model call may take (the agent's `model_timeout`; None: no limit). A hook that
    calls a model itself (a summarizer) holds its calls to it too."""
    state_update: dict[str, Any] = field(default_factory=dict)
    """State writes to store with this model step (a hook that rewrites the request may record
    what it did, e.g. a summary in the agent's own `gf_context` channel)."""

    def override(self, **changes: Any) -> ModelRequest:
        """A copy with some fields replaced."""
        return replace(self, **changes)


@dataclass(kw_only=True)
class ToolCallRequest:
    """One tool call about to run. Hooks may replace `tool_call` (e.g. its `args`)."""

    agent: str
    """Name of the agent whose model asked for the call."""
    tool_call: dict[str, Any]
    """`{"name", "args", "id"}` as the model produced it."""
    tool: BaseTool | None
    """The tool that will run, or None when the model named an unknown tool."""
    state: dict[str, Any]
    """The agent's state when the model asked for the call."""

    def override(self, **changes: Any) -> ToolCallRequest:
        """A copy with some fields replaced."""
        return replace(self, **changes)


ModelHandler = Callable[[ModelRequest], AIMessage]
AsyncModelHandler = Callable[[ModelRequest], Awaitable[AIMessage]]
ToolHandler = Callable[[ToolCallRequest], ToolMessage]
AsyncToolHandler = Callable[[ToolCallRequest], Awaitable[ToolMessage]]


class Hook:
    """Common base of all hooks. `name` appears in node names and drawings."""

    writes: tuple[str, ...] = ()
    """State keys this hook's updates may write besides the agent's own. They become channels of
    the tree's state, are handed back to the parent like the agent's outputs, and count as
    available to later instructions (a `before_agent` hook's keys also to its own agent's)."""

    @property
    def name(self) -> str:
        """A short name for this hook instance (class name by default)."""
        return type(self).__name__

    def validate_resume(self, interrupts: Sequence[Any], value: Any) -> None:
        """Check an answer to pending interrupts before it is stored; raise `ValueError` if bad.

        LangGraph saves a resume value in the thread before the paused code reads it, so an answer
        the hook would refuse must be refused here, or it wedges the thread. `interrupts` are the
        thread's pending `Interrupt`s (a hook looks only at those it raised). Default: accept.
        """


class AgentHook(Hook):
    """Runs once before and once after each invocation of an agent, as graph nodes."""

    def before_agent(self, state: dict[str, Any], ctx: AgentContext) -> HookResult | dict | None:
        """Called once when the agent starts. Return an update, a `HookResult`, or None."""
        return None

    async def abefore_agent(
        self, state: dict[str, Any], ctx: AgentContext
    ) -> HookResult | dict | None:
        """Async twin of `before_agent`."""
        return self.before_agent(state, ctx)

    def after_agent(self, state: dict[str, Any], ctx: AgentContext) -> HookResult | dict | None:
        """Called once when the agent ends, whatever the reason (`ctx.reason`)."""
        return None

    async def aafter_agent(
        self, state: dict[str, Any], ctx: AgentContext
    ) -> HookResult | dict | None:
        """Async twin of `after_agent`."""
        return self.after_agent(state, ctx)


class ModelHook(Hook):
    """Runs around every model call of a ReAct agent."""

    def before_model(self, request: ModelRequest) -> ModelRequest | AIMessage | HookResult | None:
        """Rewrite the request, answer it yourself (an `AIMessage`), or end the loop."""
        return None

    async def abefore_model(
        self, request: ModelRequest
    ) -> ModelRequest | AIMessage | HookResult | None:
        """Async twin of `before_model`."""
        return self.before_model(request)

    def after_model(self, request: ModelRequest, response: AIMessage) -> AIMessage | None:
        """Inspect or replace the model's response."""
        return None

    async def aafter_model(self, request: ModelRequest, response: AIMessage) -> AIMessage | None:
        """Async twin of `after_model`."""
        return self.after_model(request, response)

    def wrap_model_call(self, request: ModelRequest, handler: ModelHandler) -> AIMessage:
        """Surround the call: retry it, fall back to another model, time it..."""
        return _sync_wrap(self, "awrap_model_call", request, handler)

    async def awrap_model_call(
        self, request: ModelRequest, handler: AsyncModelHandler
    ) -> AIMessage:
        """Async twin of `wrap_model_call`."""
        return await _async_wrap(self, "wrap_model_call", request, handler)


class ToolHook(Hook):
    """Runs around every tool call of a ReAct agent."""

    def wrap_tool_call(self, request: ToolCallRequest, handler: ToolHandler) -> ToolMessage:
        """Surround one tool call: change its arguments, answer it yourself, retry it..."""
        return _sync_wrap(self, "awrap_tool_call", request, handler)

    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: AsyncToolHandler
    ) -> ToolMessage:
        """Async twin of `wrap_tool_call`."""
        return await _async_wrap(self, "wrap_tool_call", request, handler)


# A hook that overrides only one twin of a wrapper still runs under both `invoke` and `ainvoke`:
# the missing twin bridges to the defined one (the default twins would otherwise skip it).


def _sync_wrap(hook: Hook, async_twin: str, request: Any, handler: Callable[[Any], R]) -> R:
    """A sync wrapper's default: the hook's async twin if it overrides only that, else the call."""
    if overrides(hook, async_twin):
        return _sync_via_async(getattr(hook, async_twin), request, handler)
    return handler(request)


async def _async_wrap(
    hook: Hook, sync_twin: str, request: Any, handler: Callable[[Any], Awaitable[R]]
) -> R:
    """An async wrapper's default: the hook's sync twin if it overrides only that, else the call."""
    if overrides(hook, sync_twin):
        return await _async_via_sync(getattr(hook, sync_twin), request, handler)
    return await handler(request)


def _sync_via_async(
    method: Callable[..., Awaitable[R]], request: Any, handler: Callable[[Any], R]
) -> R:
    async def ahandler(req: Any) -> R:
        return handler(req)

    return run_coroutine(lambda: method(request, ahandler))


async def _async_via_sync(
    method: Callable[..., R], request: Any, handler: Callable[[Any], Awaitable[R]]
) -> R:
    loop = asyncio.get_running_loop()

    def shandler(req: Any) -> R:
        return asyncio.run_coroutine_threadsafe(_as_coroutine(handler(req)), loop).result()

    return await asyncio.to_thread(method, request, shandler)


async def _as_coroutine(awaitable: Awaitable[R]) -> R:
    return await awaitable
