"""What keeps a durable run cheap, pinned without timing anything (see benchmarks/overhead.py).

* an async run on an in-memory saver takes the thread's lease inline, not from a worker thread;
* a leaf sub-agent is sent only what it reads: a key it only writes (its previous pass's
  output) and the loop pass it never reads are not copied into its first checkpoint;
* a loop that ends without `exit_loop` writes no exit flag on the way out;
* a leaf ReAct sub-agent without hooks has no channel it never uses (the loop pass, the exit
  flag unless it has the `exit_loop` tool, the context bookkeeping): each channel is set up again
  on every invocation of its graph.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

import graphflow.runtime.compiled as runner
from graphflow import LoopAgent, ReactAgent, exit_loop, output_contains
from graphflow.context import HybridContext
from graphflow.runtime.graphs import SUBGRAPHS
from graphflow.state import CONTEXT, EXIT_LOOP, LOOP_ITERATION
from graphflow.testing import ScriptedChatModel, tool_call


def _loop() -> LoopAgent:
    writer = ReactAgent(
        name="writer",
        model=ScriptedChatModel(fn=lambda messages, n: f"draft {n}"),
        instruction="Write about {input}.",
        output_key="draft",
    )
    reviewer = ReactAgent(
        name="reviewer",
        model=ScriptedChatModel(fn=lambda messages, n: "APPROVE" if n == 1 else "more detail"),
        instruction="Review {draft}.",
        output_key="review",
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
    loop = _loop()
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
