"""Graph nodes and routers as LangGraph's own callables, with a sync and an async body.

LangGraph wraps a plain function given to `add_node` in its `RunnableCallable`: it inspects the
signature once, passes `config` when asked, and opens no tracing run of its own (the task already
has one). A sync function also gets an async twin that hops to a worker thread on every call.
graphflow's nodes have both bodies, so they are built as `RunnableCallable(func, afunc)` directly:
no `RunnableLambda` layer (a second callback run and two signature inspections per call) and no
thread hop under `ainvoke`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from langchain_core.runnables import RunnableConfig

# LangGraph's own node wrapper, the one `add_node` uses for plain functions (internal, but
# langgraph-prebuilt builds on it too; graphflow pins langgraph <2)
from langgraph._internal._runnable import RunnableCallable

__all__ = ("node", "router")

SyncNode = Callable[[Any, Any], Any]
AsyncNode = Callable[[Any, Any], Awaitable[Any]]


def node(name: str, func: SyncNode, afunc: AsyncNode | None = None) -> Any:
    """A node whose bodies take `(state, config)`; without `afunc` the sync body serves both.

    Only graphflow's own quick code may run without an async body: it then runs inline in the
    event loop. User code that may block is given its own async body by the caller.
    """
    if afunc is None:

        async def afunc(state: Any, config: RunnableConfig) -> Any:
            return func(state, config)

    return RunnableCallable(func, afunc, name=name, trace=False, recurse=False)


def router(func: Callable[[Any], Any], name: str = "route") -> Any:
    """A conditional-edge function that runs inline under both `invoke` and `ainvoke`.

    (LangGraph runs a plain sync router in a worker thread under `ainvoke`.)
    """

    def sync(state: Any) -> Any:
        return func(state)

    async def asynchronous(state: Any) -> Any:
        return func(state)

    return RunnableCallable(sync, asynchronous, name=name, trace=False, recurse=False)
