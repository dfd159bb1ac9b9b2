"""`connect_timeout` bounds the start of a session, also against a server that never answers."""

from __future__ import annotations

import socket
import threading
import time

import pytest

from graphflow.exceptions import MCPConnectionError
from graphflow.mcp import HttpServer, MCPToolset, SseServer


@pytest.fixture
def silent_port():
    """A local port that accepts connections and never says a word."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    accepted: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            accepted.append(conn)

    threading.Thread(target=accept, daemon=True).start()
    yield server.getsockname()[1]
    server.close()
    for conn in accepted:
        conn.close()


@pytest.mark.parametrize("kind", [HttpServer, SseServer])
def test_a_server_that_never_answers_is_given_up_on_in_connect_timeout(silent_port, kind):
    path = "mcp" if kind is HttpServer else "sse"
    server = kind(url=f"http://127.0.0.1:{silent_port}/{path}")
    started = time.monotonic()
    with MCPToolset({"silent": server}, connect_timeout=0.5) as mcp:
        with pytest.raises(MCPConnectionError) as info:
            mcp.tools()
    took = time.monotonic() - started
    assert "MCP server `silent` could not be started" in str(info.value)
    assert "no answer within connect_timeout=0.5 s" in str(info.value)
    # given up on at its timeout: before, the stuck connect was waited for 15 s more
    assert took < 10, f"took {took:.1f} s with connect_timeout=0.5"
