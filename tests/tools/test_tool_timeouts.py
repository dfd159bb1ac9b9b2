"""A hanging sync tool and a hanging async tool both time out; the run goes on."""

from __future__ import annotations

import asyncio
import threading
import time

from langchain_core.messages import ToolMessage
from langchain_core.tools import StructuredTool

from graphflow import ReactAgent
from graphflow.testing import ScriptedChatModel, tool_call
from graphflow.tools import ToolPolicy, tool_result

FAST = ToolPolicy(timeout=0.3, max_retries=1, backoff=0)


def _agent(tool):
    model = ScriptedChatModel(replies=[tool_call(tool.name, {"q": "x"}), "moved on"])
    agent = ReactAgent(
        name="waiter", model=model, tools=[tool], output_key="out", default_tool_policy=FAST
    )
    return agent, model


def _check(model, result, name):
    error = model.requests[1][-1]
    assert isinstance(error, ToolMessage) and error.status == "error"
    assert error.content.startswith(f"Error [TIMEOUT] in tool `{name}`: no answer within 0.3 s")
    assert tool_result(error).attempts == 2  # one retry
    assert result["out"] == "moved on"


def test_a_hanging_sync_tool_times_out_in_its_worker_thread(run_mode):
    release = threading.Event()
    started = []

    def hang(q: str) -> str:
        """Hangs until released."""
        started.append(threading.current_thread())
        release.wait(30)
        return "late"

    agent, model = _agent(StructuredTool.from_function(hang))
    try:
        result = run_mode.invoke(agent, "go")
    finally:
        release.set()  # let the abandoned worker threads end
    _check(model, result, "hang")
    # each attempt ran on its own daemon worker (a hung one never blocks the process's exit)
    assert len(started) == 2 and started[0] is not started[1]
    assert all(t.daemon and t.name.startswith("graphflow-worker-") for t in started)


def test_a_hanging_async_tool_times_out_and_is_cancelled(run_mode):
    cancelled = []

    async def ahang(q: str) -> str:
        """Hangs forever."""
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.append(q)
            raise
        return "late"

    agent, model = _agent(StructuredTool.from_function(coroutine=ahang, name="ahang"))
    result = run_mode.invoke(agent, "go")
    _check(model, result, "ahang")
    assert cancelled == ["x", "x"]  # under invoke too: its own loop in a worker thread


def test_an_async_tool_slow_to_honour_its_cancel_is_abandoned_after_a_grace_second(run_mode):
    seen = {}

    async def stubborn(q: str) -> str:
        """Cleans up for a long time when cancelled."""
        seen["started"] = time.monotonic()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            await asyncio.sleep(4)  # a slow cleanup
            raise
        return "late"

    def reply(messages, n):
        if n == 0:
            return tool_call("stubborn", {"q": "x"})
        seen["answered"] = time.monotonic()
        return "moved on"

    tool = StructuredTool.from_function(coroutine=stubborn, name="stubborn")
    policy = ToolPolicy(timeout=0.3, max_retries=0)
    agent = ReactAgent(
        name="waiter",
        model=ScriptedChatModel(fn=reply),
        tools=[tool],
        output_key="out",
        default_tool_policy=policy,
    )
    result = run_mode.invoke(agent, "go")
    assert result["out"] == "moved on"
    error = [m for m in result["messages"] if isinstance(m, ToolMessage)][0]
    assert error.content.startswith("Error [TIMEOUT] in tool `stubborn`: no answer within 0.3 s")
    # the model had the error after the timeout and at most the 1 s grace, not the 4 s cleanup
    assert seen["answered"] - seen["started"] < 2.5
