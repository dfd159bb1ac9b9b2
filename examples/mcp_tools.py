"""A ReactAgent with MCP tools: the time server (PyPI) and the filesystem server (npm).

Runs offline with a scripted model by default: it asks for the time in Tokyo and a listing of
this folder in one turn (both tools are read-only, so the calls run concurrently), then reads a
file, tries one outside the allowed folder (a PERMISSION_DENIED result the model reads), and
answers. With OPENAI_API_KEY set it uses `openai:$GRAPHFLOW_MODEL` (default gpt-4o-mini).

    bash .ci/setup_tools.sh .venv          # once: the npm servers into .cache/npm, mcp-server-time
    python examples/mcp_tools.py "What time is it in Tokyo, and what is in this folder?"
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

from langchain_core.messages import BaseMessage, ToolMessage

from graphflow import ReactAgent
from graphflow.mcp import MCPToolset, load_mcp_config
from graphflow.testing import ScriptedChatModel, tool_calls

HERE = Path(__file__).resolve().parent


def _scripted(messages: list[BaseMessage], n: int) -> Any:
    if n == 0:
        return tool_calls(
            ("get_current_time", {"timezone": "Asia/Tokyo"}), ("fs_list_directory", {"path": "."})
        )
    if n == 1:
        return tool_calls(
            ("fs_read_text_file", {"path": "mcp.json", "head": 3}),
            ("fs_read_text_file", {"path": "/etc/hostname"}),
        )
    results = [m for m in messages if isinstance(m, ToolMessage)]
    now = json.loads(results[0].text)["datetime"]
    files = results[1].text.count("[FILE]")
    return (
        f"In Tokyo it is {now}. This folder holds {files} files; mcp.json starts with "
        f"{results[2].text.splitlines()[0]!r}. I may not read /etc/hostname "
        f"({results[3].text.split(':', 1)[0]})."
    )


def build(mcp: MCPToolset) -> ReactAgent:
    """The assistant, with the toolset's tools."""
    if os.environ.get("OPENAI_API_KEY"):
        model: Any = f"openai:{os.environ.get('GRAPHFLOW_MODEL', 'gpt-4o-mini')}"
    else:
        model = ScriptedChatModel(fn=_scripted)
    return ReactAgent(
        name="assistant",
        model=model,
        tools=mcp.tools(),
        system_prompt="You answer with the tools you have. Paths are relative to the folder.",
        output_key="answer",
    )


SETUP = "bash .ci/setup_tools.sh .venv"
"""The one command that installs this example's MCP servers (run from the repository root)."""


def missing_servers() -> list[str]:
    """What this example's MCP servers need and this machine lacks (empty when all is there)."""
    missing = []
    if importlib.util.find_spec("mcp_server_time") is None:
        missing.append("the Python package mcp-server-time")
    if shutil.which("node") is None:
        missing.append("node")
    server = HERE.parent / ".cache/npm/node_modules/@modelcontextprotocol/server-filesystem"
    if not (server / "dist" / "index.js").is_file():
        missing.append("the npm package @modelcontextprotocol/server-filesystem in .cache/npm")
    return missing


def main(question: str) -> str:
    config = load_mcp_config(HERE / "mcp.json")
    # run the time server with this interpreter, so it is found in this virtualenv
    config["time"] = config["time"].model_copy(update={"command": sys.executable})
    with open(os.devnull, "w") as quiet, MCPToolset(config, errlog=quiet) as mcp:
        result = build(mcp).invoke(question)
    for message in result["messages"]:
        if isinstance(message, ToolMessage):
            print(f"[{message.name} · {message.status}] {message.text[:100]!r}")
    return str(result["answer"])


if __name__ == "__main__":
    if lacking := missing_servers():
        print(
            f"mcp_tools.py needs its MCP servers ({', '.join(lacking)} missing): run `{SETUP}` "
            "from the repository root first",
            file=sys.stderr,
        )
        raise SystemExit(1)
    print(main(" ".join(sys.argv[1:]) or "What time is it in Tokyo, and what is in this folder?"))
