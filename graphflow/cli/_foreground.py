"""A run in the foreground of a terminal that Ctrl-C (or SIGTERM) stops cleanly, at any moment.

The run's events are produced by a daemon thread, so an interrupt reaches the main thread at once
(unwinding through LangGraph's executor would first wait for the model or tool calls in flight).
The process then leaves with `os._exit`: a call still running in a worker thread is abandoned —
its run's checkpoints are written step by step, so nothing is lost that a resume cannot redo —
and neither LangGraph (finding its executor shut down) nor the interpreter (joining threads)
prints a traceback or an "Exception ignored" on the way out.
"""

from __future__ import annotations

import os
import queue
import signal
import sys
import threading
from collections.abc import Iterable, Iterator
from typing import Any, NoReturn, TypeVar

__all__ = (
    "exit_now",
    "follow",
    "mark_all_stopped",
    "mark_stopped",
    "mute_interrupts",
    "stop_on_signals",
)

T = TypeVar("T")
_END = object()
workers: list[threading.Thread] = []
"""The threads that produce runs' events (the console script leaves without waiting for them)."""


def stop_on_signals() -> None:
    """Make SIGINT and SIGTERM stop the program as Ctrl-C does (a `KeyboardInterrupt`).

    SIGINT too: a program started in the background by a non-interactive shell inherits it
    ignored, and would then run on after `kill -INT`.
    """
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, signal.default_int_handler)


def mute_interrupts() -> None:
    """Ignore further Ctrl-C and SIGTERM: the program is already stopping."""
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, signal.SIG_IGN)


def follow(events: Iterator[T]) -> Iterator[T]:
    """`events`, produced by a daemon thread; an error of the producer is raised here."""
    box: queue.Queue[Any] = queue.Queue()

    def produce() -> None:
        try:
            for event in events:
                box.put(event)
        except BaseException as exc:  # noqa: BLE001 - handed to the main thread
            box.put(exc)
        box.put(_END)

    worker = threading.Thread(target=produce, name="graphflow-run", daemon=True)
    workers.append(worker)
    worker.start()
    while True:
        try:
            item = box.get(timeout=0.2)
        except queue.Empty:
            continue
        if item is _END:
            return
        if isinstance(item, BaseException):
            raise item
        yield item


def mark_stopped(checkpointer: Any, thread_id: str, *, timeout: float = 3.0) -> bool:
    """Record in the store that the run of `thread_id` was stopped on purpose (not crashed).

    `checkpointer` is a store URL or a saver. Gives up after `timeout` seconds (a store that
    does not answer must not keep a stopping program alive); whether the mark was written.
    """
    return mark_all_stopped(checkpointer, [thread_id], timeout=timeout) == 1


def mark_all_stopped(checkpointer: Any, thread_ids: Iterable[str], *, timeout: float = 3.0) -> int:
    """`mark_stopped` for several threads, on one connection, `timeout` for them all.

    How many were marked: a thread with no checkpoint yet has nothing to mark, and one whose run
    finished (just before the stop) is left as it is.
    """
    threads = list(thread_ids)
    marked: list[str] = []

    def write() -> None:
        from graphflow.checkpoint.stop import mark_stopped as mark
        from graphflow.checkpoint.stored import stored_run_info
        from graphflow.checkpoint.urls import resolve_checkpointer

        saver = (
            resolve_checkpointer(checkpointer) if isinstance(checkpointer, str) else checkpointer
        )
        for thread_id in threads:
            found = stored_run_info(saver, thread_id)
            if found is not None and found[0].status == "done":
                continue
            if mark(saver, thread_id):
                marked.append(thread_id)

    if not threads or (isinstance(checkpointer, str) and checkpointer.startswith("memory")):
        return 0
    worker = threading.Thread(target=_quietly, args=(write,), daemon=True)
    worker.start()
    worker.join(timeout)
    return len(marked)


def _quietly(fn: Any) -> None:
    try:
        fn()
    except Exception:  # noqa: BLE001 - a mark that cannot be written leaves the run `crashed`
        pass


def exit_now(code: int) -> NoReturn:
    """Flush the output and leave the process with `code`, without waiting for worker threads."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe
            pass
    os._exit(code)
