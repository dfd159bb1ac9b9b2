"""Built-in hooks: call limits, retry, fallback, logging, human approval (in one process)."""

from __future__ import annotations

import asyncio
import logging

import pytest
from langchain_core.messages import ToolMessage
from langchain_core.tools import tool

from graphflow import (
    HumanApproval,
    LoggingHook,
    ModelCallLimit,
    ModelCallLimitExceeded,
    ModelFallback,
    ModelRetry,
    ReactAgent,
    SequentialAgent,
    ToolCallLimit,
    ToolCallLimitExceeded,
)
from graphflow.exceptions import AgentRunError, ModelRequestError
from graphflow.hooks import is_transient
from graphflow.testing import ScriptedChatModel, tool_call, tool_calls


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def run(agent, input, mode, **kwargs):
    if mode == "sync":
        return agent.invoke(input, **kwargs)
    return asyncio.run(agent.ainvoke(input, **kwargs))


def looping_model() -> ScriptedChatModel:
    return ScriptedChatModel(fn=lambda messages, n: tool_call("add", {"a": n, "b": 1}))


# -- ModelCallLimit ---------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_model_call_limit_run_end(mode):
    model = looping_model()
    agent = ReactAgent(
        name="a", model=model, tools=[add], hooks=[ModelCallLimit(run_limit=3)], output_key="out"
    )
    result = run(agent, "go", mode)
    assert model.calls == 3
    assert "model call limit" in result["out"]
    assert result["agent_status"]["a"] == "completed"


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_model_call_limit_run_error(mode):
    agent = ReactAgent(
        name="a",
        model=looping_model(),
        tools=[add],
        hooks=[ModelCallLimit(run_limit=2, exit="error")],
    )
    with pytest.raises(ModelCallLimitExceeded) as info:
        run(agent, "go", mode)
    assert isinstance(info.value, AgentRunError)
    assert (info.value.scope, info.value.limit, info.value.agent) == ("run", 2, "a")


def test_model_call_limit_thread_counts_persist_across_invocations():
    model = ScriptedChatModel(fn=lambda messages, n: f"answer {n}")
    agent = ReactAgent(name="chat", model=model, hooks=[ModelCallLimit(thread_limit=2)])
    agent.invoke("one", thread_id="t")
    agent.invoke("two", thread_id="t")
    result = agent.invoke("three", thread_id="t")
    assert model.calls == 2
    assert "thread limit 2" in result["messages"][-1].content
    # another thread starts from zero
    agent.invoke("one", thread_id="other")
    assert model.calls == 3


def test_model_call_limit_validates_its_options():
    with pytest.raises(ValueError, match="run_limit, thread_limit"):
        ModelCallLimit()
    with pytest.raises(ValueError, match="exit"):
        ModelCallLimit(run_limit=1, exit="stop")  # type: ignore[arg-type]


# -- ToolCallLimit ----------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_tool_call_limit_run_end(mode):
    ran: list[int] = []

    @tool
    def note(x: int) -> str:
        """Note x."""
        ran.append(x)
        return "ok"

    model = ScriptedChatModel(fn=lambda messages, n: tool_call("note", {"x": n}))
    agent = ReactAgent(
        name="a", model=model, tools=[note], hooks=[ToolCallLimit(run_limit=2)], output_key="out"
    )
    result = run(agent, "go", mode)
    assert ran == [0, 1]
    assert "tool call limit" in result["out"]


def test_tool_call_limit_counts_parallel_calls_and_one_tool_only():
    model = ScriptedChatModel(
        replies=[
            tool_calls(("add", {"a": 1, "b": 1}), ("add", {"a": 2, "b": 2})),
            tool_calls(("add", {"a": 3, "b": 3}), ("other", {})),
            "never",
        ]
    )

    @tool
    def other() -> str:
        """Other."""
        return "other"

    agent = ReactAgent(
        name="a",
        model=model,
        tools=[add, other],
        hooks=[ToolCallLimit(run_limit=2, tool_name="add", exit="error")],
    )
    with pytest.raises(ToolCallLimitExceeded, match="`add` tool call limit"):
        agent.invoke("go")
    assert model.calls == 2


def test_tool_call_limit_thread_scope():
    model = ScriptedChatModel(
        fn=lambda messages, n: (
            tool_call("add", {"a": n, "b": 0})
            if not isinstance(messages[-1], ToolMessage)
            else "done"
        )
    )
    agent = ReactAgent(name="a", model=model, tools=[add], hooks=[ToolCallLimit(thread_limit=2)])
    agent.invoke("1", thread_id="t")
    agent.invoke("2", thread_id="t")
    result = agent.invoke("3", thread_id="t")
    assert "thread limit 2" in result["messages"][-1].content
    tool_messages = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert len(tool_messages) == 2


# -- ModelRetry / ModelFallback -----------------------------------------------------------------


class RateLimited(Exception):
    status_code = 429


class BadRequest(Exception):
    status_code = 400


def test_is_transient():
    assert is_transient(TimeoutError())
    assert is_transient(ConnectionError())
    assert is_transient(RateLimited())
    assert not is_transient(BadRequest())
    assert not is_transient(ValueError())

    class Server(Exception):
        def __init__(self):
            self.response = type("R", (), {"status_code": 503})()

    assert is_transient(Server())

    class APITimeoutError(Exception):
        pass

    assert is_transient(APITimeoutError())


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_model_retry_retries_transient_errors(mode):
    model = ScriptedChatModel(replies=[RateLimited("slow down"), TimeoutError(), "ok"])
    hook = ModelRetry(max_attempts=3, backoff=0.001)
    agent = ReactAgent(name="a", model=model, hooks=[hook], output_key="out")
    assert run(agent, "go", mode)["out"] == "ok"
    assert model.calls == 3


def test_model_retry_gives_up_and_skips_permanent_errors():
    model = ScriptedChatModel(replies=[BadRequest("no"), "never"])
    agent = ReactAgent(name="a", model=model, hooks=[ModelRetry(backoff=0)])
    with pytest.raises(ModelRequestError) as caught:  # explained; the provider's error is the cause
        agent.invoke("go")
    assert isinstance(caught.value.__cause__, BadRequest)
    assert model.calls == 1

    model = ScriptedChatModel(replies=[TimeoutError("1"), TimeoutError("2"), "never"])
    agent = ReactAgent(name="b", model=model, hooks=[ModelRetry(max_attempts=2, backoff=0)])
    with pytest.raises(TimeoutError):
        agent.invoke("go")
    assert model.calls == 2


def test_model_retry_backoff():
    hook = ModelRetry(backoff=1.0, max_delay=3.0)
    assert [hook.delay(i) for i in (1, 2, 3)] == [1.0, 2.0, 3.0]
    assert ModelRetry(backoff=lambda n: n / 10).delay(2) == 0.2


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_model_fallback_tries_next_models(mode):
    primary = ScriptedChatModel(replies=[RuntimeError("down")])
    second = ScriptedChatModel(replies=[RuntimeError("down too")])
    third = ScriptedChatModel(replies=["from third"])
    agent = ReactAgent(
        name="a", model=primary, hooks=[ModelFallback([second, third])], output_key="out"
    )
    assert run(agent, "go", mode)["out"] == "from third"
    assert (primary.calls, second.calls, third.calls) == (1, 1, 1)


def test_fallback_outside_retry_retries_each_model_first():
    primary = ScriptedChatModel(replies=[TimeoutError(), TimeoutError()])
    backup = ScriptedChatModel(replies=["backup"])
    agent = ReactAgent(
        name="a",
        model=primary,
        hooks=[ModelFallback([backup]), ModelRetry(max_attempts=2, backoff=0)],
        output_key="out",
    )
    assert agent.invoke("go")["out"] == "backup"
    assert primary.calls == 2


# -- LoggingHook ------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_logging_hook(mode, caplog):
    model = ScriptedChatModel(replies=[tool_call("add", {"a": 1, "b": 2}), "3"])
    agent = ReactAgent(name="calc", model=model, tools=[add], hooks=[LoggingHook()])
    with caplog.at_level(logging.INFO, logger="graphflow"):
        run(agent, "go", mode)
    text = "\n".join(r.getMessage() for r in caplog.records if r.name == "graphflow")
    assert "agent calc started" in text
    assert "model call 0 done" in text and "tool calls: add" in text
    assert "model call 1 done" in text and "final answer" in text
    assert "tool add({'a': 1, 'b': 2}) -> success" in text
    assert "agent calc ended: completed" in text


# -- HumanApproval (one process) -----------------------------------------------------------------


@tool
def pay(amount: int) -> str:
    """Pay an amount."""
    return f"paid {amount}"


def payer() -> ReactAgent:
    def reply(messages, n):
        if isinstance(messages[-1], ToolMessage):
            return "tools said: " + " | ".join(
                str(m.content) for m in messages if isinstance(m, ToolMessage)
            )
        return tool_calls(("pay", {"amount": 5}), ("add", {"a": 1, "b": 1}))

    return ReactAgent(
        name="payer",
        model=ScriptedChatModel(fn=reply),
        tools=[pay, add],
        hooks=[HumanApproval({"pay": "Sends money."})],
    )


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize(
    ("decision", "expected"),
    [
        ({"decision": "approve"}, "paid 5"),
        ({"decision": "edit", "args": {"amount": 1}}, "paid 1"),
        ({"decision": "reject", "reason": "too much"}, "rejected by a human reviewer: too much"),
    ],
)
def test_human_approval_round_trip(mode, decision, expected):
    agent = payer()
    first = run(agent, "go", mode, thread_id="t")
    (pending,) = first["__interrupt__"]
    assert pending.value["tool"] == "pay"
    assert pending.value["args"] == {"amount": 5}
    assert pending.value["description"] == "Sends money."
    if mode == "sync":
        result = agent.resume("t", decision)
    else:
        result = asyncio.run(agent.aresume("t", decision))
    assert "__interrupt__" not in result
    assert expected in result["messages"][-1].content
    pay_message = next(
        m for m in result["messages"] if isinstance(m, ToolMessage) and m.name == "pay"
    )
    assert pay_message.status == ("error" if decision["decision"] == "reject" else "success")


def test_human_approval_inside_a_sequence_and_bad_resume_value():
    outer = SequentialAgent(name="outer", sub_agents=[payer()])
    first = outer.invoke("go", thread_id="t")
    assert len(first["__interrupt__"]) == 1
    with pytest.raises(ValueError, match="HumanApproval"):
        outer.resume("t", {"decision": "maybe"})
