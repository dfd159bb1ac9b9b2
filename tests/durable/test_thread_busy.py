"""Issue 9, point 2: one run per thread at a time — across OS threads, asyncio tasks, processes.

A crashed owner's lease expires (its pid is dead, or its heartbeat is older than `LEASE_TTL`),
`runs()` lists its run as `crashed` with the resume command, and `resume` takes over.
"""

from __future__ import annotations

import asyncio
import os
import socket
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from graphflow import FunctionAgent, SequentialAgent
from graphflow.checkpoint import leases
from graphflow.exceptions import CheckpointStoreError, ThreadBusyError

ROOT = Path(__file__).resolve().parents[2]
WAIT = 60.0  # generous bound for a step that is released by the test (a guard, not a timing)


def _blocking_team(started: threading.Event, release: threading.Event, calls) -> SequentialAgent:
    def slow(state):
        calls.hit("slow")
        started.set()
        assert release.wait(WAIT), "the test never released the run"
        return f"slow result for {state['input']}"

    return SequentialAgent(
        name="team",
        sub_agents=[
            FunctionAgent(name="slow", fn=slow, output_key="result"),
            FunctionAgent(name="after", fn=calls.step("after"), output_key="tail"),
        ],
    )


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_a_second_run_from_another_os_thread_is_refused(kind: str, store, calls) -> None:
    started, release = threading.Event(), threading.Event()
    team = _blocking_team(started, release, calls)
    url = "memory:" if kind == "memory" else store
    team.compile(checkpointer=url)
    outcome: dict[str, object] = {}

    def first() -> None:
        outcome["state"] = team.invoke("first conversation", thread_id="shared")

    worker = threading.Thread(target=first)
    worker.start()
    assert started.wait(WAIT)
    try:
        with pytest.raises(ThreadBusyError) as caught:
            team.invoke("second conversation", thread_id="shared")
        with pytest.raises(ThreadBusyError):
            team.resume("shared")
    finally:
        release.set()
        worker.join(WAIT)
    error = caught.value
    assert error.thread_id == "shared"
    assert error.owner == f"{socket.gethostname()}:{os.getpid()}"
    message = str(error)
    assert "'shared'" in message and error.owner in message and url in message
    assert "one run per thread" in message and "another thread id" in message
    # the first conversation was not dropped: it finished, and the refused one left no trace
    state = outcome["state"]
    assert state["result"] == "slow result for first conversation" and state["tail"] == "AFTER"
    stored = team.get_state("shared").values
    assert [m.text for m in stored["messages"]] == ["first conversation"]
    assert (calls["slow"], calls["after"]) == (1, 1)
    # once it is over, the thread takes a new turn
    assert team.invoke("third", thread_id="shared")["result"] == "slow result for third"


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
async def test_a_second_run_from_another_asyncio_task_is_refused(kind: str, store, calls) -> None:
    started, release = asyncio.Event(), asyncio.Event()

    async def slow(state):
        calls.hit("slow")
        if state["input"] == "first":
            started.set()
            await asyncio.wait_for(release.wait(), WAIT)
        return "slow"

    team = SequentialAgent(
        name="team", sub_agents=[FunctionAgent(name="slow", fn=slow, output_key="result")]
    )
    url = "memory:" if kind == "memory" else store
    first = asyncio.create_task(team.ainvoke("first", thread_id="shared", checkpointer=url))
    await asyncio.wait_for(started.wait(), WAIT)
    with pytest.raises(ThreadBusyError, match="'shared' is running in another run"):
        await team.ainvoke("second", thread_id="shared", checkpointer=url)
    other = await team.ainvoke("other thread", thread_id="free", checkpointer=url)
    release.set()
    assert (await first)["result"] == "slow" and other["result"] == "slow"
    assert calls["slow"] == 2  # the refused run started nothing
    state = await team.ainvoke("again", thread_id="shared", checkpointer=url)
    assert [m.text for m in state["messages"]] == ["first", "again"]


_WORKER = textwrap.dedent(
    """
    import os, sys, time
    from pathlib import Path
    from graphflow import FunctionAgent, SequentialAgent

    here = Path(sys.argv[1])
    mode = sys.argv[2]

    def count(name):
        with open(here / f"{name}.calls", "a") as f:
            f.write("x")

    def first(state):
        count("first")
        return "FIRST"

    def second(state):
        count("second")
        (here / "started").write_text(str(os.getpid()))
        if mode == "crash":
            os._exit(9)  # the process dies holding the thread's lease
        deadline = time.time() + 60
        while not (here / "release").exists() and time.time() < deadline:
            time.sleep(0.05)
        return "SECOND"

    team = SequentialAgent(name="team", sub_agents=[
        FunctionAgent(name="first", fn=first, output_key="a"),
        FunctionAgent(name="second", fn=second, output_key="b"),
    ])
    team.invoke("from the worker", thread_id="shared", checkpointer=f"sqlite:///{here / 'runs.db'}")
    """
)


def _team_like_worker(here: Path) -> SequentialAgent:
    def counted(name: str, value: str):
        def fn(state):
            with open(here / f"{name}.calls", "a") as f:
                f.write("x")
            return value

        return fn

    return SequentialAgent(
        name="team",
        sub_agents=[
            FunctionAgent(name="first", fn=counted("first", "FIRST"), output_key="a"),
            FunctionAgent(name="second", fn=counted("second", "SECOND"), output_key="b"),
        ],
    )


def _spawn(here: Path, mode: str) -> subprocess.Popen:
    script = here / "worker.py"
    script.write_text(_WORKER)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHFLOW_")}
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.Popen([sys.executable, str(script), str(here), mode], env=env)


def _wait_for(path: Path) -> None:
    deadline = time.time() + WAIT
    while not path.exists():
        assert time.time() < deadline, f"{path.name} never appeared"
        time.sleep(0.05)


def _count(here: Path, name: str) -> int:
    path = here / f"{name}.calls"
    return len(path.read_text()) if path.exists() else 0


def test_a_second_run_from_another_process_is_refused(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'runs.db'}"
    worker = _spawn(tmp_path, "block")
    try:
        _wait_for(tmp_path / "started")
        team = _team_like_worker(tmp_path)
        with pytest.raises(ThreadBusyError) as caught:
            team.invoke("from the test", thread_id="shared", checkpointer=store)
        assert caught.value.owner == f"{socket.gethostname()}:{worker.pid}"
        assert f"owner {caught.value.owner}" in str(caught.value)
        [info] = team.runs(checkpointer=store)
        assert info.status == "running" and info.hint == f"running in {caught.value.owner}"
    finally:
        (tmp_path / "release").write_text("go")
        assert worker.wait(WAIT) == 0
    state = team.get_state("shared", checkpointer=store).values
    assert (state["a"], state["b"]) == ("FIRST", "SECOND")
    assert [m.text for m in state["messages"]] == ["from the worker"]
    assert (_count(tmp_path, "first"), _count(tmp_path, "second")) == (1, 1)


def test_a_crashed_owner_is_listed_crashed_and_resume_takes_over(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'runs.db'}"
    worker = _spawn(tmp_path, "crash")
    assert worker.wait(WAIT) == 9
    team = _team_like_worker(tmp_path)
    [info] = team.runs(checkpointer=store)
    assert info.status == "crashed" and info.agent == "second"
    assert "agent.resume('shared')" in info.hint and "graphflow resume shared" in info.hint
    # the dead process's lease is still in the store, but it no longer holds the thread
    holder = leases.lease_store(store, None).holder("shared")
    assert holder is not None and holder.pid == worker.pid and not holder.alive()
    state = team.resume("shared", checkpointer=store)
    assert (state["a"], state["b"]) == ("FIRST", "SECOND")
    # `first` finished before the crash and is not repeated; `second` runs again
    assert (_count(tmp_path, "first"), _count(tmp_path, "second")) == (1, 2)
    assert team.runs(checkpointer=store)[0].status == "done"


def test_a_lease_from_another_host_holds_until_its_heartbeat_expires(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = f"sqlite:///{tmp_path / 'runs.db'}"
    worker = _spawn(tmp_path, "crash")
    assert worker.wait(WAIT) == 9
    # a worker on another machine holds the thread (its pid cannot be checked from here)
    with sqlite3.connect(tmp_path / "runs.db") as conn:
        conn.execute(
            "UPDATE graphflow_leases SET host = 'worker-7', pid = 4242, heartbeat = ? "
            "WHERE thread_id = 'shared'",
            (time.time(),),
        )
    team = _team_like_worker(tmp_path)
    with pytest.raises(ThreadBusyError, match=r"owner worker-7:4242") as caught:
        team.resume("shared", checkpointer=store)
    assert f"expires within {leases.LEASE_TTL:.0f} s" in str(caught.value)
    assert team.runs(checkpointer=store)[0].status == "running"
    # its heartbeat stops: after LEASE_TTL the lease has expired (shortened here, not waited)
    monkeypatch.setattr(leases, "LEASE_TTL", 0.5)
    time.sleep(0.6)
    assert team.runs(checkpointer=store)[0].status == "crashed"
    state = team.resume("shared", checkpointer=store)
    assert state["b"] == "SECOND"
    assert (_count(tmp_path, "first"), _count(tmp_path, "second")) == (1, 2)


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_a_store_locked_by_another_connection_is_one_clear_error_and_nothing_runs(
    mode: str, store, db: Path, calls, monkeypatch: pytest.MonkeyPatch
) -> None:
    team = SequentialAgent(
        name="team", sub_agents=[FunctionAgent(name="a", fn=calls.step("a"), output_key="out")]
    )
    team.invoke("go", thread_id="before", checkpointer=store)
    monkeypatch.setattr(leases, "LOCK_WAIT", 0.3)  # (10 s by default)
    # another program holds a write transaction open on the file (an sqlite3 shell, a backup)
    blocker = sqlite3.connect(db, isolation_level=None, timeout=0)
    blocker.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(CheckpointStoreError) as caught:  # not sqlite3's OperationalError
            if mode == "sync":
                team.invoke("go", thread_id="new", checkpointer=store)
            else:
                await team.ainvoke("go", thread_id="new", checkpointer=store)
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    error = caught.value
    assert error.store == store
    message = str(error)
    assert f"checkpoint store {store}: taking the lease of thread 'new' failed" in message
    assert "database is locked" in message and "nothing ran" in message
    assert "write lock" in message and "end it and try again" in message
    assert "resume" not in message  # a new thread has nothing to resume
    assert calls["a"] == 1
    # once the other connection lets go, the same call works and the earlier run is intact
    assert team.invoke("go", thread_id="new", checkpointer=store)["out"] == "A"
    assert {r.thread_id for r in team.runs(checkpointer=store)} == {"before", "new"}
