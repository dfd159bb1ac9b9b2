"""`MCPToolset`: the tools of MCP servers (stdio, streamable HTTP, SSE) as LangChain tools.

```python
with MCPToolset.from_config("mcp.json") as mcp:
    agent = ReactAgent(name="assistant", model=model, tools=mcp.tools())
    agent.invoke("What time is it in Tokyo?")
```

Discovery (`tools()`) starts every server and lists its tools once; calls then go through one
long-lived session per server, owned by a background event-loop thread (see `_sessions`), so
the same tools work under `invoke`, `ainvoke`, in parallel branches and from several threads.
A tool whose server gives `readOnlyHint: true` is marked parallel-safe. Tool names are made
safe for chat-model APIs (`github.create_issue` → `github_create_issue`; at most 64 characters). A server that dies is
reported to the model as a RESOURCE_NOT_FOUND error and restarted on the next call.
`close()` (also on leaving the `with` block, and at interpreter exit) ends every session and
with it every server process the toolset started.
"""

from __future__ import annotations

import asyncio
import fnmatch
import os
import re
import weakref
from collections.abc import Mapping
from typing import Any, TextIO

import mcp_types
from langchain_core.tools import BaseTool

from graphflow.exceptions import GraphflowConfigError, MCPConnectionError
from graphflow.mcp._sessions import Connection, SessionLoop
from graphflow.mcp._tool import MCPTool
from graphflow.mcp.config import MCPServer, load_mcp_config, parse_server
from graphflow.tools.policy import PARALLEL_SAFE, TOOL_TIMEOUT

__all__ = ("MCPToolset",)


class MCPToolset:
    """The tools of a set of MCP servers, with one session per server."""

    def __init__(
        self,
        servers: Mapping[str, MCPServer | Mapping[str, Any]],
        *,
        connect_timeout: float = 30.0,
        errlog: TextIO | None = None,
    ) -> None:
        """Use `servers` (name -> server model or `mcpServers` entry).

        Args:
            servers: the servers; disabled ones are skipped.
            connect_timeout: seconds a server may take to start and answer `initialize`.
            errlog: where stdio servers' stderr goes (default: this process's stderr).
        """
        parsed = {
            name: s if not isinstance(s, Mapping) else parse_server(name, s)
            for name, s in servers.items()
        }
        self.servers: dict[str, MCPServer] = {n: s for n, s in parsed.items() if not s.disabled}
        """The enabled servers by name."""
        self.connect_timeout = connect_timeout
        self._loop = SessionLoop("graphflow-mcp")
        self._connections = {
            name: Connection(name, server, errlog=errlog) for name, server in self.servers.items()
        }
        self._tools: list[BaseTool] | None = None
        # closes the sessions at interpreter exit (or when the toolset is collected)
        self._finalizer = weakref.finalize(
            self, _shutdown, self._loop, list(self._connections.values())
        )

    @classmethod
    def from_config(
        cls, config: str | os.PathLike[str] | Mapping[str, Any], **kwargs: Any
    ) -> MCPToolset:
        """A toolset for an `mcpServers` JSON file or dict (see `graphflow.mcp.config`)."""
        return cls(load_mcp_config(config), **kwargs)

    # -- discovery -------------------------------------------------------------------------------

    def tools(self) -> list[BaseTool]:
        """Start the servers (once) and return their tools, in config order.

        Raises:
            MCPConnectionError: a server could not be started or listed.
            GraphflowConfigError: two servers expose the same tool name (give one a `prefix`).
        """
        if self._tools is None:
            listings = self._loop.run(self._list_all())
            self._tools = self._build(listings)
        return list(self._tools)

    async def atools(self) -> list[BaseTool]:
        """Async `tools()`."""
        if self._tools is None:
            listings = await asyncio.wrap_future(self._loop.submit(self._list_all()))
            self._tools = self._build(listings)
        return list(self._tools)

    async def _list_all(self) -> dict[str, list[mcp_types.Tool]]:
        async def one(name: str, connection: Connection) -> list[mcp_types.Tool]:
            try:
                return await connection.list_tools(self.connect_timeout)
            except BaseException as exc:
                detail = _describe(exc, self.connect_timeout)
                raise MCPConnectionError(
                    f"MCP server `{name}` could not be started or listed: {detail}. Check its "
                    f"entry ({_where(self.servers[name])}) and that the program runs on its own",
                    server=name,
                ) from exc

        names = list(self._connections)
        found = await asyncio.gather(
            *(one(n, self._connections[n]) for n in names), return_exceptions=True
        )
        for result in found:
            if isinstance(result, BaseException):
                raise result
        return dict(zip(names, found, strict=True))  # type: ignore[arg-type]

    def _build(self, listings: dict[str, list[mcp_types.Tool]]) -> list[BaseTool]:
        tools: list[BaseTool] = []
        owner: dict[str, str] = {}
        for name, listed in listings.items():
            server = self.servers[name]
            prefix = f"{name}_" if server.prefix is True else (server.prefix or "")
            for spec in listed:
                if not _selected(spec.name, server.include, server.exclude):
                    continue
                tool_name = _model_safe(f"{prefix}{spec.name}")
                if tool_name in owner:
                    raise GraphflowConfigError(
                        f"MCP tool name {tool_name!r} is offered by servers `{owner[tool_name]}` "
                        f'and `{name}`; give one of them a "prefix" (e.g. "prefix": true for '
                        f'"{name}_") or exclude the tool'
                    )
                owner[tool_name] = name
                tools.append(self._tool(name, server, spec, tool_name))
        return tools

    def _tool(self, name: str, server: MCPServer, spec: mcp_types.Tool, tool_name: str) -> MCPTool:
        metadata: dict[str, Any] = {"mcp_server": name, "mcp_tool": spec.name}
        hint = spec.annotations.read_only_hint if spec.annotations is not None else None
        if hint is not None:
            metadata[PARALLEL_SAFE] = bool(hint)
        if "timeout" in server.model_fields_set:  # the agent's policy yields to it unless explicit
            metadata[TOOL_TIMEOUT] = server.timeout
        schema = dict(spec.input_schema or {"type": "object", "properties": {}})
        schema.setdefault("type", "object")
        schema.setdefault("properties", {})
        tool = MCPTool(
            name=tool_name,
            description=spec.description or spec.title or spec.name,
            args_schema=schema,
            metadata=metadata,
            server=name,
            remote_name=spec.name,
            call_timeout=server.timeout,
            connect_timeout=self.connect_timeout,
        )
        return tool.attach(self._connections[name], self._loop, owner=self)

    # -- introspection ---------------------------------------------------------------------------

    def connects(self, server: str) -> int:
        """How many sessions were started for `server` (1 + reconnects)."""
        return self._connections[server].connects

    # -- shutdown --------------------------------------------------------------------------------

    def close(self) -> None:
        """End every session (and every server process this toolset started). Idempotent."""
        self._finalizer()

    async def aclose(self) -> None:
        """Async `close()`."""
        await asyncio.to_thread(self._finalizer)

    @property
    def closed(self) -> bool:
        """Whether `close()` ran."""
        return not self._finalizer.alive

    def __enter__(self) -> MCPToolset:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> MCPToolset:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def _shutdown(loop: SessionLoop, connections: list[Connection]) -> None:
    async def close_all() -> None:
        await asyncio.gather(*(c.aclose() for c in connections), return_exceptions=True)

    try:
        loop.run(close_all(), timeout=30.0)
    except Exception:  # a closed loop or a stuck server: the loop stops below anyway
        pass
    loop.stop()


_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def _model_safe(name: str) -> str:
    """`name` as chat-model APIs accept a tool name (OpenAI, Anthropic: `[A-Za-z0-9_-]{1,64}`).

    MCP allows more (`github.create_issue`); the server is still called by its own name.
    """
    return _UNSAFE.sub("_", name)[:64] or "_"


def _selected(name: str, include: list[str] | None, exclude: list[str]) -> bool:
    if include is not None and not any(fnmatch.fnmatchcase(name, p) for p in include):
        return False
    return not any(fnmatch.fnmatchcase(name, p) for p in exclude)


def _where(server: MCPServer) -> str:
    command = getattr(server, "command", None)
    if command is not None:
        return f"command {command!r} args {list(getattr(server, 'args', []))}"
    return f"url {getattr(server, 'url', '')!r}"


def _describe(exc: BaseException, timeout: float) -> str:
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(_describe(e, timeout) for e in exc.exceptions)
    if isinstance(exc, TimeoutError):
        return f"no answer within connect_timeout={timeout:g} s"
    return f"{type(exc).__name__}: {exc}"
