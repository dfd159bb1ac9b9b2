"""What a store alone says about a run: its status without the agent tree, and the stop mark.

`run_info` (in `runs.py`) reads a run through its compiled graph. Listing every run of a store
(`graphflow runs`) should not have to import each run's code and build its graph, so this module
reads the checkpoints alone: the newest root checkpoint's pending writes (errors, interrupts, the
stop mark), its `agent_status` (the root agent's entry is written when the run ends) and the
metadata a run records (`graphflow_agent`, the root agent's name).

A `running` result is made exact by `runs.settle` with the store's leases and the stop mark
(`_stop.py`).
"""

from __future__ import annotations

from typing import Any

from graphflow.checkpoint.runs import RunInfo
from graphflow.checkpoint.stop import stopped_mark

__all__ = ("AGENT_KEY", "stored_run_info")

AGENT_KEY = "graphflow_agent"
"""Checkpoint metadata key under which a run records its root agent's name."""
_ERROR, _INTERRUPT = "__error__", "__interrupt__"


def _root(thread_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}


def stored_run_info(saver: Any, thread_id: str) -> tuple[RunInfo, bool] | None:
    """(`RunInfo`, stop mark) of `thread_id` from the checkpoints alone; None when it has none.

    Needs the run's recorded root agent (`AGENT_KEY`) to tell `done` from unfinished: without
    it the status is `running` only when nothing else applies, and a caller that cares reads the
    run through its graph instead (`run_info`). `running` is to be `settle`d (`runs.settle`).
    """
    found = saver.get_tuple(_root(thread_id))
    if found is None:
        return None
    metadata = found.metadata or {}
    values = found.checkpoint.get("channel_values") or {}
    writes = list(found.pending_writes or ())
    errors = [w[2] for w in writes if w[1] == _ERROR]
    interrupts = tuple(getattr(v, "value", v) for w in writes if w[1] == _INTERRUPT for v in w[2])
    statuses = values.get("agent_status") or {}
    root = metadata.get(AGENT_KEY)
    if interrupts:
        status = "interrupted"
    elif errors:
        status = "failed"
    elif statuses.get(root, "running") != "running" and not _due(found.checkpoint):
        status = "done"  # the root agent ended, and no node waits to run
    else:
        status = "running"
    agent = None
    if status != "done":
        agent = _innermost(saver, thread_id) or next(iter(_due(found.checkpoint)), None)
    if agent is None:
        finished = [name for name in statuses if name != root]
        agent = finished[-1] if finished else root
    error = None
    if errors:
        first = errors[0]
        error = (
            f"{type(first).__name__}: {first}" if isinstance(first, BaseException) else str(first)
        )
    info = RunInfo(
        thread_id=thread_id,
        status=status,  # type: ignore[arg-type]
        agent=agent,
        step=int(metadata.get("step", -1)),
        checkpoint_id=str(found.config["configurable"].get("checkpoint_id", "")),
        updated_at=found.checkpoint.get("ts"),
        error=error,
        interrupts=interrupts,
    )
    return info, stopped_mark(writes)


def _innermost(saver: Any, thread_id: str) -> str | None:
    """The agent of the newest checkpoint in any namespace (`outer:id|inner:id` → `inner`)."""
    for found in saver.list({"configurable": {"thread_id": thread_id}}, limit=1):
        namespace = str(found.config["configurable"].get("checkpoint_ns", ""))
        if namespace:
            return namespace.split("|")[-1].split(":")[0]
    return None


def _due(checkpoint: Any) -> list[str]:
    """Root nodes whose edge (`branch:to:NODE`) holds a write they have not run on yet."""
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
