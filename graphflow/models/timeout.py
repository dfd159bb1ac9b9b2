"""A model call under a timeout, sync and async: a stalled endpoint fails the step, never hangs it.

The worker and the timeout are `graphflow._internal.workers`' (shared with tool calls): an async
call is cancelled when its time is up; a sync call cannot be interrupted, so it runs on a daemon
worker and is abandoned (the worker finishes in the background; its result is dropped).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langchain_core.runnables import RunnableConfig

from graphflow._internal.workers import await_with_timeout, call_in_worker
from graphflow.exceptions import AbandonedModelCall, ModelTimeoutError

__all__ = ("AbandonedModelCall", "acall_with_timeout", "call_with_timeout", "model_timeout_error")

TimeoutFactory = Callable[[], BaseException]


def call_with_timeout(
    runnable: Any,
    input: Any,
    config: RunnableConfig | None,
    timeout: float | None,
    timed_out: TimeoutFactory | None = None,
) -> Any:
    """`runnable.invoke(input, config)`, raising `timed_out()` after `timeout` seconds."""
    if timeout is None:
        return runnable.invoke(input, config)
    return call_in_worker(
        lambda: runnable.invoke(input, config), timeout, timed_out or _timed_out(timeout)
    )


async def acall_with_timeout(
    runnable: Any,
    input: Any,
    config: RunnableConfig | None,
    timeout: float | None,
    timed_out: TimeoutFactory | None = None,
) -> Any:
    """`await runnable.ainvoke(input, config)`, raising `timed_out()` after `timeout` seconds."""
    if timeout is None:
        return await runnable.ainvoke(input, config)
    return await await_with_timeout(
        runnable.ainvoke(input, config), timeout, timed_out or _timed_out(timeout)
    )


def _timed_out(timeout: float) -> TimeoutFactory:
    return lambda: ModelTimeoutError(
        f"the model call took longer than {timeout} s and was abandoned"
    )


def model_timeout_error(agent: str, model: Any, timeout: float | None) -> ModelTimeoutError:
    """The error for a model call of `agent` that outlived its `model_timeout`."""
    name = getattr(model, "model_name", None) or type(model).__name__
    return AbandonedModelCall(
        f"Agent `{agent}`: the model call took longer than model_timeout={timeout} s and was "
        "abandoned; the run can be resumed (agent.resume(thread_id)). Raise model_timeout, or "
        "add ModelRetry to retry it",
        agent=agent,
        model=str(name),
        limit=timeout,
    )
