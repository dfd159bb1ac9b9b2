"""HybridContext as `ReactAgent(context=...)`: order, view-only changes, stats, events, async, nesting."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool

from graphflow import ReactAgent, SequentialAgent
from graphflow.context import (
    ContextStats,
    HybridContext,
    ObservationMasking,
    Summarization,
    check_tool_pairs,
)
from graphflow.events import CustomEvent
from graphflow.exceptions import AgentSpecError, GraphflowConfigError
from graphflow.hooks.base import ModelHook
from graphflow.testing import ScriptedChatModel, tool_call
from tests.context.context_helpers import (
    big_result,
    next_round,
    placeholders,
    rounds_so_far,
    searching,
    shape,
    web_search,
)


def _script(rounds):
    def script(messages, n):
        r = next_round(messages)
        return tool_call("web_search", {"query": f"q{r}"}) if r < rounds else f"answer after {r}"

    return script


class Spy(ModelHook):
    def __init__(self):
        self.seen = []

    def before_model(self, request):
        self.seen.append(list(request.messages))


def _agent(rounds, **kw):
    return ReactAgent(
        name="researcher",
        model=ScriptedChatModel(fn=_script(rounds)),
        tools=[web_search],
        context=HybridContext(ObservationMasking(keep_last=2)),
        max_iterations=30,
        **kw,
    )


def test_the_policy_runs_before_the_agents_own_hooks():
    spy = Spy()
    agent = _agent(6, hooks=[spy])
    agent.invoke("go", thread_id="t")
    assert [len(placeholders(seen)) for seen in spy.seen] == [0, 0, 0, 1, 2, 3, 4]
    assert shape(spy.seen) == shape(agent.model.requests)


def test_only_the_view_changes_and_stats_are_recorded():
    agent = _agent(8)
    agent.invoke("go", thread_id="t")
    state = agent.get_state("t").values
    results = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert [m.content for m in results] == [big_result(f"q{r}") for r in range(8)]
    stats = ContextStats.from_state(state)
    assert stats.model_calls == 9 and stats.masking_fired == 6 and stats.masked_results == 6
    assert stats.summaries == 0 and stats.summarizer_calls == 0  # masking was enough
    assert stats.tokens_saved > 6 * 400
    assert stats.largest_request_tokens == stats.last_request_tokens
    assert "gf_context" not in agent.invoke("again", thread_id="t2")  # private, never returned


def test_custom_stream_events():
    agent = _agent(5)
    events = [
        chunk["graphflow_context"]
        for _, chunk in agent.stream("go", thread_id="t", stream_mode="custom")
        if "graphflow_context" in chunk
    ]
    assert [e["masked"] for e in events] == [1, 2, 3]
    assert all(
        e["agent"] == "researcher" and e["tokens_after"] < e["tokens_before"] for e in events
    )


async def test_async_runs_send_the_same_requests():
    sync_agent, async_agent = _agent(7), _agent(7)
    sync_agent.invoke("go", thread_id="s")
    await async_agent.ainvoke("go", thread_id="a")
    assert shape(async_agent.model.requests) == shape(sync_agent.model.requests)
    assert placeholders(async_agent.model.requests[-1])


async def test_async_recall():
    agent = ReactAgent(
        name="a",
        model=ScriptedChatModel(fn=searching(5, recall_at={4: "obs_1"})),
        tools=[web_search],
        context=HybridContext(ObservationMasking(keep_last=1)),
    )
    await agent.ainvoke("go", thread_id="t")
    recalled = [m for m in agent.get_state("t").values["messages"] if isinstance(m, ToolMessage)][4]
    assert recalled.name == "recall_observation" and recalled.content == big_result("q0")


def test_sub_agents_keep_their_own_observations():
    def recall_first(messages, n):
        if n == 0:
            return tool_call("recall_observation", {"id": "obs_1"})  # the first agent's obs_1
        return "nothing to recall"

    policy = HybridContext(ObservationMasking(keep_last=1))  # one policy object for both
    first = ReactAgent(
        name="first", model=ScriptedChatModel(fn=_script(4)), tools=[web_search], context=policy
    )
    second = ReactAgent(
        name="second",
        model=ScriptedChatModel(fn=recall_first),
        tools=[web_search],
        context=policy,
        output_key="second_out",
    )
    team = SequentialAgent(name="team", sub_agents=[first, second])
    result = team.invoke("go", thread_id="t")
    assert result["second_out"] == "nothing to recall"
    assert placeholders(first.model.requests[-1])
    sent = second.model.requests[1]
    [answer] = [m for m in sent if isinstance(m, ToolMessage)]
    assert answer.status == "error" and "no observation 'obs_1'" in answer.content
    assert "gf_context" not in team.get_state("t").values


def test_usage_metadata_calibrates_the_counts():
    def script(messages, n):
        r = next_round(messages)
        reply = tool_call("web_search", {"query": f"q{r}"}) if r < 3 else AIMessage("done")
        reply.usage_metadata = {"input_tokens": 4_000, "output_tokens": 10, "total_tokens": 4_010}
        return reply

    agent = ReactAgent(
        name="a", model=ScriptedChatModel(fn=script), tools=[web_search], context=HybridContext()
    )
    agent.invoke("go", thread_id="t")
    record = agent.get_state("t").values["gf_context"]
    assert record["calibration"] == pytest.approx(4_000 / record["sent"]["tokens"], rel=0.5)
    assert record["calibration"] > 1


def test_context_must_be_a_model_hook():
    with pytest.raises(AgentSpecError, match="context"):
        ReactAgent(name="a", model=ScriptedChatModel(), context="hybrid")


def test_a_tool_named_like_the_recall_tool_is_refused():
    @tool
    def recall_observation(id: str) -> str:
        """Mine."""
        return id

    agent = ReactAgent(
        name="a",
        model=ScriptedChatModel(replies=["x"]),
        tools=[recall_observation],
        context=HybridContext(),
    )
    with pytest.raises(GraphflowConfigError, match="rename that tool"):
        agent.invoke("go", thread_id="t")


def test_masking_tightens_before_any_summary_is_paid_for():
    @tool
    def lookup(query: str) -> str:
        """Look something up."""
        return f"{query}: " + "detail " * 150

    def script(messages, n):
        r = next_round(messages)
        return tool_call("lookup", {"query": f"q{r}"}) if r < 26 else "done"

    summarizer = ScriptedChatModel(fn=lambda m, n: "## Progress\nsearched")
    model = ScriptedChatModel(fn=script)
    policy = HybridContext(
        ObservationMasking(keep_last=6),
        Summarization(summarizer, keep_last=2),
        context_window=2_500,
    )
    agent = ReactAgent(name="a", model=model, tools=[lookup], context=policy, max_iterations=40)
    agent.invoke("go", thread_id="t")
    summarized = [
        any("graphflow_summary" in m.additional_kwargs for m in r) for r in model.requests
    ]
    tightened = [
        not s and len(placeholders(r)) > max(0, rounds_so_far(r) - 6)
        for r, s in zip(model.requests, summarized, strict=True)
    ]
    first_tight, first_summary = tightened.index(True), summarized.index(True)
    # first the 6-round masking, then masking down to the 2 rounds a summary keeps, then a summary
    assert 6 < first_tight < first_summary
    for request in model.requests[first_tight:first_summary]:  # (the history only grows)
        whole = [m for m in request if isinstance(m, ToolMessage) and not placeholders([m])]
        assert len(whole) <= 2
    assert ContextStats.from_state(agent.get_state("t")).summaries == summarizer.calls >= 1


def test_an_orphan_made_by_a_later_hook_is_repaired_before_sending(caplog):
    class DropFirstCall(ModelHook):
        """A careless trimming hook: drops the first tool call but leaves its result."""

        def before_model(self, request):
            messages = list(request.messages)
            first = next(
                (i for i, m in enumerate(messages) if getattr(m, "tool_calls", None)), None
            )
            if first is None:
                return None
            return request.override(messages=messages[:first] + messages[first + 1 :])

    model = ScriptedChatModel(
        replies=[tool_call("web_search", {"query": f"q{r}"}) for r in range(4)] + ["done"]
    )
    agent = ReactAgent(
        name="a", model=model, tools=[web_search], context=HybridContext(), hooks=[DropFirstCall()]
    )
    with caplog.at_level("WARNING", logger="graphflow.context"):
        streamed = list(agent.stream("go", thread_id="t", events=CustomEvent))
    assert model.calls == 5
    for request in model.requests:
        assert check_tool_pairs(request) == []  # the orphan result never reached the model
    sent = [[m.content for m in r if isinstance(m, ToolMessage)] for r in model.requests]
    assert sent == [[], [], *[[big_result(f"q{k}") for k in range(1, n)] for n in (2, 3, 4)]]
    assert caplog.text.count("repaired 1 orphan") == 4
    late = [
        x
        for e in streamed
        if isinstance(e.data, dict) and "graphflow_context" in e.data
        for x in e.data["graphflow_context"]["events"]
        if x["event"] == "pairs_repaired"
    ]
    assert late == [{"event": "pairs_repaired", "count": 1, "late": True}] * 4


def test_hooks_see_the_policys_record():
    class Reader(ModelHook):
        def __init__(self):
            self.seen = []

        def before_model(self, request):
            # this call's record (in the request's state writes) and the last call's (in state)
            self.seen.append(
                (
                    ContextStats.from_state(request.state_update),
                    ContextStats.from_state(request.state),
                )
            )

    reader = Reader()
    agent = _agent(5, hooks=[reader])
    agent.invoke("go", thread_id="t")
    now = [s.masked_results for s, _ in reader.seen]
    assert now == [0, 0, 0, 1, 2, 3]
    assert [s.model_calls for s, _ in reader.seen] == [1, 2, 3, 4, 5, 6]
    assert [s.model_calls for _, s in reader.seen] == [0, 1, 2, 3, 4, 5]
    assert reader.seen[-1][0] == ContextStats.from_state(agent.get_state("t"))


def test_typed_events_carry_what_the_policy_did():
    @tool
    def status(job: str) -> str:
        """Job status."""
        return f"{job}: pending " + "." * 600

    summarizer = ScriptedChatModel(fn=lambda m, n: "## Progress\npolled")
    model = ScriptedChatModel(replies=[tool_call("status", {"job": "42"})] * 6 + ["stop"])
    agent = ReactAgent(
        name="poller",
        model=model,
        tools=[status],
        context=HybridContext(
            ObservationMasking(keep_last=2),
            Summarization(summarizer, keep_last=1),
            context_window=700,
        ),
    )
    found = [
        e.data["graphflow_context"]
        for e in agent.stream("Wait for job 42.", thread_id="t", events=CustomEvent)
        if isinstance(e.data, dict) and "graphflow_context" in e.data
    ]
    kinds = [x["event"] for e in found for x in e["events"]]
    assert kinds.count("loop_detected") == 1 and "summarized" in kinds
    assert all(e["agent"] == "poller" for e in found)
    assert any(e["masked"] for e in found)
    stats = ContextStats.from_state(agent.get_state("t"))
    assert stats.loops_detected == 1 and stats.summaries == kinds.count("summarized")
