"""A compiled graphflow pipeline runs unchanged on LangGraph Server (`langgraph dev`)."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

pytestmark = pytest.mark.server
ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "examples" / "langgraph.json"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    langgraph = Path(sys.executable).parent / "langgraph"
    if not langgraph.exists():
        pytest.skip("langgraph-cli is not installed (pip install 'graphflow-agents[server]')")
    port = _free_port()
    workdir = tmp_path_factory.mktemp("langgraph-dev")
    # langgraph dev resolves graph paths against its working directory and keeps its state in
    # ./.langgraph_api there: run it on a copy of the example
    examples = workdir / "examples"
    shutil.copytree(CONFIG.parent, examples, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("langgraph.json", "server_graph.py", "competitive_analysis.py"):
        shutil.copy(CONFIG.parent / name, workdir / name)
    log = open(workdir / "server.log", "w")
    env = dict(
        os.environ,
        LANGSMITH_TRACING="false",
        LANGCHAIN_TRACING_V2="false",
        LANGGRAPH_CLI_NO_ANALYTICS="1",
    )
    proc = subprocess.Popen(
        [
            str(langgraph),
            "dev",
            "--no-browser",
            "--no-reload",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--config",
            "langgraph.json",
        ],
        cwd=workdir,
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            if proc.poll() is not None:
                pytest.fail(
                    f"langgraph dev exited:\n{(workdir / 'server.log').read_text()[-3000:]}"
                )
            try:
                with urllib.request.urlopen(f"{url}/ok", timeout=2) as resp:
                    if resp.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(
                    f"langgraph dev did not start:\n{(workdir / 'server.log').read_text()[-3000:]}"
                )
            time.sleep(0.5)
        yield url
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=15)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=5)
        log.close()


def test_pipeline_runs_on_langgraph_server(server):
    from langgraph_sdk import get_client

    async def main():
        client = get_client(url=server)
        assistants = await client.assistants.search(graph_id="competitive_analysis")
        assert assistants
        thread = await client.threads.create()
        result = await client.runs.wait(
            thread["thread_id"], "competitive_analysis", input={"input": "Huawei Pura X"}
        )
        state = await client.threads.get_state(thread["thread_id"])
        thread2 = await client.threads.create()
        chunks = [
            chunk
            async for chunk in client.runs.stream(
                thread2["thread_id"],
                "competitive_analysis",
                input={"input": "Huawei Pura X"},
                stream_mode="updates",
                stream_subgraphs=True,
            )
        ]
        return result, state, chunks

    result, state, chunks = asyncio.run(main())
    assert result["draft_article"].startswith("# Huawei Pura X: competitive analysis")
    assert result["review_feedback"] == "APPROVE"
    assert result["research_data"].startswith("Key facts")
    assert state["values"]["agent_status"]["competitive_analysis"] == "completed"
    assert not state["next"]
    events = [c.event for c in chunks]
    assert any(e.startswith("updates") for e in events)
    # sub-agent steps stream from their own namespaces (subgraphs)
    assert any("|" in e or "researcher" in e for e in events), events
