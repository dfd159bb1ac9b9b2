"""Parallel tool calls, explicit over implicit: safe calls overlap, the others never do."""

from __future__ import annotations

import asyncio
import threading
import time
from collections import Counter

import pytest
from langchain_core.messages import ToolMessage
from langchain_core.tools import StructuredTool, tool

from graphflow import ReactAgent
from graphflow.exceptions import ToolError
from graphflow.testing import ScriptedChatModel, tool_calls
from graphflow.tools import ToolPolicy


class Flight:
    """Counts calls in flight and records which calls overlapped."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.now = 0
        self.peak = 0
        self.log: list[tuple[str, str]] = []

    def enter(self, name: str) -> None:
        with self.lock:
            self.now += 1
            self.peak = max(self.peak, self.now)
            self.log.append(("start", name))

    def leave(self, name: str) -> None:
        with self.lock:
            self.now -= 1
            self.log.append(("end", name))


def _slow_tools(flight: Flight, *, fail: str | None = None):
    def make(name: str):
        def work(x: int) -> str:
            flight.enter(f"{name}{x}")
            try:
                time.sleep(0.3)
                if name == fail:
                    raise PermissionError(f"{name} refused")
                return f"{name} {x}"
            finally:
                flight.leave(f"{name}{x}")

        return StructuredTool.from_function(work, name=name, description=f"{name} tool")

    return make


def _results(result):
    return [(m.content, m.status) for m in result["messages"] if isinstance(m, ToolMessage)]


def test_four_parallel_safe_tools_take_the_time_of_one_beside_a_failing_call(run_mode):
    flight = Flight()
    make = _slow_tools(flight, fail="bad")
    names = ["weather", "news", "stocks", "bad", "traffic"]  # four tools × 0.3 s, one fails
    turn = tool_calls(*[(name, {"x": i}) for i, name in enumerate(names)])
    model = ScriptedChatModel(replies=[turn, "all back"])
    agent = ReactAgent(
        name="fan",
        model=model,
        tools=[make(name) for name in names],
        output_key="out",
        default_tool_policy=ToolPolicy(parallel_safe=True),
    )
    agent.compile()  # the build is not what is timed
    started = time.monotonic()
    result = run_mode.invoke(agent, "go")
    wall = time.monotonic() - started
    print(f"\n[{run_mode}] 4 parallel-safe tools x 0.3 s + 1 failing call: {wall:.2f} s wall")
    assert flight.peak == 5  # all five at once (one after another would peak at 1)
    assert [kind for kind, _ in flight.log][:5] == ["start"] * 5
    contents = _results(result)
    assert [c for c, _ in contents] == [
        "weather 0",
        "news 1",
        "stocks 2",
        contents[3][0],
        "traffic 4",
    ]
    assert [s for _, s in contents] == ["success"] * 3 + ["error", "success"]
    assert "[PERMISSION_DENIED]" in contents[3][0] and "bad refused" in contents[3][0]
    assert [m.tool_call_id for m in result["messages"] if isinstance(m, ToolMessage)] == [
        c["id"] for c in turn.tool_calls
    ]
    assert model.calls == 2  # the model saw all five results at once
    assert result["out"] == "all back"


def test_two_tools_not_marked_parallel_safe_never_overlap(run_mode):
    flight = Flight()
    make = _slow_tools(flight)
    turn = tool_calls(("first", {"x": 1}), ("second", {"x": 2}))
    model = ScriptedChatModel(replies=[turn, "done"])
    agent = ReactAgent(name="seq", model=model, tools=[make("first"), make("second")])
    result = run_mode.invoke(agent, "go")
    assert flight.peak == 1
    assert flight.log == [
        ("start", "first1"),
        ("end", "first1"),
        ("start", "second2"),
        ("end", "second2"),
    ]
    assert [c for c, _ in _results(result)] == ["first 1", "second 2"]
    assert model.calls == 2  # the model saw both results at once


def test_mixed_turns_run_in_batches_in_call_order(run_mode):
    flight = Flight()
    make = _slow_tools(flight)
    read, write = make("read"), make("write")
    read.metadata = {"parallel_safe": True}  # a tool may mark itself
    turn = tool_calls(
        ("read", {"x": 1}), ("read", {"x": 2}), ("write", {"x": 3}), ("read", {"x": 4})
    )
    model = ScriptedChatModel(replies=[turn, "done"])
    result = run_mode.invoke(ReactAgent(name="mix", model=model, tools=[read, write]), "go")
    starts = [n for kind, n in flight.log if kind == "start"]
    assert set(starts[:2]) == {"read1", "read2"} and starts[2:] == ["write3", "read4"]
    index = flight.log.index
    assert index(("end", "read1")) < index(("start", "write3"))
    assert index(("end", "read2")) < index(("start", "write3"))
    assert index(("end", "write3")) < index(("start", "read4"))
    assert [c for c, _ in _results(result)] == ["read 1", "read 2", "write 3", "read 4"]


def test_an_unknown_error_in_a_batch_keeps_the_others_and_resume_reruns_only_it(run_mode):
    runs: Counter[str] = Counter()
    broken = {"yes": True}

    @tool
    def step(n: int) -> str:
        """A step."""
        runs[n] += 1
        if n == 2 and broken["yes"]:
            raise RuntimeError("step 2 crashed")
        time.sleep(0.2 if n != 2 else 0)
        return f"step {n}"

    turn = tool_calls(("step", {"n": 1}), ("step", {"n": 2}), ("step", {"n": 3}))
    model = ScriptedChatModel(replies=[turn, "done"])
    agent = ReactAgent(
        name="steps",
        model=model,
        tools=[step],
        output_key="out",
        default_tool_policy=ToolPolicy(parallel_safe=True),
    )
    with pytest.raises(ToolError, match="step 2 crashed"):
        run_mode.invoke(agent, "go", thread_id="batch")
    assert runs == {1: 1, 2: 1, 3: 1}
    broken["yes"] = False
    result = run_mode.resume(agent, "batch")
    assert runs == {1: 1, 2: 2, 3: 1}  # only the failed call ran again
    assert [c for c, _ in _results(result)] == ["step 1", "step 2", "step 3"]
    assert result["out"] == "done"


def test_async_tools_overlap_under_ainvoke():
    flight = Flight()

    async def probe(x: int) -> str:
        """Async probe."""
        flight.enter(str(x))
        await asyncio.sleep(0.2)
        flight.leave(str(x))
        return str(x)

    t = StructuredTool.from_function(
        coroutine=probe, name="probe", metadata={"parallel_safe": True}
    )
    model = ScriptedChatModel(replies=[tool_calls(*[("probe", {"x": i}) for i in range(4)]), "ok"])
    agent = ReactAgent(name="aprobe", model=model, tools=[t])
    result = asyncio.run(agent.ainvoke("go"))
    assert flight.peak == 4
    assert [c for c, _ in _results(result)] == ["0", "1", "2", "3"]
