"""The `mcpServers` JSON config (Claude Desktop / Cursor / Lynxe format) as validated models.

```json
{"mcpServers": {
    "time": {"command": "python", "args": ["-m", "mcp_server_time"], "env": {}, "cwd": "."},
    "docs": {"url": "http://127.0.0.1:3001/mcp", "headers": {"Authorization": "Bearer ..."}},
    "old":  {"url": "http://127.0.0.1:3002/sse"}
}}
```

`command` → stdio; `url` → streamable HTTP, or SSE when `"type": "sse"` (also `"transport"`) or
the URL path ends in `/sse`. graphflow adds optional keys per server: `prefix` (a string put
before each tool name, or `true` for `"<server>_"`), `include` / `exclude` (tool names or
`fnmatch` patterns), `timeout` (seconds per call), `disabled`, `description`. Unknown keys are
errors (a typo must not pass silently). A relative `cwd` is relative to the config file.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlparse

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from graphflow.exceptions import GraphflowConfigError

__all__ = ("HttpServer", "MCPServer", "SseServer", "StdioServer", "load_mcp_config")


class _Server(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    prefix: str | bool | None = None
    """Put before each tool name: a string, or True for `"<server name>_"`."""
    include: list[str] | None = None
    """Expose only these tools (names or fnmatch patterns, as the server names them)."""
    exclude: list[str] = Field(default_factory=list)
    """Hide these tools (names or fnmatch patterns)."""
    timeout: float = Field(default=60.0, gt=0)
    """Seconds one call may take on the server before it fails with TIMEOUT. When given, it is
    also the call's timeout in agents whose `ToolPolicy` does not set one (whose default of
    30 s would otherwise end a longer call first)."""
    disabled: bool = False
    """Skip this server."""
    description: str | None = None
    """Free text for people reading the config."""


class StdioServer(_Server):
    """A server started as a subprocess, spoken to over its stdin/stdout."""

    type: Literal["stdio"] | None = None
    """Optional; a server with a `command` is a stdio server."""
    command: str
    """The program to run, e.g. `"npx"`, `"node"`, `"python"`."""
    args: list[str] = Field(default_factory=list)
    """Its arguments."""
    env: dict[str, str] | None = None
    """Extra environment variables (over a safe default set: PATH, HOME, ...)."""
    cwd: str | None = None
    """Working directory."""


class HttpServer(_Server):
    """A server reached over streamable HTTP."""

    type: Literal["http", "streamable-http", "streamable_http", "streamableHttp"] | None = None
    """Optional; a server with a `url` is streamable HTTP unless it is SSE."""
    url: str
    """The endpoint, e.g. `http://127.0.0.1:3001/mcp`."""
    headers: dict[str, str] = Field(default_factory=dict)
    """Sent with every request (authorization, ...)."""


class SseServer(_Server):
    """A server reached over the older HTTP+SSE transport."""

    type: Literal["sse"] = "sse"
    """Always `"sse"`."""
    url: str
    """The SSE endpoint, e.g. `http://127.0.0.1:3001/sse`."""
    headers: dict[str, str] = Field(default_factory=dict)
    """Sent with every request."""


MCPServer = StdioServer | HttpServer | SseServer
"""One entry of `mcpServers`."""


def load_mcp_config(config: str | os.PathLike[str] | Mapping[str, Any]) -> dict[str, MCPServer]:
    """Read an `mcpServers` config (a JSON file path or the parsed dict) into server models.

    Raises:
        GraphflowConfigError: the file or an entry is malformed; the message names the server.
    """
    base: Path | None = None
    if isinstance(config, Mapping):
        raw: Any = config
    else:
        path = Path(config)
        base = path.resolve().parent
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise GraphflowConfigError(
                f"MCP config {str(path)!r} cannot be read as JSON: {exc}; give a JSON file "
                'like {"mcpServers": {"name": {"command": ...}}}'
            ) from exc
    servers = raw.get("mcpServers") if isinstance(raw, Mapping) else None
    if not isinstance(servers, Mapping):
        found = sorted(raw) if isinstance(raw, Mapping) else type(raw).__name__
        raise GraphflowConfigError(
            f"MCP config: expected an object with an 'mcpServers' mapping, found {found}; "
            'write {"mcpServers": {"name": {"command": ...} or {"url": ...}}}'
        )
    return {str(name): parse_server(str(name), entry, base=base) for name, entry in servers.items()}


def parse_server(name: str, entry: Any, *, base: Path | None = None) -> MCPServer:
    """One `mcpServers` entry as a server model (see the module docstring)."""
    if not isinstance(entry, Mapping):
        raise GraphflowConfigError(
            f"MCP server `{name}`: expected an object, found {type(entry).__name__}"
        )
    data = dict(entry)
    if "transport" in data and "type" not in data:
        data["type"] = data.pop("transport")
    kind: type[_Server]
    if "command" in data:
        kind = StdioServer
        cwd = data.get("cwd")
        if base is not None and isinstance(cwd, str) and not os.path.isabs(cwd):
            data["cwd"] = str(base / cwd)
    elif "url" in data:
        sse = data.get("type") == "sse" or (
            data.get("type") is None
            and urlparse(str(data["url"])).path.rstrip("/").endswith("/sse")
        )
        kind = SseServer if sse else HttpServer
    else:
        raise GraphflowConfigError(
            f"MCP server `{name}`: found keys {sorted(data)} but neither 'command' (stdio) nor "
            "'url' (HTTP); add one of them"
        )
    try:
        return kind.model_validate(data)  # type: ignore[return-value]
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'entry'}: {e['msg']}" for e in exc.errors()
        )
        raise GraphflowConfigError(
            f"MCP server `{name}` ({kind.__name__}): {problems}. Allowed keys: "
            f"{', '.join(sorted(kind.model_fields))}"
        ) from exc
