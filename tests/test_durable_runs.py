"""Durable runs: run listing, history, exact resume (nothing completed re-runs), async savers."""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from pathlib import Path

import pytest
from langchain_core.tools import tool
from langgraph.types import interrupt

from graphflow import (
    AgentHook,
    CheckpointInfo,
    FunctionAgent,
    ReactAgent,
    RunInfo,
    SequentialAgent,
)
from graphflow.testing import ScriptedChatModel, tool_call

ROOT = Path(__file__).resolve().parents[1]


def _load_matrix():
    spec = importlib.util.spec_from_file_location(
        "crash_matrix", ROOT / "scripts" / "crash_matrix.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("crash_matrix", module)
    spec.loader.exec_module(module)
    return module


def _build(calls: list[str], *, fail: dict | None = None):
    fail = fail if fail is not None else {}

    @tool
    def search(query: str) -> str:
        """Search."""
        calls.append(f"tool:{query}")
        return f"found {query}"

    class Log(AgentHook):
        def before_agent(self, state, ctx):
            calls.append(f"before:{ctx.agent}")

        def after_agent(self, state, ctx):
            calls.append(f"after:{ctx.agent}")

    def reply(messages, n):
        calls.append("model:researcher")
        if not any(m.type == "tool" for m in messages):
            return tool_call("search", {"query": "pura"})
        return "facts"

    def approve(state):
        calls.append("approve")
        if fail.pop("approve", None):
            raise RuntimeError("approval service down")
        return interrupt({"question": "publish?", "draft": state["research_data"]})

    def publish(state):
        calls.append("publish")
        return f"published ({state['approval']})"

    return SequentialAgent(
        name="pipeline",
        hooks=[Log()],
        sub_agents=[
            ReactAgent(
                name="researcher",
                model=ScriptedChatModel(fn=reply),
                tools=[search],
                instruction="Research {input}.",
                output_key="research_data",
                hooks=[Log()],
            ),
            FunctionAgent(name="approver", fn=approve, output_key="approval"),
            FunctionAgent(name="publisher", fn=publish, output_key="result"),
        ],
    )


def test_resume_after_interrupt_reruns_nothing_completed(tmp_path):
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    calls: list[str] = []
    first = _build(calls)
    first.invoke("Pura X", thread_id="t1", checkpointer=url)
    before = list(calls)
    assert before.count("model:researcher") == 2 and before.count("tool:pura") == 1
    # a new agent object (as after a restart) resumes from the store
    calls.clear()
    second = _build(calls)
    [run] = second.runs(checkpointer=url)
    assert isinstance(run, RunInfo)
    assert (run.status, run.agent, run.thread_id) == ("interrupted", "approver", "t1")
    assert run.interrupts[0]["question"] == "publish?"
    result = second.resume("t1", "yes", checkpointer=url)
    assert result["result"] == "published (yes)"
    # only the interrupted node re-runs (interrupt() replays it), then what follows
    assert calls == ["approve", "publish", "after:pipeline"]
    done = second.runs(checkpointer=url)[0]
    assert done.status == "done" and done.agent == "publisher" and done.step > run.step


def test_failed_run_lists_as_failed_and_resume_retries_only_the_failure(tmp_path):
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    calls: list[str] = []
    agent = _build(calls, fail={"approve": True})
    with pytest.raises(RuntimeError, match="approval service down"):
        agent.invoke("Pura X", thread_id="bad", checkpointer=url)
    [run] = agent.runs(checkpointer=url)
    assert run.status == "failed" and "approval service down" in (run.error or "")
    assert run.agent == "approver"
    calls.clear()
    agent.resume("bad", checkpointer=url)  # retries approve -> now interrupts
    assert calls == ["approve"]
    assert agent.runs(checkpointer=url)[0].status == "interrupted"


def test_killed_run_lists_as_crashed_and_history_has_namespaces(tmp_path):
    matrix = _load_matrix()
    url = f"sqlite:///{tmp_path / 'k.db'}"
    log = tmp_path / "k.log"
    proc = matrix._child(
        [
            "--url",
            url,
            "--thread",
            "killed",
            "--log",
            str(log),
            "--phase",
            "run",
            "--kill",
            "call:6",
            "--out",
            str(tmp_path / "o.json"),
        ]
    )
    assert proc.returncode == -9, proc.stderr[-2000:]
    rec = matrix._Recorder(str(tmp_path / "parent.log"), "parent", None)
    pipeline = matrix.build_pipeline(rec)
    [run] = pipeline.runs(checkpointer=url)
    # its process died holding the thread's lease: crashed, with how to continue it
    assert run.status == "crashed" and run.thread_id == "killed"
    assert "resume" in (run.hint or "")
    assert run.agent in {"researcher", "market_analyst", "tech_analyst"}
    history = pipeline.history("killed", checkpointer=url)
    assert history and all(isinstance(h, CheckpointInfo) for h in history)
    assert [h.step for h in history] == sorted((h.step for h in history), reverse=True)
    assert history[0].next == run.next
    everything = pipeline.history("killed", checkpointer=url, all_namespaces=True)
    assert {h.namespace.split(":")[0] for h in everything} >= {"", "researcher"}


def test_async_run_uses_async_savers(tmp_path):
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    from graphflow.checkpoint import open_async_checkpointer

    url = f"sqlite:///{tmp_path / 'async.db'}"
    calls: list[str] = []
    agent = _build(calls)

    async def main():
        async with open_async_checkpointer(url) as saver:
            assert isinstance(saver, AsyncSqliteSaver)
        await agent.ainvoke("Pura X", thread_id="a1", checkpointer=url)
        first = list(calls)
        calls.clear()
        events = [
            e
            async for e in agent.astream(
                None, thread_id="a1", checkpointer=url, stream_mode="updates"
            )
        ]
        # continuing without an answer re-asks: only the interrupted node runs again
        assert events and all("__interrupt__" in chunk for _ns, chunk in events)
        assert calls == ["approve"]
        calls.clear()
        result = await agent.aresume("a1", "ok", checkpointer=url)
        return first, result

    first, result = asyncio.run(main())
    assert first.count("tool:pura") == 1
    assert result["result"] == "published (ok)"
    assert calls == ["approve", "publish", "after:pipeline"]
    # the sync API sees the same store
    assert agent.runs(checkpointer=url)[0].status == "done"
    # a second event loop opens its own saver and reads the same thread
    assert asyncio.run(agent.ainvoke(None, thread_id="a1", checkpointer=url))["result"]


def test_sync_saver_instance_in_async_is_rejected_by_langgraph_but_url_works(tmp_path):
    calls: list[str] = []
    agent = _build(calls)
    out = asyncio.run(
        agent.ainvoke("Pura X", thread_id="x", checkpointer=f"sqlite:///{tmp_path / 'u.db'}")
    )
    assert "research_data" in out
