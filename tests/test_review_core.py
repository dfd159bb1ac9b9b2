"""Review probes: sibling registry of parallel branches, ReAct final step, routing attempts."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.types import interrupt
from pydantic import BaseModel

from graphflow import (
    FunctionAgent,
    LlmRoutingAgent,
    LoopAgent,
    ParallelAgent,
    ParallelBranchError,
    ReactAgent,
    SequentialAgent,
)
from graphflow.hooks.base import AgentHook, ModelHook
from graphflow.hooks.builtins.limits import ModelCallLimit
from graphflow.strategies import _branch_barrier as _siblings
from graphflow.testing import ScriptedChatModel, tool_call


class _Counted:
    """A branch function: counts its calls; fails on the first call when `fail_once`."""

    def __init__(self, value: str, *, delay: float = 0.0, fail_once: bool = False) -> None:
        self.value = value
        self.delay = delay
        self.fail_once = fail_once
        self.calls = 0

    def __call__(self, state: dict[str, Any]) -> str:
        self.calls += 1
        time.sleep(self.delay)
        if self.fail_once and self.calls == 1:
            raise RuntimeError(f"{self.value} broke")
        return self.value


def _fan(fns: dict[str, _Counted], max_concurrency: int | None = None) -> ParallelAgent:
    return ParallelAgent(
        name="fan",
        sub_agents=[FunctionAgent(name=n, fn=f, output_key=f"{n}_out") for n, f in fns.items()],
        max_concurrency=max_concurrency,
        output_key="merged",
    )


def _run(mode: str, coro_or_fn: Any) -> Any:
    if mode == "async":
        return asyncio.run(asyncio.wait_for(coro_or_fn(), 10))
    box: list[Any] = []

    def target() -> None:
        try:
            box.append(coro_or_fn())
        except BaseException as exc:  # noqa: BLE001 - re-raised in the test thread
            box.append(exc)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(10)
    assert not thread.is_alive(), "deadlock: the run did not finish"
    if isinstance(box[0], BaseException):
        raise box[0]
    return box[0]


def _invoke(mode: str, agent: Any, input: Any, thread_id: str) -> Any:
    if mode == "async":
        return _run(mode, lambda: agent.ainvoke(input, thread_id=thread_id))
    return _run(mode, lambda: agent.invoke(input, thread_id=thread_id))


def _resume(mode: str, agent: Any, thread_id: str, value: Any = None) -> Any:
    if mode == "async":
        return _run(mode, lambda: agent.aresume(thread_id, value))
    return _run(mode, lambda: agent.resume(thread_id, value))


# -- ParallelBranchError.completed names every sibling that finished -----------------------------


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_failing_branch_that_finishes_last_still_reports_finished_siblings(mode: str) -> None:
    # the failing branch was the last to finish: the registry used to drop the group before
    # the branch looked at it, so `completed` was empty and the message said "saved (none)"
    fns = {
        "fa": _Counted("A"),
        "fb": _Counted("B", delay=0.1, fail_once=True),
        "fc": _Counted("C"),
    }
    fan = _fan(fns)
    with pytest.raises(ParallelBranchError) as err:
        _invoke(mode, fan, "go", f"last-{mode}")
    assert err.value.completed == {"fa_out": "A", "fc_out": "C"}
    assert "saved (fa, fc)" in str(err.value)
    out = _resume(mode, fan, f"last-{mode}")
    assert out["merged"] == {"fa_out": "A", "fb_out": "B", "fc_out": "C"}
    assert [f.calls for f in fns.values()] == [1, 2, 1]


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_max_concurrency_one_reports_branches_that_ran_before_the_failure(mode: str) -> None:
    fns = {"fa": _Counted("A"), "fb": _Counted("B", fail_once=True), "fc": _Counted("C")}
    fan = _fan(fns, max_concurrency=1)
    with pytest.raises(ParallelBranchError) as err:
        _invoke(mode, fan, "go", f"mc1-{mode}")
    assert err.value.completed == {"fa_out": "A"}
    out = _resume(mode, fan, f"mc1-{mode}")
    assert out["merged"] == {"fa_out": "A", "fb_out": "B", "fc_out": "C"}
    assert [f.calls for f in fns.values()] == [1, 2, 1]


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_max_concurrency_one_failing_first_branch_no_deadlock_each_branch_once(mode: str) -> None:
    fns = {
        "fa": _Counted("A", fail_once=True),
        "fb": _Counted("B", delay=0.02),
        "fc": _Counted("C"),
    }
    fan = _fan(fns, max_concurrency=1)
    with pytest.raises(ParallelBranchError, match="branch `fa` failed"):
        _invoke(mode, fan, "go", f"mc1-first-{mode}")
    out = _resume(mode, fan, f"mc1-first-{mode}")
    assert out["merged"] == {"fa_out": "A", "fb_out": "B", "fc_out": "C"}
    assert [f.calls for f in fns.values()] == [2, 1, 1]


def test_multi_route_failure_reports_the_route_that_finished() -> None:
    ok = _Counted("X")
    bad = _Counted("Z", delay=0.1, fail_once=True)
    router = LlmRoutingAgent(
        name="router",
        model=ScriptedChatModel(replies=[{"routes": [{"agent": "x"}, {"agent": "z"}]}]),
        multi=True,
        sub_agents=[
            FunctionAgent(name="x", fn=ok, output_key="x_out", description="x"),
            FunctionAgent(name="y", fn=_Counted("Y"), output_key="y_out", description="y"),
            FunctionAgent(name="z", fn=bad, output_key="z_out", description="z"),
        ],
        output_key="res",
    )
    with pytest.raises(ParallelBranchError) as err:
        router.invoke("go", thread_id="multi")
    assert err.value.completed == {"x_out": "X"}
    assert router.resume("multi")["res"] == {"x_out": "X", "z_out": "Z"}
    assert (ok.calls, bad.calls) == (1, 2)


def test_registry_is_empty_after_successful_runs() -> None:
    fns = {f"f{i}": _Counted(str(i)) for i in range(4)}
    before = set(_siblings._groups)
    for mc in (None, 1, 2):
        fan = _fan(fns, max_concurrency=mc)
        fan.invoke("x")
        asyncio.run(fan.ainvoke("x"))
    assert set(_siblings._groups) == before


def test_two_failing_branches_do_not_wait_for_each_other() -> None:
    fns = {
        "fa": _Counted("A", delay=0.03, fail_once=True),
        "fb": _Counted("B", delay=0.03, fail_once=True),
        "fc": _Counted("C"),
    }
    fan = _fan(fns)
    started = time.monotonic()
    with pytest.raises(ParallelBranchError) as err:
        _invoke("sync", fan, "go", "two-fail")
    assert time.monotonic() - started < 2
    assert err.value.completed == {"fc_out": "C"}
    assert fan.resume("two-fail")["merged"] == {"fa_out": "A", "fb_out": "B", "fc_out": "C"}


# -- concurrency across runs -----------------------------------------------------------------------


def _slow_fan() -> ParallelAgent:
    def a(state: dict[str, Any]) -> str:
        if state["input"] == "fail":
            time.sleep(0.02)
            raise RuntimeError("boom")
        time.sleep(1.0)
        return "A"

    def b(state: dict[str, Any]) -> str:
        time.sleep(0.1 if state["input"] == "fail" else 0.8)
        return "B"

    return ParallelAgent(
        name="fan",
        sub_agents=[
            FunctionAgent(name="fa", fn=a, output_key="ka"),
            FunctionAgent(name="fb", fn=b, output_key="kb"),
        ],
        output_key="m",
    )


def test_same_parallel_agent_on_two_threads_with_gather_does_not_mix_groups() -> None:
    fan = _slow_fan()

    async def one(text: str, thread_id: str) -> tuple[float, Any]:
        started = time.monotonic()
        try:
            result: Any = (await fan.ainvoke(text, thread_id=thread_id))["m"]
        except ParallelBranchError as exc:
            result = exc.completed
        return time.monotonic() - started, result

    async def both() -> list[tuple[float, Any]]:
        return await asyncio.gather(one("fail", "g-1"), one("ok", "g-2"))

    (fail_time, failed), (_, ok) = asyncio.run(asyncio.wait_for(both(), 10))
    assert failed == {"kb": "B"}  # not the other run's outputs
    assert fail_time < 0.7  # did not wait for the other run's branches
    assert ok == {"ka": "A", "kb": "B"}


def test_two_os_threads_do_not_mix_groups() -> None:
    fan = _slow_fan()
    results: dict[str, Any] = {}

    def run(text: str, thread_id: str) -> None:
        started = time.monotonic()
        try:
            results[text] = fan.invoke(text, thread_id=thread_id)["m"]
        except ParallelBranchError as exc:
            results[text] = exc.completed
        results[f"{text}_time"] = time.monotonic() - started

    threads = [threading.Thread(target=run, args=a) for a in (("fail", "t-1"), ("ok", "t-2"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert results["fail"] == {"kb": "B"}
    assert results["fail_time"] < 0.7
    assert results["ok"] == {"ka": "A", "kb": "B"}


def test_no_checkpointer_failure_raises_promptly() -> None:
    fan = _fan({"fa": _Counted("A", fail_once=True), "fb": _Counted("B", delay=0.05)})
    with pytest.raises(ParallelBranchError) as err:
        _run("sync", lambda: fan.invoke("go", checkpointer=False))
    assert err.value.completed == {"fb_out": "B"}

    fan = _fan({"fa": _Counted("A", fail_once=True), "fb": _Counted("B", delay=0.05)})
    with pytest.raises(ParallelBranchError):
        _run("async", lambda: fan.ainvoke("go", checkpointer=False))


def test_interrupting_branch_with_failing_sibling_resumes() -> None:
    calls = {"a": 0}

    def ask(state: dict[str, Any]) -> str:
        calls["a"] += 1
        return f"A:{interrupt('approve?')}"

    fns = {"fb": _Counted("B", delay=0.05, fail_once=True), "fc": _Counted("C")}
    fan = ParallelAgent(
        name="fan",
        sub_agents=[
            FunctionAgent(name="fa", fn=ask, output_key="fa_out"),
            *(FunctionAgent(name=n, fn=f, output_key=f"{n}_out") for n, f in fns.items()),
        ],
        output_key="merged",
    )
    with pytest.raises(ParallelBranchError) as err:
        fan.invoke("go", thread_id="intr")
    assert err.value.completed == {"fc_out": "C"}
    out = fan.resume("intr")  # re-runs the failed branch; the interrupt is still pending
    assert out["fb_out"] == "B" and out.get("merged") is None
    assert fan.get_state("intr").interrupts
    out = fan.resume("intr", "yes")
    assert out["merged"] == {"fa_out": "A:yes", "fb_out": "B", "fc_out": "C"}
    assert [f.calls for f in fns.values()] == [2, 1]


# -- ReAct: the model step writes a final answer -------------------------------------------------


class _Out(BaseModel):
    title: str
    n: int


class _Spy(AgentHook):
    def __init__(self) -> None:
        self.seen: list[tuple[Any, Any]] = []

    def after_agent(self, state: dict[str, Any], ctx: Any) -> None:
        self.seen.append((ctx.reason, state.get("out")))


@tool
def ping(x: str) -> str:
    """Ping."""
    return "pong"


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_react_structured_output_written_by_model_step(mode: str) -> None:
    spy = _Spy()
    agent = ReactAgent(
        name="a",
        model=ScriptedChatModel(replies=["not json", '```json\n{"title": "x", "n": 2}\n```']),
        output_schema=_Out,
        output_key="out",
        hooks=[spy],
    )
    out = _invoke(mode, agent, "go", f"schema-{mode}")
    assert out["out"] == _Out(title="x", n=2)
    assert out["agent_status"]["a"] == "completed"
    assert spy.seen == [("completed", _Out(title="x", n=2))]


def test_react_max_iterations_and_call_limit_and_short_circuit() -> None:
    spy = _Spy()
    agent = ReactAgent(
        name="a",
        model=ScriptedChatModel(replies=[tool_call("ping", {"x": "1"})] * 5),
        tools=[ping],
        max_iterations=2,
        output_key="out",
        hooks=[spy],
    )
    out = agent.invoke("go")
    assert "max_iterations=2" in out["out"]
    assert spy.seen[0][0] == "max_iterations"

    agent = ReactAgent(
        name="a",
        model=ScriptedChatModel(replies=[tool_call("ping", {"x": "1"})] * 5),
        tools=[ping],
        output_schema=_Out,
        output_key="out",
        hooks=[ModelCallLimit(run_limit=1)],
    )
    out = agent.invoke("go")
    assert out["out"] is None
    assert "model call limit" in out["messages"][-1].text

    class Cached(ModelHook):
        def before_model(self, request: Any) -> AIMessage:
            return AIMessage(content='{"title": "s", "n": 3}')

    spy = _Spy()
    agent = ReactAgent(
        name="a",
        model=ScriptedChatModel(replies=[]),
        output_schema=_Out,
        output_key="out",
        hooks=[Cached(), spy],
    )
    assert agent.invoke("go")["out"] == _Out(title="s", n=3)
    assert spy.seen == [("completed", _Out(title="s", n=3))]


# -- routing -------------------------------------------------------------------------------------


def test_router_in_loop_resets_attempts_each_pass() -> None:
    replies = iter([{"agent": "zzz"}, {"agent": "x"}] * 3)
    model = ScriptedChatModel(fn=lambda messages, n: next(replies))
    ran: list[str] = []

    def route_fn(name: str) -> Any:
        def fn(state: dict[str, Any]) -> str:
            ran.append(name)
            return name

        return fn

    router = LlmRoutingAgent(
        name="router",
        model=model,
        sub_agents=[
            FunctionAgent(name=n, fn=route_fn(n), output_key=f"{n}_out", description=n)
            for n in ("x", "y")
        ],
        output_key="res",
        max_retries=1,
    )
    out = LoopAgent(name="loop", sub_agents=[router], max_iterations=3).invoke("go")
    assert out["res"] == "x" and ran == ["x", "x", "x"]
    assert model.calls == 6
    # each pass's first attempt carries no feedback from the previous pass
    assert not any("invalid" in m.text for m in model.requests[2])


def test_router_model_error_propagates_and_resumes() -> None:
    model = ScriptedChatModel(replies=[ConnectionError("down"), {"agent": "x"}])
    fn = _Counted("X")
    router = LlmRoutingAgent(
        name="router",
        model=model,
        sub_agents=[
            FunctionAgent(name="x", fn=fn, output_key="x_out", description="x"),
            FunctionAgent(name="y", fn=_Counted("Y"), output_key="y_out", description="y"),
        ],
        output_key="res",
    )
    with pytest.raises(ConnectionError):
        router.invoke("go", thread_id="route-err")
    assert router.resume("route-err")["res"] == "X"
    assert (model.calls, fn.calls) == (2, 1)


def test_messages_stream_namespaces_in_nested_tree() -> None:
    tree = SequentialAgent(
        name="s",
        sub_agents=[
            ParallelAgent(
                name="p",
                sub_agents=[
                    ReactAgent(
                        name="a", model=ScriptedChatModel(replies=["alpha beta"]), output_key="ao"
                    ),
                    ReactAgent(
                        name="b", model=ScriptedChatModel(replies=["gamma delta"]), output_key="bo"
                    ),
                ],
            ),
            ReactAgent(name="c", model=ScriptedChatModel(replies=["eps zeta"]), output_key="co"),
        ],
    )
    text: dict[tuple[str, ...], str] = {}
    for ns, (chunk, _meta) in tree.stream("go", stream_mode="messages"):
        key = tuple(part.split(":")[0] for part in ns)
        text[key] = text.get(key, "") + chunk.text
    assert text == {("p", "a"): "alpha beta", ("p", "b"): "gamma delta", ("c",): "eps zeta"}
