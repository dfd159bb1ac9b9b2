"""Leases with fencing: a run that lost its thread to another writes nothing and starts no tool.

A holder paused past its heartbeat is declared crashed and another run takes the thread over.
When the paused run goes on, every checkpoint write checks the lease in the same transaction as
the write, and every tool call checks it before it starts: it stops with `LeaseLostError`.
Here the takeover is made by rewriting the lease row from inside the run (what the run that takes
over does to it); `test_fencing_processes.py` does it with two real processes and SIGSTOP.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from langchain_core.tools import tool

from graphflow import FunctionAgent, LeaseLostError, ReactAgent, SequentialAgent, ToolHook
from graphflow.checkpoint import leases
from graphflow.testing import ScriptedChatModel, tool_call
from tests.support.stores import store_url

STORES = ["memory", "sqlite", "postgres"]


def _take_over(url: str, saver: Any, thread: str) -> None:
    """What a run in another process does when it takes the thread over."""
    store = leases.lease_store(url, saver)
    other = leases.Lease(
        thread_id=thread,
        owner="worker-9:4242:taker",
        host="worker-9",
        pid=4242,
        heartbeat=time.time(),
    )
    if isinstance(store, leases.MemoryLeases):
        with store.lock:
            store._leases[thread] = other
        return
    sql = "UPDATE graphflow_leases SET owner = ?, host = ?, pid = ?, heartbeat = ? WHERE thread_id = ?"
    values = (other.owner, other.host, other.pid, other.heartbeat, thread)
    if isinstance(store, leases.SqliteLeases):
        with sqlite3.connect(store.path) as conn:
            assert conn.execute(sql, values).rowcount == 1
        return
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        assert conn.execute(sql.replace("?", "%s"), values).rowcount == 1


def _checkpoints(team: Any, thread: str, url: str) -> int:
    return len(team.history(thread, checkpointer=url, all_namespaces=True))


class _Paid:
    def __init__(self) -> None:
        self.calls: list[int] = []


def _run(mode: str, team: Any, *args: Any, **kwargs: Any) -> Any:
    if mode == "async":
        return asyncio.run(team.ainvoke(*args, **kwargs))
    return team.invoke(*args, **kwargs)


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("kind", STORES)
def test_a_run_whose_lease_was_taken_over_writes_no_checkpoint(
    kind: str, mode: str, tmp_path: Path
) -> None:
    url = store_url(kind, tmp_path)
    thread = f"fence-{uuid.uuid4().hex[:8]}"
    paid = _Paid()
    holder: dict[str, Any] = {}

    @tool
    def pay(amount: int) -> str:
        """Pay an amount."""
        paid.calls.append(amount)
        return f"paid {amount}"

    def paused(state: dict[str, Any]) -> str:
        # the process froze here past its heartbeat; meanwhile another run took the thread over
        _take_over(url, holder["saver"], thread)
        return "prepared"

    team = SequentialAgent(
        name="team",
        sub_agents=[
            FunctionAgent(name="prepare", fn=paused, output_key="prep"),
            ReactAgent(
                name="payer",
                model=ScriptedChatModel(replies=[tool_call("pay", {"amount": 5}), "done"]),
                tools=[pay],
                output_key="answer",
            ),
        ],
    )
    holder["saver"] = team.compile(checkpointer=url).graph.checkpointer
    with pytest.raises(LeaseLostError) as caught:
        _run(mode, team, "go", thread_id=thread, checkpointer=url)
    error = caught.value
    assert error.thread_id == thread and error.owner == "worker-9:4242"
    message = str(error)
    assert "lost its lease" in message and "worker-9:4242" in message
    assert "writing a checkpoint" in message and "writes nothing more" in message
    assert paid.calls == []
    # nothing after the takeover was stored: the thread is where the run that lost it left it
    state = team.get_state(thread, checkpointer=url)
    assert "prep" not in state.values and state.next == ("prepare",)


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("kind", STORES)
def test_a_run_whose_lease_was_taken_over_starts_no_tool_call(
    kind: str, mode: str, tmp_path: Path
) -> None:
    url = store_url(kind, tmp_path)
    thread = f"fence-tool-{uuid.uuid4().hex[:8]}"
    paid = _Paid()
    holder: dict[str, Any] = {}

    class Freeze(ToolHook):
        """The process froze here, inside the tools step, right before `pay` started."""

        def wrap_tool_call(self, request: Any, handler: Any) -> Any:
            _take_over(url, holder["saver"], thread)
            return handler(request)

    @tool
    def pay(amount: int) -> str:
        """Pay an amount."""
        paid.calls.append(amount)
        return f"paid {amount}"

    payer = ReactAgent(
        name="payer",
        model=ScriptedChatModel(replies=[tool_call("pay", {"amount": 5}), "done"]),
        tools=[pay],
        hooks=[Freeze()],
        output_key="answer",
    )
    holder["saver"] = payer.compile(checkpointer=url).graph.checkpointer
    with pytest.raises(LeaseLostError, match="starting tool `pay`"):
        _run(mode, payer, "go", thread_id=thread, checkpointer=url)
    assert paid.calls == []


def test_a_paused_holder_that_nobody_took_over_goes_on(tmp_path: Path) -> None:
    # a heartbeat that stopped for a while without another run taking the thread: the lease
    # still names this run, so it writes and finishes (nobody else ran anything)
    url = f"sqlite:///{tmp_path / 'runs.db'}"

    def stale(state: dict[str, Any]) -> str:
        with sqlite3.connect(tmp_path / "runs.db") as conn:
            conn.execute("UPDATE graphflow_leases SET heartbeat = 0")
        return "late"

    team = SequentialAgent(
        name="team", sub_agents=[FunctionAgent(name="slow", fn=stale, output_key="out")]
    )
    assert team.invoke("go", thread_id="t", checkpointer=url)["out"] == "late"


def test_leases_on_a_saver_passed_as_an_instance_are_fenced(tmp_path: Path) -> None:
    from langgraph.checkpoint.sqlite import SqliteSaver

    saver = SqliteSaver(sqlite3.connect(tmp_path / "own.db", check_same_thread=False))
    thread = "own"

    def paused(state: dict[str, Any]) -> str:
        _take_over("own", saver, thread)
        return "x"

    team = SequentialAgent(
        name="team", sub_agents=[FunctionAgent(name="prepare", fn=paused, output_key="prep")]
    )
    with pytest.raises(LeaseLostError):
        team.invoke("go", thread_id=thread, checkpointer=saver)
    assert isinstance(saver, SqliteSaver)  # the caller's object, still usable as one
    assert "prep" not in team.get_state(thread, checkpointer=saver).values
