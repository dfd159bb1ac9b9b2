"""A thread across invocations: the next call continues it (sync or async); a loop starts over."""

from __future__ import annotations

import asyncio
from pathlib import Path

from graphflow import LoopAgent, ReactAgent
from graphflow.testing import ScriptedChatModel
from tests.support.helpers import sqlite_url


def test_second_invocation_on_thread_continues_conversation(tmp_path: Path) -> None:
    url = sqlite_url(tmp_path)
    model = ScriptedChatModel(fn=lambda m, n: f"answer {n}")
    agent = ReactAgent(name="chat", model=model, output_key="out")
    agent.invoke("q1", thread_id="conv", checkpointer=url)
    second = agent.invoke("q2", thread_id="conv", checkpointer=url)
    assert [m.content for m in model.requests[1]] == ["q1", "answer 0", "q2"]
    assert second["out"] == "answer 1" and second["input"] == "q2"
    assert second["agent_status"] == {"chat": "completed"}


def test_loop_restarts_iteration_on_second_invocation(tmp_path: Path) -> None:
    url = sqlite_url(tmp_path)
    model = ScriptedChatModel(fn=lambda m, n: f"it {n}")
    loop = LoopAgent(
        name="loop",
        sub_agents=[
            ReactAgent(name="b", model=model, instruction="pass {loop_iteration}", output_key="bo")
        ],
        max_iterations=2,
        output_key="lo",
    )
    loop.invoke("x", thread_id="loop-twice", checkpointer=url)
    second = loop.invoke("y", thread_id="loop-twice", checkpointer=url)
    assert [r[-1].content for r in model.requests] == ["pass 0", "pass 1", "pass 0", "pass 1"]
    assert second["lo"] == "it 3" and second["loop_iteration"] == 1
    assert second["agent_status"] == {"loop": "max_iterations", "b": "completed"}


def test_invoke_then_ainvoke_share_one_sqlite_thread(tmp_path):
    url = f"sqlite:///{tmp_path}/runs.db"
    agent = ReactAgent(name="chat", model=ScriptedChatModel(fn=lambda m, n: f"reply {n}"))
    agent.invoke("first", thread_id="shared", checkpointer=url)
    result = asyncio.run(agent.ainvoke("second", thread_id="shared", checkpointer=url))
    assert [m.content for m in result["messages"]] == ["first", "reply 0", "second", "reply 1"]
    again = agent.invoke("third", thread_id="shared", checkpointer=url)
    assert len(again["messages"]) == 6
    assert agent.get_state("shared", checkpointer=url).values["messages"][-1].content == "reply 2"
