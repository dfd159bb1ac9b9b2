"""Where runs of an agent are stored, and its compiled graphs: the run state kept off the spec.

**Which store a run method uses**, in order:

1. the `checkpointer=` it was given;
2. the agent's `checkpointer` field;
3. the one the agent was last compiled or run with — remembered for the *write* methods only
   (`compile`, `invoke`, `stream`, `resume` and their async twins), never by a read
   (`get_state`, `history`, `runs`, `draw(thread_id=...)`): a read with another store changes
   nothing about where later runs go;
4. the `GRAPHFLOW_CHECKPOINTER` environment variable;
5. an in-memory saver kept for the agent's lifetime.

What the runtime keeps per agent (the remembered store, savers built from URLs) lives in a
registry keyed by the agent's identity and dropped when the agent is garbage collected; nothing
is stored on the spec. Savers built from URLs are kept per agent and URL, so a recompiled tree
(after a spec change) still finds its runs, and an agent's `memory:` runs live as long as it.

**Compiled graphs** are cached under the tree's `fingerprint()`: a changed spec — a sub-agent's
field, the `sub_agents` list — is rebuilt, never served stale. A root graph is compiled once per
tree and options *without* a saver and given its saver by copy, so an async run's per-call saver
and the sync saver share it. Sub-agent graphs are cached here too (`SUBGRAPHS`, handed to
`FlowGraphBuilder`), so a rebuilt tree reuses its unchanged sub-agents' graphs. Both caches are
bounded (least recently used entries are dropped) so specs no longer used can be collected.
"""

from __future__ import annotations

import functools
import os
import threading
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from graphflow.checkpoint import resolve_checkpointer, schema_types
from graphflow.runtime._lru import Lru
from graphflow.strategies import FlowGraphBuilder

if TYPE_CHECKING:
    from langgraph.graph.state import CompiledStateGraph

    from graphflow.agents.base import Agent

__all__ = (
    "DEFAULT_RECURSION_LIMIT",
    "ENV",
    "MEMORY",
    "SUBGRAPHS",
    "bare_graph",
    "checkpointer_spec",
    "compiled",
    "remember",
    "saver",
)

DEFAULT_RECURSION_LIMIT = 10_000
"""LangGraph steps one run may take (graphflow bounds loops itself: `max_iterations`)."""
MEMORY = "memory:"
"""The store of last resort: an in-memory saver kept for the agent's lifetime."""
ENV = "GRAPHFLOW_CHECKPOINTER"
"""The environment variable naming the store of agents that name none."""

SUBGRAPHS: Lru[Any] = Lru(512)
"""Compiled sub-agent graphs, for every `FlowGraphBuilder` the runtime builds with."""
_ROOTS: Lru[Any] = Lru(128)
"""(root, store, interrupts, debug) -> (fingerprint, agents, graph compiled without a saver)."""


@dataclass
class _AgentStores:
    remembered: Any = None
    """The store of the agent's last write method that was given one."""
    savers: dict[str, Any] = field(default_factory=dict)
    """URL -> the saver built for it."""


_registry: dict[int, tuple[weakref.ref[Agent], _AgentStores]] = {}
_registry_lock = threading.Lock()


def _drop(key: int, ref: weakref.ref[Agent]) -> None:
    with _registry_lock:
        entry = _registry.get(key)
        if entry is not None and entry[0] is ref:
            del _registry[key]


def _stores(agent: Agent) -> _AgentStores:
    """What the runtime keeps for `agent` (made on first use, dropped with the agent)."""
    key = id(agent)
    with _registry_lock:
        entry = _registry.get(key)
        if entry is not None and entry[0]() is agent:
            return entry[1]
        stores = _AgentStores()
        ref: weakref.ref[Agent] = weakref.ref(agent, functools.partial(_drop, key))
        _registry[key] = (ref, stores)
        return stores


def remember(agent: Agent, spec: Any) -> None:
    """Make `spec` the store later run methods of `agent` use when told none (write methods only)."""
    if spec is not None and spec is not False:
        _stores(agent).remembered = spec


def checkpointer_spec(agent: Agent, explicit: Any = None) -> Any:
    """The checkpointer (saver, URL or False) a run method of `agent` uses (see the module doc)."""
    if explicit is not None:
        return explicit
    if agent.checkpointer is not None:
        return agent.checkpointer
    with _registry_lock:
        entry = _registry.get(id(agent))
    if entry is not None and entry[0]() is agent and entry[1].remembered is not None:
        return entry[1].remembered
    return os.environ.get(ENV) or MEMORY


def saver(agent: Agent, spec: Any, *, build: bool = True) -> Any:
    """The saver for `spec`: built once per agent and URL (an instance is used as given).

    With `build=False` a URL's saver is only looked up: None when none was built yet.
    """
    if spec is False:
        return None
    if not isinstance(spec, str):
        return resolve_checkpointer(spec)
    savers = _stores(agent).savers
    found = savers.get(spec)
    if found is None and build:
        found = resolve_checkpointer(spec, allowed_types=schema_types(agent.walk()))
        found = savers.setdefault(spec, found)
    return found


def bare_graph(
    agent: Agent,
    *,
    store: Any = None,
    interrupt_before: Sequence[str] | None = None,
    interrupt_after: Sequence[str] | None = None,
    debug: bool = False,
) -> CompiledStateGraph:
    """`agent`'s compiled root graph without a saver (cached; rebuilt when the tree changed)."""
    fingerprint = agent.fingerprint()
    key = (
        id(agent),
        id(store) if store is not None else None,
        tuple(interrupt_before or ()),
        tuple(interrupt_after or ()),
        debug,
    )
    hit = _ROOTS.get(key)
    if hit is not None and hit[0] == fingerprint:
        return hit[2]  # type: ignore[no-any-return]
    graph = (
        FlowGraphBuilder(subgraphs=SUBGRAPHS)
        .build(agent)
        .compile(
            checkpointer=None,
            store=store,
            interrupt_before=list(interrupt_before or []) or None,
            interrupt_after=list(interrupt_after or []) or None,
            debug=debug,
            name=agent.name,
        )
    )
    graph = graph.with_config(recursion_limit=DEFAULT_RECURSION_LIMIT)  # type: ignore[assignment]
    # the agents and the store stay referenced while cached, so their ids are not reused
    _ROOTS[key] = (fingerprint, (list(agent.walk()), store), graph)
    return graph


def compiled(agent: Agent, spec: Any, **options: Any) -> CompiledStateGraph:
    """`agent`'s compiled graph on the store `spec` (a URL, saver or False), saver included."""
    return bare_graph(agent, **options).copy(update={"checkpointer": saver(agent, spec)})
