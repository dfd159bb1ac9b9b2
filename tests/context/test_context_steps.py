"""A context policy is an ordered list of public steps; a user's own step is a `ContextStep`."""

from __future__ import annotations

import asyncio
import re

import pytest
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.tools import tool

from graphflow import ReactAgent
from graphflow.context import (
    ContextPipeline,
    ContextStats,
    ContextStep,
    HybridContext,
    LoopBreaker,
    ObservationMasking,
    StepContext,
    Summarization,
    check_tool_pairs,
)
from graphflow.events import CustomEvent
from graphflow.exceptions import AgentRunError, GraphflowConfigError
from graphflow.testing import ScriptedChatModel, tool_call
from tests.context.context_helpers import big_result, next_round, placeholders, shape, web_search

EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")


class RedactEmails(ContextStep):
    """Replace every e-mail address the model would be sent by `[email]`."""

    def apply(self, messages: list[BaseMessage], context: StepContext) -> list[BaseMessage]:
        out: list[BaseMessage] = []
        found = 0
        for message in messages:
            if isinstance(message.content, str) and EMAIL.search(message.content):
                found += len(EMAIL.findall(message.content))
                message = message.model_copy(
                    update={"content": EMAIL.sub("[email]", message.content)}
                )
            out.append(message)
        if found:
            context.event("emails_redacted", count=found)
        return out


class KeepLast(ContextStep):
    """Drop every conversation message but the task and the last `n` (system messages stay)."""

    def __init__(self, n: int) -> None:
        self.n = n

    def apply(self, messages, context):
        system = [m for m in messages if isinstance(m, SystemMessage)]
        rest = [m for m in messages if not isinstance(m, SystemMessage)]
        if len(rest) <= self.n + 1:
            return messages
        return [*system, rest[0], *rest[-self.n :]]


class Tag(ContextStep):
    """Append a user message naming this step (to see the order steps ran in)."""

    def __init__(self, label: str) -> None:
        self.label = label

    def apply(self, messages, context):
        return [*messages, HumanMessage(content=f"[{self.label}]")]


@tool
def crm_lookup(name: str) -> str:
    """Look a customer up."""
    return f"{name}: reach them at {name.lower()}@example.com or {name.lower()}.ops@corp.io"


def _crm_script(rounds: int):
    names = ["Alice", "Bob", "Carol", "Dave", "Erin", "Frank"]

    def script(messages, n):
        done = sum(1 for m in messages if isinstance(m, AIMessage) and m.tool_calls)
        if done < rounds:
            return tool_call("crm_lookup", {"name": names[done]})
        return "Contacted everyone."

    return script


def test_a_user_step_changes_what_the_model_is_sent_and_never_the_history():
    model = ScriptedChatModel(fn=_crm_script(3))
    agent = ReactAgent(
        name="crm",
        model=model,
        tools=[crm_lookup],
        system_prompt="You help sales; ops contact is ops@corp.io.",
        context=ContextPipeline([RedactEmails()]),
    )
    streamed = list(agent.stream("Reach out to our customers.", thread_id="t", events=CustomEvent))
    assert model.calls == 4
    for request in model.requests:
        sent = "\n".join(str(m.content) for m in request)
        assert not EMAIL.search(sent), sent
    last = model.requests[-1]
    assert last[0].content == "You help sales; ops contact is [email]."
    results = [m.content for m in last if isinstance(m, ToolMessage)]
    assert results == [f"{n}: reach them at [email] or [email]" for n in ("Alice", "Bob", "Carol")]
    # the checkpointed history keeps every address
    history = agent.get_state("t").values["messages"]
    stored = [m.content for m in history if isinstance(m, ToolMessage)]
    assert stored == [crm_lookup.invoke({"name": n}) for n in ("Alice", "Bob", "Carol")]
    # the step's event is streamed with the call's context record
    counts = [
        x["count"]
        for e in streamed
        if isinstance(e.data, dict) and "graphflow_context" in e.data
        for x in e.data["graphflow_context"]["events"]
        if x["event"] == "emails_redacted"
    ]
    assert counts == [1, 3, 5, 7]  # the system prompt's, then two more per result
    stats = ContextStats.from_state(agent.get_state("t"))
    assert stats.model_calls == 4 and stats.masked_results == 0


def test_steps_run_in_the_order_given():
    def run(steps):
        model = ScriptedChatModel(replies=[tool_call("web_search", {"query": "q0"}), "done"])
        agent = ReactAgent(
            name="a", model=model, tools=[web_search], context=ContextPipeline(steps)
        )
        agent.invoke("go", thread_id="t")
        return [[m.content for m in r[-2:]] for r in model.requests]

    assert run([Tag("A"), Tag("B")]) == [["[A]", "[B]"]] * 2
    assert run([Tag("B"), Tag("A")]) == [["[B]", "[A]"]] * 2


def test_a_step_placed_before_or_after_masking_sees_the_view_of_the_steps_before_it():
    class Sizes(ContextStep):
        def __init__(self):
            self.seen: list[list[int]] = []

        def apply(self, messages, context):
            self.seen.append([len(m.text) for m in messages if isinstance(m, ToolMessage)])
            return messages

    def run(order):
        before, after = Sizes(), Sizes()
        masking = ObservationMasking(keep_last=1, keep_tokens=None)
        steps = {"before": before, "after": after, "mask": masking}
        model = ScriptedChatModel(fn=_searching(3))
        agent = ReactAgent(
            name="a",
            model=model,
            tools=[web_search],
            context=ContextPipeline([steps[k] for k in order]),
        )
        agent.invoke("go", thread_id="t")
        return before.seen[-1], after.seen[-1]

    whole, masked = run(["before", "mask", "after"])
    assert whole == [2140, 2140, 2140]
    assert masked[-1] == 2140 and all(size < 200 for size in masked[:-1])


def _searching(rounds: int):
    def script(messages, n):
        r = next_round(messages)
        return tool_call("web_search", {"query": f"q{r}"}) if r < rounds else "final answer"

    return script


def test_dropping_messages_keeps_every_request_well_paired_and_the_history_whole():
    model = ScriptedChatModel(fn=_searching(6))
    agent = ReactAgent(
        name="a",
        model=model,
        tools=[web_search],
        context=ContextPipeline([KeepLast(3)]),
        max_iterations=20,
    )
    assert agent.invoke("go", thread_id="t")["messages"][-1].content == "final answer"
    for request in model.requests:
        assert check_tool_pairs(request) == []
        assert request[0].content == "go"  # the task stays
        assert len(request) <= 1 + 3 + 1  # the task, the last three, a stand-in result at most
    history = agent.get_state("t").values["messages"]
    assert len([m for m in history if isinstance(m, ToolMessage)]) == 6
    assert ContextStats.from_state(agent.get_state("t")).pair_repairs >= 1


def test_a_step_may_offload_what_it_drops_and_the_model_can_recall_it():
    class OffloadOld(ContextStep):
        def apply(self, messages, context):
            results = [m for m in messages if isinstance(m, ToolMessage)]
            old = {id(m) for m in results[:-1]}
            return [context.offload(m) if id(m) in old else m for m in messages]

    recalled = {"done": False}

    def script(messages, n):
        if next_round(messages) == 3 and not recalled["done"]:
            recalled["done"] = True
            return tool_call("recall_observation", {"id": "obs_1"})
        return _searching(4)(messages, n)

    model = ScriptedChatModel(fn=script)
    agent = ReactAgent(
        name="a", model=model, tools=[web_search], context=ContextPipeline([OffloadOld()])
    )
    agent.invoke("go", thread_id="t")
    assert model.request_tools[0] == ["web_search"]
    assert model.request_tools[-1] == ["web_search", "recall_observation"]
    assert placeholders(model.requests[2]) == [
        '[web_search result (2,140 chars) omitted — recall_observation("obs_1")] Gist: '
        "Findings for q0: the Pura X has a 16:10 outer screen."
    ]
    history = agent.get_state("t").values["messages"]
    [answer] = [m for m in history if isinstance(m, ToolMessage) and m.name == "recall_observation"]
    assert answer.content == big_result("q0")


def test_the_step_context_describes_the_call():
    seen: list[dict] = []

    class Look(ContextStep):
        def apply(self, messages, context):
            seen.append(
                {
                    "agent": context.agent,
                    "call": context.call_number,
                    "history": len(context.history),
                    "tools": [t.name for t in context.tools],
                    "window": context.window,
                    "tokens": context.count_tokens(messages),
                    "model": context.model.model_name,
                    "state_keys": "messages" in context.state,
                }
            )
            return messages

    model = ScriptedChatModel(replies=[tool_call("web_search", {"query": "q0"}), "done"])
    agent = ReactAgent(
        name="scout",
        model=model,
        tools=[web_search],
        context=ContextPipeline([Look()], context_window=4_096),
    )
    agent.invoke("go", thread_id="t")
    assert [(s["agent"], s["call"], s["history"]) for s in seen] == [
        ("scout", 0, 1),
        ("scout", 1, 3),
    ]
    assert all(s["tools"] == ["web_search"] and s["window"] == 4_096 for s in seen)
    assert all(s["model"] == "scripted" and s["state_keys"] for s in seen)
    assert 0 < seen[0]["tokens"] < seen[1]["tokens"]
    assert ContextStats.from_state(agent.get_state("t")).last_request_tokens > 0


def test_a_pipeline_of_the_built_in_steps_builds_the_same_requests_as_hybrid_context():
    def run(policy):
        model = ScriptedChatModel(fn=_searching(9))
        summarizer = ScriptedChatModel(fn=lambda m, n: "## Goal\nFind facts.\n## Progress\nSome.")
        agent = ReactAgent(
            name="a",
            model=model,
            tools=[web_search],
            context=policy(summarizer),
            max_iterations=30,
        )
        agent.invoke("go", thread_id="t")
        return model.requests, ContextStats.from_state(agent.get_state("t"))

    hybrid, hybrid_stats = run(
        lambda s: HybridContext(
            ObservationMasking(keep_last=3), Summarization(s, keep_last=2), context_window=1_800
        )
    )
    listed, listed_stats = run(
        lambda s: ContextPipeline(
            [ObservationMasking(keep_last=3), Summarization(s, keep_last=2), LoopBreaker()],
            context_window=1_800,
        )
    )
    assert hybrid_stats.summaries >= 1 and hybrid_stats.masking_fired >= 1
    assert shape(listed) == shape(hybrid)
    assert listed_stats == hybrid_stats


def test_a_user_step_runs_beside_the_built_in_ones_in_async_runs_too():
    model = ScriptedChatModel(fn=_crm_script(4))
    agent = ReactAgent(
        name="crm",
        model=model,
        tools=[crm_lookup],
        context=ContextPipeline([ObservationMasking(keep_last=1, min_chars=10), RedactEmails()]),
    )
    asyncio.run(agent.ainvoke("Reach out.", thread_id="t"))
    last = model.requests[-1]
    assert len(placeholders(last)) == 3  # masked first, so the placeholders' gists are redacted
    assert not EMAIL.search("\n".join(str(m.content) for m in last))
    assert "Erin" not in str(last) and "Dave: reach them at [email]" in str(last)


def test_hybrid_context_is_a_pipeline_of_its_layers():
    policy = HybridContext(summarization=False)
    assert policy.steps == [policy.masking, policy.loop_breaker]
    policy.loop_breaker = None
    assert policy.context_steps() == (policy.masking,)
    assert isinstance(policy, ContextPipeline)


@pytest.mark.parametrize(
    ("steps", "match"),
    [
        ([42], "step 0 is a int, not a ContextStep"),
        ([RedactEmails(), lambda m, c: m], "step 1 is a function"),
        ([ContextStep()], "does not implement apply"),
        (7, "steps is a int"),
    ],
)
def test_a_pipeline_refuses_what_is_not_a_step(steps, match):
    with pytest.raises(GraphflowConfigError, match=match):
        ContextPipeline(steps)


def test_the_same_step_twice_is_refused():
    step = RedactEmails()
    with pytest.raises(GraphflowConfigError, match="given twice"):
        ContextPipeline([step, step])


def test_a_step_that_returns_no_list_is_a_clear_error():
    class Broken(ContextStep):
        def apply(self, messages, context):
            return None

    agent = ReactAgent(
        name="a", model=ScriptedChatModel(replies=["hi"]), context=ContextPipeline([Broken()])
    )
    with pytest.raises(AgentRunError, match=r"Agent `a`: context step Broken.apply\(\) returned"):
        agent.invoke("go", thread_id="t")


def test_a_step_may_only_offload_results_of_the_history():
    class Forge(ContextStep):
        def apply(self, messages, context):
            context.offload(ToolMessage(content="x" * 900, tool_call_id="nope", id="forged"))
            return messages

    agent = ReactAgent(
        name="a", model=ScriptedChatModel(replies=["hi"]), context=ContextPipeline([Forge()])
    )
    with pytest.raises(ValueError, match="only tool results of the checkpointed history"):
        agent.invoke("go", thread_id="t")
