"""A failing parallel branch: what the error reports, what is kept, what a resume re-runs.

Also the branch barrier under concurrency (two runs of one agent at once) and `max_concurrency`.
"""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from langgraph.types import interrupt

from graphflow import (
    FunctionAgent,
    LlmRoutingAgent,
    ParallelAgent,
    ParallelBranchError,
    ReactAgent,
    SequentialAgent,
)
from graphflow.strategies import _branch_barrier as _siblings
from graphflow.testing import ScriptedChatModel
from tests.support.helpers import Counted, sqlite_url


def _fan(fns: dict[str, Counted], max_concurrency: int | None = None) -> ParallelAgent:
    return ParallelAgent(
        name="fan",
        sub_agents=[FunctionAgent(name=n, fn=f, output_key=f"{n}_out") for n, f in fns.items()],
        max_concurrency=max_concurrency,
        output_key="merged",
    )


def _within(seconds: float, fn: Any) -> Any:
    """`fn()` on a daemon thread; a run that does not finish in time is a deadlock."""
    box: list[Any] = []

    def target() -> None:
        try:
            box.append(fn())
        except BaseException as exc:  # noqa: BLE001 - re-raised in the test thread
            box.append(exc)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "deadlock: the run did not finish"
    if isinstance(box[0], BaseException):
        raise box[0]
    return box[0]


# -- a failing branch: reported, the others kept, resume re-runs only it -------------------------


class _Flaky:
    """A function that fails on its first call and succeeds afterwards; counts calls."""

    def __init__(self, value: str) -> None:
        self.value = value
        self.calls = 0

    def __call__(self, state: dict[str, Any]) -> str:
        self.calls += 1
        if self.calls == 1:
            raise RuntimeError("disk on fire")
        return self.value


class _Counter:
    def __init__(self, value: str) -> None:
        self.value = value
        self.calls = 0

    def __call__(self, state: dict[str, Any]) -> str:
        self.calls += 1
        return self.value


def _failing_fan() -> tuple[ParallelAgent, ScriptedChatModel, _Flaky, _Counter]:
    model = ScriptedChatModel(fn=lambda m, n: f"react answer {n}")
    flaky = _Flaky("recovered")
    ok = _Counter("fine")
    fan = ParallelAgent(
        name="fan",
        sub_agents=[
            ReactAgent(name="good_react", model=model, output_key="react_out"),
            FunctionAgent(name="broken", fn=flaky, output_key="broken_out"),
            FunctionAgent(name="good_fn", fn=ok, output_key="fn_out"),
        ],
        output_key="merged",
    )
    return fan, model, flaky, ok


def test_failing_function_branch_reported_others_kept_resume_reruns_only_failed() -> None:
    fan, model, flaky, ok = _failing_fan()
    with pytest.raises(ParallelBranchError) as err:
        fan.invoke("go", thread_id="fail-sync")
    exc = err.value
    assert "broken" in str(exc) and "disk on fire" in str(exc)
    assert set(exc.errors) == {"broken"}
    assert exc.completed == {"react_out": "react answer 0", "fn_out": "fine"}
    values = fan.get_state("fail-sync").values
    assert values["react_out"] == "react answer 0"
    assert values["fn_out"] == "fine"
    assert "broken_out" not in values
    assert (model.calls, flaky.calls, ok.calls) == (1, 1, 1)

    result = fan.resume("fail-sync")
    assert (model.calls, flaky.calls, ok.calls) == (1, 2, 1)
    assert result["merged"] == {
        "react_out": "react answer 0",
        "broken_out": "recovered",
        "fn_out": "fine",
    }
    assert result["agent_status"]["fan"] == "completed"


def test_failing_branch_async_and_aresume() -> None:
    fan, model, flaky, ok = _failing_fan()

    async def main() -> dict[str, Any]:
        with pytest.raises(ParallelBranchError, match="broken"):
            await fan.ainvoke("go", thread_id="fail-async")
        values = fan.get_state("fail-async").values
        assert values["react_out"] == "react answer 0" and values["fn_out"] == "fine"
        return await fan.aresume("fail-async")

    result = asyncio.run(main())
    assert (model.calls, flaky.calls, ok.calls) == (1, 2, 1)
    assert result["broken_out"] == "recovered"
    assert result["merged"]["broken_out"] == "recovered"


def test_model_exception_in_branch_then_resume() -> None:
    good_model = ScriptedChatModel(replies=["good"])
    bad_model = ScriptedChatModel(replies=[TimeoutError("model timed out"), "second try"])
    ok = _Counter("fn")
    fan = ParallelAgent(
        name="fan",
        sub_agents=[
            ReactAgent(name="fine", model=good_model, output_key="fine_out"),
            ReactAgent(name="flaky_llm", model=bad_model, output_key="flaky_out"),
            FunctionAgent(name="fnb", fn=ok, output_key="fn_out"),
        ],
        merge="list",
        output_key="merged",
    )
    with pytest.raises(ParallelBranchError) as err:
        fan.invoke("go", thread_id="llm-fail")
    assert "flaky_llm" in str(err.value) and "model timed out" in str(err.value)
    assert err.value.agent == "fan"
    assert fan.get_state("llm-fail").values["fine_out"] == "good"
    result = fan.resume("llm-fail")
    assert (good_model.calls, bad_model.calls, ok.calls) == (1, 2, 1)
    assert result["merged"] == ["good", "second try", "fn"]


def test_failing_branch_nested_in_sequence_resumes_only_that_branch() -> None:
    before = _Counter("pre")
    after = _Counter("post")
    flaky = _Flaky("recovered")
    ok = _Counter("fine")
    seq = SequentialAgent(
        name="seq",
        sub_agents=[
            FunctionAgent(name="pre", fn=before, output_key="pre_out"),
            ParallelAgent(
                name="fan",
                sub_agents=[
                    FunctionAgent(name="broken", fn=flaky, output_key="broken_out"),
                    FunctionAgent(name="good", fn=ok, output_key="good_out"),
                ],
            ),
            FunctionAgent(name="post", fn=after, output_key="post_out"),
        ],
    )
    with pytest.raises(ParallelBranchError, match="broken"):
        seq.invoke("go", thread_id="nested-fail")
    assert seq.get_state("nested-fail").values["pre_out"] == "pre"
    result = seq.resume("nested-fail")
    assert (before.calls, flaky.calls, ok.calls, after.calls) == (1, 2, 1, 1)
    assert result["broken_out"] == "recovered" and result["post_out"] == "post"


def test_parallel_order_survives_a_failed_branch_and_resume() -> None:
    flaky = Counted("late", fail_once=True)
    fan = ParallelAgent(
        name="fan",
        sub_agents=[
            ReactAgent(name="zz", model=ScriptedChatModel(replies=["zz says"]), output_key="zo"),
            FunctionAgent(name="mid", fn=flaky, output_key="mo"),
            ReactAgent(name="aa", model=ScriptedChatModel(replies=["aa says"]), output_key="ao"),
        ],
    )
    with pytest.raises(ParallelBranchError, match="mid"):
        fan.invoke("go", thread_id="order-resume")
    result = fan.resume("order-resume")
    assert [m.content for m in result["messages"]] == ["go", "zz says", "aa says"]


def test_nested_parallel_failure_names_inner_branch_and_resume_reruns_only_it(
    tmp_path: Path, run_mode
) -> None:
    url = sqlite_url(tmp_path)
    top, broken, fine = Counted("a"), Counted("b", fail_once=True), Counted("c")
    model = ScriptedChatModel(fn=lambda m, n: f"inner react {n}")
    outer = ParallelAgent(
        name="outer",
        sub_agents=[
            FunctionAgent(name="top", fn=top, output_key="ao"),
            ParallelAgent(
                name="inner",
                sub_agents=[
                    FunctionAgent(name="broken", fn=broken, output_key="bo"),
                    FunctionAgent(name="fine", fn=fine, output_key="co"),
                    ReactAgent(name="talker", model=model, output_key="to"),
                ],
                output_key="inner_m",
            ),
        ],
        output_key="om",
    )

    async def arun() -> dict[str, Any]:
        with pytest.raises(ParallelBranchError) as err:
            await outer.ainvoke("x", thread_id="nested", checkpointer=url)
        assert "`broken`" in str(err.value) and "`inner`" in str(err.value)
        return await outer.aresume("nested", checkpointer=url)

    if not run_mode.is_async:
        with pytest.raises(ParallelBranchError) as err:
            outer.invoke("x", thread_id="nested", checkpointer=url)
        assert "`broken`" in str(err.value) and "`inner`" in str(err.value)
        assert set(err.value.errors) == {"inner"}
        snapshot = outer.get_state("nested", checkpointer=url)
        assert snapshot.values["ao"] == "a"  # the outer sibling's output is kept
        # the inner sibling's output is kept in the inner parallel's own checkpoint
        inner = next(t for t in snapshot.tasks if t.name == "inner")
        assert inner.state.values["co"] == "c"
        result = outer.resume("nested", checkpointer=url)
    else:
        result = asyncio.run(arun())
    assert (top.calls, broken.calls, fine.calls, model.calls) == (1, 2, 1, 1)
    assert result["om"] == {
        "ao": "a",
        "inner_m": {"bo": "b", "co": "c", "to": "inner react 0"},
    }
    assert result["agent_status"]["outer"] == "completed"


def test_new_invocation_after_failed_parallel_runs_failed_branch_once(tmp_path: Path) -> None:
    url = sqlite_url(tmp_path)
    flaky, ok = Counted("f", fail_once=True), Counted("o")
    fan = ParallelAgent(
        name="fan",
        sub_agents=[
            FunctionAgent(name="br", fn=flaky, output_key="bo"),
            FunctionAgent(name="ok", fn=ok, output_key="oo"),
        ],
        output_key="m",
    )
    with pytest.raises(ParallelBranchError):
        fan.invoke("x", thread_id="fail-then-new", checkpointer=url)
    result = fan.invoke("again", thread_id="fail-then-new", checkpointer=url)
    assert (flaky.calls, ok.calls) == (2, 2)
    assert result["m"] == {"bo": "f", "oo": "o"}


# -- ParallelBranchError.completed names every sibling that finished -----------------------------


def test_failing_branch_that_finishes_last_still_reports_finished_siblings(run_mode) -> None:
    # the failing branch was the last to finish: the registry used to drop the group before
    # the branch looked at it, so `completed` was empty and the message said "saved (none)"
    fns = {
        "fa": Counted("A"),
        "fb": Counted("B", delay=0.1, fail_once=True),
        "fc": Counted("C"),
    }
    fan = _fan(fns)
    with pytest.raises(ParallelBranchError) as err:
        _within(10, lambda: run_mode.invoke(fan, "go", thread_id=f"last-{run_mode}"))
    assert err.value.completed == {"fa_out": "A", "fc_out": "C"}
    assert "saved (fa, fc)" in str(err.value)
    out = _within(10, lambda: run_mode.resume(fan, f"last-{run_mode}"))
    assert out["merged"] == {"fa_out": "A", "fb_out": "B", "fc_out": "C"}
    assert [f.calls for f in fns.values()] == [1, 2, 1]


def test_max_concurrency_one_reports_branches_that_ran_before_the_failure(run_mode) -> None:
    fns = {"fa": Counted("A"), "fb": Counted("B", fail_once=True), "fc": Counted("C")}
    fan = _fan(fns, max_concurrency=1)
    with pytest.raises(ParallelBranchError) as err:
        _within(10, lambda: run_mode.invoke(fan, "go", thread_id=f"mc1-{run_mode}"))
    assert err.value.completed == {"fa_out": "A"}
    out = _within(10, lambda: run_mode.resume(fan, f"mc1-{run_mode}"))
    assert out["merged"] == {"fa_out": "A", "fb_out": "B", "fc_out": "C"}
    assert [f.calls for f in fns.values()] == [1, 2, 1]


def test_max_concurrency_one_failing_first_branch_no_deadlock_each_branch_once(run_mode) -> None:
    fns = {
        "fa": Counted("A", fail_once=True),
        "fb": Counted("B", delay=0.02),
        "fc": Counted("C"),
    }
    fan = _fan(fns, max_concurrency=1)
    with pytest.raises(ParallelBranchError, match="branch `fa` failed"):
        _within(10, lambda: run_mode.invoke(fan, "go", thread_id=f"mc1-first-{run_mode}"))
    out = _within(10, lambda: run_mode.resume(fan, f"mc1-first-{run_mode}"))
    assert out["merged"] == {"fa_out": "A", "fb_out": "B", "fc_out": "C"}
    assert [f.calls for f in fns.values()] == [2, 1, 1]


def test_multi_route_failure_reports_the_route_that_finished() -> None:
    ok = Counted("X")
    bad = Counted("Z", delay=0.1, fail_once=True)
    router = LlmRoutingAgent(
        name="router",
        model=ScriptedChatModel(replies=[{"routes": [{"agent": "x"}, {"agent": "z"}]}]),
        multi=True,
        sub_agents=[
            FunctionAgent(name="x", fn=ok, output_key="x_out", description="x"),
            FunctionAgent(name="y", fn=Counted("Y"), output_key="y_out", description="y"),
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
    fns = {f"f{i}": Counted(str(i)) for i in range(4)}
    before = set(_siblings._groups)
    for mc in (None, 1, 2):
        fan = _fan(fns, max_concurrency=mc)
        fan.invoke("x")
        asyncio.run(fan.ainvoke("x"))
    assert set(_siblings._groups) == before


def test_two_failing_branches_do_not_wait_for_each_other() -> None:
    fns = {
        "fa": Counted("A", delay=0.03, fail_once=True),
        "fb": Counted("B", delay=0.03, fail_once=True),
        "fc": Counted("C"),
    }
    fan = _fan(fns)
    started = time.monotonic()
    with pytest.raises(ParallelBranchError) as err:
        _within(10, lambda: fan.invoke("go", thread_id="two-fail"))
    assert time.monotonic() - started < 2
    assert err.value.completed == {"fc_out": "C"}
    assert fan.resume("two-fail")["merged"] == {"fa_out": "A", "fb_out": "B", "fc_out": "C"}


# -- concurrency across runs ---------------------------------------------------------------------


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
    fan = _fan({"fa": Counted("A", fail_once=True), "fb": Counted("B", delay=0.05)})
    with pytest.raises(ParallelBranchError) as err:
        _within(10, lambda: fan.invoke("go", checkpointer=False))
    assert err.value.completed == {"fb_out": "B"}

    fan = _fan({"fa": Counted("A", fail_once=True), "fb": Counted("B", delay=0.05)})
    with pytest.raises(ParallelBranchError):
        _within(10, lambda: asyncio.run(fan.ainvoke("go", checkpointer=False)))


def test_interrupting_branch_with_failing_sibling_resumes() -> None:
    calls = {"a": 0}

    def ask(state: dict[str, Any]) -> str:
        calls["a"] += 1
        return f"A:{interrupt('approve?')}"

    fns = {"fb": Counted("B", delay=0.05, fail_once=True), "fc": Counted("C")}
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
