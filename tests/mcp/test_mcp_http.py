"""MCP tools over streamable HTTP and SSE, against server-everything started by the test."""

from __future__ import annotations

import asyncio

import pytest
from langchain_core.messages import ToolMessage

from graphflow import ReactAgent
from graphflow.mcp import HttpServer, MCPToolset, SseServer
from graphflow.testing import ScriptedChatModel, tool_call
from graphflow.tools import tool_result


@pytest.mark.parametrize("mode", ["streamableHttp", "sse"])
def test_http_transports_discover_and_call(http_server, mode):
    url = http_server(mode)
    server = (HttpServer if mode == "streamableHttp" else SseServer)(
        url=url, headers={"X-Test": "graphflow"}, include=["echo", "get-sum"]
    )
    with MCPToolset({"remote": server}) as mcp:
        assert sorted(t.name for t in mcp.tools()) == ["echo", "get-sum"]
        model = ScriptedChatModel(
            replies=[
                tool_call("get-sum", {"a": 20, "b": 22}),
                tool_call("get-sum", {"a": "x"}),
                "42",
            ]
        )
        agent = ReactAgent(name="calc", model=model, tools=mcp.tools(), output_key="out")
        result = asyncio.run(agent.ainvoke("add"))
        ok, bad = [m for m in result["messages"] if isinstance(m, ToolMessage)]
        assert ok.content == "The sum of 20 and 22 is 42."
        assert tool_result(bad).error_type == "INVALID_PARAM"
        assert result["out"] == "42"
        # the same session serves sync calls from this thread too
        echo = next(t for t in mcp.tools() if t.name == "echo")
        assert echo.invoke({"message": "sync"}) == "Echo: sync"
        assert mcp.connects("remote") == 1


def test_the_url_decides_the_transport_in_a_config(http_server):
    url = http_server("streamableHttp")
    with MCPToolset.from_config({"mcpServers": {"web": {"url": url}}}) as mcp:
        assert isinstance(mcp.servers["web"], HttpServer)
        echo = next(t for t in mcp.tools() if t.name == "echo")
        assert echo.invoke({"message": "hi"}) == "Echo: hi"


def _echo_calls(run_mode, url, calls, before):
    """Tool results of an agent that calls `echo` at `url` `calls` times, and the sessions used.

    `before(n)` runs before model call `n` (between two tool calls): it kills or restarts servers.
    """

    def reply(messages, n):
        before(n)
        return tool_call("echo", {"message": f"call {n}"}) if n < calls else "survived"

    with MCPToolset({"web": HttpServer(url=url, include=["echo"])}) as mcp:
        agent = ReactAgent(
            name="a", model=ScriptedChatModel(fn=reply), tools=mcp.tools(), output_key="out"
        )
        result = run_mode.invoke(agent, "go")
        assert result["out"] == "survived"  # the run went on whatever the server did
        return [m for m in result["messages"] if isinstance(m, ToolMessage)], mcp.connects("web")


def _port(url):
    return int(url.split(":")[2].split("/")[0])


def test_a_dead_http_server_is_an_error_result_until_it_is_back(http_server, run_mode):
    url = http_server("streamableHttp")

    def before(n):
        if n == 1:
            http_server.kill(url)
        if n == 3:
            http_server("streamableHttp", port=_port(url))  # back on the same address

    (first, closed, down, back), _ = _echo_calls(run_mode, url, 4, before)
    assert first.content == "Echo: call 0"
    for error in (closed, down):
        assert error.status == "error"
        assert tool_result(error).error_type == "RESOURCE_NOT_FOUND"
        assert "the next call connects to the server again" in error.content
    assert "MCP server `web` closed the connection" in closed.content
    # reconnecting fails while it is down: still an error result, never the end of the run
    assert "MCP server `web` cannot be reached (ConnectError" in down.content
    assert back.content == "Echo: call 3"


def test_a_restarted_http_server_lost_the_session_and_the_next_call_reconnects(
    http_server, run_mode
):
    url = http_server("streamableHttp")

    def before(n):
        if n == 1:  # restarted between two calls: the old session id means nothing to it now
            http_server.kill(url)
            http_server("streamableHttp", port=_port(url))

    (first, lost, again), sessions = _echo_calls(run_mode, url, 3, before)
    assert first.content == "Echo: call 0" and again.content == "Echo: call 2"
    assert tool_result(lost).error_type == "RESOURCE_NOT_FOUND"
    assert "MCP server `web` lost the session" in lost.content
    assert sessions == 2
