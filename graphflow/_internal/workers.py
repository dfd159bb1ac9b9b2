"""Daemon worker threads, and a call run on one under a timeout: a stalled call never hangs a run.

Workers. `concurrent.futures` pools are joined when the interpreter exits, so a call that never
returns would keep the process alive. These workers are daemon threads instead, and they are
reused: a call costs a queue hand-off, not a thread start. A call that hangs keeps only its own
worker; a new worker starts whenever every worker is busy, so the pool never limits concurrency.
Each call runs in a copy of the caller's context (LangGraph's config lives in contextvars).

Timeouts (tool calls and model calls alike). A sync call cannot be interrupted: `call_in_worker`
runs it on a worker and, when its time is up, abandons it (the worker finishes in the background,
its result is dropped) and raises the caller's error. An async call is cancelled when its time is
up (`await_with_timeout`); given a `grace`, one that takes longer than that to honour the cancel
is abandoned the same way, without one the caller waits for the cancel to be honoured. Either
way a `TimeoutError` the call raised itself stays the call's own.

`run_coroutine` runs a coroutine to its end from sync code, even under a running event loop.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import queue
import threading
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

__all__ = ("await_with_timeout", "call_in_worker", "run_coroutine", "submit")

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


def call_in_worker(
    fn: Callable[[], T], timeout: float | None, timed_out: Callable[[], BaseException]
) -> T:
    """`fn()` on a worker; `timed_out()` is raised when it has not returned after `timeout` s.

    The call is abandoned then, not stopped (see the module docstring); None waits for it.
    """
    future = submit(fn)
    done, _ = concurrent.futures.wait([future], timeout=timeout)
    if not done:
        future.cancel()  # (still queued: it never starts)
        raise timed_out()
    return future.result()  # what it raised, a TimeoutError of its own included


async def await_with_timeout(
    awaitable: Awaitable[T],
    timeout: float | None,
    timed_out: Callable[[], BaseException],
    *,
    grace: float | None = None,
) -> T:
    """`await awaitable`, cancelled after `timeout` s (None: no limit), then `timed_out()`.

    With `grace`, an awaitable that has not honoured the cancel `grace` s later is abandoned
    (left to finish in the background, its outcome dropped); without, it is waited for.
    """
    if timeout is None:
        return await awaitable
    if grace is None:
        scope = asyncio.timeout(timeout)
        try:
            async with scope:
                return await awaitable
        except TimeoutError:
            if scope.expired():
                raise timed_out() from None
            raise  # the call's own TimeoutError
    task = asyncio.ensure_future(awaitable)
    try:
        done, _ = await asyncio.wait({task}, timeout=timeout)
        if done:
            return task.result()  # what it raised, a TimeoutError of its own included
        task.cancel()
        # a call that takes long to honour the cancel (cleanup in `except CancelledError`) is
        # abandoned after the grace, as a hung sync call's worker is
        done, _ = await asyncio.wait({task}, timeout=grace)
    except asyncio.CancelledError:
        task.cancel()
        raise
    if not done:
        task.add_done_callback(_forget)
    raise timed_out()


def _forget(task: asyncio.Future[Any]) -> None:
    # an abandoned call's outcome: retrieved so asyncio does not log it as never retrieved
    if not task.cancelled():
        task.exception()


def run_coroutine(factory: Callable[[], Awaitable[T]]) -> T:
    """Run the coroutine `factory()` gives to its end from sync code (on a worker's own loop)."""
    coroutine = factory()
    return submit(lambda: asyncio.run(coroutine)).result()  # type: ignore[arg-type]
