"""Typed events from every nesting level: order, paths, branches, iterations, usage, resume, JSON."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.config import get_stream_writer
from langgraph.types import Command

from graphflow import (
    FunctionAgent,
    HumanApproval,
    LlmRoutingAgent,
    LoggingHook,
    LoopAgent,
    ParallelAgent,
    ReactAgent,
    SequentialAgent,
    output_contains,
)
from graphflow import events as ev
from graphflow.hooks.base import ModelHook, ToolHook
from graphflow.testing import ScriptedChatModel, tool_call

ROOT = "team"


@tool
def lookup(topic: str) -> str:
    """Look a topic up."""
    return f"facts about {topic}"


def _mark(state):
    get_stream_writer()({"marked": state["input"]})
    return "marked"


def team(*, approval: bool = False) -> SequentialAgent:
    """team → loop → par → {a (tool, hook), b}, then f (custom event): three levels deep."""
    a_model = ScriptedChatModel(
        replies=[
            tool_call("lookup", {"topic": "x"}),
            AIMessage(
                content="alpha says hi",
                usage_metadata={"input_tokens": 11, "output_tokens": 3, "total_tokens": 14},
            ),
        ]
    )
    b_model = ScriptedChatModel(replies=["beta says yo"])
    a = ReactAgent(
        name="a",
        model=a_model,
        tools=[lookup],
        output_key="a_out",
        hooks=[LoggingHook(), *([HumanApproval(["lookup"])] if approval else [])],
    )
    b = ReactAgent(name="b", model=b_model, output_key="b_out")
    par = ParallelAgent(name="par", sub_agents=[a, b])
    f = FunctionAgent(name="f", fn=_mark, output_key="f_out")
    loop = LoopAgent(name="loop", sub_agents=[par, f], max_iterations=1)
    return SequentialAgent(name=ROOT, sub_agents=[loop])


def _check_run(events: list[ev.Event]) -> None:
    # one thread, dense increasing sequence
    assert [e.seq for e in events] == list(range(events[0].seq, events[0].seq + len(events)))
    assert isinstance(events[0], ev.RunStarted) and isinstance(events[-1], ev.RunFinished)
    kinds = {type(e) for e in events}
    assert {
        ev.AgentStarted,
        ev.AgentFinished,
        ev.ModelStarted,
        ev.ModelToken,
        ev.ModelFinished,
        ev.ToolCallStarted,
        ev.ToolCallFinished,
        ev.HookFired,
        ev.CustomEvent,
    } <= kinds

    # tokens three levels deep, kept apart by branch, tagged with the loop pass
    tokens = [e for e in events if isinstance(e, ev.ModelToken)]
    a_text = "".join(e.text for e in tokens if e.branch == "a")
    b_text = "".join(e.text for e in tokens if e.branch == "b")
    assert a_text == "alpha says hi" and b_text == "beta says yo"
    assert {e.agent_path for e in tokens} == {
        (ROOT, "loop", "par", "a"),
        (ROOT, "loop", "par", "b"),
    }
    assert {e.iteration for e in tokens} == {0}

    # per agent: start first, finish last, everything about it in between
    for path in [(ROOT,), (ROOT, "loop"), (ROOT, "loop", "par"), (ROOT, "loop", "par", "a")]:
        mine = [e for e in events if e.agent_path == path and not isinstance(e, ev.RunStarted)]
        mine = [e for e in mine if not isinstance(e, ev.RunFinished)]
        assert isinstance(mine[0], ev.AgentStarted), path
        assert isinstance(mine[-1], ev.AgentFinished), path
        assert sum(isinstance(e, ev.AgentStarted | ev.AgentFinished) for e in mine) == 2

    a_events = [type(e).__name__ for e in events if e.agent_path == (ROOT, "loop", "par", "a")]
    assert [n for n in a_events if n != "ModelToken"] == [
        "AgentStarted",
        "HookFired",
        "ModelStarted",
        "HookFired",
        "ModelFinished",
        "ToolCallStarted",
        "HookFired",
        "ToolCallFinished",
        "ModelStarted",
        "HookFired",
        "ModelFinished",
        "HookFired",
        "AgentFinished",
    ]
    started = next(e for e in events if isinstance(e, ev.ToolCallStarted))
    finished = next(e for e in events if isinstance(e, ev.ToolCallFinished))
    assert (started.name, dict(started.args)) == ("lookup", {"topic": "x"})
    assert finished.call_id == started.call_id and finished.result == "facts about x"
    hooks = [e for e in events if isinstance(e, ev.HookFired)]
    assert [(h.hook, h.phase) for h in hooks] == [
        ("LoggingHook", "before_agent"),
        ("LoggingHook", "wrap_model_call"),
        ("LoggingHook", "wrap_tool_call"),
        ("LoggingHook", "wrap_model_call"),
        ("LoggingHook", "after_agent"),
    ]
    custom = next(e for e in events if isinstance(e, ev.CustomEvent))
    assert custom.data == {"marked": "go"} and custom.agent_path == (ROOT, "loop", "f")

    # usage: a's second call reports usage_metadata; the others are counted with tiktoken
    finished_a = next(
        e
        for e in events
        if isinstance(e, ev.AgentFinished) and e.agent_path == (ROOT, "loop", "par", "a")
    )
    reported = [
        e.usage
        for e in events
        if isinstance(e, ev.ModelFinished) and e.agent_path[-1] == "a" and not e.usage.estimated
    ]
    assert reported == [ev.Usage(input_tokens=11, output_tokens=3)]
    assert finished_a.value == "alpha says hi" and finished_a.output_key == "a_out"
    assert finished_a.usage.input_tokens > 11 and finished_a.usage.estimated
    run = events[-1]
    assert isinstance(run, ev.RunFinished)
    assert run.state["a_out"] == "alpha says hi" and run.state["f_out"] == "marked"
    b_usage = run.usage_by_agent[f"{ROOT}/loop/par/b"]
    assert run.usage == run.usage_by_agent[f"{ROOT}/loop/par/a"] + b_usage
    assert run.usage == run.usage_by_agent[ROOT] and run.usage.output_tokens > 3
    assert set(run.durations) >= {ROOT, f"{ROOT}/loop", f"{ROOT}/loop/par/a"}


def test_sync_stream_every_event_type_three_levels_deep() -> None:
    events = list(team().stream("go", thread_id="s1", checkpointer="memory:", events=True))
    _check_run(events)


async def test_async_stream_every_event_type_three_levels_deep() -> None:
    events = [
        e async for e in team().astream("go", thread_id="as1", checkpointer="memory:", events=True)
    ]
    _check_run(events)


def test_filters_by_type_and_path() -> None:
    only = list(
        team().stream("go", thread_id="f1", events=ev.where(ev.ModelToken, path="team/loop/par/b"))
    )
    assert "".join(e.text for e in only) == "beta says yo"
    assert all(isinstance(e, ev.ModelToken) and e.branch == "b" for e in only)
    finishes = list(team().stream("go", thread_id="f2", events=(ev.AgentFinished,)))
    assert sorted(e.agent for e in finishes) == sorted(["a", "b", "par", "f", "loop", ROOT])
    assert [e.agent for e in finishes][-3:] == ["f", "loop", ROOT]
    with pytest.raises(ValueError, match="events="):
        list(team().stream("go", thread_id="f3", events="tokens"))


def test_raw_stream_mode_still_passes_langgraph_output_through() -> None:
    chunks = list(team().stream("go", thread_id="r1", stream_mode="updates"))
    assert all(isinstance(c, tuple) and len(c) == 2 for c in chunks)


def test_interrupt_then_resume_continues_the_sequence() -> None:
    agent = team(approval=True)
    first = list(agent.stream("go", thread_id="i1", checkpointer="memory:", events=True))
    assert isinstance(first[-1], ev.Interrupted)
    assert first[-1].agent_path == (ROOT, "loop", "par", "a")
    (pending,) = first[-1].pending
    assert pending["value"]["tool"] == "lookup" and pending["id"]
    assert not any(isinstance(e, ev.ToolCallFinished) for e in first)

    second = list(
        agent.stream(Command(resume={"decision": "approve"}), thread_id="i1", events=True)
    )
    assert second[0].seq == first[-1].seq + 1
    assert isinstance(second[0], ev.RunStarted) and second[0].resumed
    assert [e.seq for e in second] == list(range(second[0].seq, second[0].seq + len(second)))
    done = next(e for e in second if isinstance(e, ev.ToolCallFinished))
    assert done.result == "facts about x" and done.agent_path[-1] == "a"
    tokens = "".join(e.text for e in second if isinstance(e, ev.ModelToken) and e.branch == "a")
    assert tokens == "alpha says hi"
    assert isinstance(second[-1], ev.RunFinished) and second[-1].state["a_out"] == "alpha says hi"


async def test_async_resume_continues_the_sequence() -> None:
    agent = team(approval=True)
    first = [e async for e in agent.astream("go", thread_id="ai1", events=True)]
    assert isinstance(first[-1], ev.Interrupted)
    second = [
        e
        async for e in agent.astream(
            Command(resume={"decision": "approve"}), thread_id="ai1", events=True
        )
    ]
    assert second[0].seq == first[-1].seq + 1 and isinstance(second[-1], ev.RunFinished)
    assert any(isinstance(e, ev.ModelToken) and e.branch == "a" for e in second)


def _reported(text: str, input_tokens: int, output_tokens: int) -> AIMessage:
    return AIMessage(
        content=text,
        usage_metadata={
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "total_tokens": input_tokens + output_tokens,
        },
    )


def test_usage_and_wall_time_per_invocation_and_in_total() -> None:
    """A ReAct agent in a Loop in a Sequential: each pass reports its own usage and time."""
    writer = ReactAgent(
        name="writer",
        model=ScriptedChatModel(fn=lambda m, n: _reported(f"draft {n + 1}", 10 * (n + 1), 2)),
        output_key="draft",
    )
    reviewer = ReactAgent(
        name="reviewer",
        model=ScriptedChatModel(fn=lambda m, n: _reported("APPROVE" if n else "more", 5, 1)),
        instruction="Review {draft}.",
        output_key="review",
    )
    refine = LoopAgent(
        name="refine", sub_agents=[writer, reviewer], until=output_contains("review", "APPROVE")
    )
    events = list(SequentialAgent(name=ROOT, sub_agents=[refine]).stream("go", events=True))

    writes = [e for e in events if isinstance(e, ev.AgentFinished) and e.agent == "writer"]
    assert [(e.iteration, e.value, e.usage) for e in writes] == [
        (0, "draft 1", ev.Usage(input_tokens=10, output_tokens=2)),
        (1, "draft 2", ev.Usage(input_tokens=20, output_tokens=2)),
    ]
    loop_done = next(e for e in events if isinstance(e, ev.AgentFinished) and e.agent == "refine")
    assert loop_done.usage == ev.Usage(input_tokens=40, output_tokens=6)
    assert loop_done.reason == "until"
    run = events[-1]
    assert isinstance(run, ev.RunFinished)
    assert run.usage_by_agent[f"{ROOT}/refine/writer"] == ev.Usage(input_tokens=30, output_tokens=4)
    assert run.usage_by_agent[f"{ROOT}/refine/reviewer"] == ev.Usage(
        input_tokens=10, output_tokens=2
    )
    assert run.usage == loop_done.usage and not run.usage.estimated
    assert run.durations[f"{ROOT}/refine/writer"] == pytest.approx(
        sum(e.duration_s for e in writes)
    )
    # the writer's tokens: no branch, tagged with the pass they belong to
    tokens = [e for e in events if isinstance(e, ev.ModelToken) and e.agent == "writer"]
    assert {(e.agent_path, e.branch) for e in tokens} == {((ROOT, "refine", "writer"), None)}
    by_pass = {i: "".join(e.text for e in tokens if e.iteration == i) for i in (0, 1)}
    assert by_pass == {0: "draft 1", 1: "draft 2"}


class Watch(ModelHook):
    """A model hook that only looks."""

    def before_model(self, request):
        return None

    async def aafter_model(self, request, response):
        return None


@pytest.mark.parametrize("use_async", [False, True])
async def test_model_hooks_fire_around_each_model_call(use_async: bool) -> None:
    watched = ReactAgent(
        name="w", model=ScriptedChatModel(replies=["fine"]), hooks=[Watch()], output_key="w_out"
    )
    other = ReactAgent(name="o", model=ScriptedChatModel(replies=["ok"]), output_key="o_out")
    team = SequentialAgent(
        name=ROOT,
        sub_agents=[
            LoopAgent(
                name="lp",
                sub_agents=[ParallelAgent(name="p", sub_agents=[watched, other])],
                max_iterations=1,
            )
        ],
    )
    if use_async:
        events = [e async for e in team.astream("go", events=True)]
    else:
        events = list(team.stream("go", events=True))
    mine = [e for e in events if e.agent_path == (ROOT, "lp", "p", "w")]
    names = [type(e).__name__ for e in mine if not isinstance(e, ev.ModelToken)]
    assert names == [
        "AgentStarted",
        "ModelStarted",
        "HookFired",
        "HookFired",
        "ModelFinished",
        "AgentFinished",
    ]
    fired = [(e.hook, e.phase, e.branch, e.iteration) for e in mine if isinstance(e, ev.HookFired)]
    assert fired == [("Watch", "before_model", "w", 0), ("Watch", "after_model", "w", 0)]
    assert not any(isinstance(e, ev.HookFired | ev.CustomEvent) and e.agent == "o" for e in events)


class Wrap(ModelHook, ToolHook):
    """A hook that only wraps: each model call and each tool call passes through it."""

    def wrap_model_call(self, request, handler):
        return handler(request)

    async def awrap_tool_call(self, request, handler):
        return await handler(request)


@pytest.mark.parametrize("use_async", [False, True])
async def test_wrapping_hooks_fire_once_per_call(use_async: bool) -> None:
    agent = ReactAgent(
        name="w",
        model=ScriptedChatModel(
            replies=[tool_call("lookup", {"topic": "a"}), tool_call("lookup", {"topic": "b"}), "ok"]
        ),
        tools=[lookup],
        hooks=[Wrap()],
        output_key="w_out",
    )
    team = SequentialAgent(name=ROOT, sub_agents=[agent])
    if use_async:
        events = [e async for e in team.astream("go", events=True)]
    else:
        events = list(team.stream("go", events=True))
    fired = [(e.hook, e.phase) for e in events if isinstance(e, ev.HookFired)]
    assert fired.count(("Wrap", "wrap_model_call")) == 3
    assert fired.count(("Wrap", "wrap_tool_call")) == 2
    assert len(fired) == 5
    assert all(e.agent_path == (ROOT, "w") for e in events if isinstance(e, ev.HookFired))


async def test_tokens_of_multi_route_branches_are_kept_apart_async() -> None:
    router = LlmRoutingAgent(
        name="router",
        model=ScriptedChatModel(replies=[{"routes": [{"agent": "x"}, {"agent": "y"}]}]),
        multi=True,
        sub_agents=[
            ReactAgent(
                name=n, model=ScriptedChatModel(replies=[f"{n} speaks"]), output_key=f"{n}_out"
            )
            for n in "xyz"
        ],
        output_key="answers",
    )
    team = SequentialAgent(name=ROOT, sub_agents=[router])
    events = [e async for e in team.astream("go", events=True)]
    tokens = [e for e in events if isinstance(e, ev.ModelToken) and e.branch is not None]
    assert {e.branch: e.agent_path for e in tokens} == {
        "x": (ROOT, "router", "x"),
        "y": (ROOT, "router", "y"),
    }
    for name in "xy":
        assert "".join(e.text for e in tokens if e.branch == name) == f"{name} speaks"
    started = [e.agent for e in events if isinstance(e, ev.AgentStarted)]
    assert "z" not in started and isinstance(events[-1], ev.RunFinished)


async def test_async_failure_names_the_agent_then_raises() -> None:
    boom = ReactAgent(name="boom", model=ScriptedChatModel(replies=[RuntimeError("model down")]))
    agent = SequentialAgent(name="outer", sub_agents=[LoopAgent(name="lp", sub_agents=[boom])])
    seen: list[ev.Event] = []
    with pytest.raises(RuntimeError, match="model down"):
        async for event in agent.astream("go", thread_id="ae1", events=True):
            seen.append(event)
    failed = [(e.agent_path, e.error_type) for e in seen if isinstance(e, ev.AgentFailed)]
    assert failed[0] == (("outer", "lp", "boom"), "RuntimeError")
    assert failed[-1] == (("outer",), "RuntimeError")


def fetch(path: str) -> str:
    """Fetch a file."""
    raise FileNotFoundError(f"no such file {path}")


def test_a_failed_tool_call_finishes_with_its_error() -> None:
    def model(messages, n):
        if any(isinstance(m, ToolMessage) for m in messages):
            return "gave up"
        return tool_call("fetch", {"path": "x.txt"})

    agent = ReactAgent(name="a", model=ScriptedChatModel(fn=model), tools=[fetch])
    (started, finished) = agent.stream("go", events=(ev.ToolCallStarted, ev.ToolCallFinished))
    assert isinstance(finished, ev.ToolCallFinished) and finished.call_id == started.call_id
    assert finished.result is None and finished.error is not None
    assert "RESOURCE_NOT_FOUND" in finished.error and "no such file x.txt" in finished.error


def test_failure_names_the_agent_then_raises() -> None:
    boom = ReactAgent(name="boom", model=ScriptedChatModel(replies=[RuntimeError("model down")]))
    agent = SequentialAgent(name="outer", sub_agents=[LoopAgent(name="lp", sub_agents=[boom])])
    seen: list[ev.Event] = []
    with pytest.raises(RuntimeError, match="model down"):
        for event in agent.stream("go", thread_id="e1", events=True):
            seen.append(event)
    failed = [e for e in seen if isinstance(e, ev.AgentFailed)]
    assert failed[0].agent_path == ("outer", "lp", "boom") and "model down" in failed[0].error
    assert failed[-1].agent_path == ("outer",) and failed[-1].error_type == "RuntimeError"


def test_json_form_round_trips() -> None:
    events = list(team().stream("go", thread_id="j1", events=True))
    for event in events:
        line = event.to_json_line()
        back = ev.event_from_json(line)
        assert type(back) is type(event)
        assert back.to_json() == event.to_json()
        if not isinstance(event, ev.RunFinished | ev.ModelFinished):
            assert back == event
    token = next(e for e in events if isinstance(e, ev.ModelToken))
    data = token.to_json()
    assert set(data) == {
        "type",
        "seq",
        "timestamp",
        "thread_id",
        "agent_path",
        "branch",
        "iteration",
        "text",
        "message_id",
    }
    assert data["type"] == "ModelToken" and data["agent_path"][0] == ROOT
    assert data["message_id"]  # the reply it belongs to (dropped if ModelReplyDiscarded names it)
    message = next(e for e in events if isinstance(e, ev.ModelFinished)).message
    assert (
        ev.event_from_json(
            next(e for e in events if isinstance(e, ev.ModelFinished)).to_json_line()
        ).message
        == message
    )
    with pytest.raises(ValueError, match="unknown event type"):
        ev.event_from_json({"type": "Nope"})
