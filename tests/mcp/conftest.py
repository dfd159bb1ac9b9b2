"""Real MCP servers for the tests, started by the tests themselves.

npm `@modelcontextprotocol/server-everything` and `server-filesystem` are looked up under
`<repo>/.cache/npm/node_modules` (installed by `.ci/setup_tools.sh`), PyPI `mcp-server-time` in
this interpreter. Missing ones skip the tests locally and fail them under CI (`CI=true`).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.support.processes import marked_pids, wait_gone

REPO = Path(__file__).resolve().parents[2]
NPM = REPO / ".cache" / "npm" / "node_modules" / "@modelcontextprotocol"
EVERYTHING = NPM / "server-everything" / "dist" / "index.js"
FILESYSTEM = NPM / "server-filesystem" / "dist" / "index.js"


def _need(ok: bool, what: str) -> None:
    if ok:
        return
    message = f"{what} is missing; run .ci/setup_tools.sh"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(scope="session")
def everything() -> Path:
    _need(shutil.which("node") is not None and EVERYTHING.exists(), "server-everything")
    return EVERYTHING


@pytest.fixture(scope="session")
def filesystem() -> Path:
    _need(shutil.which("node") is not None and FILESYSTEM.exists(), "server-filesystem")
    return FILESYSTEM


@pytest.fixture(scope="session")
def time_server() -> list[str]:
    _need(importlib.util.find_spec("mcp_server_time") is not None, "mcp-server-time")
    return [sys.executable, "-m", "mcp_server_time", "--local-timezone", "UTC"]


@pytest.fixture
def mark() -> str:
    """A unique value put in a server's environment, to find its processes."""
    return f"gf-{uuid.uuid4().hex}"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class HttpServers:
    """server-everything over streamable HTTP (`/mcp`) or SSE (`/sse`) on free local ports."""

    def __init__(self, everything: Path) -> None:
        self.everything = everything
        self.procs: dict[str, subprocess.Popen[bytes]] = {}

    def __call__(self, mode: str = "streamableHttp", port: int | None = None) -> str:
        """Start one; returns its URL. `port`: a port used before (a restart)."""
        port = port or free_port()
        proc = subprocess.Popen(
            ["node", str(self.everything), mode],
            env={**os.environ, "PORT": str(port)},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        url = f"http://127.0.0.1:{port}{'/mcp' if mode == 'streamableHttp' else '/sse'}"
        self.procs[url] = proc
        return url

    def kill(self, url: str) -> None:
        """Kill the server at `url` (SIGKILL) and wait until it is gone."""
        proc = self.procs.pop(url)
        proc.kill()
        proc.wait(10)

    def stop_all(self) -> None:
        for proc in self.procs.values():
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()


@pytest.fixture
def http_server(everything):
    """Starts server-everything over HTTP: `http_server(mode)` → URL; `.kill(url)`."""
    servers = HttpServers(everything)
    yield servers
    servers.stop_all()


class Processes:
    """Finds the processes of marked servers."""

    marked = staticmethod(marked_pids)
    wait_gone = staticmethod(wait_gone)


@pytest.fixture
def processes() -> Processes:
    return Processes()
