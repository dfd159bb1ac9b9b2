"""Issue 9, point 4: a model or tool that hangs fails the step with a typed timeout, never hangs
the run — sync and async; `ModelRetry` retries a model timeout; a timed-out run resumes.

The hanging calls wait on an event for up to a minute instead of forever: without a timeout
the call would come back after that minute with a reply, and the test fails (it does not hang).
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from langchain_core.tools import StructuredTool
from pydantic import Field

from graphflow import FunctionAgent, ModelRetry, ReactAgent, SequentialAgent
from graphflow.exceptions import ModelTimeoutError
from graphflow.testing import ScriptedChatModel, tool_call
from graphflow.tools import ToolPolicy

WAIT = 60.0


class HangingModel(ScriptedChatModel):
    """Hangs (up to a minute) on its first `hangs` calls, then replies from its script."""

    hangs: int = 1
    release: threading.Event = Field(default_factory=threading.Event)

    def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any):
        hang = self.calls < self.hangs
        result = super()._generate(messages, stop, run_manager, **kw)
        if hang:
            self.release.wait(WAIT)
        return result

    async def _agenerate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any):
        hang = self.calls < self.hangs
        result = await super()._agenerate(messages, stop, run_manager, **kw)
        if hang:
            await asyncio.sleep(WAIT)
        return result


def _pipeline(model, calls, **react) -> SequentialAgent:
    writer = ReactAgent(name="writer", model=model, output_key="draft", **react)
    return SequentialAgent(
        name="team",
        sub_agents=[FunctionAgent(name="prep", fn=calls.step("prep"), output_key="notes"), writer],
    )


def test_every_model_call_has_a_default_timeout() -> None:
    agent = ReactAgent(name="w", model=ScriptedChatModel(replies=["x"]))
    assert agent.model_timeout is not None and agent.model_timeout > 0


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_a_hanging_model_times_out_and_the_run_resumes(mode, store, calls) -> None:
    model = HangingModel(replies=["late", "on time"], model_name="hang-1")
    team = _pipeline(model, calls, model_timeout=0.3)
    try:
        with pytest.raises(ModelTimeoutError) as caught:
            if mode == "sync":
                team.invoke("go", thread_id="t", checkpointer=store)
            else:
                await team.ainvoke("go", thread_id="t", checkpointer=store)
    finally:
        model.release.set()
    error = caught.value
    assert isinstance(error, TimeoutError)  # a builtin TimeoutError too
    assert error.agent == "writer" and error.model == "hang-1"
    message = str(error)
    assert "Agent `writer`" in message and "model_timeout=0.3 s" in message
    assert "resume" in message and "ModelRetry" in message  # the fixes
    assert error.thread_id == "t"
    # nothing was lost: prep's result is stored, and the resume asks the model again only
    assert team.get_state("t").values["notes"] == "PREP"
    state = team.resume("t") if mode == "sync" else await team.aresume("t")
    assert state["draft"] == "on time"
    assert (calls["prep"], model.calls) == (1, 2)


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_model_retry_retries_a_model_timeout(mode, store, calls) -> None:
    model = HangingModel(replies=["late", "second try"], hangs=1)
    team = _pipeline(model, calls, model_timeout=0.3, hooks=[ModelRetry(max_attempts=2, backoff=0)])
    try:
        if mode == "sync":
            state = team.invoke("go", thread_id="t", checkpointer=store)
        else:
            state = await team.ainvoke("go", thread_id="t", checkpointer=store)
    finally:
        model.release.set()
    assert state["draft"] == "second try" and model.calls == 2


def test_without_retries_left_the_timeout_is_raised(store, calls) -> None:
    model = HangingModel(replies=["a", "b", "c"], hangs=3)
    team = _pipeline(model, calls, model_timeout=0.2, hooks=[ModelRetry(max_attempts=2, backoff=0)])
    try:
        with pytest.raises(ModelTimeoutError, match="model_timeout=0.2 s"):
            team.invoke("go", thread_id="t", checkpointer=store)
    finally:
        model.release.set()
    assert model.calls == 2


def _tool_agent(tool, calls) -> tuple[SequentialAgent, ScriptedChatModel]:
    model = ScriptedChatModel(replies=[tool_call(tool.name, {"q": "x"}), "went on without it"])
    worker = ReactAgent(
        name="worker",
        model=model,
        tools=[tool],
        output_key="out",
        default_tool_policy=ToolPolicy(timeout=0.3, max_retries=1, backoff=0),
    )
    team = SequentialAgent(
        name="team",
        sub_agents=[FunctionAgent(name="prep", fn=calls.step("prep"), output_key="notes"), worker],
    )
    return team, model


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("kind", ["sync tool", "async tool"])
async def test_a_hanging_tool_times_out_and_the_model_is_told(mode, kind, store, calls) -> None:
    release = threading.Event()
    attempts: list[str] = []

    def hang(q: str) -> str:
        """Hangs."""
        attempts.append(q)
        release.wait(WAIT)
        return "late"

    async def ahang(q: str) -> str:
        """Hangs."""
        attempts.append(q)
        await asyncio.sleep(WAIT)
        return "late"

    tool = (
        StructuredTool.from_function(hang, name="lookup")
        if kind == "sync tool"
        else StructuredTool.from_function(coroutine=ahang, name="lookup")
    )
    team, model = _tool_agent(tool, calls)
    try:
        if mode == "sync":
            state = team.invoke("go", thread_id="t", checkpointer=store)
        else:
            state = await team.ainvoke("go", thread_id="t", checkpointer=store)
    finally:
        release.set()
    assert state["out"] == "went on without it"
    assert attempts == ["x", "x"]  # TIMEOUT is retried (max_retries=1), then handed back
    told = model.requests[1][-1]
    assert isinstance(told, ToolMessage) and told.status == "error"
    assert told.text.startswith("Error [TIMEOUT] in tool `lookup`: no answer within 0.3 s")


class StallingStreamModel(ScriptedChatModel):
    """Streams the first token of its first reply, then stalls (a connection that stops mid-reply)."""

    release: threading.Event = Field(default_factory=threading.Event)

    def _stream(self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any):
        stall = self.calls == 0
        for n, chunk in enumerate(super()._stream(messages, stop, run_manager, **kw)):
            yield chunk
            if stall and n == 0:
                self.release.wait(WAIT)

    async def _astream(self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any):
        stall = self.calls == 0
        n = 0
        async for chunk in super()._astream(messages, stop, run_manager, **kw):
            yield chunk
            if stall and n == 0:
                await asyncio.sleep(WAIT)
            n += 1


@pytest.mark.parametrize("mode", ["stream", "astream"])
async def test_a_stream_that_stalls_mid_reply_times_out_and_the_run_resumes(
    mode, store, calls
) -> None:
    model = StallingStreamModel(replies=["a late answer", "on time"], model_name="stall-1")
    team = _pipeline(model, calls, model_timeout=0.3)
    seen: list[str] = []
    try:
        with pytest.raises(ModelTimeoutError, match="model_timeout=0.3 s"):
            if mode == "stream":
                for event in team.stream("go", thread_id="t", checkpointer=store):
                    seen.append(type(event).__name__)
            else:
                async for event in team.astream("go", thread_id="t", checkpointer=store):
                    seen.append(type(event).__name__)
    finally:
        model.release.set()
    assert "ModelToken" in seen  # it had begun to answer
    assert "RunFinished" not in seen
    state = team.resume("t")
    assert state["draft"] == "on time" and (calls["prep"], model.calls) == (1, 2)
