"""The runs page's rows and who holds a run: read for the page shown only.

A row is the run's `RunInfo` (`checkpoint.runs.run_info`, made exact by `settle` with the store's
leases and stop mark), its figures (`visualize.totals.run_totals`: the agents' own `read_run`
counts summed, and its first checkpoint), and the live process holding its lease when that is
not this server. Thread ids are listed with one query (`thread_ids`); a page reads at most
`SCAN` threads, so a filter over 10,000 runs answers in bounded time and says where to go on.
"""

from __future__ import annotations

import os
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from graphflow.checkpoint.leases import HOST, lease_store
from graphflow.checkpoint.runs import RunInfo, run_info, settle, thread_ids
from graphflow.checkpoint.stop import is_marked
from graphflow.visualize.totals import run_totals

if TYPE_CHECKING:
    from graphflow.ui._service import Service

__all__ = (
    "SCAN",
    "owner_of",
    "owner_text",
    "refusal",
    "run_row",
    "runs_page",
    "settled_info",
)

SCAN = 300
"""Threads read (at most) to fill one filtered page; the answer says where the next read starts."""


def runs_page(
    service: Service, *, status: str = "", text: str = "", offset: int = 0, limit: int = 50
) -> dict[str, Any]:
    """One page of runs, newest first, starting at position `offset` of the thread list.

    Unfiltered, the page is the `limit` threads from `offset`. A status or text filter reads
    threads from `offset` until `limit` match or `SCAN` were read; `next_offset` is where the
    next page starts (None at the end of the list). A text filter matches the thread id before
    anything is read, then the target's name.
    """
    saver = service._saver()
    ids = thread_ids(saver) if saver is not None else []
    needle = text.strip().lower()
    rows: list[dict[str, Any]] = []
    read = 0
    position = offset
    while position < len(ids) and len(rows) < limit and read < max(SCAN, limit):
        tid = ids[position]
        position += 1
        read += 1
        target = service.target_of(saver, tid)
        if needle and needle not in tid.lower() and needle not in (target or "").lower():
            continue
        row = run_row(service, tid, target)
        if row is None or (status and row["status"] != status):
            continue
        rows.append(row)
    return {
        "runs": rows,
        "offset": offset,
        "next_offset": position if position < len(ids) else None,
        "read": read,
        "limit": limit,
        "more": position < len(ids),
        "total": len(ids),
        "store": service.store,
        "targets": list(service.targets),
        "statuses": list(STATUSES),
    }


STATUSES = ("running", "done", "failed", "interrupted", "stopped", "crashed", "unreadable")


def settled_info(service: Service, thread_id: str, target: str | None) -> RunInfo | None:
    """`run_info` of the thread, made exact: `crashed` or `stopped` when unfinished and no live
    process holds it, `running` while another live process holds it (even on a finished
    checkpoint: it was started again there)."""
    if target is None:
        return None
    compiled = service.compiled(target)
    graph = compiled.graph
    names = [a.name for a in compiled.agent.walk()]
    try:
        info = run_info(graph, thread_id, agents=names)
    except Exception as exc:  # noqa: BLE001 - one bad thread must not hide the others
        return RunInfo(thread_id, "unreadable", None, -1, "", None, error=str(exc))
    if info is None:
        return None
    live = service.live.get(thread_id)
    if live is not None and not live.done:
        return info  # this server runs it
    leases = lease_store(service.checkpointer, graph.checkpointer)
    if info.status == "running":
        return settle(info, leases, stopped=is_marked(graph.checkpointer, thread_id))
    held = owner_of(service, thread_id)
    if held is not None:
        return replace(info, status="running", hint=f"running in {owner_text(held)}")
    return settle(info, leases)


def owner_of(service: Service, thread_id: str) -> dict[str, Any] | None:
    """`{host, pid, text}` of the live process holding the thread's lease, when not this one."""
    saver = service._saver()
    if saver is None:
        return None
    holder = lease_store(service.checkpointer, saver).holder(thread_id)
    if holder is None or not holder.alive():
        return None
    if holder.host == HOST and holder.pid == os.getpid():
        return None  # this server runs it (its own runs are in `service.live`)
    held = {"host": holder.host, "pid": holder.pid}
    return {**held, "text": owner_text(held)}


def owner_text(held: dict[str, Any]) -> str:
    """`pid 123 on host web-1`."""
    return f"pid {held['pid']} on host {held['host']}"


def run_row(service: Service, thread_id: str, target: str | None) -> dict[str, Any] | None:
    """The runs-page row of a thread: status, last agent, started, duration, calls, tokens."""
    if target is None:
        return {
            "thread_id": thread_id,
            "target": None,
            "status": "unreadable",
            "error": "started by a target not loaded here: pass it to graphflow ui",
        }
    info = settled_info(service, thread_id, target)
    if info is None:
        return None
    row: dict[str, Any] = {
        "thread_id": thread_id,
        "target": target,
        "status": info.status,
        "agent": info.agent,
        "step": info.step,
        "updated_at": info.updated_at,
        "checkpoint_id": info.checkpoint_id,
        "error": info.error,
        "hint": info.hint,
        "owner": owner_of(service, thread_id) if info.status == "running" else None,
        "started_at": None,
        "duration_s": None,
        "model_calls": None,
        "tool_calls": None,
        "tokens": None,
    }
    if info.status == "unreadable":
        return row
    compiled = service.compiled(target)
    try:
        totals = run_totals(compiled.agent, compiled.graph.checkpointer, thread_id)
    except Exception as exc:  # noqa: BLE001 - the row is still shown, without its figures
        row["error"] = row["error"] or f"cannot count: {exc}"
        return row
    row.update(
        started_at=totals.started_at,
        model_calls=totals.model_calls,
        tool_calls=totals.tool_calls,
        tokens=totals.tokens,
        duration_s=_seconds(
            totals.started_at, None if info.status == "running" else info.updated_at
        ),
    )
    return row


def _seconds(start: str | None, end: str | None) -> float | None:
    """Seconds from `start` to `end` (ISO 8601; `end` None: now)."""
    if not start:
        return None
    try:
        begin = datetime.fromisoformat(start)
        finish = datetime.fromisoformat(end) if end else datetime.now(begin.tzinfo)
    except ValueError:
        return None
    return round(max((finish - begin).total_seconds(), 0.0), 3)


def refusal(service: Service, thread_id: str, doing: str) -> str | None:
    """Why this server must not `doing` (`run` or `stop`) a thread another live process holds
    (one run per thread), or None when no other process holds it."""
    held = owner_of(service, thread_id)
    if held is None:
        return None
    if doing == "stop":
        return (
            f"thread {thread_id!r} is running in {held['text']}, not in this server: stop it "
            f"there (Ctrl-C in its terminal, or kill {held['pid']} on {held['host']})"
        )
    return (
        f"thread {thread_id!r} is running in {held['text']} (it holds the thread's lease): one "
        "run per thread at a time — wait until it ends, or start a new thread"
    )
