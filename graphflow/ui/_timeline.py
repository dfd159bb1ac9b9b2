"""The run page's timeline: one row per agent invocation (loop passes and branches apart).

A stored run is read from its checkpoints: every checkpoint namespace is a graph that ran, and
the tasks of its history are the invocations of its agent's children (a child with a graph of
its own has the namespace `<parent>|<child>:<task id>`; one that runs inline as a node of its
parent has none). What a child's run is to its parent (its branch, its loop pass) is what the
parent's kind says (`child_role`), and its counts are what the child's kind reads from its
checkpoints (`read_run`), as for the run overlay. Start and end are the checkpoints' times.

A run going on in this server is read from its typed events as they arrive
(`AgentStarted` … `AgentFinished`): each `AgentStarted` opens an invocation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from graphflow.checkpoint.stored import namespaces, written_usage
from graphflow.strategies.registry import kind_name, strategy_for

if TYPE_CHECKING:
    from graphflow.agents.base import Agent
    from graphflow.runtime.compiled import CompiledAgent

__all__ = ("Invocation", "events_timeline", "live_timeline", "stored_timeline")


@dataclass(kw_only=True)
class Invocation:
    """One run of one agent: a row of the timeline."""

    id: str
    """Its checkpoint namespace (`""` for the root), or `ev-<seq>` for one read from events."""
    parent: str | None
    agent: str
    kind: str
    path: list[str]
    branch: str | None = None
    iteration: int | None = None
    start: float | None = None
    """Seconds since the epoch."""
    end: float | None = None
    status: str = "running"
    model_calls: int | None = None
    tool_calls: int | None = None
    loop_passes: int | None = None
    tokens: dict[str, int] = field(default_factory=lambda: {"input": 0, "output": 0, "unknown": 0})
    """Tokens of its model calls and its sub-agents' (`unknown`: replies without usage)."""
    task_id: str | None = None
    """The LangGraph task it ran as in its parent (None for the root and event rows)."""
    source: str = "store"
    """`store` (checkpoints) or `events` (this server's stream of the run)."""

    def as_dict(self) -> dict[str, Any]:
        """The JSON row."""
        return asdict(self)


def _seconds(ts: Any) -> float | None:
    if not ts:
        return None
    try:
        return datetime.fromisoformat(str(ts)).timestamp()
    except ValueError:
        return None


def _ts(tup: Any) -> float | None:
    return _seconds(tup.checkpoint.get("ts"))


def _config(thread_id: str, ns: str) -> Any:
    return {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns}}


def stored_timeline(
    compiled: CompiledAgent, thread_id: str, *, run_status: str = "done"
) -> list[Invocation]:
    """The invocations of a stored run, in start order (parents before their children).

    `run_status` (the run's status, `crashed` or `stopped` included) is given to the
    invocations that have not ended and did not fail or pause.
    """
    graph = compiled.graph
    root = compiled.agent
    by_ns = namespaces(graph.checkpointer, thread_id)
    if "" not in by_ns:
        return []
    unfinished = "running" if run_status in ("done", "running") else run_status
    top = by_ns[""]
    done = run_status == "done"
    first = Invocation(
        id="",
        parent=None,
        agent=root.name,
        kind=kind_name(root),
        path=[root.name],
        start=_ts(top[0]),
        end=_ts(top[-1]) if done else None,
        status=run_status if run_status in ("done", "failed", "interrupted") else unfinished,
    )
    _count(first, root, by_ns.get(""))
    found: dict[str, tuple[Invocation, Agent]] = {"": (first, root)}
    order = sorted(by_ns, key=lambda ns: (ns.count("|") + bool(ns), _first_id(by_ns[ns])))
    for ns in order:
        if ns not in found:
            continue  # a graph no agent of the tree owns (e.g. an agent run as a tool)
        parent, agent = found[ns]
        strategy = strategy_for(agent)
        children = {c.name: c for c in strategy.children(agent)}
        if not children:
            continue
        if any(strategy_for(c).runs_inline(c) for c in children.values()):
            tasks = _tasks_of_history(graph, thread_id, ns)  # names of inline nodes: LangGraph's
        else:
            tasks = _tasks_of_namespaces(by_ns, ns)  # each child has its own namespace
        for task in tasks:
            child = children.get(task.name)
            if child is None:
                continue
            cid = f"{ns}|{task.name}:{task.id}" if ns else f"{task.name}:{task.id}"
            if cid in found:
                continue
            role = strategy.child_role(agent, child, task.state)
            own = by_ns.get(cid)
            if task.failed:
                status = "failed"
            elif task.interrupted:
                status = "interrupted"
            elif task.finished:
                status = "done"
            else:
                status = unfinished
            end = None
            if status == "done":
                end = _ts(own[-1]) if own else task.next_at
            item = Invocation(
                id=cid,
                parent=parent.id,
                agent=child.name,
                kind=kind_name(child),
                path=[*parent.path, child.name],
                branch=parent.branch if role.branch is None else role.branch,
                iteration=parent.iteration if role.iteration is None else role.iteration,
                start=_ts(own[0]) if own else task.started_at,
                end=end,
                status=status,
                task_id=task.id,
            )
            _count(item, child, own)
            found[cid] = (item, child)
    items = [item for item, _ in found.values()]
    _roll_up(items)
    return sorted(items, key=lambda i: (i.start or 0.0, len(i.path)))


@dataclass(kw_only=True)
class _Task:
    """A task of a graph's history: a child agent run from one of its checkpoints."""

    name: str
    id: str
    state: Mapping[str, Any]
    """The graph's state values at the checkpoint it started from (its input)."""
    started_at: float | None
    next_at: float | None
    """When the graph's next checkpoint was written (None: not yet)."""
    finished: bool
    failed: bool
    interrupted: bool


_ERROR, _INTERRUPT = "__error__", "__interrupt__"


def _tasks_of_namespaces(by_ns: Mapping[str, Sequence[Any]], ns: str) -> list[_Task]:
    """The tasks of graph `ns` whose children have namespaces of their own, from raw tuples.

    A child namespace `<ns>|<name>:<task id>` names the task; the checkpoint of `ns` holding the
    task's writes is the one it ran from (a task saves its writes there when it ends; one with
    none yet runs from the newest). Reading the tuples already loaded spares LangGraph's
    snapshots, which rebuild the conversation at every checkpoint.
    """
    tuples = by_ns[ns]
    prefix = f"{ns}|" if ns else ""
    ran_from: dict[str, int] = {}
    outcome: dict[str, set[str]] = {}
    for i, tup in enumerate(tuples):
        for task_id, channel, _value in tup.pending_writes or ():
            ran_from.setdefault(str(task_id), i)
            outcome.setdefault(str(task_id), set()).add(str(channel))
    out = []
    for cid in by_ns:
        rest = cid[len(prefix) :] if cid.startswith(prefix) and cid != ns else ""
        if not rest or "|" in rest:
            continue
        name, _, task_id = rest.partition(":")
        i = ran_from.get(task_id, len(tuples) - 1)
        written = outcome.get(task_id, set())
        out.append(
            _Task(
                name=name,
                id=task_id,
                state=dict(tuples[i].checkpoint.get("channel_values") or {}),
                started_at=_ts(tuples[i]),
                next_at=_ts(tuples[i + 1]) if i + 1 < len(tuples) else None,
                finished=bool(written) and not written & {_ERROR, _INTERRUPT},
                failed=_ERROR in written,
                interrupted=_INTERRUPT in written,
            )
        )
    return sorted(
        out, key=lambda t: (t.started_at or 0.0, _first_id(by_ns[f"{prefix}{t.name}:{t.id}"]))
    )


def _tasks_of_history(graph: Any, thread_id: str, ns: str) -> list[_Task]:
    """The tasks of graph `ns` from LangGraph's state history (it names inline nodes too)."""
    history = list(graph.get_state_history(_config(thread_id, ns)))[::-1]
    out = []
    for i, snap in enumerate(history):
        following = history[i + 1] if i + 1 < len(history) else None
        for task in snap.tasks or ():
            out.append(
                _Task(
                    name=task.name,
                    id=task.id,
                    state=dict(snap.values or {}),
                    started_at=_seconds(snap.created_at),
                    next_at=None if following is None else _seconds(following.created_at),
                    finished=(following is not None or task.result is not None)
                    and task.error is None
                    and not task.interrupts,
                    failed=task.error is not None,
                    interrupted=bool(task.interrupts),
                )
            )
    return out


def _first_id(tuples: Sequence[Any]) -> str:
    return str(tuples[0].config["configurable"].get("checkpoint_id", "")) if tuples else ""


def _count(item: Invocation, agent: Agent, tuples: Sequence[Any] | None) -> None:
    """The counts the agent's kind reads from the checkpoints of this one invocation."""
    counts = strategy_for(agent).read_run(agent, [tuples] if tuples else [])
    item.model_calls = counts.model_calls
    item.tool_calls = counts.tool_calls
    item.loop_passes = counts.loop_passes
    if counts.model_calls is not None and tuples:  # a kind that calls models itself
        sent, produced, unknown = written_usage(tuples)
        item.tokens = {"input": sent, "output": produced, "unknown": unknown}


def _roll_up(items: list[Invocation]) -> None:
    """Add each invocation's tokens (and a flow's uncounted calls) to its ancestors'."""
    by_id = {item.id: item for item in items}
    own = {item.id: dict(item.tokens) for item in items}
    calls = {item.id: (item.model_calls or 0, item.tool_calls or 0) for item in items}
    flows = {item.id for item in items if item.model_calls is None}
    for item in items:
        at = by_id.get(item.parent) if item.parent is not None else None
        while at is not None:
            for key, value in own[item.id].items():
                at.tokens[key] += value
            if at.id in flows and item.id not in flows:
                at.model_calls = (at.model_calls or 0) + calls[item.id][0]
                at.tool_calls = (at.tool_calls or 0) + calls[item.id][1]
            at = by_id.get(at.parent) if at.parent is not None else None


def _usage(data: Any) -> tuple[int, int, bool]:
    usage = (data or {}).get("$usage") if isinstance(data, Mapping) else None
    if not isinstance(usage, Mapping):
        return 0, 0, False
    return (
        int(usage.get("input_tokens") or 0),
        int(usage.get("output_tokens") or 0),
        bool(usage.get("estimated")),
    )


def events_timeline(events: Sequence[Mapping[str, Any]]) -> list[Invocation]:
    """The invocations a stream's typed events (their JSON form) tell of, in start order."""
    items: list[Invocation] = []
    current: dict[tuple[str, ...], Invocation] = {}
    """The latest invocation of each agent path (its events are about it until it ends)."""

    def at(event: Mapping[str, Any]) -> Invocation | None:
        return current.get(tuple(event.get("agent_path") or ()))

    def ancestors(item: Invocation) -> list[Invocation]:
        out = []
        for cut in range(len(item.path) - 1, 0, -1):
            found = current.get(tuple(item.path[:cut]))
            if found is not None:
                out.append(found)
        return out

    for event in events:
        kind = event.get("type")
        path = list(event.get("agent_path") or ())
        if kind == "AgentStarted":
            parent = current.get(tuple(path[:-1])) if len(path) > 1 else None
            opened = Invocation(
                id=f"ev-{event.get('seq')}",
                parent=parent.id if parent else None,
                agent=path[-1] if path else "",
                kind=str(event.get("kind", "")),
                path=path,
                branch=event.get("branch"),
                iteration=event.get("iteration"),
                start=event.get("timestamp"),
                model_calls=0,
                tool_calls=0,
                source="events",
            )
            items.append(opened)
            current[tuple(path)] = opened
            continue
        item = at(event)
        if item is None:
            continue
        if kind == "AgentFinished":
            item.end = event.get("timestamp")
            item.status = "done"
        elif kind == "AgentFailed":
            item.end = event.get("timestamp")
            item.status = "failed"
        elif kind == "Interrupted":
            for one in (item, *ancestors(item)):
                one.status = "interrupted"
        elif kind == "ModelFinished":
            sent, produced, estimated = _usage(event.get("usage"))
            for one in (item, *ancestors(item)):
                one.tokens["input"] += sent
                one.tokens["output"] += produced
            item.model_calls = (item.model_calls or 0) + 1
            for one in ancestors(item):
                one.model_calls = (one.model_calls or 0) + 1
        elif kind == "ToolCallStarted":
            for one in (item, *ancestors(item)):
                one.tool_calls = (one.tool_calls or 0) + 1
    return items


def live_timeline(
    stored: list[Invocation], events: Sequence[Mapping[str, Any]]
) -> list[Invocation]:
    """A run going on here: what ended before this stream began (stored), then its events."""
    if not events:
        return stored
    began = float(events[0].get("timestamp") or 0.0)
    kept = [i for i in stored if i.end is not None and i.end <= began]
    return kept + events_timeline(events)
