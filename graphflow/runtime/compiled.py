"""`CompiledAgent`: an agent tree compiled on one store — what runs, resumes and reads its runs.

Like LangGraph's builder and compiled graph: an `Agent` is a spec, never changed by running it;
`agent.compile(checkpointer=...)` returns a `CompiledAgent` that owns the compiled LangGraph graph
(`.graph`, a `CompiledStateGraph` — what LangGraph Server serves), the store it runs on
(`.checkpointer`) and what was worked out when it was compiled. `agent.invoke(x, checkpointer=c)`
is `agent.compile(c).invoke(x)`; the agent's own run methods are sugar over this class.

A `CompiledAgent` is a snapshot: a spec changed afterwards is run by a new `agent.compile()`
(the agent's own run methods always do that; compiled objects are cached per tree and store and
rebuilt when the tree changed — see `graphflow.runtime.graphs`).

Every run holds the thread's lease (one run per thread at a time) and runs with
`durability="sync"`, so a crash loses at most the step in flight. Reads (`get_state`, `history`,
`runs`, `draw(thread_id=...)`) never create a store: a SQLite file that does not exist has no
runs.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from langgraph.types import Command

from graphflow.checkpoint import needs_async_saver, open_async_checkpointer, schema_types
from graphflow.checkpoint.leases import FENCE_KEY, MemoryLeases, ahold, hold, lease_store
from graphflow.checkpoint.runs import CheckpointInfo, RunInfo, list_runs, run_history
from graphflow.checkpoint.urls import store_exists
from graphflow.exceptions import GraphflowConfigError, InputError, RunNotFoundError
from graphflow.runtime import _preflight, graphs
from graphflow.runtime._events import astream_events, stream_events
from graphflow.runtime._lru import Lru
from graphflow.runtime.errors import translating
from graphflow.runtime.inputs import check_thread_id
from graphflow.state import KEEP_SUBGRAPHS, is_private
from graphflow.strategies import strategy_for
from graphflow.visualize import draw, draw_to

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig
    from langgraph.graph.state import CompiledStateGraph
    from langgraph.types import StateSnapshot

    from graphflow.agents.base import Agent, AgentInput
    from graphflow.batch import BatchResult

__all__ = ("CompiledAgent", "Durability", "compile_agent")

Durability = Literal["sync", "async", "exit"]
"""When LangGraph writes checkpoints (graphflow's default, `sync`, is what exact resume needs)."""

_COMPILED: Lru[Any] = Lru(128)
"""(root, store, options) -> (fingerprint, CompiledAgent)."""


def compile_agent(
    agent: Agent,
    checkpointer: Any = None,
    *,
    store: Any = None,
    interrupt_before: Sequence[str] | None = None,
    interrupt_after: Sequence[str] | None = None,
    debug: bool = False,
    remember: bool = True,
) -> CompiledAgent:
    """`agent` compiled on the store `checkpointer` resolves to (cached; rebuilt when changed).

    Args:
        agent: the root of the tree.
        checkpointer: a saver, a URL, False for none, or None for the agent's default (see
            `graphflow.runtime.graphs` for the order).
        store: a LangGraph store for long-term memory.
        interrupt_before: node names to pause before.
        interrupt_after: node names to pause after.
        debug: LangGraph debug output.
        remember: make `checkpointer` the agent's store for later runs told none (what write
            methods do; a read passes False).
    """
    spec = graphs.checkpointer_spec(agent, checkpointer)
    fingerprint = agent.fingerprint()
    key = (
        id(agent),
        spec if isinstance(spec, str) or spec is False else id(spec),
        id(store) if store is not None else None,
        tuple(interrupt_before or ()),
        tuple(interrupt_after or ()),
        debug,
    )
    hit = _COMPILED.get(key)
    if hit is not None and hit[0] == fingerprint:
        compiled: CompiledAgent = hit[1]
    else:
        bare = graphs.bare_graph(
            agent,
            store=store,
            interrupt_before=interrupt_before,
            interrupt_after=interrupt_after,
            debug=debug,
        )
        compiled = CompiledAgent(agent, spec, bare)
        _COMPILED[key] = (fingerprint, compiled)
    if remember:
        graphs.remember(agent, checkpointer)
    return compiled


class CompiledAgent:
    """An agent tree compiled on one store: run, stream, resume, inspect and draw its runs.

    Made by `agent.compile(checkpointer=...)`; the run methods have the signatures of the
    `Agent` methods of the same name, without `checkpointer=`.
    """

    def __init__(self, agent: Agent, checkpointer: Any, bare: CompiledStateGraph) -> None:
        """Wrap `bare` (the tree's graph compiled without a saver) for the store `checkpointer`."""
        self.agent = agent
        """The root of the agent tree this was compiled from."""
        self.checkpointer = checkpointer
        """The store runs go to: a URL (`memory:`, `sqlite:///runs.db`, ...), a saver, or False."""
        self._bare = bare
        self._graph: CompiledStateGraph | None = None
        self._types = tuple(schema_types(agent.walk()))
        self._extra = dict(strategy_for(agent).invoke_config(agent))
        self._required = _preflight.required_inputs(agent)
        self._keyless = _preflight.models_without_keys(agent)

    def __repr__(self) -> str:
        return f"CompiledAgent({self.agent.name!r}, checkpointer={_preflight.store_name(self.checkpointer)!r})"

    @property
    def graph(self) -> CompiledStateGraph:
        """The compiled LangGraph graph with its saver (opening the store, created if needed)."""
        if self._graph is None:
            saver = graphs.saver(self.agent, self.checkpointer)
            self._graph = self._bare.copy(update={"checkpointer": saver})
        return self._graph

    # -- running ---------------------------------------------------------------------------------

    def invoke(
        self,
        input: AgentInput,
        *,
        thread_id: str | None = None,
        config: RunnableConfig | None = None,
        durability: Durability = "sync",
    ) -> dict[str, Any]:
        """Run to the end (or to an interrupt) and return the final state.

        `input` may be a string (it becomes the `input` key and a user message), a message, a
        list of messages, a dict of state keys, or None to continue the thread's last run.
        """
        graph = self.graph
        cfg = self._config(_preflight.thread_for(thread_id, config), config)
        with self._guard(graph, cfg), self._lease(graph, cfg):
            data = _preflight.check_input(graph, input, cfg, self.checkpointer, self._required)
            return _public(graph.invoke(data, cfg, durability=_durability(graph, durability)))

    async def ainvoke(
        self,
        input: AgentInput,
        *,
        thread_id: str | None = None,
        config: RunnableConfig | None = None,
        durability: Durability = "sync",
    ) -> dict[str, Any]:
        """Async `invoke`."""
        cfg = self._config(_preflight.thread_for(thread_id, config), config)
        async with self._async_graph() as graph, self._alease(graph, cfg):
            with self._guard(graph, cfg):
                data = await _preflight.acheck_input(
                    graph, input, cfg, self.checkpointer, self._required
                )
                result = await graph.ainvoke(data, cfg, durability=_durability(graph, durability))
        return _public(result)

    def stream(
        self,
        input: AgentInput,
        *,
        thread_id: str | None = None,
        config: RunnableConfig | None = None,
        stream_mode: Any = None,
        subgraphs: bool = True,
        durability: Durability = "sync",
        events: Any = None,
    ) -> Iterator[Any]:
        """Stream the run as typed events (`graphflow.events`), or LangGraph's raw stream.

        By default every event is yielded: agent path, branch, iteration, tokens from every
        depth, usage. `events=` filters them: an event class, a tuple of them,
        `graphflow.events.where(types, path=...)` or a predicate. With `stream_mode=` LangGraph's
        own output for that mode (`(namespace, chunk)` pairs with `subgraphs=True`) is passed
        through instead. Input None (or a `Command(resume=...)`) continues the stored run. The
        input is checked when this is called, the run starts when the iterator is first read.
        """
        selected = _selected(events, stream_mode)
        graph = self.graph
        cfg = self._config(_preflight.thread_for(thread_id, config), config)
        data = _preflight.check_input(graph, input, cfg, self.checkpointer, self._required)
        if selected is not None and (data is None or isinstance(data, Command)):
            snapshot = graph.get_state(cfg, subgraphs=True)
            value = getattr(data, "resume", None)
            _preflight.check_resume(self.agent, snapshot, _thread_of(cfg), value, self.checkpointer)

        def chunks() -> Iterator[Any]:
            with self._guard(graph, cfg), self._lease(graph, cfg):
                dur = _durability(graph, durability)
                if selected is not None:
                    yield from stream_events(
                        self.agent, graph, data, cfg, durability=dur, events=selected
                    )
                    return
                yield from graph.stream(
                    data, _raw(cfg), stream_mode=stream_mode, subgraphs=subgraphs, durability=dur
                )

        return chunks()

    def astream(
        self,
        input: AgentInput,
        *,
        thread_id: str | None = None,
        config: RunnableConfig | None = None,
        stream_mode: Any = None,
        subgraphs: bool = True,
        durability: Durability = "sync",
        events: Any = None,
    ) -> AsyncIterator[Any]:
        """Async `stream` (everything, the input's checks included, happens as it is iterated)."""
        selected = _selected(events, stream_mode)
        cfg = self._config(_preflight.thread_for(thread_id, config), config)
        spec = self.checkpointer

        async def chunks() -> AsyncIterator[Any]:
            async with self._async_graph() as graph, self._alease(graph, cfg):
                with self._guard(graph, cfg):
                    data = await _preflight.acheck_input(graph, input, cfg, spec, self._required)
                    dur = _durability(graph, durability)
                    if selected is not None:
                        if data is None or isinstance(data, Command):
                            snapshot = await graph.aget_state(cfg, subgraphs=True)
                            value = getattr(data, "resume", None)
                            _preflight.check_resume(
                                self.agent, snapshot, _thread_of(cfg), value, spec
                            )
                        async for item in astream_events(
                            self.agent, graph, data, cfg, durability=dur, events=selected
                        ):
                            yield item
                        return
                    async for event in graph.astream(
                        data,
                        _raw(cfg),
                        stream_mode=stream_mode,
                        subgraphs=subgraphs,
                        durability=dur,
                    ):
                        yield event

        return chunks()

    # -- resuming ---------------------------------------------------------------------------------

    def resume(
        self, thread_id: str, value: Any = None, *, config: RunnableConfig | None = None
    ) -> dict[str, Any]:
        """Continue a crashed, failed or interrupted run from its last checkpoint.

        `value` answers a pending interrupt (a dict of interrupt id -> value answers several).
        """
        check_thread_id(thread_id)
        self._store_to_resume(thread_id)
        graph = self.graph
        _preflight.require_store(graph, "resume")
        cfg = self._config(thread_id, config)
        with self._guard(graph, cfg), self._lease(graph, cfg):
            snapshot = graph.get_state(cfg, subgraphs=True)
            _preflight.check_resume(self.agent, snapshot, thread_id, value, self.checkpointer)
            command: Command | None = None if value is None else Command(resume=value)
            return _public(graph.invoke(command, cfg, durability=_durability(graph, "sync")))

    async def aresume(
        self, thread_id: str, value: Any = None, *, config: RunnableConfig | None = None
    ) -> dict[str, Any]:
        """Async `resume`."""
        check_thread_id(thread_id)
        self._store_to_resume(thread_id)
        cfg = self._config(thread_id, config)
        async with self._async_graph() as graph, self._alease(graph, cfg):
            _preflight.require_store(graph, "resume")
            with self._guard(graph, cfg):
                snapshot = await graph.aget_state(cfg, subgraphs=True)
                _preflight.check_resume(self.agent, snapshot, thread_id, value, self.checkpointer)
                command: Command | None = None if value is None else Command(resume=value)
                result = await graph.ainvoke(command, cfg, durability=_durability(graph, "sync"))
        return _public(result)

    # -- reading (never creates a store) ----------------------------------------------------------

    def get_state(self, thread_id: str) -> StateSnapshot:
        """The thread's latest `StateSnapshot` (values, next nodes, pending interrupts).

        Raises:
            RunNotFoundError: no run is stored under `thread_id` (or the store does not exist).
            InputError: this was compiled with `checkpointer=False`, which stores no runs.
        """
        check_thread_id(thread_id)
        graph = self._reader("get_state")
        snapshot = None
        if graph is not None:
            snapshot = graph.get_state({"configurable": {"thread_id": thread_id}}, subgraphs=True)
        if snapshot is None or snapshot.created_at is None:
            raise self._not_found(thread_id)
        return snapshot

    def history(self, thread_id: str, *, all_namespaces: bool = False) -> list[CheckpointInfo]:
        """The thread's checkpoints, newest first; sub-agents' too with `all_namespaces`.

        Raises:
            RunNotFoundError: no run is stored under `thread_id` (or the store does not exist).
            InputError: this was compiled with `checkpointer=False`, which stores no runs.
        """
        check_thread_id(thread_id)
        graph = self._reader("history")
        out = run_history(graph, thread_id, all_namespaces=all_namespaces) if graph else []
        if not out:
            raise self._not_found(thread_id)
        return out

    def runs(self, *, limit: int | None = None) -> list[RunInfo]:
        """`RunInfo` for every thread in the store (status, current agent, step), newest first.

        Empty for `checkpointer=False` and for a store that does not exist.
        """
        if self.checkpointer is False:
            return []
        graph = self._reader("runs")
        if graph is None:
            return []
        names = [a.name for a in self.agent.walk()]
        leases = lease_store(self.checkpointer, graph.checkpointer)
        return list_runs(graph, agents=names, limit=limit, leases=leases)

    # -- drawing ----------------------------------------------------------------------------------

    def draw(
        self,
        format: str = "mermaid",
        *,
        xray: bool | int = False,
        dataflow: bool = False,
        thread_id: str | None = None,
    ) -> str | bytes:
        """Draw the agent tree: mermaid, dot, plantuml, ascii, json, html (text); svg, png (bytes).

        `xray` adds each agent's LangGraph nodes, `dataflow` who writes and reads each key,
        `thread_id` colours the drawing from that run in this store (see
        `graphflow.visualize.draw`).
        """
        saver = None if thread_id is None else self._run_saver(thread_id)
        return draw(
            self.agent,
            format,
            xray=xray,
            dataflow=dataflow,
            thread_id=thread_id,
            checkpointer=saver,
        )

    def draw_to(
        self,
        path: str | Path,
        *,
        format: str | None = None,
        xray: bool | int = False,
        dataflow: bool = False,
        thread_id: str | None = None,
    ) -> Path:
        """Write a drawing to `path`, the format chosen by its suffix (`team.svg`, `team.html`)."""
        saver = None if thread_id is None else self._run_saver(thread_id)
        return draw_to(
            self.agent,
            path,
            format=format,
            xray=xray,
            dataflow=dataflow,
            thread_id=thread_id,
            checkpointer=saver,
        )

    # -- many inputs ------------------------------------------------------------------------------

    def batch(
        self,
        inputs: Iterable[Any],
        *,
        concurrency: int = 4,
        batch_id: str | None = None,
        on_result: Callable[[BatchResult], Any] | None = None,
    ) -> list[BatchResult]:
        """Run over every input, each on its own durable thread (see `graphflow.batch.batch`).

        At most `concurrency` inputs run at once (threads); a failing input never stops the
        others. Running the same batch again skips the inputs that finished and resumes the
        others from their checkpoints. Results come in input order.
        """
        from graphflow.batch.local import batch

        return batch(self, inputs, concurrency=concurrency, batch_id=batch_id, on_result=on_result)

    async def abatch(
        self,
        inputs: Iterable[Any],
        *,
        concurrency: int = 4,
        batch_id: str | None = None,
        on_result: Callable[[BatchResult], Any] | None = None,
    ) -> list[BatchResult]:
        """Async `batch`: the inputs run as tasks of this event loop."""
        from graphflow.batch.local import abatch

        return await abatch(
            self, inputs, concurrency=concurrency, batch_id=batch_id, on_result=on_result
        )

    # -- helpers ----------------------------------------------------------------------------------

    def _config(self, thread_id: str, config: RunnableConfig | None) -> Any:
        # a model built without its API key fails here, when a run starts, before any agent runs
        if self._keyless:
            raise GraphflowConfigError(self._keyless[0])
        return _preflight.run_config(thread_id, config, self._extra)

    def _reader(self, what: str) -> CompiledStateGraph | None:
        """The graph to read stored runs with; None when the store does not exist yet."""
        if self.checkpointer is False:
            _preflight.require_store(self._bare, what)
        if (
            self._graph is None
            and not store_exists(self.checkpointer)
            and graphs.saver(self.agent, self.checkpointer, build=False) is None
        ):
            return None
        return self.graph

    def _store_to_resume(self, thread_id: str) -> None:
        """Refuse a resume on a store that does not exist, without making its file.

        (Even when a saver of this process had it open before it was deleted.)
        """
        if self.checkpointer is not False and not store_exists(self.checkpointer):
            raise _preflight.no_run_to_resume(thread_id, self.checkpointer)

    def _run_saver(self, thread_id: str) -> Any:
        """The saver holding run `thread_id`, for a drawing's overlay (checked to hold it)."""
        check_thread_id(thread_id)
        graph = self._reader("draw")
        if graph is None:
            raise self._not_found(thread_id)
        return graph.checkpointer

    def _not_found(self, thread_id: str) -> RunNotFoundError:
        return RunNotFoundError(
            f"no run is stored under thread {thread_id!r} in "
            f"{_preflight.store_name(self.checkpointer)}; agent.runs() lists the stored runs"
        )

    @contextlib.asynccontextmanager
    async def _async_graph(self) -> AsyncIterator[CompiledStateGraph]:
        """The graph for an async run: SQLite/PostgreSQL URLs get an async saver for this call.

        Async connections belong to the event loop that made them, so the saver is opened in
        the running loop and closed when the call ends; the compiled graph itself is reused.
        """
        if not needs_async_saver(self.checkpointer):
            yield self.graph
            return
        async with open_async_checkpointer(self.checkpointer, allowed_types=self._types) as saver:
            yield self._bare.copy(update={"checkpointer": saver})

    def _guard(self, graph: CompiledStateGraph, cfg: Any) -> Any:
        """Translate what escapes the run (see `graphflow.runtime.errors`)."""
        store = _preflight.store_name(self.checkpointer) if graph.checkpointer else None
        return translating(_thread_of(cfg), store)

    @contextlib.contextmanager
    def _lease(self, graph: CompiledStateGraph, cfg: Any) -> Iterator[None]:
        """Hold the thread's lease while the run goes on (none without a checkpointer).

        The run carries the lease's fence in its config: each checkpoint write and tool call
        checks it (a run that lost its thread to another stops with `LeaseLostError`).
        """
        if not graph.checkpointer:
            yield
            return
        leases = lease_store(self.checkpointer, graph.checkpointer)
        name = _preflight.store_name(self.checkpointer)
        with hold(leases, _thread_of(cfg), store_name=name) as fence:
            cfg["configurable"][FENCE_KEY] = fence
            try:
                yield
            finally:
                cfg["configurable"].pop(FENCE_KEY, None)

    @contextlib.asynccontextmanager
    async def _alease(self, graph: CompiledStateGraph, cfg: Any) -> AsyncIterator[None]:
        if not graph.checkpointer:
            yield
            return
        leases = lease_store(self.checkpointer, graph.checkpointer)
        if isinstance(leases, MemoryLeases):
            # a dict behind a lock never blocks the loop: taken inline, not from a worker thread
            # (two thread hops per run were most of what a durable in-memory run cost over the floor)
            with self._lease(graph, cfg):
                yield
            return
        name = _preflight.store_name(self.checkpointer)
        async with ahold(leases, _thread_of(cfg), store_name=name) as fence:
            cfg["configurable"][FENCE_KEY] = fence
            try:
                yield
            finally:
                cfg["configurable"].pop(FENCE_KEY, None)


def _thread_of(cfg: Any) -> str:
    return str(cfg["configurable"]["thread_id"])


def _raw(cfg: Any) -> Any:
    """The config of a run whose raw LangGraph stream is read.

    Every sub-agent runs in its subgraph, so the stream's namespaces are the agents'
    (see `graphflow.state.KEEP_SUBGRAPHS`).
    """
    return {**cfg, "configurable": {**cfg.get("configurable", {}), KEEP_SUBGRAPHS: True}}


def _durability(graph: CompiledStateGraph, durability: Any) -> Any:
    # without a checkpointer there is nothing to make durable (and LangGraph 1.2 fails on "sync")
    return durability if graph.checkpointer else None


def _public(result: Any) -> Any:
    if not isinstance(result, dict):
        return result
    return {k: v for k, v in result.items() if not is_private(k)}


def _selected(events: Any, stream_mode: Any) -> Any:
    """The events filter of a stream call: every event unless a raw `stream_mode` is asked for."""
    if stream_mode is None:
        return True if events is None else events
    if events is not None:
        raise InputError(
            "stream: pass either events= (graphflow's typed events) or stream_mode= "
            "(LangGraph's raw output), not both"
        )
    return None
