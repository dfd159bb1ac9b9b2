"""`graphflow ui` as a user starts it: prints its URL, serves the store's runs, needs a token off loopback."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

TEAM = str(Path(__file__).parent / "ui_cli_team.py") + ":team"
ROOT = Path(__file__).parent.parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def graphflow(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("GRAPHFLOW_CHECKPOINTER", None)
    return subprocess.run(
        [sys.executable, "-m", "graphflow.cli", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def serve(*args: str, cwd: Path) -> tuple[subprocess.Popen[str], str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("GRAPHFLOW_CHECKPOINTER", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "graphflow.cli", "ui", *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    url = proc.stdout.readline().strip()  # printed before serving; the server starts right after
    return proc, url


def get(url: str, timeout: float = 60) -> tuple[int, dict]:
    import time

    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(url, timeout=10) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read())
        except (urllib.error.URLError, ConnectionError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


@pytest.fixture
def stop():
    procs: list[subprocess.Popen[str]] = []
    yield procs.append
    for proc in procs:
        proc.terminate()
        proc.wait(timeout=30)


def test_ui_serves_the_default_store_runs_started_by_graphflow_run(tmp_path, stop):
    assert (
        graphflow("run", TEAM, "hi", "--thread-id", "cli-1", "--plain", cwd=tmp_path).returncode
        == 0
    )
    port = free_port()
    proc, url = serve("--port", str(port), cwd=tmp_path)  # no TARGET: loaded from the runs
    stop(proc)
    assert url == f"http://127.0.0.1:{port}/"
    status, data = get(url + "api/runs")
    assert status == 200
    assert data["store"] == "sqlite:///runs.db"
    (row,) = data["runs"]
    assert row["thread_id"] == "cli-1" and row["status"] == "done"
    assert row["target"].endswith("ui_cli_team.py:team")


def test_ui_off_loopback_prints_a_token_and_needs_it(tmp_path, stop):
    port = free_port()
    proc, url = serve(TEAM, "--host", "0.0.0.0", "--port", str(port), cwd=tmp_path)
    stop(proc)
    assert "?token=" in url
    token = url.split("?token=")[1]
    local = f"http://127.0.0.1:{port}"
    assert get(f"{local}/api/runs")[0] == 401
    status, data = get(f"{local}/api/runs?token={token}")
    assert status == 200 and data["targets"] == [TEAM] and data["runs"] == []
    assert not (tmp_path / "runs.db").exists()  # reading the runs created no store
