"""The parallel failure barrier: a failing branch waits for its running siblings, then raises.

LangGraph cancels the other tasks of a superstep when one fails (asyncio tasks are cancelled
mid-call). A parallel branch that fails therefore first waits until the siblings that are
already running have finished — their results are then saved as the step's pending writes —
and only then raises. Siblings that had not started yet (bounded by `max_concurrency`) have done
nothing, so cancelling them loses nothing. On resume LangGraph re-runs only the failed task, with
the same task id, so the failed branch's subgraph continues from its own last checkpoint.
"""

from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from langchain_core.runnables import RunnableConfig

__all__ = (
    "await_siblings",
    "enter",
    "finish",
    "group_key",
    "sibling_failed",
    "wait_for_siblings",
)


@dataclass(kw_only=True)
class _Entry:
    name: str
    done: threading.Event = field(default_factory=threading.Event)
    outputs: dict[str, Any] | None = None


@dataclass(kw_only=True)
class _Group:
    expected: int
    """How many branches this step runs (a group is complete when that many have finished)."""
    entries: dict[str, _Entry] = field(default_factory=dict)
    waiting: int = 0
    """Failed branches still waiting for their siblings (they read `entries`)."""
    failed: str | None = None
    """The first branch that failed: a sibling starting after that must not do its work (it
    could not be cancelled once started, and a resume would run it again)."""
    touched: float = field(default_factory=time.monotonic)


_lock = threading.Lock()
_groups: dict[tuple[Any, ...], _Group] = {}

# A group is dropped as soon as all `expected` branches have finished. One that never completes
# (a failed step: LangGraph cancels the branches that had not started; a resumed step re-runs
# only the failed branch) is dropped once it has been idle this long.
_KEEP = 60.0


def group_key(config: RunnableConfig) -> tuple[Any, ...]:
    """Tasks of one superstep of one graph invocation share this key.

    A resumed run re-runs a failed task under the same thread, namespace and step, so the key
    also holds the identity of the running loop's channels (shared by the tasks of one run of a
    graph, new for every run), and a resume never joins the group of the run that failed.
    """
    configurable = config.get("configurable") or {}
    ns = str(configurable.get("checkpoint_ns") or "")
    parent = ns.rsplit("|", 1)[0] if "|" in ns else ""
    step = (config.get("metadata") or {}).get("langgraph_step")
    args: tuple[Any, ...] = getattr(configurable.get("__pregel_read"), "args", None) or ()
    run = id(args[1]) if len(args) > 1 else None
    return (configurable.get("thread_id"), parent, step, run)


def sibling_failed(key: tuple[Any, ...]) -> str | None:
    """The name of a branch of this step that has failed, if any (late starters must not run)."""
    with _lock:
        group = _groups.get(key)
        if group is None or group.failed is None:
            return None
        return group.failed


def _drop_if_complete(key: tuple[Any, ...], group: _Group) -> None:
    # (caller holds _lock) finished entries stay until every branch of the step has finished: a
    # branch that fails later must still see the results of siblings that finished before it
    # started (max_concurrency) or before it failed
    if (
        group.waiting == 0
        and len(group.entries) >= group.expected
        and all(e.done.is_set() for e in group.entries.values())
        and _groups.get(key) is group
    ):
        del _groups[key]


def _sweep(now: float) -> None:
    # (caller holds _lock)
    stale = [
        k
        for k, g in _groups.items()
        if g.waiting == 0
        and now - g.touched > _KEEP
        and all(e.done.is_set() for e in g.entries.values())
    ]
    for k in stale:
        del _groups[k]


def enter(key: tuple[Any, ...], name: str, expected: int = 0) -> _Entry:
    """Register a running branch; `expected` is how many branches the step runs."""
    entry = _Entry(name=name)
    now = time.monotonic()
    with _lock:
        _sweep(now)
        group = _groups.get(key)
        if group is None:
            group = _groups[key] = _Group(expected=expected)
        group.entries[name] = entry
        group.touched = now
    return entry


def finish(key: tuple[Any, ...], entry: _Entry, outputs: dict[str, Any] | None) -> None:
    entry.outputs = outputs
    entry.done.set()
    with _lock:
        group = _groups.get(key)
        if group is not None:
            group.touched = time.monotonic()
            _drop_if_complete(key, group)


def _fail(key: tuple[Any, ...], entry: _Entry) -> None:
    """Mark a failed branch done (siblings never wait for it) and as waiting for its siblings."""
    entry.outputs = None
    entry.done.set()
    with _lock:
        group = _groups.get(key)
        if group is not None:
            group.failed = group.failed or entry.name
            group.waiting += 1
            group.touched = time.monotonic()


def _release(key: tuple[Any, ...]) -> None:
    with _lock:
        group = _groups.get(key)
        if group is not None:
            group.waiting -= 1
            group.touched = time.monotonic()
            _drop_if_complete(key, group)


def _others(key: tuple[Any, ...], entry: _Entry) -> list[_Entry]:
    with _lock:
        group = _groups.get(key)
        return [e for e in (group.entries.values() if group else ()) if e is not entry]


# a sibling scheduled in the same step may not have started yet when a branch fails fast:
# after the known siblings finish, look again this long for late starters
_SETTLE = 0.02


def wait_for_siblings(key: tuple[Any, ...], entry: _Entry) -> dict[str, dict[str, Any]]:
    """`entry` failed: block until the siblings running in this step have finished.

    Returns the outputs of every sibling of this step that finished, by name.
    """
    _fail(key, entry)
    try:
        return _wait(key, entry)
    finally:
        _release(key)


def _wait(key: tuple[Any, ...], entry: _Entry) -> dict[str, dict[str, Any]]:
    seen: dict[str, _Entry] = {}
    while True:
        new = [o for o in _others(key, entry) if o.name not in seen]
        if not new:
            time.sleep(_SETTLE)
            new = [o for o in _others(key, entry) if o.name not in seen]
            if not new:
                break
        for other in new:
            other.done.wait()
            seen[other.name] = other
    return {name: o.outputs for name, o in seen.items() if o.outputs is not None}


async def await_siblings(key: tuple[Any, ...], entry: _Entry) -> dict[str, dict[str, Any]]:
    """Async `wait_for_siblings` (polls, so the event loop keeps running the siblings)."""
    _fail(key, entry)
    try:
        return await _await(key, entry)
    finally:
        _release(key)


async def _await(key: tuple[Any, ...], entry: _Entry) -> dict[str, dict[str, Any]]:
    seen: dict[str, _Entry] = {}
    while True:
        new = [o for o in _others(key, entry) if o.name not in seen]
        if not new:
            await asyncio.sleep(_SETTLE)
            new = [o for o in _others(key, entry) if o.name not in seen]
            if not new:
                break
        while not all(o.done.is_set() for o in new):
            await asyncio.sleep(0.005)
        seen.update((o.name, o) for o in new)
    return {name: o.outputs for name, o in seen.items() if o.outputs is not None}
