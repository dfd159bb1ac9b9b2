"""What keeps a durable run cheap, pinned without timing anything (see benchmarks/overhead.py).

* an async run on an in-memory saver takes the thread's lease inline, not from a worker thread;
* a leaf sub-agent is sent only what it reads: a key it only writes (its previous pass's
  output) and the loop pass it never reads are not copied into its first checkpoint;
* a loop that ends without `exit_loop` writes no exit flag on the way out;
* a leaf ReAct sub-agent without hooks has no channel it never uses (the loop pass, the exit
  flag unless it has the `exit_loop` tool, the context bookkeeping): each channel is set up again
  on every invocation of its graph;
* a ReAct sub-agent without tools or hooks makes its first model call in its parent's node (no
  subgraph invocation, no checkpoints of its own) and gives the same typed events, results and
  run counts as when it runs in its subgraph; a reply that does not end it (an empty reply) goes
  on in its subgraph, where a crash after the re-ask is resumed without repeating the first call.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

import graphflow.runtime.compiled as runner
from graphflow import (
    LoopAgent,
    ParallelAgent,
    ReactAgent,
    SequentialAgent,
    exit_loop,
    output_contains,
)
from graphflow import events as ev
from graphflow.context import HybridContext
from graphflow.runtime.graphs import SUBGRAPHS
from graphflow.state import CONTEXT, EXIT_LOOP, KEEP_SUBGRAPHS, LOOP_ITERATION
from graphflow.testing import ScriptedChatModel, tool_call
from graphflow.visualize import build_drawing


@tool
def unused(query: str) -> str:
    """Never called: an agent with a tool runs in its own subgraph."""
    return query


def _loop(tools: list[Any] | None = None) -> LoopAgent:
    writer = ReactAgent(
        name="writer",
        model=ScriptedChatModel(fn=lambda messages, n: f"draft {n}"),
        instruction="Write about {input}.",
        output_key="draft",
        tools=list(tools or []),
    )
    reviewer = ReactAgent(
        name="reviewer",
        model=ScriptedChatModel(fn=lambda messages, n: "APPROVE" if n == 1 else "more detail"),
        instruction="Review {draft}.",
        output_key="review",
        tools=list(tools or []),
    )
    return LoopAgent(
        name="refine",
        sub_agents=[writer, reviewer],
        max_iterations=4,
        until=output_contains("review", "APPROVE"),
    )


def _tuples(saver: InMemorySaver, thread_id: str) -> list[Any]:
    return list(saver.list({"configurable": {"thread_id": thread_id}}))


def test_async_run_on_memory_saver_takes_its_lease_inline(monkeypatch) -> None:
    def no_worker_thread(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("an in-memory lease was taken through a worker thread")

    monkeypatch.setattr(runner, "ahold", no_worker_thread)
    result = asyncio.run(_loop().ainvoke("topic", thread_id="t", checkpointer=InMemorySaver()))
    assert result["review"] == "APPROVE"


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_leaf_sub_agents_are_sent_only_what_they_read(mode: str) -> None:
    saver = InMemorySaver()
    loop = _loop(tools=[unused])  # with a tool each runs in its subgraph, sent what it reads
    if mode == "sync":
        result = loop.invoke("topic", thread_id="t", checkpointer=saver)
    else:
        result = asyncio.run(loop.ainvoke("topic", thread_id="t", checkpointer=saver))
    assert (result["draft"], result["review"], result["loop_iteration"]) == (
        "draft 1",
        "APPROVE",
        1,
    )
    starts = [
        tup
        for tup in _tuples(saver, "t")
        if tup.config["configurable"]["checkpoint_ns"] and tup.metadata.get("source") == "input"
    ]
    assert len(starts) == 4  # two passes of two agents
    for tup in starts:
        # the second pass's writer is not sent the draft it wrote in the first pass
        assert set(tup.checkpoint["channel_values"]["__start__"]) == {"messages"}


def test_loop_ending_by_its_condition_writes_no_exit_flag() -> None:
    saver = InMemorySaver()
    _loop().invoke("topic", thread_id="t", checkpointer=saver)
    root = [t for t in _tuples(saver, "t") if not t.config["configurable"]["checkpoint_ns"]]
    exit_writes = [
        value
        for tup in root
        for _task, channel, value in tup.pending_writes or ()
        if channel == EXIT_LOOP
    ]
    assert exit_writes == [False]  # the loop's entry resets it; nothing sets or clears it after


def _channels(agent: ReactAgent) -> set[str]:
    fingerprint = agent.fingerprint()
    (graph,) = [  # its one compiled subgraph, as the runtime caches it
        entry[2]
        for key in list(SUBGRAPHS)
        if key[0] == id(agent) and (entry := SUBGRAPHS[key])[0] == fingerprint
    ]
    return set(graph.channels)


def test_leaf_react_graphs_carry_only_the_channels_they_use() -> None:
    loop = _loop()
    writer, reviewer = loop.sub_agents
    leaver = ReactAgent(
        name="leaver",
        model=ScriptedChatModel(replies=[tool_call("exit_loop", {}), "bye"]),
        tools=[exit_loop],
    )
    managed = ReactAgent(
        name="managed", model=ScriptedChatModel(replies=["ok"]), context=HybridContext()
    )
    loop.sub_agents = [writer, reviewer, leaver, managed]
    result = loop.invoke("topic", thread_id="t", checkpointer=InMemorySaver())
    assert result["draft"] == "draft 0"  # one pass: the leaver ended the loop
    for plain in (writer, reviewer):
        assert not {LOOP_ITERATION, EXIT_LOOP, CONTEXT} & _channels(plain)
    assert EXIT_LOOP in _channels(leaver)
    assert not {LOOP_ITERATION, CONTEXT} & _channels(leaver)
    assert {LOOP_ITERATION, EXIT_LOOP, CONTEXT} <= _channels(managed)


# -- tool-less, hook-less ReAct sub-agents: the first call in the parent's node ------------------


def _team() -> SequentialAgent:
    """A pipeline, a loop and parallel branches of tool-less ReAct agents."""
    return SequentialAgent(
        name="team",
        sub_agents=[
            ReactAgent(
                name="researcher",
                model=ScriptedChatModel(replies=["facts"]),
                instruction="Research {input}.",
                output_key="research",
            ),
            _loop(),
            ParallelAgent(
                name="angles",
                sub_agents=[
                    ReactAgent(
                        name=f"angle{i}",
                        model=ScriptedChatModel(replies=[f"view {i}"]),
                        output_key=f"view{i}",
                    )
                    for i in range(2)
                ],
            ),
        ],
    )


def _shown(event: ev.Event) -> tuple[Any, ...]:
    fields = {
        "text": getattr(event, "text", None),
        "message": getattr(getattr(event, "message", None), "text", None),
        "value": getattr(event, "value", None),
        "usage": getattr(event, "usage", None),
    }
    return (type(event).__name__, event.agent_path, event.branch, event.iteration, fields)


def _namespaces(saver: InMemorySaver, thread_id: str) -> set[str]:
    return {str(t.config["configurable"]["checkpoint_ns"]) for t in _tuples(saver, thread_id)}


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_tool_less_sub_agents_run_in_their_parents_node(mode: str) -> None:
    saver = InMemorySaver()
    if mode == "sync":
        result = _team().invoke("phones", thread_id="t", checkpointer=saver)
    else:
        result = asyncio.run(_team().ainvoke("phones", thread_id="t", checkpointer=saver))
    assert (result["research"], result["draft"], result["review"]) == (
        "facts",
        "draft 1",
        "APPROVE",
    )
    assert (result["view0"], result["view1"]) == ("view 0", "view 1")
    names = [m.name for m in result["messages"] if m.type == "ai"]
    assert names == ["researcher", "writer", "reviewer", "writer", "reviewer", "angle0", "angle1"]
    # the loop and the branches' parent run in subgraphs; no leaf has a namespace of its own
    leaves = {"researcher", "writer", "reviewer", "angle0", "angle1"}
    segments = {s.split(":")[0] for ns in _namespaces(saver, "t") for s in ns.split("|") if s}
    assert segments == {"refine", "angles"} and not leaves & segments
    # the run overlay still counts each leaf's own calls
    drawing = build_drawing(_team_ran(saver), thread_id="t", checkpointer=saver)
    calls = {name: drawing.agent(name).run.model_calls for name in leaves}  # type: ignore[union-attr]
    assert calls == {"researcher": 1, "writer": 2, "reviewer": 2, "angle0": 1, "angle1": 1}


def _team_ran(saver: InMemorySaver) -> SequentialAgent:
    return _team()  # the same tree (names) as the run: the overlay reads the saver


def test_inline_sub_agents_give_the_events_their_subgraphs_give() -> None:
    inline = [_shown(e) for e in _team().stream("phones", thread_id="a")]
    whole = [
        _shown(e)
        for e in _team().stream(
            "phones", thread_id="b", config={"configurable": {KEEP_SUBGRAPHS: True}}
        )
    ]
    # per agent, in order (parallel branches interleave as they may)
    assert _by_agent(inline) == _by_agent(whole)
    kinds = [e[0] for e in inline]
    assert kinds.count("ModelStarted") == kinds.count("ModelFinished") == 7
    tokens = [(e[1], e[4]["text"]) for e in inline if e[0] == "ModelToken"]
    assert "".join(t for path, t in tokens if path == ("team", "angles", "angle1")) == "view 1"


def _by_agent(events: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    return sorted((e for e in events if e[0] != "RunFinished"), key=lambda e: e[1])


def _empty_then(fail: list[bool]) -> Any:
    def reply(messages: list[Any], n: int) -> str:
        if "reply was empty" not in str(messages[-1].content):
            return ""  # asked afresh: empty, re-asked in the agent's subgraph
        if fail and fail.pop():
            raise RuntimeError("provider down")
        return "an answer"

    return reply


def test_an_empty_reply_is_re_asked_in_the_subgraph_and_resumed_without_repeating() -> None:
    saver = InMemorySaver()
    model = ScriptedChatModel(fn=_empty_then([True]))
    team = SequentialAgent(
        name="team",
        sub_agents=[ReactAgent(name="writer", model=model, output_key="draft")],
    )
    with pytest.raises(Exception, match="provider down"):
        team.invoke("go", thread_id="t", checkpointer=saver)
    assert model.calls == 2  # the empty first reply (inline), the re-ask (in its subgraph) failed
    result = team.resume("t", checkpointer=saver)
    assert result["draft"] == "an answer"
    # the resume asked once more, from the stored re-ask (asked afresh, it would reply empty)
    assert model.calls == 3
    drawing = build_drawing(team, thread_id="t", checkpointer=saver)
    assert drawing.agent("writer").run.model_calls == 2  # type: ignore[union-attr]  (replies)
    assert any(ns.startswith("writer:") for ns in _namespaces(saver, "t"))
