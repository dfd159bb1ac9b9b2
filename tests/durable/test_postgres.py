"""Durable runs on PostgreSQL: run + resume, a reduced crash matrix, two workers sharing a store.

Needs GRAPHFLOW_TEST_POSTGRES_URL (`source .ci/postgres.sh && pg_start`). Skipped locally when it
is unset; with CI=true a missing URL is a failure, not a skip.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
import uuid

import pytest

from tests.durable import crash_matrix

pytestmark = pytest.mark.postgres


@pytest.fixture(scope="module")
def pg_url() -> str:
    url = os.environ.get("GRAPHFLOW_TEST_POSTGRES_URL")
    if not url:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(
                "GRAPHFLOW_TEST_POSTGRES_URL is not set in CI; run `source .ci/postgres.sh && "
                "pg_start` before pytest"
            )
        pytest.skip("GRAPHFLOW_TEST_POSTGRES_URL is not set (source .ci/postgres.sh && pg_start)")
    return url


def test_run_and_resume_on_postgres(pg_url):
    from graphflow import FunctionAgent, SequentialAgent

    calls: list[str] = []

    def step(name):
        def fn(state):
            calls.append(name)
            if name == "b" and calls.count("b") == 1:
                raise RuntimeError("transient")
            return name.upper()

        return fn

    def build():
        return SequentialAgent(
            name="pg_pipe",
            sub_agents=[
                FunctionAgent(name="fa", fn=step("a"), output_key="out_a"),
                FunctionAgent(name="fb", fn=step("b"), output_key="out_b"),
            ],
        )

    thread = f"pg-{uuid.uuid4().hex[:8]}"
    with pytest.raises(RuntimeError, match="transient"):
        build().invoke("go", thread_id=thread, checkpointer=pg_url)
    agent = build()
    info = next(r for r in agent.runs(checkpointer=pg_url) if r.thread_id == thread)
    assert info.status == "failed" and info.agent == "fb"
    result = agent.resume(thread, checkpointer=pg_url)
    assert (result["out_a"], result["out_b"]) == ("A", "B")
    assert calls == ["a", "b", "b"]
    assert agent.history(thread, checkpointer=pg_url)


def test_async_run_on_postgres(pg_url):
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

    from graphflow import FunctionAgent, SequentialAgent
    from graphflow.checkpoint import open_async_checkpointer

    agent = SequentialAgent(
        name="pg_async", sub_agents=[FunctionAgent(name="fx", fn=lambda s: "X", output_key="x")]
    )

    async def main():
        async with open_async_checkpointer(pg_url) as saver:
            assert isinstance(saver, AsyncPostgresSaver)
        return await agent.ainvoke(
            "go", thread_id=f"pga-{uuid.uuid4().hex[:8]}", checkpointer=pg_url
        )

    assert asyncio.run(main())["x"] == "X"


def test_crash_matrix_on_postgres(pg_url, tmp_path):
    matrix = crash_matrix
    base, results = matrix.run_matrix(pg_url, points=5, workers=2, workdir=tmp_path)
    table = matrix.format_table(base, results)
    print(table)
    assert len(results) == 5 and all(r.killed and r.ok for r in results), table


WORKER = textwrap.dedent(
    """
    import json, os, signal, sys
    from langgraph.types import interrupt
    from graphflow import FunctionAgent, SequentialAgent

    url, thread, role, log = sys.argv[1:5]

    def logged(name, fn):
        def run(state):
            with open(log, "a") as f:
                f.write(f"{role}:{name}\\n")
            return fn(state)
        return run

    def crash_once(state):
        if role == "A":
            os.kill(os.getpid(), signal.SIGKILL)
        return "drafted"

    agent = SequentialAgent(name="shared", sub_agents=[
        FunctionAgent(name="research", fn=logged("research", lambda s: "facts"), output_key="facts"),
        FunctionAgent(name="draft", fn=logged("draft", crash_once), output_key="draft_text"),
        FunctionAgent(name="approve", fn=logged("approve", lambda s: interrupt("ok?")),
                      output_key="approved"),
        FunctionAgent(name="publish", fn=logged("publish", lambda s: f"pub:{s['approved']}"),
                      output_key="published"),
    ])
    if role == "A":
        agent.invoke("go", thread_id=thread, checkpointer=url)
    elif role == "B":
        runs = {r.thread_id: (r.status, r.agent) for r in agent.runs(checkpointer=url)}
        agent.resume(thread, checkpointer=url)  # continues A's crashed run up to the interrupt
        after = {r.thread_id: (r.status, r.agent) for r in agent.runs(checkpointer=url)}
        print(json.dumps({"before": runs[thread], "after": after[thread]}))
    else:
        out = agent.resume(thread, "yes", checkpointer=url)
        print(json.dumps({"published": out["published"]}))
    """
)


def test_two_workers_share_one_postgres(pg_url, tmp_path):
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    log = tmp_path / "calls.log"
    thread = f"shared-{uuid.uuid4().hex[:8]}"

    def worker(role):
        return subprocess.run(
            [sys.executable, str(script), pg_url, thread, role, str(log)],
            capture_output=True,
            text=True,
            timeout=120,
        )

    a = worker("A")
    assert a.returncode == -9, a.stderr[-2000:]
    b = worker("B")
    assert b.returncode == 0, b.stderr[-2000:]
    seen = json.loads(b.stdout.strip().splitlines()[-1])
    assert seen["before"] == ["crashed", "draft"]  # A died holding the lease
    assert seen["after"] == ["interrupted", "approve"]
    c = worker("C")
    assert c.returncode == 0, c.stderr[-2000:]
    assert json.loads(c.stdout.strip().splitlines()[-1]) == {"published": "pub:yes"}
    assert log.read_text().split() == [
        "A:research",
        "A:draft",
        "B:draft",
        "B:approve",
        "C:approve",
        "C:publish",
    ]
