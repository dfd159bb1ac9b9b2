"""A resumed run (SQLite, crash in a tool step or a model call) masks the same and never re-summarizes."""

from __future__ import annotations

import pytest
from langchain_core.tools import tool

from graphflow import ReactAgent
from graphflow.context import ContextStats, HybridContext, ObservationMasking, Summarization
from graphflow.hooks.base import ToolHook
from graphflow.testing import ScriptedChatModel, tool_call
from tests.context.context_helpers import FIVE_SECTION_SUMMARY, next_round, shape

ROUNDS = 14


@tool
def lookup(query: str) -> str:
    """Look something up."""
    return f"{query}: " + "detail " * 150


class CrashOnce(ToolHook):
    """The tools step dies once, on the call of `query` (as a killed worker would)."""

    def __init__(self, query: str | None) -> None:
        self.query = query

    def wrap_tool_call(self, request, handler):
        if self.query is not None and request.tool_call["args"].get("query") == self.query:
            self.query = None
            raise RuntimeError("worker died in the tools step")
        return handler(request)


def _build(*, crash_tool=None, crash_model_at=None, offload=None):
    state = {"crash_at": crash_model_at}

    def script(messages, n):
        r = next_round(messages)
        if state["crash_at"] is not None and r == state["crash_at"]:
            state["crash_at"] = None
            raise RuntimeError("model provider died")
        return tool_call("lookup", {"query": f"q{r}"}) if r < ROUNDS else "final answer"

    model = ScriptedChatModel(fn=script)
    summarizer = ScriptedChatModel(fn=lambda m, n: FIVE_SECTION_SUMMARY)
    policy = HybridContext(
        ObservationMasking(keep_last=3, keep_tokens=600, min_chars=200),  # 2 results of 264
        Summarization(summarizer, keep_last=2),
        context_window=1_400,
        offload=offload,
    )
    agent = ReactAgent(
        name="analyst",
        model=model,
        tools=[lookup],
        context=policy,
        hooks=[CrashOnce(crash_tool)],
        max_iterations=40,
    )
    return agent, model, summarizer


@pytest.fixture
def reference():
    agent, model, summarizer = _build()
    agent.invoke("Find the facts.", thread_id="ref")
    stats = ContextStats.from_state(agent.get_state("ref"))
    assert stats.summaries >= 2 and stats.masking_fired > 0  # both layers are exercised
    return shape(model.requests), summarizer.calls, stats


def _summarized_before(requests, index):
    return any("graphflow_summary" in m.additional_kwargs for r in requests[:index] for m in r)


@pytest.mark.parametrize("fresh_process", [False, True])
def test_crash_in_a_tool_step_then_resume(tmp_path, reference, fresh_process):
    expected, summarizer_calls, expected_stats = reference
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    agent, model, summarizer = _build(crash_tool="q9")
    with pytest.raises(RuntimeError, match="worker died"):
        agent.invoke("Find the facts.", thread_id="t", checkpointer=url)
    assert _summarized_before(model.requests, len(model.requests))
    calls_before = summarizer.calls
    if fresh_process:
        # a new agent with a new in-memory offload store, as after a restart: the summary made
        # before the crash can only come from the checkpointed state
        agent, model2, summarizer2 = _build()
        result = agent.resume("t", checkpointer=url)
        assert shape(model.requests + model2.requests) == expected
        assert summarizer2.calls == summarizer_calls - calls_before  # nothing summarized twice
        # the next summary folds in the one made before the crash, read from the state
        first_input = summarizer2.requests[0][1].content
        assert "Earlier summary:" in first_input and "screen ratio 16:10" in first_input
    else:
        result = agent.resume("t", checkpointer=url)
        # every request, before and after the crash, is the one the uncrashed run sent
        assert shape(model.requests) == expected
        assert summarizer.calls == summarizer_calls  # nothing summarized twice
    assert result["messages"][-1].content == "final answer"
    assert summarizer_calls > calls_before  # (later summaries were still made)
    stats = ContextStats.from_state(agent.get_state("t", checkpointer=url))
    assert stats == expected_stats


@pytest.mark.parametrize("fresh_process", [False, True])
def test_crash_in_a_model_call_right_after_a_summary(tmp_path, reference, fresh_process):
    expected, summarizer_calls, expected_stats = reference
    # the call at which the reference run made its first summary
    first = next(i for i, r in enumerate(expected) if any("[Summary of" in m[1] for m in r))
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    offload = tmp_path / "offload"
    agent, model, summarizer = _build(crash_model_at=first, offload=offload)
    with pytest.raises(RuntimeError, match="model provider died"):
        agent.invoke("Find the facts.", thread_id="t", checkpointer=url)
    # the summary was made in this call's before_model; the call died before it was saved
    assert summarizer.calls == 1
    if fresh_process:  # a new agent object, as after a restart: only the directory survives
        agent, model2, summarizer = _build(offload=offload)
        agent.resume("t", checkpointer=url)
        assert shape(model.requests[:-1] + model2.requests) == expected
        assert summarizer.calls == summarizer_calls - 1
    else:
        agent.resume("t", checkpointer=url)
        # the failed call's request was recorded too, and is sent again identically
        assert shape([model.requests[first]]) == shape([model.requests[first + 1]])
        assert shape(model.requests[:first] + model.requests[first + 1 :]) == expected
        assert summarizer.calls == summarizer_calls
    stats = ContextStats.from_state(agent.get_state("t", checkpointer=url))
    assert stats == expected_stats
