"""A compiled graphflow pipeline runs unchanged on LangGraph Server: `langgraph dev` started from
the repository root with the command docs/langgraph-server.md gives, and no network."""

from __future__ import annotations

import asyncio
import os
import re
import shlex
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
DOC = ROOT / "docs" / "langgraph-server.md"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def documented_command() -> list[str]:
    """The `langgraph dev` line of the page's bash blocks, as a reader pastes it."""
    bash = re.findall(r"^```bash\n(.*?)^```", DOC.read_text(), re.DOTALL | re.MULTILINE)
    [line] = [ln for block in bash for ln in block.splitlines() if "langgraph dev" in ln]
    return shlex.split(line)


def test_the_documented_command_starts_from_the_root() -> None:
    command = documented_command()
    assert command[:2] == [".venv/bin/langgraph", "dev"] and "--no-browser" in command
    assert "--config" not in command  # ./langgraph.json, whose paths are read from the root
    assert (ROOT / "langgraph.json").exists()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    langgraph = Path(sys.executable).parent / "langgraph"
    if not langgraph.exists():
        if os.environ.get("CI"):
            pytest.fail("langgraph-cli is not installed: pip install -e '.[dev]'")
        pytest.skip("langgraph-cli is not installed (pip install 'graphflow-agents[server]')")
    port = _free_port()
    command = documented_command()
    command[0] = str(langgraph)  # the .venv/bin/langgraph of the interpreter running the tests
    command[command.index("--port") + 1] = str(port)
    log_path = tmp_path_factory.mktemp("langgraph-dev") / "server.log"
    log = open(log_path, "w")
    # no network: every connection that does not stay on this machine goes to a closed port
    dead = f"http://127.0.0.1:{_free_port()}"
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OPENAI_", "LANGSMITH_", "LANGCHAIN_")) and "proxy" not in k.lower()
    }
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        env[name] = env[name.lower()] = dead
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH"))))
    proc = subprocess.Popen(
        command,
        cwd=ROOT,
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while True:
            # in reload mode a server that failed to start waits for a change instead of exiting
            if proc.poll() is not None or "startup failed" in log_path.read_text():
                pytest.fail(f"langgraph dev did not start:\n{log_path.read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(f"{url}/ok", timeout=2) as resp:
                    if resp.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"langgraph dev did not start:\n{log_path.read_text()[-3000:]}")
            time.sleep(0.5)
        yield url
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=5)
        except ProcessLookupError:
            pass
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
