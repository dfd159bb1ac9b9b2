"""Run listing and history: what a checkpointer knows about past and unfinished runs."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal

from graphflow._internal.commands import resume_hint
from graphflow.checkpoint.stop import cancelled, is_marked

if TYPE_CHECKING:
    from graphflow.checkpoint.leases import LeaseStore

__all__ = (
    "CheckpointInfo",
    "RunInfo",
    "RunStatus",
    "due_nodes",
    "list_runs",
    "read_run",
    "run_history",
    "run_info",
    "settle",
)

RunStatus = Literal["running", "stopped", "crashed", "interrupted", "failed", "done", "unreadable"]


@dataclass(frozen=True)
class RunInfo:
    """One thread (run) in a checkpointer.

    `status` is `done` (finished), `interrupted` (waiting for `resume(thread_id, value)`),
    `failed` (a task raised; `resume` retries it), `running` (a live process holds the thread's
    lease), `stopped` (unfinished, stopped on purpose with Ctrl-C or SIGTERM), `crashed`
    (unfinished, and no live process holds it: the process running it died), both continued by
    `resume(thread_id)`, or `unreadable` (its checkpoint cannot be loaded; `error`
    says why).
    """

    thread_id: str
    status: RunStatus
    agent: str | None
    """The agent running (innermost) when unfinished, or the last agent to run when done."""
    step: int
    """LangGraph step of the latest root checkpoint."""
    checkpoint_id: str
    updated_at: str | None
    next: tuple[str, ...] = ()
    """Root-graph nodes due next (empty when done)."""
    error: str | None = None
    interrupts: tuple[Any, ...] = ()
    """Values of the pending interrupts."""
    hint: str | None = None
    """What to do next, for a run that needs it (`crashed`, `failed`, `interrupted`)."""


@dataclass(frozen=True)
class CheckpointInfo:
    """One checkpoint of a thread."""

    checkpoint_id: str
    parent_id: str | None
    step: int
    source: str
    """`input`, `loop`, `update` or `fork`."""
    created_at: str | None
    namespace: str = ""
    """Checkpoint namespace: `""` for the root graph, `agent:task-id|...` inside sub-agents."""
    next: tuple[str, ...] = ()
    """Nodes due after this checkpoint (root checkpoints only)."""


def thread_ids(saver: Any) -> list[str]:
    """Every thread id stored in `saver`, most recently updated first when the store knows.

    `saver` is a LangGraph saver or a store's rows (`checkpoint.rows.SqliteRows`).
    """
    query = (
        "SELECT thread_id FROM checkpoints WHERE checkpoint_ns = '' GROUP BY thread_id "
        "ORDER BY MAX(checkpoint_id) DESC"
    )
    if getattr(saver, "tables", True) is False:
        return []  # a store file nothing has run on
    conn = getattr(saver, "conn", None)
    if isinstance(conn, sqlite3.Connection):  # SqliteSaver, SqliteRows: no LangGraph to import
        if callable(getattr(saver, "cursor", None)):  # SqliteSaver
            # (its read cursor: a store file deleted since is read as empty, not made again)
            with saver.cursor(transaction=False) as cur:
                return [str(r[0]) for r in cur.execute(query).fetchall()]
        with saver.lock:
            return [str(r[0]) for r in conn.execute(query).fetchall()]
    from langgraph.checkpoint.memory import InMemorySaver

    if isinstance(saver, InMemorySaver):
        return list(saver.storage)
    try:
        from langgraph.checkpoint.postgres import PostgresSaver

        if isinstance(saver, PostgresSaver):
            with saver._cursor() as cur:
                cur.execute(query)
                return [str(r["thread_id"]) for r in cur.fetchall()]
    except ImportError:  # pragma: no cover
        pass
    seen: dict[str, str] = {}
    for tup in saver.list(None):
        cfg = tup.config["configurable"]
        if cfg.get("checkpoint_ns", ""):
            continue
        tid = str(cfg["thread_id"])
        seen[tid] = max(seen.get(tid, ""), str(cfg.get("checkpoint_id", "")))
    return sorted(seen, key=lambda t: seen[t], reverse=True)


def _walk(snapshot: Any) -> Iterable[tuple[int, Any]]:
    """(depth, task) for every pending task, subgraph tasks included."""
    stack: list[tuple[int, Any]] = [(0, snapshot)]
    while stack:
        depth, snap = stack.pop()
        for task in getattr(snap, "tasks", ()) or ():
            yield depth, task
            if getattr(task, "state", None) is not None and hasattr(task.state, "tasks"):
                stack.append((depth + 1, task.state))


def run_info(graph: Any, thread_id: str, *, agents: Iterable[str] = ()) -> RunInfo | None:
    """The `RunInfo` of `thread_id` in the compiled `graph`'s checkpointer (None if unknown)."""
    found = read_run(graph, thread_id, agents=agents)
    return None if found is None else found[0]


def read_run(
    graph: Any, thread_id: str, *, agents: Iterable[str] = (), look_back: bool = True
) -> tuple[RunInfo, Any] | None:
    """`run_info` and the `StateSnapshot` it was read from (its values), in one read of the store.

    `look_back=False` leaves out the walk back through the history that names the last agent of
    a finished run (its `agent` is then the root): a caller that only needs the status and the
    values reads the thread's newest checkpoint and nothing else.
    """
    config = {"configurable": {"thread_id": thread_id}}
    snapshot = graph.get_state(config, subgraphs=True)
    if snapshot.config is None or not snapshot.created_at:
        return None
    order = list(agents)
    names = set(order)
    error: str | None = None
    interrupts: list[Any] = []
    running: tuple[int, str] | None = None
    for depth, task in _walk(snapshot):
        if task.error is not None and error is None and not cancelled(task.error):
            error = (
                f"{type(task.error).__name__}: {task.error}"
                if isinstance(task.error, BaseException)
                else str(task.error)
            )
        for intr in task.interrupts or ():
            if intr not in interrupts:
                interrupts.append(intr)
        if task.name in names and (running is None or depth > running[0]):
            running = (depth, task.name)
    for intr in snapshot.interrupts or ():
        if intr not in interrupts:
            interrupts.append(intr)
    status: RunStatus
    if interrupts:
        status = "interrupted"
    elif error is not None:
        status = "failed"
    elif snapshot.next or snapshot.tasks:
        status = "running"
    else:
        status = "done"
    agent = running[1] if running else None
    if agent is None and look_back:
        agent = _last_agent(graph, config, names)
    if agent is None and order:
        agent = order[0]  # the root: a root ReactAgent's own steps (model, tools) are no agents
    metadata = snapshot.metadata or {}
    info = RunInfo(
        thread_id=thread_id,
        status=status,
        agent=agent,
        step=int(metadata.get("step", -1)),
        checkpoint_id=str(snapshot.config["configurable"].get("checkpoint_id", "")),
        updated_at=snapshot.created_at,
        next=tuple(snapshot.next),
        error=error,
        interrupts=tuple(getattr(i, "value", i) for i in interrupts),
    )
    return info, snapshot


def _last_agent(graph: Any, config: dict[str, Any], names: set[str]) -> str | None:
    """The agent due next in the newest of the last 50 root checkpoints that names one.

    Read from the stored checkpoints (`due_nodes`), not from 50 rebuilt states.
    """
    saver = graph.checkpointer
    if not saver:
        return None
    root = {"configurable": {**config["configurable"], "checkpoint_ns": ""}}
    for found in saver.list(root, limit=51):
        for name in due_nodes(found.checkpoint):
            if name in names:
                return str(name)
    return None


def due_nodes(checkpoint: Any) -> list[str]:
    """Root nodes whose edge (`branch:to:NODE`) holds a write they have not run on yet.

    What `StateSnapshot.next` says, read from a stored checkpoint without building the state.
    """
    seen = checkpoint.get("versions_seen") or {}
    written = checkpoint.get("channel_values") or {}
    due = []
    for channel, version in (checkpoint.get("channel_versions") or {}).items():
        if not str(channel).startswith("branch:to:") or channel not in written:
            continue
        node = str(channel)[len("branch:to:") :]
        if node.startswith(("gf_", "__")):
            continue
        if str((seen.get(node) or {}).get(channel, "")) < str(version):
            due.append(node)
    return due


def list_runs(
    graph: Any,
    *,
    agents: Iterable[str] = (),
    limit: int | None = None,
    leases: LeaseStore | None = None,
) -> list[RunInfo]:
    """`RunInfo` for every thread in the compiled `graph`'s checkpointer, newest first.

    With `leases`, an unfinished run no live process holds is reported as `crashed`. A thread
    whose checkpoint cannot be loaded (a type this graph does not allow, a corrupt row) is
    listed as `unreadable` and the others are listed as usual.
    """
    saver = graph.checkpointer
    if saver is None or saver is False:
        return []
    names = tuple(agents)
    out: list[RunInfo] = []
    for tid in thread_ids(saver):
        try:
            info = run_info(graph, tid, agents=names)
        except Exception as exc:  # noqa: BLE001 - one bad thread must not hide the others
            info = RunInfo(
                thread_id=tid,
                status="unreadable",
                agent=None,
                step=-1,
                checkpoint_id="",
                updated_at=None,
                error=f"cannot load: {type(exc).__name__}: {exc}",
            )
        if info is not None:
            stopped = info.status == "running" and is_marked(saver, tid)
            out.append(settle(info, leases, stopped=stopped))
        if limit is not None and len(out) >= limit:
            break
    return out


def settle(info: RunInfo, leases: LeaseStore | None, *, stopped: bool = False) -> RunInfo:
    """`info` with a hint, and `running` made exact.

    A live holder of the thread's lease runs it; else it was `stopped` (on purpose: the stop
    mark) or `crashed` (its process died).
    """
    if info.status == "running" and leases is not None:
        holder = leases.holder(info.thread_id)
        if holder is None or not holder.alive():
            resume = resume_hint(info.thread_id)  # (looks the command up: only when shown)
            if stopped:
                return replace(info, status="stopped", hint=f"stopped on purpose; {resume}")
            return replace(
                info,
                status="crashed",
                hint=f"no live process runs it (it stopped mid-run); continue it with {resume}",
            )
        return replace(info, hint=f"running in {holder.where}")
    if info.status == "failed":
        resume = resume_hint(info.thread_id)
        return replace(info, hint=f"fix the cause, then retry the failed step with {resume}")
    if info.status == "interrupted":
        return replace(info, hint=f"answer with agent.resume({info.thread_id!r}, value)")
    return info


def run_history(
    graph: Any, thread_id: str, *, all_namespaces: bool = False, limit: int | None = None
) -> list[CheckpointInfo]:
    """The checkpoints of `thread_id`, newest first (root graph only unless `all_namespaces`)."""
    config = {"configurable": {"thread_id": thread_id}}
    out: list[CheckpointInfo] = []
    if not all_namespaces:
        for snap in graph.get_state_history(config, limit=limit):
            meta = snap.metadata or {}
            parent = (snap.parent_config or {}).get("configurable", {}).get("checkpoint_id")
            out.append(
                CheckpointInfo(
                    checkpoint_id=str(snap.config["configurable"]["checkpoint_id"]),
                    parent_id=parent,
                    step=int(meta.get("step", -1)),
                    source=str(meta.get("source", "")),
                    created_at=snap.created_at,
                    namespace="",
                    next=tuple(snap.next),
                )
            )
        return out
    saver = graph.checkpointer
    tuples = list(saver.list(config)) if saver else []
    tuples.sort(key=lambda t: str(t.checkpoint["id"]), reverse=True)
    for tup in tuples[:limit] if limit else tuples:
        meta = tup.metadata or {}
        parent = (tup.parent_config or {}).get("configurable", {}).get("checkpoint_id")
        out.append(
            CheckpointInfo(
                checkpoint_id=str(tup.checkpoint["id"]),
                parent_id=parent,
                step=int(meta.get("step", -1)),
                source=str(meta.get("source", "")),
                created_at=str(tup.checkpoint.get("ts")) if tup.checkpoint.get("ts") else None,
                namespace=str(tup.config["configurable"].get("checkpoint_ns", "")),
            )
        )
    return out
