"""Structured summarization: five sections, bounded summarizer input, reuse, failure path."""

from __future__ import annotations

import re

import pytest
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import tool

from graphflow import ReactAgent
from graphflow.context import (
    ContextStats,
    HybridContext,
    ObservationMasking,
    Summarization,
    count_tokens,
)
from graphflow.context._summarizer import SECTIONS, normalize
from graphflow.testing import ScriptedChatModel, tool_call
from tests.context.context_helpers import FIVE_SECTION_SUMMARY, next_round, placeholders

SUMMARY = "graphflow_summary"


@tool
def lookup(query: str) -> str:
    """Look something up."""
    return f"{query}: " + "detail " * 150  # about 1,000 characters


def _searching(rounds: int):
    def script(messages, n):
        r = next_round(messages)
        return tool_call("lookup", {"query": f"q{r}"}) if r < rounds else "final answer"

    return script


def _summaries(request):
    return [m for m in request if SUMMARY in m.additional_kwargs]


def _run(policy, rounds=12, thread="t"):
    model = ScriptedChatModel(fn=_searching(rounds))
    agent = ReactAgent(
        name="analyst", model=model, tools=[lookup], context=policy, max_iterations=40
    )
    result = agent.invoke("Find the facts.", thread_id=thread)
    return agent, model, result


def test_summary_has_the_five_sections_and_is_clearly_marked():
    summarizer = ScriptedChatModel(fn=lambda m, n: FIVE_SECTION_SUMMARY)
    policy = Summarization(summarizer, keep_last=2, context_window=2_000)
    agent, model, result = _run(policy)
    assert result["messages"][-1].content == "final answer"
    summarized = [r for r in model.requests if _summaries(r)]
    assert summarized, "the window was small enough to force a summary"
    [message] = _summaries(summarized[0])
    assert isinstance(message, HumanMessage)
    text = message.content
    assert text.startswith("[Summary of earlier work — ")
    headings = re.findall(r"^## (.+)$", text, re.MULTILINE)
    assert headings == list(SECTIONS)
    assert "screen ratio 16:10" in text
    # the task stays word for word, first; the last keep_last rounds stay whole after the summary
    request = summarized[0]
    assert request[0].content == "Find the facts."
    assert request[1] is message or request[1].content == message.content
    assert sum(1 for m in request[2:] if getattr(m, "tool_calls", None)) == 2
    # only the view changed: the history holds no summary and every original result
    history = agent.get_state("t").values["messages"]
    assert not _summaries(history)
    assert len([m for m in history if isinstance(m, ToolMessage)]) == 12
    record = agent.get_state("t").values["gf_context"]["summary"]
    assert record["text"] in text and record["rounds"] >= 1
    # the summarizer was shown the rounds it condensed, with their observation ids
    first_input = summarizer.requests[0][1].content
    assert "lookup" in first_input and "(obs_1, recallable)" in first_input
    assert "recall_observation" in model.request_tools[model.requests.index(request)]


def test_a_summary_is_reused_not_remade():
    summarizer = ScriptedChatModel(fn=lambda m, n: FIVE_SECTION_SUMMARY)
    # masking keeps requests below the trigger after one summary
    policy = HybridContext(
        ObservationMasking(keep_last=2, min_chars=200),
        Summarization(summarizer, keep_last=2),
        context_window=1_500,
    )
    agent, model, _ = _run(policy, rounds=20)
    stats = ContextStats.from_state(agent.get_state("t"))
    with_summary = sum(1 for r in model.requests if _summaries(r))
    assert stats.summaries == summarizer.calls == stats.summarizer_calls
    assert with_summary > stats.summaries  # later calls reuse the stored summary
    assert stats.masking_fired > 0


def test_free_text_is_put_into_the_five_sections():
    text = normalize("We searched for X and found Y.\nStill need Z.")
    assert re.findall(r"^## (.+)$", text, re.MULTILINE) == list(SECTIONS)
    assert "We searched for X and found Y." in text.split("## Progress")[1].split("##")[0]
    assert text.count("(not stated)") == 4
    bold = normalize("**Goal**\nA\n**Next Steps:**\nB")
    assert "## Goal\nA" in bold and "## Next Steps\nB" in bold


def test_the_summarizer_input_is_bounded_and_chunked():
    summarizer = ScriptedChatModel(fn=lambda m, n: f"## Progress\npart {n}")
    policy = Summarization(summarizer, keep_last=1, context_window=3_000, max_input_tokens=600)
    agent, model, _ = _run(policy, rounds=12)
    assert summarizer.calls > 2
    for request in summarizer.requests:
        assert count_tokens(request, model=summarizer) <= 600 + 16  # + per-message overhead
    merges = [r for r in summarizer.requests if "Partial summaries" in r[1].content]
    assert merges, "several chunks are merged: summaries of summaries"
    stats = ContextStats.from_state(agent.get_state("t"))
    assert stats.summarizer_calls == summarizer.calls and stats.summarizer_failures == 0


def test_a_message_longer_than_the_budget_is_split_not_cut():
    huge = "start " + "x" * 6_000 + " end-marker"

    @tool
    def dump(query: str) -> str:
        """Dump everything."""
        return huge

    def script(messages, n):
        r = next_round(messages)
        return tool_call("dump", {"query": f"q{r}"}) if r < 3 else "done"

    summarizer = ScriptedChatModel(fn=lambda m, n: "## Progress\nok")
    agent = ReactAgent(
        name="a",
        model=ScriptedChatModel(fn=script),
        tools=[dump],
        context=Summarization(summarizer, keep_last=1, context_window=2_000, max_input_tokens=700),
    )
    agent.invoke("go", thread_id="t")
    sent = "".join(r[1].content for r in summarizer.requests)
    assert "end-marker" in sent and sent.count("x" * 100) >= 6_000 // 100 - 2


def test_a_failing_summarizer_never_kills_the_run():
    summarizer = ScriptedChatModel(fn=lambda m, n: RuntimeError("summarizer is down"))
    policy = HybridContext(
        ObservationMasking(keep_last=3), Summarization(summarizer, keep_last=1), context_window=900
    )
    agent, model, result = _run(policy, rounds=10)
    assert result["messages"][-1].content == "final answer"
    stats = ContextStats.from_state(agent.get_state("t"))
    assert stats.summarizer_failures >= 1 and stats.summaries == 0
    assert stats.last_error == "RuntimeError: summarizer is down"
    assert not any(_summaries(r) for r in model.requests)
    assert placeholders(model.requests[-1])  # it went on with masking
    failures = agent.get_state("t").values["gf_context"]["failures"]
    assert failures[-1]["error"] == "RuntimeError: summarizer is down"


def test_the_agents_own_model_summarizes_by_default():
    def script(messages, n):
        if "condense the working history" in str(messages[0].content):
            return FIVE_SECTION_SUMMARY
        r = next_round(messages)
        return tool_call("lookup", {"query": f"q{r}"}) if r < 8 else "final answer"

    model = ScriptedChatModel(fn=script)
    agent = ReactAgent(
        name="a", model=model, tools=[lookup], context=HybridContext(context_window=1_200)
    )
    assert agent.invoke("go", thread_id="t")["messages"][-1].content == "final answer"
    stats = ContextStats.from_state(agent.get_state("t"))
    assert stats.summaries >= 1 and stats.summarizer_calls >= 1
    assert model.request_tools[-1] == ["lookup", "recall_observation"]


def test_invalid_settings_are_rejected():
    with pytest.raises(ValueError, match="trigger"):
        Summarization(trigger=1.5)
    with pytest.raises(ValueError, match="keep_last"):
        Summarization(keep_last=0)
    with pytest.raises(ValueError, match="max_input_tokens"):
        Summarization(max_input_tokens=10)


def test_results_of_summarized_rounds_stay_recallable():
    state = {"recalled": False}

    def script(messages, n):
        if not state["recalled"] and _summaries(messages):
            state["recalled"] = True
            return tool_call("recall_observation", {"id": "obs_1"})
        r = next_round(messages)
        return tool_call("lookup", {"query": f"q{r}"}) if r < 10 else "final answer"

    summarizer = ScriptedChatModel(fn=lambda m, n: FIVE_SECTION_SUMMARY)
    model = ScriptedChatModel(fn=script)
    agent = ReactAgent(
        name="analyst",
        model=model,
        tools=[lookup],
        # summarization alone: nothing is masked, the summary is what hides obs_1
        context=Summarization(summarizer, keep_last=2, context_window=2_000),
        max_iterations=40,
    )
    agent.invoke("Find the facts.", thread_id="t")
    assert state["recalled"] and not any(placeholders(r) for r in model.requests)
    history = agent.get_state("t").values["messages"]
    [recalled] = [
        m for m in history if isinstance(m, ToolMessage) and m.name == "recall_observation"
    ]
    assert recalled.status == "success"
    assert recalled.content == lookup.invoke({"query": "q0"})
