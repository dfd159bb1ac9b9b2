"""A frozen lease holder wakes after another process took its thread over: it runs nothing.

The reported case, with two real processes on SQLite and on PostgreSQL: holder A is frozen
(SIGSTOP) past its heartbeat with a side-effecting tool next; B takes the thread over and finishes
it; A is continued (SIGCONT). A must neither run the tool nor write a checkpoint: the side effect
(counted in a file) happened exactly once, and A stops with `LeaseLostError`.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from graphflow.checkpoint import leases
from tests.support.stores import store_url

ROOT = Path(__file__).resolve().parents[2]
WAIT = 60.0  # a guard against a hang, never a timing assertion
TTL = 1.0  # LEASE_TTL in both processes (30 s by default)

_TEAM = textwrap.dedent(
    """
    from pathlib import Path
    from langchain_core.messages import ToolMessage
    from langchain_core.tools import tool
    from graphflow import ReactAgent, ToolHook
    from graphflow.testing import ScriptedChatModel, tool_call

    def build(here: Path, freeze: bool) -> ReactAgent:
        @tool
        def pay(amount: int) -> str:
            '''Pay an amount.'''
            with open(here / "paid", "a") as f:
                f.write("x")
            return f"paid {amount}"

        class Freeze(ToolHook):
            def wrap_tool_call(self, request, handler):
                if freeze:  # A: announce, then wait (the test freezes this process here)
                    (here / "ready").write_text("1")
                    while not (here / "go").exists():
                        time.sleep(0.02)
                return handler(request)

        return ReactAgent(
            name="payer",
            model=ScriptedChatModel(
                fn=lambda m, n: "done" if isinstance(m[-1], ToolMessage) else tool_call("pay", {"amount": 5})
            ),
            tools=[pay],
            hooks=[Freeze()],
            output_key="answer",
        )
    """
)

_WORKER = (
    "import asyncio, sys, time\n"
    + _TEAM
    + textwrap.dedent(
        """
    from graphflow import LeaseLostError
    from graphflow.checkpoint import leases

    leases.LEASE_TTL = float(sys.argv[4])
    here, url, mode = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    team = build(here, freeze=True)
    try:
        if mode == "async":
            asyncio.run(team.ainvoke("pay 5", thread_id=sys.argv[5], checkpointer=url))
        else:
            team.invoke("pay 5", thread_id=sys.argv[5], checkpointer=url)
    except LeaseLostError as exc:
        (here / "lost").write_text(str(exc))
        sys.exit(3)
    """
    )
)


def _wait_for(what: str, ready: Any) -> None:
    deadline = time.time() + WAIT
    while not ready():
        assert time.time() < deadline, f"{what} never happened"
        time.sleep(0.05)


def _team(here: Path) -> Any:
    namespace: dict[str, Any] = {"time": time}
    exec(_TEAM, namespace)  # the worker's very team, without the freeze
    return namespace["build"](here, freeze=False)


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_a_frozen_holder_woken_after_a_takeover_runs_no_tool_and_writes_nothing(
    kind: str, mode: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = store_url(kind, tmp_path)
    thread = f"frozen-{uuid.uuid4().hex[:8]}"
    script = tmp_path / "worker.py"
    script.write_text(_WORKER)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHFLOW_")}
    env["PYTHONPATH"] = str(ROOT)
    a = subprocess.Popen(
        [sys.executable, str(script), str(tmp_path), url, mode, str(TTL), thread], env=env
    )
    try:
        _wait_for("A reaching its tool call", (tmp_path / "ready").exists)
        os.kill(a.pid, signal.SIGSTOP)  # A freezes: its heartbeat stops
        monkeypatch.setattr(leases, "LEASE_TTL", TTL)
        store = leases.lease_store(url, None)
        _wait_for(
            "A's lease expiring",
            lambda: (h := store.holder(thread)) is not None and not h.alive(),
        )
        # B takes the thread over and finishes it: the tool runs once, in B
        team = _team(tmp_path)
        state = team.resume(thread, checkpointer=url)
        assert state["answer"] == "done"
        assert (tmp_path / "paid").read_text() == "x"
        stored = len(team.history(thread, checkpointer=url, all_namespaces=True))
    finally:
        (tmp_path / "go").write_text("1")
        os.kill(a.pid, signal.SIGCONT)  # A goes on from where it froze
    assert a.wait(WAIT) == 3
    lost = (tmp_path / "lost").read_text()
    assert "lost its lease" in lost and "starting tool `pay`" in lost
    # A ran no tool and wrote nothing: the side effect happened once, the thread is B's result
    assert (tmp_path / "paid").read_text() == "x"
    assert len(team.history(thread, checkpointer=url, all_namespaces=True)) == stored
    assert team.get_state(thread, checkpointer=url).values["answer"] == "done"
    [info] = [r for r in team.runs(checkpointer=url) if r.thread_id == thread]
    assert info.status == "done"
