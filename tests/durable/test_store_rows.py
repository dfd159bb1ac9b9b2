"""`checkpoint.rows` (what `graphflow runs` reads, without LangGraph) reads a SQLite store as the
LangGraph saver does: the same threads, checkpoints, metadata and run status for every state a
run can be in."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from langchain_core.tools import tool

from graphflow import (
    FunctionAgent,
    HumanApproval,
    LoopAgent,
    ReactAgent,
    SequentialAgent,
)
from graphflow.checkpoint import resolve_checkpointer
from graphflow.checkpoint.rows import SqliteRows, StoredObject, decode, open_rows
from graphflow.checkpoint.runs import thread_ids
from graphflow.checkpoint.stop import mark_stopped
from graphflow.checkpoint.stored import AGENT_KEY, stored_run_info
from graphflow.testing import ScriptedChatModel, tool_call


class Halt(BaseException):
    """Ends a run between two steps as a killed process would: no error write."""


def _fail(state):
    raise RuntimeError("the disk is full")


def _halt(state):
    raise Halt()


def _as_the_cli(agent) -> dict:
    """The metadata a `graphflow run` records: the root agent's name."""
    return {"metadata": {AGENT_KEY: agent.name}}


@tool
def refund(order: str) -> str:
    """Refund an order."""
    return f"refunded {order}"


@pytest.fixture
def store(tmp_path: Path) -> tuple[str, Path]:
    db = tmp_path / "runs.db"
    url = f"sqlite:///{db}"
    shout = FunctionAgent(name="shout", fn=lambda s: s["input"].upper(), output_key="loud")
    done = SequentialAgent(name="done_team", sub_agents=[shout])
    done.invoke("hi", thread_id="done", checkpointer=url, config=_as_the_cli(done))
    failing = SequentialAgent(
        name="failing",
        sub_agents=[shout, FunctionAgent(name="store", fn=_fail, output_key="stored")],
    )
    with pytest.raises(RuntimeError):
        failing.invoke("hi", thread_id="failed", checkpointer=url, config=_as_the_cli(failing))
    desk = ReactAgent(
        name="desk",
        model=ScriptedChatModel(replies=[tool_call("refund", {"order": "A-1"}), "Refund done."]),
        tools=[refund],
        hooks=[HumanApproval(["refund"])],
        output_key="reply",
    )
    desk.invoke(
        "charged twice", thread_id="interrupted", checkpointer=url, config=_as_the_cli(desk)
    )
    loop = LoopAgent(
        name="refine",
        sub_agents=[
            ReactAgent(
                name="writer", model=ScriptedChatModel(fn=lambda m, n: f"draft {n}"), output_key="d"
            ),
            FunctionAgent(name="halt", fn=_halt, output_key="h"),
        ],
        max_iterations=3,
    )
    looping = SequentialAgent(name="looping", sub_agents=[loop])
    with pytest.raises(Halt):
        looping.invoke("hi", thread_id="killed", checkpointer=url, config=_as_the_cli(looping))
    stopping = SequentialAgent(
        name="stopping", sub_agents=[shout, FunctionAgent(name="h", fn=_halt, output_key="x")]
    )
    with pytest.raises(Halt):
        stopping.invoke("hi", thread_id="stopped", checkpointer=url, config=_as_the_cli(stopping))
    mark_stopped(resolve_checkpointer(url), "stopped")
    return url, db


def test_rows_read_every_run_as_the_saver_does(store: tuple[str, Path]) -> None:
    url, db = store
    saver = resolve_checkpointer(url)
    rows = open_rows(url)
    assert isinstance(rows, SqliteRows)
    threads = thread_ids(saver)
    assert thread_ids(rows) == threads
    assert set(threads) == {"done", "failed", "interrupted", "killed", "stopped"}
    read = {}
    for tid in threads:
        assert stored_run_info(rows, tid) == stored_run_info(saver, tid), tid
        read[tid] = stored_run_info(rows, tid)
        mine = [(r.config, r.metadata, r.parent_config) for r in rows.list(_thread(tid))]
        theirs = [(t.config, t.metadata, t.parent_config) for t in saver.list(_thread(tid))]
        assert mine == theirs, tid
        for ns in {c["configurable"]["checkpoint_ns"] for c, _, _ in mine}:
            config = {"configurable": {"thread_id": tid, "checkpoint_ns": ns}}
            mine_one, theirs_one = rows.get_tuple(config), saver.get_tuple(config)
            assert (mine_one.config, mine_one.metadata) == (theirs_one.config, theirs_one.metadata)
            assert [w[:2] for w in mine_one.pending_writes] == [
                w[:2] for w in theirs_one.pending_writes
            ]
            status = theirs_one.checkpoint["channel_values"].get("agent_status")
            assert mine_one.checkpoint["channel_values"].get("agent_status") == status
    statuses = {tid: (info.status, mark) for tid, (info, mark) in read.items()}
    assert statuses == {
        "done": ("done", False),
        "failed": ("failed", False),
        "interrupted": ("interrupted", False),
        "killed": ("running", False),  # no live process holds it: `runs.settle` says crashed
        "stopped": ("running", True),  # ... and with the stop mark, stopped
    }
    assert read["failed"][0].error and "the disk is full" in read["failed"][0].error
    assert read["killed"][0].agent == "refine"  # the innermost agent with checkpoints of its own


def _thread(tid: str) -> dict:
    return {"configurable": {"thread_id": tid}}


def test_stored_objects_are_named_not_built(store: tuple[str, Path]) -> None:
    url, db = store
    with sqlite3.connect(db) as conn:
        kind, blob = conn.execute(
            "SELECT type, value FROM writes WHERE channel = 'messages' AND thread_id = 'interrupted'"
        ).fetchone()
    [message] = [m for m in decode(kind, blob) if isinstance(m, StoredObject)][:1]
    assert message.module.startswith("langchain_core.messages") and message.content
    interrupt = stored_run_info(open_rows(url), "interrupted")[0].interrupts[0]
    assert interrupt["tool"] == "refund"  # an interrupt's value, read from its arguments


def test_a_file_without_tables_has_no_runs(tmp_path: Path) -> None:
    db = tmp_path / "empty.db"
    sqlite3.connect(db).close()
    rows = open_rows(f"sqlite:///{db}")
    assert rows is not None and thread_ids(rows) == []
    assert rows.get_tuple(_thread("x")) is None and list(rows.list(_thread("x"))) == []
    assert open_rows(f"sqlite:///{tmp_path / 'none.db'}") is None
    assert open_rows("memory:") is None
