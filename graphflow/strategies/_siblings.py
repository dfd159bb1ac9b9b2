"""Concurrent branches of one superstep: a failing branch waits for its running siblings.

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


@dataclass(kw_only=True)
class _Entry:
    name: str
    done: threading.Event = field(default_factory=threading.Event)
    outputs: dict[str, Any] | None = None


_lock = threading.Lock()
_groups: dict[tuple[Any, ...], dict[str, _Entry]] = {}


def group_key(config: RunnableConfig) -> tuple[Any, ...]:
    """Tasks of one superstep of one graph invocation share this key."""
    configurable = config.get("configurable") or {}
    ns = str(configurable.get("checkpoint_ns") or "")
    parent = ns.rsplit("|", 1)[0] if "|" in ns else ""
    step = (config.get("metadata") or {}).get("langgraph_step")
    return (configurable.get("thread_id"), parent, step)


def enter(key: tuple[Any, ...], name: str) -> _Entry:
    entry = _Entry(name=name)
    with _lock:
        _groups.setdefault(key, {})[name] = entry
    return entry


def finish(key: tuple[Any, ...], entry: _Entry, outputs: dict[str, Any] | None) -> None:
    entry.outputs = outputs
    entry.done.set()
    with _lock:
        group = _groups.get(key)
        if group is not None and all(e.done.is_set() for e in group.values()):
            del _groups[key]


def _others(key: tuple[Any, ...], entry: _Entry) -> list[_Entry]:
    with _lock:
        return [e for e in (_groups.get(key) or {}).values() if e is not entry]


# a sibling scheduled in the same step may not have started yet when a branch fails fast:
# after the known siblings finish, look again this long for late starters
_SETTLE = 0.02


def wait_for_siblings(key: tuple[Any, ...], entry: _Entry) -> dict[str, dict[str, Any]]:
    """Block until the siblings running in this step have finished; their outputs by name."""
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
