"""Durable runs: listing, history, exact resume (nothing completed re-runs), savers, store URLs."""

from __future__ import annotations

import asyncio

import pytest
from langchain_core.messages import ToolMessage
from langchain_core.tools import tool
from langgraph.types import interrupt

from graphflow import (
    AgentHook,
    CheckpointInfo,
    FunctionAgent,
    GraphflowConfigError,
    HumanApproval,
    ReactAgent,
    RunInfo,
    SequentialAgent,
)
from graphflow.testing import ScriptedChatModel, tool_call
from tests.durable import crash_matrix
from tests.support.helpers import PAID, pay


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
    matrix = crash_matrix
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


# -- no checkpointer -----------------------------------------------------------------------------


def test_runs_without_a_checkpointer_sync_and_async() -> None:
    first = FunctionAgent(name="first", fn=lambda s: s["input"].upper(), output_key="upper")
    second = FunctionAgent(name="second", fn=lambda s: s["upper"] + "!", output_key="shout")
    pipeline = SequentialAgent(name="p", sub_agents=[first, second])
    assert pipeline.compile(False).checkpointer is False
    assert pipeline.compile(False).graph.checkpointer is None
    assert pipeline.invoke("hi", checkpointer=False)["shout"] == "HI!"
    assert asyncio.run(pipeline.ainvoke("yo", checkpointer=False))["shout"] == "YO!"


# -- store URLs and savers -----------------------------------------------------------------------


def _echo():
    return FunctionAgent(name="echo", fn=lambda s: f"echo {s['input']}", output_key="out")


def test_sqlite_nested_dirs_memory_and_bad_url(tmp_path):
    url = f"sqlite:///{tmp_path}/a/b/c/runs.db"
    assert _echo().invoke("x", thread_id="t", checkpointer=url)["out"] == "echo x"
    assert (tmp_path / "a" / "b" / "c" / "runs.db").exists()
    assert _echo().invoke("y", checkpointer="memory:")["out"] == "echo y"
    for bad in ("mysql://db", "sqlite:/relative.db", 42):
        with pytest.raises(GraphflowConfigError, match=r"memory:.*sqlite:///.*postgresql://"):
            _echo().invoke("x", checkpointer=bad)


def test_sqlite_url_expands_home_and_rejects_query_strings(tmp_path, monkeypatch):
    from graphflow import GraphflowConfigError
    from graphflow.checkpoint import resolve_checkpointer

    monkeypatch.setenv("HOME", str(tmp_path))
    resolve_checkpointer("sqlite:///~/nested/runs.db")
    assert (tmp_path / "nested" / "runs.db").exists()
    with pytest.raises(GraphflowConfigError, match="query parameters"):
        resolve_checkpointer("sqlite:///runs.db?mode=ro")


def test_ainvoke_per_asyncio_run_does_not_leak_savers(tmp_path):
    import threading

    url = f"sqlite:///{tmp_path}/r.db"
    agent = _echo()
    asyncio.run(agent.ainvoke("x", thread_id="warm", checkpointer=url))
    threads = threading.active_count()
    for i in range(5):
        asyncio.run(agent.ainvoke("x", thread_id=f"t{i}", checkpointer=url))
    # one compiled graph (no saver baked in); every call's connection closed with the call
    from graphflow.runtime.graphs import _ROOTS

    assert len([key for key in list(_ROOTS) if key[0] == id(agent)]) == 1
    assert threading.active_count() <= threads
    assert len(agent.runs(checkpointer=url)) == 6


# -- runs() and history() across statuses --------------------------------------------------------


def test_runs_statuses_history_and_failed_state(tmp_path):
    url = f"sqlite:///{tmp_path}/runs.db"
    PAID.clear()

    def first_step(state):
        return "step one"

    def second_step(state):
        if state["input"] == "fail":
            raise RuntimeError("second step broke")
        return "step two"

    payer = ReactAgent(
        name="payer",
        model=ScriptedChatModel(
            fn=lambda m, n: (
                "paid" if isinstance(m[-1], ToolMessage) else tool_call("pay", {"amount": 1})
            )
        ),
        tools=[pay],
        hooks=[HumanApproval(["pay"])],
        output_key="pay_out",
        instruction="{input}",
    )
    flow = SequentialAgent(
        name="flow",
        sub_agents=[
            FunctionAgent(name="one", fn=first_step, output_key="o1"),
            FunctionAgent(name="two", fn=second_step, output_key="o2"),
            payer,
        ],
    )
    flow.invoke("ok", thread_id="t-done", checkpointer=url)  # interrupted at pay
    flow.resume("t-done", {"decision": "approve"}, checkpointer=url)
    flow.invoke("ok", thread_id="t-int", checkpointer=url)
    with pytest.raises(RuntimeError, match="second step broke"):
        flow.invoke("fail", thread_id="t-fail", checkpointer=url)

    runs = {r.thread_id: r for r in flow.runs(checkpointer=url)}
    assert runs["t-done"].status == "done"
    assert runs["t-int"].status == "interrupted"
    assert runs["t-int"].agent == "payer"
    assert runs["t-fail"].status == "failed"
    assert "second step broke" in (runs["t-fail"].error or "")
    assert [r.thread_id for r in flow.runs(checkpointer=url)] == ["t-fail", "t-int", "t-done"]

    history = flow.history("t-done", checkpointer=url)
    steps = [h.step for h in history]
    assert steps == sorted(steps, reverse=True)
    assert history[-1].source == "input"

    state = flow.get_state("t-fail", checkpointer=url)
    assert state.values["o1"] == "step one"
    assert "o2" not in state.values
