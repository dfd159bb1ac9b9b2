"""The README's example runs unchanged against the local server, in every behaviour.

`python examples/competitive_analysis.py "Huawei Pura X"` with `OPENAI_API_KEY` set and
`OPENAI_BASE_URL` pointing at the server: the team runs on `openai:gpt-4o-mini`. Stopped
mid-run, it fails with one line and `--resume THREAD` finishes it in a new process.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.models.openai_server import OpenAIServer

ROOT = Path(__file__).resolve().parents[2]


def _example(server: OpenAIServer, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-test"}
    return subprocess.run(
        [sys.executable, str(ROOT / "examples" / "competitive_analysis.py"), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_readme_example_completes(openai_env: OpenAIServer, tmp_path: Path) -> None:
    done = _example(openai_env, tmp_path, "Huawei Pura X")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "[researcher]" in out and "[refine/writer]" in out and "[refine/reviewer]" in out
    assert "gpt-4o-mini answers: Write a report on Huawei Pura X" in out
    assert "loop ended by: until; thread: analysis-huawei-pura-x" in out
    assert (tmp_path / "runs.db").exists()
    answered = openai_env.answered
    assert {r.body["model"] for r in answered} == {"gpt-4o-mini"}
    assert sum(any(m["role"] == "tool" for m in r.body["messages"]) for r in answered) == 1
    assert len(answered) == 4  # researcher x2, writer, reviewer (it approves: APPROVE is echoed)


@pytest.mark.parametrize("behaviour", ["openai_strict", "no_null_content", "drop_connection"])
def test_readme_example_resumes_after_the_server_stopped(
    make_server, clean_env, tmp_path: Path, behaviour: str
) -> None:
    # the server goes down once it has answered the researcher's tool call
    server: OpenAIServer = make_server(behaviour, stop_after=1).start()
    failed = _example(server, tmp_path, "Huawei Pura X")

    assert failed.returncode == 1, failed.stderr
    assert "[researcher] web_search(" in failed.stdout
    (error,) = [line for line in failed.stderr.splitlines() if "Error" in line]
    assert error.startswith(
        "failed: ModelConnectionError: Agent `researcher`: cannot reach the model endpoint "
        f"(model 'gpt-4o-mini' at {server.base_url}, after 2 retries)"
    )
    assert "Traceback" not in failed.stderr
    thread = re.search(r"--resume (analysis-huawei-pura-x-\w+)", failed.stderr)
    assert thread is not None
    assert len(server.answered) == 1

    server.stop_after = None
    server.start()  # the same port
    resumed = _example(server, tmp_path, "--resume", thread.group(1))

    assert resumed.returncode == 0, resumed.stderr
    assert "web_search(" not in resumed.stdout  # the tool's result came from the checkpoint
    assert f"loop ended by: until; thread: {thread.group(1)}" in resumed.stdout
    after = server.answered[1:]
    # the researcher's second call (with the tool result), the writer, the reviewer: once each
    assert len(after) == 3
    assert any(m["role"] == "tool" for m in after[0].body["messages"])
