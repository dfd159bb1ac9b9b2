"""Daemon worker threads, reused across calls, for work that may hang (a tool, a model call).

`concurrent.futures` pools are joined when the interpreter exits, so a call that never returns
would keep the process alive. These workers are daemon threads instead, and they are reused: a
call costs a queue hand-off, not a thread start. A call that hangs keeps only its own worker; a
new worker starts whenever every worker is busy, so the pool never limits concurrency.
Each call runs in a copy of the caller's context (LangGraph's config lives in contextvars).
"""

from __future__ import annotations

import concurrent.futures
import contextvars
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ("submit",)

T = TypeVar("T")

_tasks: queue.SimpleQueue[tuple[concurrent.futures.Future[Any], contextvars.Context, Any]] = (
    queue.SimpleQueue()
)
_lock = threading.Lock()
_idle = 0
_started = 0


def _work() -> None:
    global _idle
    while True:
        future, context, fn = _tasks.get()
        if future.set_running_or_notify_cancel():
            try:
                future.set_result(context.run(fn))
            except BaseException as exc:  # noqa: BLE001 - handed to the caller, SystemExit too
                future.set_exception(exc)
        del future, context, fn
        with _lock:
            _idle += 1


def submit(fn: Callable[[], T]) -> concurrent.futures.Future[T]:
    """Run `fn()` on a daemon worker, in a copy of this context; its future."""
    global _idle, _started
    future: concurrent.futures.Future[T] = concurrent.futures.Future()
    with _lock:
        spawn = _idle == 0
        if spawn:
            _started += 1
            number = _started
        else:
            _idle -= 1
    _tasks.put((future, contextvars.copy_context(), fn))
    if spawn:
        threading.Thread(target=_work, name=f"graphflow-worker-{number}", daemon=True).start()
    return future
