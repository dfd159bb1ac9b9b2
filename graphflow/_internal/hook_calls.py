"""Call hook methods from sync or async graph nodes, whichever twin the user overrode.

Used by the hook bases (`graphflow.hooks.base`), by the strategies that run hooks around agents,
model and tool calls, and by the event translation (`HOOK_FIRED`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from graphflow._internal.workers import run_coroutine

__all__ = ("HOOK_FIRED", "around", "call_async", "call_sync", "overrides")


def overrides(hook: Any, name: str) -> bool:
    """Whether `hook`'s class (not the hook base class) defines the method `name`."""
    for klass in type(hook).__mro__:
        if name in klass.__dict__:
            return klass.__module__ != "graphflow.hooks.base"
    return False


HOOK_FIRED = "graphflow_hook"
"""Key of the `custom` stream chunk `{HOOK_FIRED: hook class, "phase": method}` that says a model
or tool hook ran (for a wrapper, the phase is its sync name, e.g. `wrap_tool_call`); typed event streams turn
it into `HookFired` (agent hooks are graph nodes of their own, seen without it)."""


def _announce(hook: Any, sync_name: str, async_name: str) -> None:
    if sync_name in ("before_agent", "after_agent"):
        return
    if not (overrides(hook, sync_name) or overrides(hook, async_name)):
        return  # the base class's no-op
    try:
        from langgraph.config import get_stream_writer

        writer = get_stream_writer()
    except RuntimeError:  # called outside a graph run
        return
    writer({HOOK_FIRED: type(hook).__name__, "phase": sync_name})


def call_sync(hook: Any, sync_name: str, async_name: str, *args: Any) -> Any:
    """Call the sync method, or the async twin when only that one is defined."""
    _announce(hook, sync_name, async_name)
    if overrides(hook, async_name) and not overrides(hook, sync_name):
        method = getattr(hook, async_name)
        return run_coroutine(lambda: method(*args))
    return getattr(hook, sync_name)(*args)


async def call_async(hook: Any, sync_name: str, async_name: str, *args: Any) -> Any:
    """Call the async twin (which defaults to the sync method)."""
    _announce(hook, sync_name, async_name)
    return await getattr(hook, async_name)(*args)


def around(hook: Any, method: str, inner: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """`inner` with the hook's `method` (`wrap_model_call`, `awrap_tool_call`, ...) around it.

    For an async method the result is a coroutine function's twin: calling it returns the
    awaitable the method returns.
    """
    wrap = getattr(hook, method)
    sync_name = method.removeprefix("a")  # awrap_model_call → wrap_model_call
    async_name = "a" + sync_name

    def call(request: Any) -> Any:
        _announce(hook, sync_name, async_name)
        return wrap(request, inner)

    return call
