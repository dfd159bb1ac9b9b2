"""MCP servers in a spec: `{mcp: mcp.json, servers: [...]}` in `tools`, by config reference."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import jsonschema
import pytest
import yaml

from graphflow.spec import SpecError, load_spec, spec_schema

pytest.importorskip("mcp_server_time")

MODELS = """
from langchain_core.messages import ToolMessage

from graphflow.testing import ScriptedChatModel, tool_call


def _ask_the_time(messages, n):
    if any(isinstance(m, ToolMessage) for m in messages):
        return "It is " + messages[-1].text
    return tool_call("get_current_time", {"timezone": "Asia/Tokyo"})


model = ScriptedChatModel(fn=_ask_the_time)
"""

SPEC = """
kind: ReactAgent
name: clock
model: {ref: "spec_mcp_models:model"}
tools:
  - {mcp: mcp.json, servers: [time]}
instruction: What time is it in Tokyo?
output_key: answer
"""


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    servers = {
        "time": {
            "command": sys.executable,
            "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"],
        },
        "never_started": {"command": "no-such-program-for-graphflow"},
    }
    (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
    (tmp_path / "spec_mcp_models.py").write_text(textwrap.dedent(MODELS))
    return tmp_path


def test_tools_of_mcp_servers_by_config_reference(folder: Path) -> None:
    spec = folder / "clock.yaml"
    spec.write_text(SPEC)
    agent = load_spec(spec)
    names = [t.name for t in agent.tools]
    assert "get_current_time" in names and "convert_time" in names
    assert agent.to_spec() == yaml.safe_load(SPEC)  # written back as the reference, once
    jsonschema.validate(agent.to_spec(), spec_schema())
    result = agent.invoke("now", checkpointer="memory:")
    assert result["answer"].startswith("It is ") and "Asia/Tokyo" in result["answer"]


@pytest.mark.parametrize(
    ("entry", "path", "says"),
    [
        ("{mcp: mcp.json, servers: [tiem]}", "tools[0].servers", "no server 'tiem'"),
        ("{mcp: missing.json}", "tools[0].mcp", "cannot be read"),
        ("{mcp: mcp.json, server: [time]}", "tools[0]", "unknown keys: server"),
    ],
)
def test_mcp_entry_errors_name_the_field_path_and_line(folder, entry, path, says) -> None:
    spec = folder / "clock.yaml"
    spec.write_text(SPEC.replace("{mcp: mcp.json, servers: [time]}", entry))
    with pytest.raises(SpecError) as info:
        load_spec(spec)
    assert info.value.path == path and info.value.line == 6, str(info.value)
    assert says in str(info.value) and str(info.value).startswith(f"{spec}:6: {path}: ")
