"""A model call under a timeout, sync and async: a stalled endpoint fails the step, never hangs it.

Async calls are cancelled by `asyncio.wait_for`. A sync call cannot be interrupted, so it runs on
a daemon worker thread (`graphflow._threads`) and is abandoned when the time is up (the thread
finishes in the background; its result is dropped).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Callable
from typing import Any

from langchain_core.runnables import RunnableConfig

from graphflow._threads import submit
from graphflow.exceptions import ModelTimeoutError

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
    future = submit(lambda: runnable.invoke(input, config))
    done, _ = concurrent.futures.wait([future], timeout=timeout)
    if not done:
        future.cancel()
        raise _timeout_error(timed_out, timeout)
    return future.result()  # (a TimeoutError the model raised itself keeps its message)


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
    scope = asyncio.timeout(timeout)
    try:
        async with scope:
            return await runnable.ainvoke(input, config)
    except TimeoutError:
        if scope.expired():
            raise _timeout_error(timed_out, timeout) from None
        raise  # the model itself raised a timeout: keep its message


def _timeout_error(timed_out: TimeoutFactory | None, timeout: float | None) -> BaseException:
    if timed_out is not None:
        return timed_out()
    return ModelTimeoutError(f"the model call took longer than {timeout} s and was abandoned")


class AbandonedModelCall(ModelTimeoutError):
    """A model call that outlived its agent's `model_timeout` and was abandoned.

    Raised inside the model hooks (so `ModelRetry` can retry it); `model_call_errors` then
    re-raises it with the agent path, the endpoint and the resume command.
    """

    def __init__(self, message: str, *, limit: float | None, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.limit = limit
        """The `model_timeout` it outlived, in seconds."""


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
