"""The one "call with a timeout on a worker" that tool calls and model calls share.

`graphflow._internal.workers`: a sync call that hangs is abandoned and the caller's error is
raised; a call's own `TimeoutError` stays its own; an async call is cancelled, and with a grace
one that ignores the cancel is abandoned.
"""

from __future__ import annotations

import asyncio
import threading

import pytest

from graphflow._internal.workers import await_with_timeout, call_in_worker, run_coroutine


class Late(Exception):
    pass


def test_a_hung_sync_call_is_abandoned_with_the_callers_error() -> None:
    release = threading.Event()
    finished = threading.Event()

    def hang() -> str:
        release.wait()
        finished.set()
        return "late"

    with pytest.raises(Late):
        call_in_worker(hang, 0.05, Late)
    assert not finished.is_set()  # it was abandoned, not waited for
    release.set()
    assert finished.wait(10)  # its worker goes on in the background


def test_a_calls_own_timeout_error_is_not_a_timeout() -> None:
    def own() -> None:
        raise TimeoutError("the tool's own")

    with pytest.raises(TimeoutError, match="the tool's own"):
        call_in_worker(own, 30, Late)
    assert call_in_worker(lambda: 7, None, Late) == 7


def test_an_async_call_is_cancelled_and_one_that_ignores_the_cancel_is_abandoned() -> None:
    cancelled: list[str] = []

    async def polite() -> None:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.append("polite")
            raise

    async def stubborn(release: asyncio.Event) -> None:
        while not release.is_set():
            try:
                await release.wait()
            except asyncio.CancelledError:
                cancelled.append("stubborn")  # and keeps waiting

    async def main() -> None:
        with pytest.raises(Late):
            await await_with_timeout(polite(), 0.05, Late)
        release = asyncio.Event()
        with pytest.raises(Late):
            await await_with_timeout(stubborn(release), 0.05, Late, grace=0.05)
        release.set()
        with pytest.raises(TimeoutError, match="own"):
            await await_with_timeout(_raises_own(), 30, Late)

    asyncio.run(main())
    assert cancelled == ["polite", "stubborn"]


async def _raises_own() -> None:
    raise TimeoutError("own")


def test_a_coroutine_runs_to_its_end_from_sync_code_under_a_running_loop() -> None:
    async def answer() -> int:
        await asyncio.sleep(0)
        return 42

    async def inside_a_loop() -> int:
        return run_coroutine(answer)  # a loop runs in this thread: the worker has its own

    assert asyncio.run(inside_a_loop()) == 42
