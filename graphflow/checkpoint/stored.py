"""What a store alone says about a run: its status without the agent tree, and the stop mark.

`run_info` (in `runs.py`) reads a run through its compiled graph. Listing every run of a store
(`graphflow runs`) should not have to import each run's code and build its graph, so this module
reads the checkpoints alone: the newest root checkpoint's pending writes (errors, interrupts, the
stop mark), its `agent_status` (the root agent's entry is written when the run ends) and the
metadata a run records (`graphflow_agent`, the root agent's name).

A `running` result is made exact by `runs.settle` with the store's leases and the stop mark
(`_stop.py`).

The checkpoints of a run's inner graphs are read here too: `namespaces` groups a thread's
checkpoints by namespace (one per agent invocation), `written_messages` finds the messages a
graph's own steps wrote (the kinds' `read_run` counts them, the web UI's timeline sums their
tokens with `written_usage`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from graphflow.checkpoint.runs import RunInfo, due_nodes
from graphflow.checkpoint.stop import cancelled, stopped_mark

# graphflow.state's MESSAGES and MODEL_CALLS; not imported: it loads LangChain (`graphflow runs`)
_MESSAGES = "messages"
_MODEL_CALLS = "gf_model_calls"

__all__ = (
    "AGENT_KEY",
    "namespaces",
    "stored_run_info",
    "written_messages",
    "written_usage",
)

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
    errors = [w[2] for w in writes if w[1] == _ERROR and not cancelled(w[2])]
    interrupts = tuple(getattr(v, "value", v) for w in writes if w[1] == _INTERRUPT for v in w[2])
    statuses = values.get("agent_status") or {}
    root = metadata.get(AGENT_KEY)
    if interrupts:
        status = "interrupted"
    elif errors:
        status = "failed"
    elif statuses.get(root, "running") != "running" and not due_nodes(found.checkpoint):
        status = "done"  # the root agent ended, and no node waits to run
    else:
        status = "running"
    agent = None
    if status != "done":
        agent = _innermost(saver, thread_id) or next(iter(due_nodes(found.checkpoint)), None)
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


def namespaces(saver: Any, thread_id: str) -> dict[str, list[Any]]:
    """Checkpoint namespace -> its `CheckpointTuple`s in checkpoint order, for one thread.

    `""` is the root graph; a sub-agent's namespace is `<parent segments>|<agent name>:<task
    id>`, one per invocation (a loop's body gets one per pass). The run overlay and the web
    UI's timeline read a run's invocations from this.
    """
    by_ns: dict[str, list[Any]] = {}
    for tup in saver.list({"configurable": {"thread_id": thread_id}}):
        ns = str(tup.config["configurable"].get("checkpoint_ns", ""))
        by_ns.setdefault(ns, []).append(tup)
    for tuples in by_ns.values():
        tuples.sort(key=lambda t: str(t.config["configurable"].get("checkpoint_id", "")))
    return by_ns


def written_messages(tuples: Iterable[Any]) -> Iterator[Any]:
    """Each message the graphs' own steps wrote to the conversation, once, in checkpoint order.

    Read from the steps' writes (so it holds however the conversation channel is stored); the
    writes saved with an `input` checkpoint are what a graph was handed (earlier agents'
    answers), not its own — except the reply of a first call made in the parent's node
    (`_started_after_call`).
    """
    seen: set[str] = set()
    for tup in tuples:
        if (tup.metadata or {}).get("source") == "input":
            first = _started_after_call(tup.pending_writes or ())
            key = str(getattr(first, "id", None) or id(first))
            if first is not None and key not in seen:
                seen.add(key)
                yield first
            continue
        for _task, channel, value in tup.pending_writes or ():
            if channel != _MESSAGES:
                continue
            for message in value if isinstance(value, list) else [value]:
                key = str(getattr(message, "id", None) or id(message))
                if key not in seen:
                    seen.add(key)
                    yield message


def _started_after_call(writes: Any) -> Any:
    """The reply of a call made before the agent's graph started, from its input's writes.

    A ReAct sub-agent makes its first call in its parent's node and, when that reply does not end
    it, goes on in its graph from the conversation so far, started at `MODEL_CALLS` 1: the reply
    is then the last AI message of its input, not a write of its own steps.
    """
    if not any(channel == _MODEL_CALLS and value for _task, channel, value in writes):
        return None
    for _task, channel, value in writes:
        if channel == _MESSAGES:
            replies = [m for m in value if getattr(m, "type", None) == "ai"]
            return replies[-1] if replies else None
    return None


def written_usage(tuples: Iterable[Any]) -> tuple[int, int, int]:
    """(input tokens, output tokens, replies without usage) of the AI messages steps wrote.

    Sums the `usage_metadata` the model reported on each reply `written_messages` finds;
    replies without it are counted apart (their tokens are unknown here).
    """
    sent = produced = unknown = 0
    for message in written_messages(tuples):
        if getattr(message, "type", None) != "ai":
            continue
        usage = getattr(message, "usage_metadata", None)
        if usage:
            sent += int(usage.get("input_tokens") or 0)
            produced += int(usage.get("output_tokens") or 0)
        else:
            unknown += 1
    return sent, produced, unknown
