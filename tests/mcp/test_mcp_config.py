"""The `mcpServers` config: transports, graphflow's extra keys, and errors that name the server."""

from __future__ import annotations

import json

import pytest

from graphflow.exceptions import GraphflowConfigError
from graphflow.mcp import HttpServer, MCPToolset, SseServer, StdioServer, load_mcp_config


def test_each_entry_becomes_its_transport(tmp_path):
    path = tmp_path / "mcp.json"
    path.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "local": {"command": "node", "args": ["x.js"], "env": {"A": "1"}, "cwd": "srv"},
                    "remote": {"url": "http://127.0.0.1:1/mcp", "headers": {"X-Key": "k"}},
                    "legacy": {"url": "http://127.0.0.1:1/sse"},
                    "typed": {"url": "http://127.0.0.1:1/events", "transport": "sse"},
                    "off": {"command": "nothing", "disabled": True},
                }
            }
        )
    )
    servers = load_mcp_config(path)
    local = servers["local"]
    assert isinstance(local, StdioServer) and local.args == ["x.js"] and local.env == {"A": "1"}
    assert local.cwd == str(tmp_path / "srv")  # relative to the config file
    assert isinstance(servers["remote"], HttpServer) and servers["remote"].headers == {"X-Key": "k"}
    assert isinstance(servers["legacy"], SseServer) and isinstance(servers["typed"], SseServer)
    toolset = MCPToolset(servers)
    try:
        assert sorted(toolset.servers) == ["legacy", "local", "remote", "typed"]
    finally:
        toolset.close()
    assert toolset.closed


def test_a_typo_is_an_error_naming_the_server_and_the_allowed_keys():
    with pytest.raises(
        GraphflowConfigError, match=r"MCP server `time` \(StdioServer\): argz"
    ) as err:
        load_mcp_config({"mcpServers": {"time": {"command": "python", "argz": []}}})
    assert "Allowed keys:" in str(err.value) and "args" in str(err.value)


def test_an_entry_without_command_or_url_is_an_error():
    with pytest.raises(GraphflowConfigError, match="neither 'command' .* nor 'url'"):
        load_mcp_config({"mcpServers": {"x": {"args": []}}})


def test_the_root_must_be_mcp_servers(tmp_path):
    with pytest.raises(GraphflowConfigError, match="'mcpServers'"):
        load_mcp_config({"servers": {}})
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(GraphflowConfigError, match="cannot be read as JSON"):
        load_mcp_config(bad)
