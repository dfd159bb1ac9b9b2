"""What a policy left out of each request is recorded: `gf_context["last_call"]` and stream events.

A viewer of the run (the web UI's agent panel) reads these instead of running the steps again.
"""

from __future__ import annotations

from langchain_core.messages import ToolMessage

from graphflow import ReactAgent
from graphflow.context import ObservationMasking, Summarization
from graphflow.events import CustomEvent
from graphflow.testing import ScriptedChatModel, tool_call
from tests.context.context_helpers import (
    FIVE_SECTION_SUMMARY,
    RESULT_CHARS,
    next_round,
    placeholders,
    searching,
    web_search,
)

MASK = "graphflow_masked"


def _masked_ids(request):
    return [m.additional_kwargs[MASK] for m in request if MASK in m.additional_kwargs]


def test_masked_results_are_recorded_with_each_call():
    model = ScriptedChatModel(fn=searching(4))
    agent = ReactAgent(
        name="researcher",
        model=model,
        tools=[web_search],
        context=ObservationMasking(keep_last=1, keep_tokens=None),
    )
    events = [
        e.data["graphflow_context"]
        for e in agent.stream("go", thread_id="t", events=True)
        if isinstance(e, CustomEvent) and "graphflow_context" in (e.data or {})
    ]
    # calls 2, 3 and 4 masked 1, 2 and 3 results: each event lists what its request masked
    assert [[m["obs_id"] for m in e["masked_results"]] for e in events] == [
        _masked_ids(r) for r in model.requests if _masked_ids(r)
    ]
    assert [len(e["masked_results"]) for e in events] == [1, 2, 3]
    state = agent.get_state("t").values
    last = state["gf_context"]["last_call"]
    assert last["call"] == 4 and last["summary"] is None
    assert [m["obs_id"] for m in last["masked"]] == _masked_ids(model.requests[-1])
    results = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert [m["tool_call_id"] for m in last["masked"]] == [m.tool_call_id for m in results[:3]]
    assert {(m["tool"], m["chars"]) for m in last["masked"]} == {("web_search", RESULT_CHARS)}
    assert len(placeholders(model.requests[-1])) == 3


def _rounds(rounds):
    def script(messages, n):  # (rounds read from the newest call: a summary removes rounds)
        r = next_round(messages)
        return tool_call("web_search", {"query": f"q{r}"}) if r < rounds else "final answer"

    return script


def test_a_summary_in_the_request_is_recorded():
    summarizer = ScriptedChatModel(fn=lambda m, n: FIVE_SECTION_SUMMARY)
    agent = ReactAgent(
        name="analyst",
        model=ScriptedChatModel(fn=_rounds(8)),
        tools=[web_search],
        context=Summarization(summarizer, keep_last=2, context_window=3_000),
        max_iterations=40,
    )
    assert agent.invoke("go", thread_id="t")["messages"][-1].content == "final answer"
    record = agent.get_state("t").values["gf_context"]
    assert record["summary"], "the small window forced a summary"
    last = record["last_call"]
    assert last["summary"] == {
        "rounds": record["summary"]["rounds"],
        "through": record["summary"]["through"],
    }
