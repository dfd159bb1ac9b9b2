"""MCP servers in a spec: `{mcp: mcp.json, servers: [...]}` in `tools`, by config reference."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import jsonschema
import pytest
import yaml

from graphflow.spec import SpecError, load_spec, spec_schema
from tests.support.processes import marked_pids, wait_gone

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


# -- the servers a spec starts belong to the loaded tree ------------------------------------------


def _gone(mark: str) -> bool:
    return wait_gone(mark, timeout=30.0) == []


@pytest.fixture
def marked(folder: Path) -> tuple[Path, str]:
    """A spec whose time server carries a unique mark in its environment."""
    mark = f"gf-{uuid.uuid4().hex}"
    servers = {
        "time": {
            "command": sys.executable,
            "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"],
            "env": {"GF_TEST_MARK": mark},
        }
    }
    (folder / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
    spec = folder / "clock.yaml"
    spec.write_text(SPEC)
    return spec, mark


def test_closing_the_tree_stops_its_servers(marked) -> None:
    spec, mark = marked
    with load_spec(spec) as agent:
        assert marked_pids(mark)  # started by the load
        assert "Asia/Tokyo" in agent.invoke("now", checkpointer="memory:")["answer"]
    assert _gone(mark)
    agent.close()  # idempotent
    again = load_spec(spec)
    assert marked_pids(mark)
    again.close()
    assert _gone(mark)


async def test_async_with_closes_the_tree_too(marked) -> None:
    spec, mark = marked
    async with load_spec(spec) as agent:
        assert marked_pids(mark)
        assert "Asia/Tokyo" in (await agent.ainvoke("now", checkpointer="memory:"))["answer"]
    assert _gone(mark)


def test_a_dropped_tree_stops_its_servers(marked) -> None:
    spec, mark = marked
    agent = load_spec(spec)
    assert marked_pids(mark)
    del agent
    gc.collect()
    assert _gone(mark)


def test_a_spec_that_fails_after_starting_servers_stops_them(marked) -> None:
    spec, mark = marked
    spec.write_text(SPEC.replace("output_key: answer", "output_key: answer\nmax_iterations: 0"))
    with pytest.raises(SpecError, match="max_iterations"):
        load_spec(spec)
    assert _gone(mark)


def test_the_servers_stop_when_the_process_ends(marked) -> None:
    spec, mark = marked
    code = "import sys\nfrom graphflow import load_spec\nteam = load_spec(sys.argv[1])\n"
    root = Path(__file__).resolve().parents[2]
    subprocess.run(
        [sys.executable, "-c", code, str(spec)],
        check=True,
        timeout=120,
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
    )
    assert _gone(mark)
