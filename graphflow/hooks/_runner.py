"""Call hook methods from sync or async graph nodes, whichever twin the user overrode."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from graphflow._threads import submit

T = TypeVar("T")


def _overrides(hook: Any, name: str) -> bool:
    for klass in type(hook).__mro__:
        if name in klass.__dict__:
            return klass.__module__ != "graphflow.hooks.base"
    return False


def run_sync_in_thread(factory: Callable[[], Awaitable[T]]) -> T:
    """Run a coroutine to completion from sync code, even if a loop is running in this thread."""
    coroutine = factory()
    return submit(lambda: asyncio.run(coroutine)).result()  # type: ignore[arg-type]


def call_sync(hook: Any, sync_name: str, async_name: str, *args: Any) -> Any:
    """Call the sync method, or the async twin when only that one is defined."""
    if _overrides(hook, async_name) and not _overrides(hook, sync_name):
        method = getattr(hook, async_name)
        return run_sync_in_thread(lambda: method(*args))
    return getattr(hook, sync_name)(*args)


async def call_async(hook: Any, sync_name: str, async_name: str, *args: Any) -> Any:
    """Call the async twin (which defaults to the sync method)."""
    return await getattr(hook, async_name)(*args)
