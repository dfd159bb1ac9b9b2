"""The stop mark: a run stopped on purpose (Ctrl-C, SIGTERM) says so in its store.

One pending write on the run's newest root checkpoint. No LangGraph task has its id, so a resume
ignores it, and the next checkpoint the resumed run writes no longer carries it. An unfinished run
whose process is gone is then `stopped` when marked, `crashed` when not.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

__all__ = ("STOP_CHANNEL", "STOP_TASK", "is_marked", "mark_stopped", "stopped_mark")

STOP_TASK = "graphflow-stopped"
"""Task id of the stop mark."""
STOP_CHANNEL = "graphflow:stopped"


def mark_stopped(saver: Any, thread_id: str) -> bool:
    """Mark the run of `thread_id` as stopped on purpose; whether there was a run to mark."""
    found = saver.get_tuple({"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}})
    if found is None:
        return False
    saver.put_writes(found.config, [(STOP_CHANNEL, {"at": time.time()})], STOP_TASK)
    return True


def stopped_mark(pending_writes: Any) -> bool:
    """Whether a checkpoint's pending writes hold the stop mark."""
    return any(w[0] == STOP_TASK and w[1] == STOP_CHANNEL for w in pending_writes or ())


def is_marked(saver: Any, thread_id: str) -> bool:
    """Whether the newest root checkpoint of `thread_id` holds the stop mark."""
    found = saver.get_tuple({"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}})
    return found is not None and stopped_mark(found.pending_writes)


def cancelled(error: Any) -> bool:
    """Whether a task's recorded error is a cancellation: the run was stopped, it did not fail.

    LangGraph records a task cancelled under an async run (Ctrl-C of a batch, a stop in the UI)
    as the task's error; a resume runs the task again, as for any unfinished step.
    """
    if isinstance(error, asyncio.CancelledError):
        return True
    return isinstance(error, str) and error.startswith("CancelledError")
