"""Adversarial review: hooks and durable runs, each probed as a real run of a compiled graph."""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import decimal
import enum
import logging
import re
import uuid

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool
from pydantic import BaseModel

from graphflow import (
    AgentHook,
    FunctionAgent,
    HumanApproval,
    LlmRoutingAgent,
    LoggingHook,
    LoopAgent,
    ModelCallLimit,
    ModelCallLimitExceeded,
    ModelFallback,
    ModelRetry,
    ParallelAgent,
    ParallelBranchError,
    ReactAgent,
    SequentialAgent,
    ToolCallLimit,
    ToolCallLimitExceeded,
)
from graphflow.checkpoint.serde import allow_types, disallow_types
from graphflow.exceptions import CheckpointTypeError, GraphflowConfigError, StateValueError
from graphflow.testing import ScriptedChatModel, tool_call, tool_calls
from graphflow.tools import ToolPolicy

PAID: list[int] = []


@tool
def pay(amount: int) -> str:
    """Pay an amount."""
    PAID.append(amount)
    return f"paid {amount}"


@tool
def refund(amount: int) -> str:
    """Refund an amount."""
    return f"refunded {amount}"


def _answer_after_tools(messages, n):
    if isinstance(messages[-1], ToolMessage):
        return "tools said: " + " | ".join(
            str(m.content) for m in messages if isinstance(m, ToolMessage)
        )
    return tool_calls(("pay", {"amount": 5}), ("refund", {"amount": 3}))


# -- 1. HumanApproval --------------------------------------------------------------------------


def test_approval_async_two_pending_in_one_resume():
    PAID.clear()
    agent = ReactAgent(
        name="payer",
        model=ScriptedChatModel(fn=_answer_after_tools),
        tools=[pay, refund],
        hooks=[HumanApproval(["pay", "refund"])],
        default_tool_policy=ToolPolicy(parallel_safe=True),  # both calls pause at once
        output_key="out",
    )

    async def main():
        first = await agent.ainvoke("go", thread_id="t2")
        pending = first["__interrupt__"]
        assert sorted(p.value["tool"] for p in pending) == ["pay", "refund"]
        answers = {
            p.id: (
                {"decision": "edit", "args": {"amount": 7}}
                if p.value["tool"] == "pay"
                else {"decision": "reject", "reason": "no"}
            )
            for p in pending
        }
        return await agent.aresume("t2", answers)

    result = asyncio.run(main())
    assert "__interrupt__" not in result
    assert PAID == [7]
    assert "paid 7" in result["out"]
    assert "rejected by a human reviewer: no" in result["out"]


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_approval_inside_parallel_branch_while_other_completes(mode):
    PAID.clear()
    payer = ReactAgent(
        name="payer",
        model=ScriptedChatModel(
            fn=lambda m, n: (
                "done paying" if isinstance(m[-1], ToolMessage) else tool_call("pay", {"amount": 2})
            )
        ),
        tools=[pay],
        hooks=[HumanApproval(["pay"])],
        output_key="paid",
    )
    other_model = ScriptedChatModel(replies=["other result"])
    other = ReactAgent(name="other", model=other_model, output_key="other_out")
    flow = ParallelAgent(name="par", sub_agents=[payer, other])

    async def arun():
        first = await flow.ainvoke("go", thread_id="p")
        return first, await flow.aresume("p", {"decision": "approve"})

    if mode == "sync":
        first = flow.invoke("go", thread_id="p")
        result = flow.resume("p", {"decision": "approve"})
    else:
        first, result = asyncio.run(arun())
    assert len(first["__interrupt__"]) == 1
    assert result["paid"] == "done paying"
    assert result["other_out"] == "other result"
    assert other_model.calls == 1  # the finished branch did not run again
    assert PAID == [2]


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_approval_inside_loop_on_second_pass(mode):
    PAID.clear()

    def reply(messages, n):
        if isinstance(messages[-1], ToolMessage):
            return f"pass done {n}"
        return tool_call("pay", {"amount": 10 + n})

    worker = ReactAgent(
        name="worker",
        model=ScriptedChatModel(fn=reply),
        tools=[pay],
        hooks=[HumanApproval(["pay"])],
        output_key="out",
        instruction="pass {loop_iteration}",
    )
    loop = LoopAgent(name="loop", sub_agents=[worker], max_iterations=2)

    async def arun():
        a = await loop.ainvoke("go", thread_id="l")
        b = await loop.aresume("l", {"decision": "approve"})
        c = await loop.aresume("l", {"decision": "reject", "reason": "enough"})
        return a, b, c

    if mode == "sync":
        a = loop.invoke("go", thread_id="l")
        b = loop.resume("l", {"decision": "approve"})
        c = loop.resume("l", {"decision": "reject", "reason": "enough"})
    else:
        a, b, c = asyncio.run(arun())
    assert a["__interrupt__"][0].value["args"] == {"amount": 10}
    assert b["__interrupt__"][0].value["args"] == {"amount": 12}
    assert "__interrupt__" not in c
    assert PAID == [10]
    assert c["out"] == "pass done 3"


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_bad_decision_then_good_decision(mode):
    PAID.clear()
    agent = ReactAgent(
        name="payer",
        model=ScriptedChatModel(
            fn=lambda m, n: (
                "ok" if isinstance(m[-1], ToolMessage) else tool_call("pay", {"amount": 1})
            )
        ),
        tools=[pay],
        hooks=[HumanApproval(["pay"])],
        output_key="out",
    )

    async def arun():
        await agent.ainvoke("go", thread_id="b")
        with pytest.raises(ValueError, match="approve.*edit.*reject") as info:
            await agent.aresume("b", {"decision": "accept"})
        return info, await agent.aresume("b", {"decision": "approve"})

    if mode == "sync":
        agent.invoke("go", thread_id="b")
        with pytest.raises(ValueError, match="approve.*edit.*reject") as info:
            agent.resume("b", {"decision": "accept"})
        result = agent.resume("b", {"decision": "approve"})
    else:
        info, result = asyncio.run(arun())
    assert "accept" in str(info.value)
    assert result["out"] == "ok"
    assert PAID == [1]


# -- 2. ModelRetry / ModelFallback ---------------------------------------------------------------


class RateLimited(Exception):
    status_code = 429


def _run(agent, input, mode, **kwargs):
    if mode == "sync":
        return agent.invoke(input, **kwargs)
    return asyncio.run(agent.ainvoke(input, **kwargs))


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_retry_429_twice_then_ok_records_one_reply(mode, monkeypatch):
    slept: list[float] = []
    monkeypatch.setattr("time.sleep", lambda s: slept.append(s))

    async def fake_sleep(s):
        slept.append(s)

    monkeypatch.setattr("asyncio.sleep", fake_sleep)
    model = ScriptedChatModel(replies=[RateLimited("slow"), RateLimited("slow"), "fine"])
    agent = ReactAgent(
        name="a", model=model, hooks=[ModelRetry(max_attempts=3, backoff=0)], output_key="out"
    )
    result = _run(agent, "go", mode, thread_id="r")
    assert model.calls == 3
    assert result["out"] == "fine"
    replies = [m for m in result["messages"] if isinstance(m, AIMessage)]
    assert [m.content for m in replies] == ["fine"]
    assert slept in ([0.0, 0.0], [])


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_retry_does_not_retry_value_error(mode):
    model = ScriptedChatModel(replies=[ValueError("bad"), "never"])
    agent = ReactAgent(name="a", model=model, hooks=[ModelRetry(backoff=0)])
    with pytest.raises(ValueError, match="bad"):
        _run(agent, "go", mode)
    assert model.calls == 1


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_fallback_used_and_both_failing_raise_last_error(mode):
    primary = ScriptedChatModel(replies=[RuntimeError("primary down")])
    backup = ScriptedChatModel(replies=["from backup"])
    agent = ReactAgent(name="a", model=primary, hooks=[ModelFallback([backup])], output_key="o")
    assert _run(agent, "go", mode)["o"] == "from backup"

    primary = ScriptedChatModel(replies=[RuntimeError("primary down")])
    backup = ScriptedChatModel(replies=[RuntimeError("backup down")])
    agent = ReactAgent(name="b", model=primary, hooks=[ModelFallback([backup])])
    with pytest.raises(RuntimeError, match="backup down") as info:
        _run(agent, "go", mode)
    assert "primary down" in repr(info.value.__context__) or primary.calls == 1


# -- 3. limits -----------------------------------------------------------------------------------


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def _looping():
    return ScriptedChatModel(fn=lambda m, n: tool_call("add", {"a": n, "b": 1}))


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_model_limit_end_inside_sequence(mode):
    after = ReactAgent(name="after", model=ScriptedChatModel(replies=["next"]), output_key="n")
    looper = ReactAgent(
        name="looper",
        model=_looping(),
        tools=[add],
        hooks=[ModelCallLimit(run_limit=2)],
        output_key="out",
    )
    flow = SequentialAgent(name="seq", sub_agents=[looper, after])
    result = _run(flow, "go", mode)
    assert "model call limit" in result["out"]
    assert result["agent_status"]["looper"] == "completed"
    assert result["n"] == "next"


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_limits_exit_error(mode):
    agent = ReactAgent(
        name="a", model=_looping(), tools=[add], hooks=[ToolCallLimit(run_limit=1, exit="error")]
    )
    with pytest.raises(ToolCallLimitExceeded):
        _run(agent, "go", mode)
    agent = ReactAgent(
        name="b", model=_looping(), tools=[add], hooks=[ModelCallLimit(run_limit=1, exit="error")]
    )
    with pytest.raises(ModelCallLimitExceeded):
        _run(agent, "go", mode)


class Answer(BaseModel):
    value: int


@pytest.mark.parametrize(
    "limit", [ModelCallLimit(run_limit=2), ToolCallLimit(run_limit=1)], ids=["model", "tool"]
)
def test_limit_end_with_output_schema_ends_cleanly(limit):
    # was: the stop message was validated against the schema -> OutputValidationError
    model = _looping()
    agent = ReactAgent(
        name="a",
        model=model,
        tools=[add],
        hooks=[limit],
        output_schema=Answer,
        output_key="out",
    )
    result = agent.invoke("go")
    assert "call limit" in result["messages"][-1].content
    assert result["out"] is None
    assert model.calls == 2


def test_thread_limit_across_two_invocations():
    model = ScriptedChatModel(fn=lambda m, n: f"answer {n}")
    agent = ReactAgent(name="chat", model=model, hooks=[ModelCallLimit(thread_limit=1)])
    agent.invoke("one", thread_id="th", checkpointer="memory:")
    second = agent.invoke("two", thread_id="th", checkpointer="memory:")
    assert model.calls == 1
    assert "thread limit 1" in second["messages"][-1].content


# -- 4. LoggingHook ------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_logging_hook_records(mode, caplog):
    model = ScriptedChatModel(replies=[tool_call("add", {"a": 2, "b": 2}), "four"])
    agent = ReactAgent(name="calc", model=model, tools=[add], hooks=[LoggingHook()])
    with caplog.at_level(logging.INFO, logger="graphflow"):
        _run(agent, "go", mode)
    msgs = [r.getMessage() for r in caplog.records if r.name == "graphflow"]
    assert msgs[0] == "agent calc started"
    assert msgs[-1] == "agent calc ended: completed"
    assert sum("model call" in m for m in msgs) == 2
    assert sum("tool add(" in m for m in msgs) == 1


# -- 5. agent hooks on every kind ----------------------------------------------------------------


class Counter(AgentHook):
    def __init__(self) -> None:
        self.events: list[tuple[str, str, str | None]] = []

    def before_agent(self, state, ctx):
        self.events.append(("before", ctx.agent, None))

    def after_agent(self, state, ctx):
        self.events.append(("after", ctx.agent, ctx.reason))


def _kinds(hook):
    fn = FunctionAgent(name="fn", fn=lambda s: 1, output_key="f", hooks=[hook])
    par = ParallelAgent(
        name="par",
        sub_agents=[
            FunctionAgent(name="p1", fn=lambda s: 1, output_key="p1o"),
            FunctionAgent(name="p2", fn=lambda s: 2, output_key="p2o"),
        ],
        hooks=[hook],
    )
    loop = LoopAgent(
        name="loop",
        sub_agents=[FunctionAgent(name="body", fn=lambda s: 1, output_key="b")],
        max_iterations=3,
        hooks=[hook],
    )
    router = LlmRoutingAgent(
        name="router",
        model=ScriptedChatModel(replies=[{"agent": "r1"}]),
        sub_agents=[
            FunctionAgent(name="r1", fn=lambda s: "r1", output_key="r1o"),
            FunctionAgent(name="r2", fn=lambda s: "r2", output_key="r2o"),
        ],
        hooks=[hook],
    )
    return [fn, par, loop, router]


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("index", [0, 1, 2, 3])
def test_agent_hooks_fire_once_per_invocation(mode, index):
    hook = Counter()
    agent = _kinds(hook)[index]
    _run(agent, "go", mode)
    assert [e[0] for e in hook.events] == ["before", "after"], hook.events
    assert hook.events[1][2] in ("completed", "max_iterations")


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_after_agent_error_reason_and_original_error(mode):
    hook = Counter()

    def boom(state):
        raise KeyError("nope")

    agent = FunctionAgent(name="fn", fn=boom, output_key="f", hooks=[hook])
    with pytest.raises(KeyError, match="nope"):
        _run(agent, "go", mode)
    assert hook.events == [("before", "fn", None), ("after", "fn", "error")]

    hook = Counter()
    inner = FunctionAgent(name="bad", fn=boom, output_key="x", hooks=[hook])
    par = ParallelAgent(
        name="par", sub_agents=[inner, FunctionAgent(name="ok", fn=lambda s: 1, output_key="y")]
    )
    with pytest.raises(ParallelBranchError, match="nope"):
        _run(par, "go", mode)
    assert hook.events == [("before", "bad", None), ("after", "bad", "error")]


# -- 6. checkpoint URLs --------------------------------------------------------------------------


def _echo():
    return FunctionAgent(name="echo", fn=lambda s: f"echo {s['input']}", output_key="out")


def test_sqlite_nested_dirs_memory_and_bad_url(tmp_path):
    url = f"sqlite:///{tmp_path}/a/b/c/runs.db"
    assert _echo().invoke("x", thread_id="t", checkpointer=url)["out"] == "echo x"
    assert (tmp_path / "a" / "b" / "c" / "runs.db").exists()
    assert _echo().invoke("y", checkpointer="memory:")["out"] == "echo y"
    for bad in ("mysql://db", "sqlite:/relative.db", 42):
        with pytest.raises(GraphflowConfigError, match=r"memory:.*sqlite:///.*postgresql://"):
            _echo().invoke("x", checkpointer=bad)


def test_invoke_then_ainvoke_share_one_sqlite_thread(tmp_path):
    url = f"sqlite:///{tmp_path}/runs.db"
    agent = ReactAgent(name="chat", model=ScriptedChatModel(fn=lambda m, n: f"reply {n}"))
    agent.invoke("first", thread_id="shared", checkpointer=url)
    result = asyncio.run(agent.ainvoke("second", thread_id="shared", checkpointer=url))
    assert [m.content for m in result["messages"]] == ["first", "reply 0", "second", "reply 1"]
    again = agent.invoke("third", thread_id="shared", checkpointer=url)
    assert len(again["messages"]) == 6
    assert agent.get_state("shared", checkpointer=url).values["messages"][-1].content == "reply 2"


# -- 7. runs() / history() -----------------------------------------------------------------------


def test_runs_statuses_history_and_failed_state(tmp_path):
    url = f"sqlite:///{tmp_path}/runs.db"
    PAID.clear()

    def first_step(state):
        return "step one"

    def second_step(state):
        if state["input"] == "fail":
            raise RuntimeError("second step broke")
        return "step two"

    payer = ReactAgent(
        name="payer",
        model=ScriptedChatModel(
            fn=lambda m, n: (
                "paid" if isinstance(m[-1], ToolMessage) else tool_call("pay", {"amount": 1})
            )
        ),
        tools=[pay],
        hooks=[HumanApproval(["pay"])],
        output_key="pay_out",
        instruction="{input}",
    )
    flow = SequentialAgent(
        name="flow",
        sub_agents=[
            FunctionAgent(name="one", fn=first_step, output_key="o1"),
            FunctionAgent(name="two", fn=second_step, output_key="o2"),
            payer,
        ],
    )
    flow.invoke("ok", thread_id="t-done", checkpointer=url)  # interrupted at pay
    flow.resume("t-done", {"decision": "approve"}, checkpointer=url)
    flow.invoke("ok", thread_id="t-int", checkpointer=url)
    with pytest.raises(RuntimeError, match="second step broke"):
        flow.invoke("fail", thread_id="t-fail", checkpointer=url)

    runs = {r.thread_id: r for r in flow.runs(checkpointer=url)}
    assert runs["t-done"].status == "done"
    assert runs["t-int"].status == "interrupted"
    assert runs["t-int"].agent == "payer"
    assert runs["t-fail"].status == "failed"
    assert "second step broke" in (runs["t-fail"].error or "")
    assert [r.thread_id for r in flow.runs(checkpointer=url)] == ["t-fail", "t-int", "t-done"]

    history = flow.history("t-done", checkpointer=url)
    steps = [h.step for h in history]
    assert steps == sorted(steps, reverse=True)
    assert history[-1].source == "input"

    state = flow.get_state("t-fail", checkpointer=url)
    assert state.values["o1"] == "step one"
    assert "o2" not in state.values


def test_bad_keyed_answer_among_two_pending_does_not_wedge_the_thread():
    PAID.clear()
    agent = ReactAgent(
        name="payer",
        model=ScriptedChatModel(fn=_answer_after_tools),
        tools=[pay, refund],
        hooks=[HumanApproval(["pay", "refund"])],
        default_tool_policy=ToolPolicy(parallel_safe=True),  # both calls pause at once
        output_key="out",
    )
    pending = agent.invoke("go", thread_id="k")["__interrupt__"]
    with pytest.raises(ValueError, match="'edit' decision needs"):
        agent.resume("k", {p.id: {"decision": "edit"} for p in pending})
    assert len(agent.get_state("k").interrupts) == 2
    result = agent.resume("k", {p.id: True for p in pending})
    assert sorted(PAID) == [5]
    assert "paid 5" in result["out"] and "refunded 3" in result["out"]


# -- 8. serialization ----------------------------------------------------------------------------


class Color(enum.Enum):
    RED = "red"


class Inner(BaseModel):
    x: int


class Outer(BaseModel):
    inner: Inner
    when: datetime.datetime


@dataclasses.dataclass
class Point:
    x: int


def _producer(value):
    approve = ReactAgent(
        name="payer",
        model=ScriptedChatModel(
            fn=lambda m, n: (
                "ok" if isinstance(m[-1], ToolMessage) else tool_call("pay", {"amount": 1})
            )
        ),
        tools=[pay],
        hooks=[HumanApproval(["pay"])],
        output_key="po",
    )
    return SequentialAgent(
        name="s",
        sub_agents=[FunctionAgent(name="f", fn=lambda s: value, output_key="out"), approve],
    )


WHEN = datetime.datetime(2024, 1, 2, tzinfo=datetime.UTC)


@pytest.mark.parametrize(
    "value",
    [WHEN, decimal.Decimal("1.50"), {1, 2}, uuid.UUID(int=7), b"raw"],
    ids=["datetime", "decimal", "set", "uuid", "bytes"],
)
def test_safe_values_round_trip_through_sqlite(tmp_path, value):
    url = f"sqlite:///{tmp_path}/r.db"
    _producer(value).invoke("go", thread_id="t", checkpointer=url)
    loaded = _producer(value).get_state("t", checkpointer=url).values["out"]
    assert loaded == value and type(loaded) is type(value)
    result = _producer(value).resume("t", {"decision": "approve"}, checkpointer=url)
    assert result["out"] == value


def test_tuple_comes_back_as_list(tmp_path):
    # documented msgpack behavior, surprising for users: a tuple is saved as a list
    url = f"sqlite:///{tmp_path}/r.db"
    _producer((1, "a")).invoke("go", thread_id="t", checkpointer=url)
    assert _producer(None).get_state("t", checkpointer=url).values["out"] == [1, "a"]


@pytest.mark.parametrize(
    ("value", "named"),
    [
        (Color.RED, "Color"),
        (Outer(inner=Inner(x=1), when=WHEN), "(?:Outer|Inner)"),
        (Point(1), "Point"),
    ],
    ids=["enum", "pydantic", "dataclass"],
)
def test_unlisted_types_fail_at_load_naming_the_type(tmp_path, value, named):
    url = f"sqlite:///{tmp_path}/r.db"
    # written: refused at once, naming the agent, the key and the type
    with pytest.raises(StateValueError, match=rf"`f`.*out: .*{named}.*`out`"):
        _producer(value).invoke("go", thread_id="refused", checkpointer=url)
    # written while allowed, loaded after the class is taken off the allowlist: never loaded
    allow_types(type(value))
    try:
        first = _producer(value).invoke("go", thread_id="t", checkpointer=url)
        assert first["out"] == value
    finally:
        disallow_types(type(value), *([Inner] if isinstance(value, Outer) else []))
    for load in (
        lambda: _producer(value).get_state("t", checkpointer=url),
        lambda: _producer(value).resume("t", {"decision": "approve"}, checkpointer=url),
    ):
        with pytest.raises(CheckpointTypeError, match=rf"\.{named}\b.*allow_types\({named}\)"):
            load()
    run = next(r for r in _producer(value).runs(checkpointer=url) if r.thread_id == "t")
    assert run.status == "unreadable" and re.search(named, run.error or "")


def test_ainvoke_per_asyncio_run_does_not_leak_savers(tmp_path):
    import threading

    url = f"sqlite:///{tmp_path}/r.db"
    agent = _echo()
    asyncio.run(agent.ainvoke("x", thread_id="warm", checkpointer=url))
    threads = threading.active_count()
    for i in range(5):
        asyncio.run(agent.ainvoke("x", thread_id=f"t{i}", checkpointer=url))
    # one compiled graph (no saver baked in); every call's connection closed with the call
    assert len(agent._runtime_cache.get("compiled", {})) <= 1
    assert threading.active_count() <= threads
    assert len(agent.runs(checkpointer=url)) == 6


def test_sqlite_url_expands_home_and_rejects_query_strings(tmp_path, monkeypatch):
    from graphflow import GraphflowConfigError
    from graphflow.checkpoint import resolve_checkpointer

    monkeypatch.setenv("HOME", str(tmp_path))
    resolve_checkpointer("sqlite:///~/nested/runs.db")
    assert (tmp_path / "nested" / "runs.db").exists()
    with pytest.raises(GraphflowConfigError, match="query parameters"):
        resolve_checkpointer("sqlite:///runs.db?mode=ro")
