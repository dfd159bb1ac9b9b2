"""Built-in hooks: call limits, retry, fallback, logging (HumanApproval: test_approval.py)."""

from __future__ import annotations

import logging

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool
from pydantic import BaseModel

from graphflow import (
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
from tests.support.helpers import add


def looping_model() -> ScriptedChatModel:
    return ScriptedChatModel(fn=lambda messages, n: tool_call("add", {"a": n, "b": 1}))


# -- ModelCallLimit ---------------------------------------------------------------------------


def test_model_call_limit_run_end(run_mode):
    model = looping_model()
    agent = ReactAgent(
        name="a", model=model, tools=[add], hooks=[ModelCallLimit(run_limit=3)], output_key="out"
    )
    result = run_mode.invoke(agent, "go")
    assert model.calls == 3
    assert "model call limit" in result["out"]
    assert result["agent_status"]["a"] == "completed"


def test_model_call_limit_run_error(run_mode):
    agent = ReactAgent(
        name="a",
        model=looping_model(),
        tools=[add],
        hooks=[ModelCallLimit(run_limit=2, exit="error")],
    )
    with pytest.raises(ModelCallLimitExceeded) as info:
        run_mode.invoke(agent, "go")
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


def test_tool_call_limit_run_end(run_mode):
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
    result = run_mode.invoke(agent, "go")
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


def test_model_retry_retries_transient_errors(run_mode):
    model = ScriptedChatModel(replies=[RateLimited("slow down"), TimeoutError(), "ok"])
    hook = ModelRetry(max_attempts=3, backoff=0.001)
    agent = ReactAgent(name="a", model=model, hooks=[hook], output_key="out")
    assert run_mode.invoke(agent, "go")["out"] == "ok"
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


def test_model_fallback_tries_next_models(run_mode):
    primary = ScriptedChatModel(replies=[RuntimeError("down")])
    second = ScriptedChatModel(replies=[RuntimeError("down too")])
    third = ScriptedChatModel(replies=["from third"])
    agent = ReactAgent(
        name="a", model=primary, hooks=[ModelFallback([second, third])], output_key="out"
    )
    assert run_mode.invoke(agent, "go")["out"] == "from third"
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


def test_logging_hook(run_mode, caplog):
    model = ScriptedChatModel(replies=[tool_call("add", {"a": 1, "b": 2}), "3"])
    agent = ReactAgent(name="calc", model=model, tools=[add], hooks=[LoggingHook()])
    with caplog.at_level(logging.INFO, logger="graphflow"):
        run_mode.invoke(agent, "go")
    text = "\n".join(r.getMessage() for r in caplog.records if r.name == "graphflow")
    assert "agent calc started" in text
    assert "model call 0 done" in text and "tool calls: add" in text
    assert "model call 1 done" in text and "final answer" in text
    assert "tool add({'a': 1, 'b': 2}) -> success" in text
    assert "agent calc ended: completed" in text


# -- ModelRetry / ModelFallback, more cases ------------------------------------------------------


def test_retry_429_twice_then_ok_records_one_reply(run_mode, monkeypatch):
    slept: list[float] = []
    monkeypatch.setattr("time.sleep", lambda s: slept.append(s))

    async def fake_sleep(s):
        slept.append(s)

    monkeypatch.setattr("asyncio.sleep", fake_sleep)
    model = ScriptedChatModel(replies=[RateLimited("slow"), RateLimited("slow"), "fine"])
    agent = ReactAgent(
        name="a", model=model, hooks=[ModelRetry(max_attempts=3, backoff=0)], output_key="out"
    )
    result = run_mode.invoke(agent, "go", thread_id="r")
    assert model.calls == 3
    assert result["out"] == "fine"
    replies = [m for m in result["messages"] if isinstance(m, AIMessage)]
    assert [m.content for m in replies] == ["fine"]
    assert slept in ([0.0, 0.0], [])


def test_retry_does_not_retry_value_error(run_mode):
    model = ScriptedChatModel(replies=[ValueError("bad"), "never"])
    agent = ReactAgent(name="a", model=model, hooks=[ModelRetry(backoff=0)])
    with pytest.raises(ValueError, match="bad"):
        run_mode.invoke(agent, "go")
    assert model.calls == 1


def test_fallback_used_and_both_failing_raise_last_error(run_mode):
    primary = ScriptedChatModel(replies=[RuntimeError("primary down")])
    backup = ScriptedChatModel(replies=["from backup"])
    agent = ReactAgent(name="a", model=primary, hooks=[ModelFallback([backup])], output_key="o")
    assert run_mode.invoke(agent, "go")["o"] == "from backup"

    primary = ScriptedChatModel(replies=[RuntimeError("primary down")])
    backup = ScriptedChatModel(replies=[RuntimeError("backup down")])
    agent = ReactAgent(name="b", model=primary, hooks=[ModelFallback([backup])])
    with pytest.raises(RuntimeError, match="backup down") as info:
        run_mode.invoke(agent, "go")
    assert "primary down" in repr(info.value.__context__) or primary.calls == 1


# -- limits, more cases --------------------------------------------------------------------------


def test_model_limit_end_inside_sequence(run_mode):
    after = ReactAgent(name="after", model=ScriptedChatModel(replies=["next"]), output_key="n")
    looper = ReactAgent(
        name="looper",
        model=looping_model(),
        tools=[add],
        hooks=[ModelCallLimit(run_limit=2)],
        output_key="out",
    )
    flow = SequentialAgent(name="seq", sub_agents=[looper, after])
    result = run_mode.invoke(flow, "go")
    assert "model call limit" in result["out"]
    assert result["agent_status"]["looper"] == "completed"
    assert result["n"] == "next"


def test_limits_exit_error(run_mode):
    agent = ReactAgent(
        name="a",
        model=looping_model(),
        tools=[add],
        hooks=[ToolCallLimit(run_limit=1, exit="error")],
    )
    with pytest.raises(ToolCallLimitExceeded):
        run_mode.invoke(agent, "go")
    agent = ReactAgent(
        name="b",
        model=looping_model(),
        tools=[add],
        hooks=[ModelCallLimit(run_limit=1, exit="error")],
    )
    with pytest.raises(ModelCallLimitExceeded):
        run_mode.invoke(agent, "go")


class Answer(BaseModel):
    value: int


@pytest.mark.parametrize(
    "limit", [ModelCallLimit(run_limit=2), ToolCallLimit(run_limit=1)], ids=["model", "tool"]
)
def test_limit_end_with_output_schema_ends_cleanly(limit):
    # was: the stop message was validated against the schema -> OutputValidationError
    model = looping_model()
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


# -- LoggingHook, the order of its records -------------------------------------------------------


def test_logging_hook_records(run_mode, caplog):
    model = ScriptedChatModel(replies=[tool_call("add", {"a": 2, "b": 2}), "four"])
    agent = ReactAgent(name="calc", model=model, tools=[add], hooks=[LoggingHook()])
    with caplog.at_level(logging.INFO, logger="graphflow"):
        run_mode.invoke(agent, "go")
    msgs = [r.getMessage() for r in caplog.records if r.name == "graphflow"]
    assert msgs[0] == "agent calc started"
    assert msgs[-1] == "agent calc ended: completed"
    assert sum("model call" in m for m in msgs) == 2
    assert sum("tool add(" in m for m in msgs) == 1
