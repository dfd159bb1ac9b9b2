"""An MCP server's tool as a LangChain tool, and how MCP outcomes become typed tool errors.

The tool keeps the server's JSON schema (the server validates the arguments). Its results are
`content_and_artifact`: the text (or content blocks) for the model, the structured content as
the message's artifact. Failures raise graphflow's typed tool errors, so the executor applies
the agent's recovery table:

* `is_error` results and JSON-RPC errors: invalid arguments or an unknown tool (`-32602`,
  "Input validation error") → INVALID_PARAM; "access denied", "permission denied", "outside
  allowed directories" → PERMISSION_DENIED; "not found", "ENOENT", "no such file" →
  RESOURCE_NOT_FOUND; "timed out" (`-32001`) → TIMEOUT. Any other error the server reports is
  also returned to the model as INVALID_PARAM with the server's text — MCP reports tool
  failures in the result precisely so the model can adapt — never as UNKNOWN, so a server's
  error never stops the run.
* A dead or unreachable server (also one that cannot be reached again: the transport's error
  inside an exception group), or an HTTP server that lost the session (it restarted) →
  RESOURCE_NOT_FOUND; the next call starts a new session.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import TYPE_CHECKING, Any

import mcp_types
from langchain_core.tools import BaseTool
from mcp.shared.exceptions import MCPError
from pydantic import PrivateAttr

from graphflow.exceptions import (
    InvalidToolParamError,
    MCPSessionLostError,
    MCPToolsetClosedError,
    ToolError,
    ToolPermissionError,
    ToolResourceNotFoundError,
    ToolTimeoutError,
)
from graphflow.mcp.config import StdioServer

if TYPE_CHECKING:
    from graphflow.mcp._sessions import Connection, SessionLoop

_SERVER_HINT = (
    "the MCP server rejected this call; read its message, then change the arguments or use "
    "another tool"
)
_RULES: list[tuple[re.Pattern[str], type[ToolError]]] = [
    (
        re.compile(r"-32602|input validation error|invalid argument|invalid params", re.I),
        InvalidToolParamError,
    ),
    (
        re.compile(
            r"access denied|permission denied|not permitted|forbidden|outside (the )?allowed|"
            r"\bEACCES\b|\bEPERM\b",
            re.I,
        ),
        ToolPermissionError,
    ),
    (
        re.compile(r"not found|\bENOENT\b|no such file|does not exist|unknown resource", re.I),
        ToolResourceNotFoundError,
    ),
    (re.compile(r"-32001|timed out|timeout", re.I), ToolTimeoutError),
]


class MCPTool(BaseTool):
    """One tool of an MCP server, called through its toolset's long-lived session."""

    server: str
    """Name of the server in the config."""
    remote_name: str
    """The tool's name on the server (the LangChain name may carry a prefix)."""
    call_timeout: float = 60.0
    """Seconds the server may take for one call."""
    connect_timeout: float = 30.0
    """Seconds to (re)start the session."""
    response_format: str = "content_and_artifact"  # type: ignore[assignment]

    bridges_to_async: bool = True
    """The sync path only waits for the async one: graphflow runs it as a coroutine, so a
    timeout cancels the call on the server's session."""

    _connection: Connection = PrivateAttr()
    _loop: SessionLoop = PrivateAttr()
    _owner: Any = PrivateAttr(default=None)
    # the toolset: kept alive while a tool may be called (collecting it closes its sessions)

    def attach(self, connection: Connection, loop: SessionLoop, owner: Any = None) -> MCPTool:
        """Attach the session this tool calls through (and the toolset that owns it)."""
        self._connection = connection
        self._loop = loop
        self._owner = owner
        return self

    def _coroutine(self, arguments: dict[str, Any]) -> Any:
        return self._connection.call(
            self.remote_name,
            arguments,
            timeout=self.call_timeout,
            connect_timeout=self.connect_timeout,
        )

    def _run(self, *args: Any, run_manager: Any = None, **kwargs: Any) -> tuple[Any, Any]:
        if self._loop.in_loop_thread:
            raise RuntimeError("an MCP tool cannot be called synchronously from its own loop")
        try:
            result = self._loop.run(
                self._coroutine(kwargs), self.call_timeout + self.connect_timeout + 5
            )
        except Exception as exc:
            raise self._typed(exc) from exc
        return self._content(result)

    async def _arun(self, *args: Any, run_manager: Any = None, **kwargs: Any) -> tuple[Any, Any]:
        try:
            future = self._loop.submit(self._coroutine(kwargs))
        except Exception as exc:
            raise self._typed(exc) from exc
        try:
            result = await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            future.cancel()
            raise
        except Exception as exc:
            raise self._typed(exc) from exc
        return self._content(result)

    # -- outcomes

    def _content(self, result: mcp_types.CallToolResult) -> tuple[Any, Any]:
        blocks = [_block(c) for c in result.content]
        if result.is_error:
            text = "\n".join(
                b["text"] if isinstance(b, dict) and "text" in b else str(b) for b in blocks
            )
            raise _classify(text or "the server reported an error", tool=self.name)
        structured = result.structured_content
        if blocks and all(isinstance(b, dict) and b.get("type") == "text" for b in blocks):
            content: Any = "\n".join(b["text"] for b in blocks)
        elif blocks:
            content = blocks
        elif structured is not None:
            content = json.dumps(structured, ensure_ascii=False)
        else:
            content = ""
        return content, structured

    def _typed(self, exc: BaseException) -> BaseException:
        if isinstance(exc, ToolError):
            return exc
        if isinstance(exc, MCPToolsetClosedError):
            return ToolError(  # UNKNOWN: no retry or other call can help; the run stops
                f"the MCPToolset that owns server `{self.server}` was closed before this call",
                tool=self.name,
                hint="call its tools while it is open (inside `with MCPToolset(...)`, before "
                "`close()`), or give the agent the tools of a new toolset",
            )
        if isinstance(exc, BaseExceptionGroup):
            # a transport that fails to (re)connect raises from its task group: the cause is
            # inside (e.g. httpx's ConnectError when an HTTP server is down)
            typed = [self._typed(e) for e in _leaves(exc)]
            return next((t for t in typed if isinstance(t, ToolError)), exc)
        if isinstance(exc, MCPError):
            if exc.code == mcp_types.CONNECTION_CLOSED:
                return self._unreachable("closed the connection")
            if exc.code == mcp_types.REQUEST_TIMEOUT:
                return ToolTimeoutError(
                    f"MCP server `{self.server}` gave no answer within {self.call_timeout:g} s",
                    tool=self.name,
                )
            return _classify(f"MCP error {exc.code}: {exc.message}", tool=self.name)
        if isinstance(exc, MCPSessionLostError):
            return self._unreachable(str(exc))
        if isinstance(exc, TimeoutError):
            return self._unreachable(f"did not start within {self.connect_timeout:g} s")
        if isinstance(exc, OSError | EOFError | RuntimeError) or type(exc).__module__.startswith(
            ("httpx", "anyio", "mcp")
        ):
            return self._unreachable(f"cannot be reached ({type(exc).__name__}: {exc})")
        return exc

    def _unreachable(self, what: str) -> ToolResourceNotFoundError:
        again = (
            "the server is started again on the next call"
            if isinstance(self._connection.server, StdioServer)
            else "the next call connects to the server again"
        )
        return ToolResourceNotFoundError(
            f"MCP server `{self.server}` {what}",
            tool=self.name,
            hint=f"{again}; call the tool again, or use another tool",
        )


def _classify(text: str, *, tool: str) -> ToolError:
    for pattern, kind in _RULES:
        if pattern.search(text):
            return kind(text, tool=tool)
    return InvalidToolParamError(text, tool=tool, hint=_SERVER_HINT)


def _leaves(group: BaseExceptionGroup[Any]) -> list[BaseException]:
    found: list[BaseException] = []
    for exc in group.exceptions:
        found.extend(_leaves(exc) if isinstance(exc, BaseExceptionGroup) else [exc])
    return found


def _block(content: Any) -> Any:
    """An MCP content item as a LangChain content block."""
    kind = getattr(content, "type", None)
    if kind == "text":
        return {"type": "text", "text": content.text}
    if kind == "image":
        return {"type": "image", "base64": content.data, "mime_type": content.mime_type}
    if kind == "resource_link":
        return {"type": "text", "text": f"[resource {content.uri}] {content.name}"}
    if kind == "resource":
        resource = content.resource
        text = getattr(resource, "text", None)
        return {"type": "text", "text": text if text is not None else f"[resource {resource.uri}]"}
    if kind == "audio":
        return {"type": "text", "text": f"[audio, {content.mime_type}]"}
    return {"type": "text", "text": str(content)}
