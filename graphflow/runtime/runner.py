"""`Runtime`: what `Agent.invoke`, `stream`, `resume`, ... do — the run facade of graphflow.

Every run method picks the checkpointer as `graphflow.runtime.graphs` describes, checks its input
before anything runs (an empty input, unknown keys, a thread with nothing to continue), and runs
the tree's compiled graph with `durability="sync"`, so a crash loses at most the step in flight.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, Any

from langgraph.types import Command

from graphflow.checkpoint.leases import FENCE_KEY, MemoryLeases, ahold, hold, lease_store
from graphflow.checkpoint.runs import list_runs, run_history
from graphflow.checkpoint.serde import GraphflowSerializer, unstorable
from graphflow.exceptions import InputError, RunNotFoundError, RunStateError
from graphflow.runtime import graphs
from graphflow.runtime._events import astream_events, stream_events
from graphflow.runtime.as_tool import agent_as_tool
from graphflow.runtime.errors import translating
from graphflow.runtime.inputs import check_thread_id, normalize_input
from graphflow.state import AGENT_STATUS, MESSAGES, is_private
from graphflow.strategies import FlowGraphBuilder, strategy_for
from graphflow.tools.approval import check_resume_value
from graphflow.visualize import draw, draw_to

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig

    from graphflow.agents.base import Agent

__all__ = ("Runtime",)


def _config(agent: Agent, thread_id: str, config: RunnableConfig | None) -> Any:
    cfg: dict[str, Any] = dict(config or {})
    configurable = dict(cfg.get("configurable") or {})
    configurable["thread_id"] = thread_id
    cfg["configurable"] = configurable
    cfg.setdefault("recursion_limit", graphs.DEFAULT_RECURSION_LIMIT)
    for key, value in strategy_for(agent).invoke_config(agent).items():
        cfg.setdefault(key, value)
    return cfg


def _thread(thread_id: str | None, config: RunnableConfig | None) -> str:
    configured = (config or {}).get("configurable", {}).get("thread_id")
    if thread_id is not None and configured is not None and configured != thread_id:
        raise InputError(
            f"thread_id={thread_id!r} and config['configurable']['thread_id']={configured!r} "
            "name two threads; pass one of them"
        )
    given = thread_id if thread_id is not None else configured
    if given is None:
        return str(uuid.uuid4())
    check_thread_id(given)
    return str(given)


def _input_keys(graph: Any) -> list[str]:
    """The state keys a caller may pass.

    Not LangGraph's own channels (`__start__`, `branch:to:writer`: state keys are identifiers)
    nor the statuses graphflow writes.
    """
    return [
        k
        for k in graph.channels
        if k.isidentifier() and not k.startswith("__") and k != AGENT_STATUS
    ]


def _acyclic(agent: Agent) -> None:
    """Raise the cycle error (`DataflowError` naming the path) for a tree that contains itself."""
    for _ in agent.walk():
        pass


def _durability(graph: Any, durability: Any) -> Any:
    # without a checkpointer there is nothing to make durable (and LangGraph 1.2 fails on "sync")
    return durability if graph.checkpointer else None


def _public(result: Any) -> Any:
    if not isinstance(result, dict):
        return result
    return {k: v for k, v in result.items() if not is_private(k)}


def _store_name(spec: Any) -> str:
    if isinstance(spec, str):
        return spec
    return type(spec).__name__


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


def _thread_of(cfg: Any) -> str:
    return str(cfg["configurable"]["thread_id"])


def _guard(graph: Any, spec: Any, cfg: Any) -> Any:
    """Translate what escapes the run (see `graphflow.runtime.errors`)."""
    return translating(_thread_of(cfg), _store_name(spec) if graph.checkpointer else None)


@contextlib.contextmanager
def _lease(graph: Any, spec: Any, cfg: Any) -> Iterator[None]:
    """Hold the thread's lease while the run goes on (none without a checkpointer).

    The run carries the lease's fence in its config: each checkpoint write and tool call checks
    it (a run that lost its thread to another stops with `LeaseLostError`).
    """
    if not graph.checkpointer:
        yield
        return
    store = lease_store(spec, graph.checkpointer)
    with hold(store, _thread_of(cfg), store_name=_store_name(spec)) as fence:
        cfg["configurable"][FENCE_KEY] = fence
        try:
            yield
        finally:
            cfg["configurable"].pop(FENCE_KEY, None)


@contextlib.asynccontextmanager
async def _alease(graph: Any, spec: Any, cfg: Any) -> AsyncIterator[None]:
    if not graph.checkpointer:
        yield
        return
    store = lease_store(spec, graph.checkpointer)
    if isinstance(store, MemoryLeases):
        # a dict behind a lock never blocks the loop: taken inline, not from a worker thread
        # (two thread hops per run were most of what a durable in-memory run cost over the floor)
        with _lease(graph, spec, cfg):
            yield
        return
    async with ahold(store, _thread_of(cfg), store_name=_store_name(spec)) as fence:
        cfg["configurable"][FENCE_KEY] = fence
        try:
            yield
        finally:
            cfg["configurable"].pop(FENCE_KEY, None)


def _storable_input(graph: Any, data: Any) -> None:
    """Refuse input values the run's checkpoint could not store (LangGraph: a bare TypeError)."""
    serde = getattr(graph.checkpointer, "serde", None)
    if not isinstance(data, dict) or not isinstance(serde, GraphflowSerializer):
        return
    for key, value in data.items():
        if key == MESSAGES:  # a message is storable; what a caller hangs on it may not be
            extras = [
                (f"{key}[{i}].{part}", getattr(m, part, None))
                for i, m in enumerate(value or ())
                for part in ("additional_kwargs", "response_metadata")
            ]
            found = next(
                (f for where, v in extras if (f := unstorable(v, serde.allowed, path=where))),
                None,
            )
        else:
            found = unstorable(value, serde.allowed, path=key)
        if found is not None:
            raise InputError(
                f"the input's {found} cannot be stored in a checkpoint (loading the run again "
                "would have to construct it); pass plain data (str, numbers, lists, dicts), or "
                "allow the class: graphflow.allow_types(TheClass)"
            )


def _stored(graph: Any, what: str) -> None:
    """Refuse to read stored runs of a graph that stores none (`checkpointer=False`)."""
    if not graph.checkpointer:
        raise InputError(
            f"{what} reads a stored run, but checkpointer=False stores none; pass the "
            "checkpointer the run used (a URL such as sqlite:///runs.db, or a saver)"
        )


class Runtime:
    """The `AgentRuntime` graphflow installs (see `graphflow.agents._runtime`)."""

    # -- building --------------------------------------------------------------------------------

    def to_graph(self, agent: Agent) -> Any:
        """The uncompiled root graph."""
        return FlowGraphBuilder().build(agent)

    def compile(self, agent: Agent, checkpointer: Any, **options: Any) -> Any:
        """The compiled root graph; remembers `checkpointer` for later run methods."""
        spec = graphs.checkpointer_spec(agent, checkpointer)
        graph = graphs.compiled(agent, spec, **options)
        graphs.remember(agent, checkpointer)
        return graph

    def _graph(self, agent: Agent, checkpointer: Any) -> tuple[Any, Any]:
        spec = graphs.checkpointer_spec(agent, checkpointer)
        graph = graphs.compiled(agent, spec)
        graphs.remember(agent, checkpointer)
        return graph, spec

    # -- inputs ---------------------------------------------------------------------------------

    def _missing(self, agent: Agent, data: Any) -> list[tuple[str, str]]:
        """Required keys a new input does not supply, with the agent that needs each."""
        if not isinstance(data, dict):
            return []
        return [(k, who) for k, who in graphs.required_inputs(agent).items() if k not in data]

    @staticmethod
    def _refuse_missing(missing: list[tuple[str, str]], values: Any) -> None:
        absent = [(k, who) for k, who in missing if (values or {}).get(k) is None]
        if absent:
            key, who = absent[0]
            example = ", ".join(f"{k!r}: ..." for k, _ in absent)
            raise InputError(
                f"Agent `{who}` needs {{{key}}} but the input does not supply it (and no agent "
                f"writes it); pass it in the input: invoke({{'input': ..., {example}}})"
            )

    def _input(self, graph: Any, input: Any, cfg: dict[str, Any], spec: Any, agent: Agent) -> Any:
        known = _input_keys(graph)
        data = normalize_input(input, known=known)
        _storable_input(graph, data)
        missing = self._missing(agent, data)
        if missing:
            # a thread that already holds the values (an earlier turn) is fine
            held = graph.get_state(cfg).values if graph.checkpointer else {}
            self._refuse_missing(missing, held)
        if data is None and graph.checkpointer:
            snapshot = graph.get_state(cfg)
            if snapshot.created_at is None:
                raise InputError(
                    f"thread {cfg['configurable']['thread_id']!r} has no run in "
                    f"{_store_name(spec)} to continue; pass an input to start one"
                )
        elif data is None:
            raise InputError("input None continues a stored run, but this run has no checkpointer")
        return data

    async def _ainput(
        self, graph: Any, input: Any, cfg: dict[str, Any], spec: Any, agent: Agent
    ) -> Any:
        known = _input_keys(graph)
        data = normalize_input(input, known=known)
        _storable_input(graph, data)
        missing = self._missing(agent, data)
        if missing:
            held = (await graph.aget_state(cfg)).values if graph.checkpointer else {}
            self._refuse_missing(missing, held)
        if data is None and graph.checkpointer:
            snapshot = await graph.aget_state(cfg)
            if snapshot.created_at is None:
                raise InputError(
                    f"thread {cfg['configurable']['thread_id']!r} has no run in "
                    f"{_store_name(spec)} to continue; pass an input to start one"
                )
        elif data is None:
            raise InputError("input None continues a stored run, but this run has no checkpointer")
        return data

    # -- running ---------------------------------------------------------------------------------

    def invoke(
        self,
        agent: Agent,
        input: Any,
        *,
        thread_id: str | None = None,
        config: RunnableConfig | None = None,
        checkpointer: Any = None,
        durability: Any = "sync",
    ) -> Any:
        """Run to the end (or an interrupt); the final state without private channels."""
        graph, spec = self._graph(agent, checkpointer)
        cfg = _config(agent, _thread(thread_id, config), config)
        with _guard(graph, spec, cfg), _lease(graph, spec, cfg):
            data = self._input(graph, input, cfg, spec, agent)
            return _public(graph.invoke(data, cfg, durability=_durability(graph, durability)))

    async def ainvoke(
        self,
        agent: Agent,
        input: Any,
        *,
        thread_id: str | None = None,
        config: RunnableConfig | None = None,
        checkpointer: Any = None,
        durability: Any = "sync",
    ) -> Any:
        """Async `invoke`."""
        spec = graphs.checkpointer_spec(agent, checkpointer)
        graphs.remember(agent, checkpointer)
        cfg = _config(agent, _thread(thread_id, config), config)
        async with graphs.async_graph(agent, spec) as graph, _alease(graph, spec, cfg):
            with _guard(graph, spec, cfg):
                data = await self._ainput(graph, input, cfg, spec, agent)
                result = await graph.ainvoke(data, cfg, durability=_durability(graph, durability))
        return _public(result)

    def stream(
        self,
        agent: Agent,
        input: Any,
        *,
        thread_id: str | None = None,
        config: RunnableConfig | None = None,
        checkpointer: Any = None,
        stream_mode: Any = None,
        subgraphs: bool = True,
        durability: Any = "sync",
        events: Any = None,
    ) -> Iterator[Any]:
        """Typed events of the run (filtered by `events`), or LangGraph's raw `stream_mode`."""
        events = _selected(events, stream_mode)
        graph, spec = self._graph(agent, checkpointer)
        cfg = _config(agent, _thread(thread_id, config), config)
        data = self._input(graph, input, cfg, spec, agent)
        if events is not None and (data is None or isinstance(data, Command)):
            snapshot = graph.get_state(cfg, subgraphs=True)
            value = getattr(data, "resume", None)
            self._check_resume(agent, snapshot, _thread_of(cfg), value, spec)

        def chunks() -> Iterator[Any]:
            with _guard(graph, spec, cfg), _lease(graph, spec, cfg):
                dur = _durability(graph, durability)
                if events is not None:
                    yield from stream_events(agent, graph, data, cfg, durability=dur, events=events)
                    return
                yield from graph.stream(
                    data, cfg, stream_mode=stream_mode, subgraphs=subgraphs, durability=dur
                )

        return chunks()

    def astream(
        self,
        agent: Agent,
        input: Any,
        *,
        thread_id: str | None = None,
        config: RunnableConfig | None = None,
        checkpointer: Any = None,
        stream_mode: Any = None,
        subgraphs: bool = True,
        durability: Any = "sync",
        events: Any = None,
    ) -> AsyncIterator[Any]:
        """Async `stream`."""
        events = _selected(events, stream_mode)
        spec = graphs.checkpointer_spec(agent, checkpointer)
        graphs.remember(agent, checkpointer)
        cfg = _config(agent, _thread(thread_id, config), config)

        async def chunks() -> AsyncIterator[Any]:
            async with graphs.async_graph(agent, spec) as graph, _alease(graph, spec, cfg):
                with _guard(graph, spec, cfg):
                    data = await self._ainput(graph, input, cfg, spec, agent)
                    dur = _durability(graph, durability)
                    if events is not None:
                        if data is None or isinstance(data, Command):
                            snapshot = await graph.aget_state(cfg, subgraphs=True)
                            value = getattr(data, "resume", None)
                            self._check_resume(agent, snapshot, _thread_of(cfg), value, spec)
                        async for item in astream_events(
                            agent, graph, data, cfg, durability=dur, events=events
                        ):
                            yield item
                        return
                    async for event in graph.astream(
                        data, cfg, stream_mode=stream_mode, subgraphs=subgraphs, durability=dur
                    ):
                        yield event

        return chunks()

    # -- resuming ---------------------------------------------------------------------------------

    def _check_resume(
        self, agent: Agent, snapshot: Any, thread_id: str, value: Any, spec: Any
    ) -> None:
        if snapshot.created_at is None:
            raise RunNotFoundError(
                f"no run is stored under thread {thread_id!r} in {_store_name(spec)}; check the "
                "thread id (agent.runs() lists the stored runs) and the checkpointer"
            )
        interrupts = list(snapshot.interrupts or ())
        if value is not None and not interrupts:
            raise RunStateError(
                f"thread {thread_id!r} is not waiting for an answer (no pending interrupt); "
                f"resume it without a value{'' if snapshot.next else ', or start a new turn with invoke(input, thread_id=...)'}"
            )
        # (a step whose tasks all saved their writes but whose next checkpoint was not written
        # yet — a crash between the two — has no `next` but still has its `tasks`)
        if value is None and not snapshot.next and not snapshot.tasks and not interrupts:
            raise RunStateError(
                f"the run on thread {thread_id!r} has finished; there is nothing to resume. "
                f"Start a new turn on it with invoke(input, thread_id={thread_id!r})"
            )
        if value is not None:
            try:
                check_resume_value(interrupts, value)  # a paused tool call's answer
                for hook in {id(h): h for a in agent.walk() for h in a.hooks}.values():
                    hook.validate_resume(interrupts, value)
            except InputError:
                raise
            except ValueError as exc:  # a bad answer is bad input (the CLI's exit code 2)
                raise InputError(f"thread {thread_id!r}: {exc}") from exc

    def resume(
        self,
        agent: Agent,
        thread_id: str,
        value: Any = None,
        *,
        checkpointer: Any = None,
        config: RunnableConfig | None = None,
    ) -> Any:
        """Continue a crashed, failed or interrupted run from its last checkpoint."""
        check_thread_id(thread_id)
        graph, spec = self._graph(agent, checkpointer)
        _stored(graph, "resume")
        cfg = _config(agent, thread_id, config)
        with _guard(graph, spec, cfg), _lease(graph, spec, cfg):
            snapshot = graph.get_state(cfg, subgraphs=True)
            self._check_resume(agent, snapshot, thread_id, value, spec)
            command: Command | None = None if value is None else Command(resume=value)
            return _public(graph.invoke(command, cfg, durability=_durability(graph, "sync")))

    async def aresume(
        self,
        agent: Agent,
        thread_id: str,
        value: Any = None,
        *,
        checkpointer: Any = None,
        config: RunnableConfig | None = None,
    ) -> Any:
        """Async `resume`."""
        check_thread_id(thread_id)
        spec = graphs.checkpointer_spec(agent, checkpointer)
        graphs.remember(agent, checkpointer)
        cfg = _config(agent, thread_id, config)
        async with graphs.async_graph(agent, spec) as graph, _alease(graph, spec, cfg):
            _stored(graph, "resume")
            with _guard(graph, spec, cfg):
                snapshot = await graph.aget_state(cfg, subgraphs=True)
                self._check_resume(agent, snapshot, thread_id, value, spec)
                command: Command | None = None if value is None else Command(resume=value)
                result = await graph.ainvoke(command, cfg, durability=_durability(graph, "sync"))
        return _public(result)

    # -- inspecting -------------------------------------------------------------------------------

    def get_state(self, agent: Agent, thread_id: str, *, checkpointer: Any = None) -> Any:
        """The thread's latest `StateSnapshot`."""
        check_thread_id(thread_id)
        graph, spec = self._graph(agent, checkpointer)
        _stored(graph, "get_state")
        snapshot = graph.get_state({"configurable": {"thread_id": thread_id}}, subgraphs=True)
        if snapshot.created_at is None:
            raise RunNotFoundError(
                f"no run is stored under thread {thread_id!r} in {_store_name(spec)}; "
                "agent.runs() lists the stored runs"
            )
        return snapshot

    def runs(self, agent: Agent, *, checkpointer: Any = None, limit: int | None = None) -> Any:
        """`RunInfo` for every thread in the checkpointer, newest first."""
        graph, spec = self._graph(agent, checkpointer)
        names = [a.name for a in agent.walk()]
        leases = lease_store(spec, graph.checkpointer) if graph.checkpointer else None
        return list_runs(graph, agents=names, limit=limit, leases=leases)

    def history(
        self,
        agent: Agent,
        thread_id: str,
        *,
        checkpointer: Any = None,
        all_namespaces: bool = False,
    ) -> Any:
        """The thread's checkpoints, newest first."""
        check_thread_id(thread_id)
        graph, spec = self._graph(agent, checkpointer)
        _stored(graph, "history")
        out = run_history(graph, thread_id, all_namespaces=all_namespaces)
        if not out:
            raise RunNotFoundError(
                f"no run is stored under thread {thread_id!r} in {_store_name(spec)}; "
                "agent.runs() lists the stored runs"
            )
        return out

    # -- drawing and composing --------------------------------------------------------------------

    def draw(self, agent: Agent, format: str = "mermaid", **options: Any) -> Any:
        """A drawing of the agent tree."""
        _acyclic(agent)
        return draw(agent, format, **options)

    def draw_to(self, agent: Agent, path: Any, **options: Any) -> Any:
        """Write a drawing of the agent tree to `path`."""
        _acyclic(agent)
        return draw_to(agent, path, **options)

    def as_tool(self, agent: Agent, name: str | None, description: str | None) -> Any:
        """`agent` as a tool of another agent."""
        return agent_as_tool(agent, name=name, description=description)

    # -- specs ------------------------------------------------------------------------------------

    def to_spec(self, agent: Agent) -> Any:
        """The agent tree as a spec mapping (see `graphflow.spec`)."""
        from graphflow.spec import agent_to_spec

        return agent_to_spec(agent)

    def from_spec(self, kind: Any, data: Any) -> Any:
        """The agent tree a spec mapping describes (see `graphflow.spec`)."""
        from graphflow.spec import agent_from_spec

        return agent_from_spec(data, kind=kind)
