"""One long-lived MCP session per server, all owned by one background event-loop thread.

The mcp SDK's client is built on anyio: a session must be entered and exited by the *same*
task, or anyio fails with "Attempted to exit cancel scope in a different task" (adk-python
#2196). So every session lives in its own task (`_Connection._own`) on a private event loop
running in a daemon thread; callers — sync `invoke`, `ainvoke` on another loop, parallel
branches, other threads — only submit coroutines to that loop and wait for the answer. A call
that finds its server dead stops the session (the SDK then ends the server process) and the
next call starts a new one.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import threading
from collections.abc import Coroutine
from typing import Any, TextIO, TypeVar

import httpx2
import mcp_types
from mcp import Client, StdioServerParameters
from mcp.client.sse import sse_client
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from graphflow.exceptions import MCPSessionLostError, MCPToolsetClosedError
from graphflow.mcp.config import HttpServer, MCPServer, SseServer

T = TypeVar("T")
logger = logging.getLogger("graphflow.mcp")


# errors the SDK gives for a request the server refused at the HTTP level (a session it no
# longer knows answers 404 "Session terminated", or 400 with a plain body) — or a tool's own
# internal error: whether the session still answers tells them apart
_SESSION_ERRORS = (mcp_types.INTERNAL_ERROR, mcp_types.INVALID_REQUEST)


class SessionLoop:
    """A daemon thread running the event loop that owns a toolset's sessions."""

    def __init__(self, name: str) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Schedule `coro` on the owner loop; the future is usable from any thread."""
        if self.loop.is_closed() or not self._thread.is_alive():
            coro.close()
            raise MCPToolsetClosedError("the MCP toolset is closed")
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def run(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run `coro` on the owner loop and wait for it (from a thread that is not the loop's)."""
        future = self.submit(coro)
        try:
            return future.result(timeout)
        finally:
            if not future.done():
                future.cancel()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the loop and join its thread (sessions must be closed first)."""
        if self.loop.is_closed():
            return
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout)
        if not self._thread.is_alive():
            self.loop.close()

    @property
    def in_loop_thread(self) -> bool:
        """Whether the caller runs on the owner loop's thread (waiting there would deadlock)."""
        return threading.current_thread() is self._thread


class Connection:
    """The session of one server. Every method runs on the owner loop."""

    def __init__(self, name: str, server: MCPServer, *, errlog: TextIO | None) -> None:
        self.name = name
        self.server = server
        self.errlog = errlog
        self.connects = 0
        """How many sessions were started (1 + reconnects)."""
        self._client: Client | None = None
        self._task: asyncio.Task[None] | None = None
        self._ready: asyncio.Future[Client] | None = None
        self._stop: asyncio.Event | None = None
        self._lock: asyncio.Lock | None = None

    async def client(self, timeout: float) -> Client:
        """The live session, started (or restarted) when there is none."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self._client is not None and self._task is not None and not self._task.done():
                return self._client
            await self._finish()
            ready: asyncio.Future[Client] = asyncio.get_running_loop().create_future()
            # nobody may wait for it any more (a connect that timed out): not an unretrieved error
            ready.add_done_callback(_retrieve)
            self._ready = ready
            self._stop = asyncio.Event()
            self._task = asyncio.create_task(self._own(ready, self._stop), name=f"mcp-{self.name}")
            self.connects += 1
            try:
                return await asyncio.wait_for(asyncio.shield(ready), timeout)
            except BaseException:
                await self._finish()
                raise

    async def _own(self, ready: asyncio.Future[Client], stop: asyncio.Event) -> None:
        # enters and exits the SDK client in this one task, whoever uses the session
        try:
            async with contextlib.AsyncExitStack() as stack:
                transport = await self._transport(stack)
                client = Client(transport, read_timeout_seconds=self.server.timeout)
                await stack.enter_async_context(client)
                self._client = client
                ready.set_result(client)
                await stop.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc)
            elif not isinstance(exc, asyncio.CancelledError):
                logger.debug("MCP server %s: session ended with %r", self.name, exc)
        finally:
            self._client = None

    async def _transport(self, stack: contextlib.AsyncExitStack) -> Any:
        server = self.server
        if isinstance(server, SseServer):
            return sse_client(server.url, headers=dict(server.headers) or None)
        if isinstance(server, HttpServer):
            http = await stack.enter_async_context(
                httpx2.AsyncClient(
                    headers=dict(server.headers), timeout=httpx2.Timeout(30.0, read=300.0)
                )
            )
            return streamable_http_client(server.url, http_client=http)
        params = StdioServerParameters(
            command=server.command, args=list(server.args), env=server.env, cwd=server.cwd
        )
        if self.errlog is not None:
            return stdio_client(params, errlog=self.errlog)
        return stdio_client(params)

    async def list_tools(self, timeout: float) -> list[mcp_types.Tool]:
        """Every tool of the server (all pages)."""
        client = await self.client(timeout)
        tools: list[mcp_types.Tool] = []
        cursor: str | None = None
        for _ in range(100):
            page = await client.list_tools(cursor=cursor)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                break
        return tools

    async def call(
        self, tool: str, arguments: dict[str, Any], *, timeout: float, connect_timeout: float
    ) -> mcp_types.CallToolResult:
        """Call `tool`; a dead session is stopped so the next call reconnects."""
        client = await self.client(connect_timeout)
        session = self._task
        try:
            return await client.call_tool(tool, arguments, read_timeout_seconds=timeout)
        except MCPError as exc:
            if exc.code == mcp_types.CONNECTION_CLOSED:
                await self._finish(session)
            elif exc.code in _SESSION_ERRORS and not await _still_answers(client):
                await self._finish(session)
                raise MCPSessionLostError(f"lost the session ({exc})") from exc
            raise
        except (OSError, EOFError, httpx2.TransportError) as exc:
            logger.debug("MCP server %s: call failed with %r; restarting", self.name, exc)
            await self._finish(session)
            raise

    async def _finish(self, session: asyncio.Task[None] | None = None) -> None:
        """End the current session — only if it is still `session`, when given.

        A call that failed on a dead session must not end the new one that a later call
        already started (several calls may fail on the same dead session, one by one).
        """
        if session is not None and self._task is not session:
            return
        await self._end()

    async def _end(self) -> None:
        task, stop, ready = self._task, self._stop, self._ready
        self._task = None
        self._client = None
        if task is None:
            return
        if ready is not None and ready.done() and stop is not None:
            # a live session: let the SDK close it (and end a stdio server) in its own task
            stop.set()
            try:
                await asyncio.wait_for(asyncio.shield(task), 15.0)
                return
            except BaseException:
                pass
        # still connecting (a server that never answers), or stuck closing: give up on it now
        task.cancel()
        with contextlib.suppress(BaseException):
            await task

    async def aclose(self) -> None:
        """End the session (the SDK stops a stdio server's process)."""
        await self._end()


def _retrieve(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()


async def _still_answers(client: Client) -> bool:
    # a listing, not a ping: ping is gone from the 2026-07-28 protocol; bypass the SDK's cache
    try:
        await asyncio.wait_for(client.list_tools(cache_mode="bypass"), 5.0)
    except Exception:
        return False
    return True
