"""Compiled graphs and checkpointers of root agents: which saver a run uses, and its graph.

Where runs are stored is never a surprise. A run method uses, in order: the checkpointer it was
given; the agent's `checkpointer` field; the one the agent was last compiled or run with; the
`GRAPHFLOW_CHECKPOINTER` environment variable; and only then an in-memory saver kept for the
agent's lifetime. Savers built from URLs are kept per agent and URL, so a recompiled tree (after a
spec change) still finds its runs. Compiled graphs are cached per checkpointer under the tree's
`fingerprint()`: a changed spec — a sub-agent's field, the `sub_agents` list — is rebuilt, never
served stale.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from graphflow.checkpoint import (
    needs_async_saver,
    open_async_checkpointer,
    resolve_checkpointer,
    schema_types,
)
from graphflow.state import LOOP_ITERATION
from graphflow.strategies import FlowGraphBuilder

if TYPE_CHECKING:
    from langgraph.graph.state import CompiledStateGraph

    from graphflow.agents.base import Agent

__all__ = (
    "DEFAULT_RECURSION_LIMIT",
    "async_graph",
    "checkpointer_spec",
    "compiled",
    "remember",
    "required_inputs",
)

DEFAULT_RECURSION_LIMIT = 10_000
"""LangGraph steps one run may take (graphflow bounds loops itself: `max_iterations`)."""
MEMORY = "memory:"
ENV = "GRAPHFLOW_CHECKPOINTER"


def remember(agent: Agent, spec: Any) -> None:
    """Make `spec` the checkpointer later run methods of `agent` use when told none."""
    if spec is not None and spec is not False:
        agent._runtime_cache["checkpointer"] = spec


def checkpointer_spec(agent: Agent, explicit: Any = None) -> Any:
    """The checkpointer (saver, URL or False) a run method of `agent` uses."""
    if explicit is not None:
        return explicit
    if agent.checkpointer is not None:
        return agent.checkpointer
    remembered = agent._runtime_cache.get("checkpointer")
    if remembered is not None:
        return remembered
    return os.environ.get(ENV) or MEMORY


def _saver(agent: Agent, spec: Any) -> Any:
    """The saver for `spec`: built once per agent and URL (an instance is used as given)."""
    if spec is False:
        return None
    if not isinstance(spec, str):
        return resolve_checkpointer(spec)
    savers: dict[str, Any] = agent._runtime_cache.setdefault("savers", {})
    saver = savers.get(spec)
    if saver is None:
        saver = savers[spec] = resolve_checkpointer(spec, allowed_types=schema_types(agent.walk()))
    return saver


def compiled(
    agent: Agent,
    spec: Any,
    *,
    store: Any = None,
    interrupt_before: Sequence[str] | None = None,
    interrupt_after: Sequence[str] | None = None,
    debug: bool = False,
) -> CompiledStateGraph:
    """`agent`'s compiled graph on the checkpointer `spec` (cached; rebuilt when the tree changed)."""
    fingerprint = agent.fingerprint()
    key = (
        spec if isinstance(spec, str) or spec is False else id(spec),
        id(store) if store is not None else None,
        tuple(interrupt_before or ()),
        tuple(interrupt_after or ()),
        debug,
    )
    cache: dict[Any, Any] = agent._runtime_cache.setdefault("compiled", {})
    hit = cache.get(key)
    if hit is not None and hit[0] == fingerprint:
        return hit[2]  # type: ignore[no-any-return]
    graph = (
        FlowGraphBuilder()
        .build(agent)
        .compile(
            checkpointer=_saver(agent, spec),
            store=store,
            interrupt_before=list(interrupt_before or []) or None,
            interrupt_after=list(interrupt_after or []) or None,
            debug=debug,
            name=agent.name,
        )
    )
    graph = graph.with_config(recursion_limit=DEFAULT_RECURSION_LIMIT)  # type: ignore[assignment]
    # the agents and the saver instance stay referenced while cached, so ids are not reused
    cache[key] = (fingerprint, (list(agent.walk()), spec), graph)
    return graph


@asynccontextmanager
async def async_graph(agent: Agent, spec: Any) -> AsyncIterator[CompiledStateGraph]:
    """The graph for an async run: SQLite/PostgreSQL URLs get an async saver for this call.

    Async connections belong to the event loop that made them, so the saver is opened in the
    running loop and closed when the call ends; the compiled graph itself is reused.
    """
    if not needs_async_saver(spec):
        yield compiled(agent, spec)
        return
    types = schema_types(agent.walk())
    async with open_async_checkpointer(spec, allowed_types=types) as saver:
        yield compiled(agent, False).copy(update={"checkpointer": saver})


def required_inputs(agent: Agent) -> dict[str, str]:
    """Keys the caller must supply (an instruction needs them, no agent writes them) -> who needs it."""
    fingerprint = agent.fingerprint()
    hit = agent._runtime_cache.get("required_inputs")
    if hit is not None and hit[0] == fingerprint:
        return hit[1]  # type: ignore[no-any-return]
    written = FlowGraphBuilder().writes(agent)
    needed: dict[str, str] = {}
    for member in agent.walk():
        for placeholder in member.placeholders():
            name = placeholder.name
            if placeholder.optional or name in written or name == LOOP_ITERATION:
                continue
            needed.setdefault(name, member.name)
    agent._runtime_cache["required_inputs"] = (fingerprint, needed)
    return needed
