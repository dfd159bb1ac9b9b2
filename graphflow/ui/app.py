"""The ASGI app of `graphflow ui`: two pages, their JSON API, server-sent events, bundled assets.

Every asset is in `graphflow/ui/static` (no CDN, nothing from the network). The pages hold no
data: the script reads the JSON API and builds the page with `textContent`, so whatever a run
holds (agent answers, tool results) is shown as text.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from graphflow.exceptions import GraphflowError
from graphflow.ui._run_routes import run_routes
from graphflow.ui._service import Service, UiError

if TYPE_CHECKING:
    from graphflow.agents.base import Agent

__all__ = ("TOKEN_COOKIE", "create_app")

STATIC = Path(__file__).parent / "static"
TOKEN_COOKIE = "graphflow_ui_token"
LOCAL_HOSTS = ["127.0.0.1", "localhost", "[::1]", "::1", "testserver"]
POLL_SECONDS = 1.0
"""How often a page watching a run not started by this server re-reads the store."""
LIVE_POLL_SECONDS = 0.1
"""How often a page's stream looks for a run started here (a dict lookup)."""


def create_app(
    targets: Mapping[str, Agent],
    checkpointer: str,
    *,
    token: str | None = None,
    load: Callable[[str], Agent] | None = None,
) -> Starlette:
    """The web UI over the runs in `checkpointer` for the loaded `targets`.

    Args:
        targets: target name (as given to `graphflow ui`) -> its agent tree.
        checkpointer: the store URL (`sqlite:///runs.db`, `postgresql://...`, `memory:`).
        token: when set, every request must carry it (`?token=`, the cookie the first page sets,
            or `Authorization: Bearer`); required when serving another address than loopback.
        load: loads a target recorded in a run but not given (optional).
    """
    service = Service(targets, checkpointer, load=load)

    async def page(request: Request) -> Response:
        name = "run.html" if "thread_id" in request.path_params else "index.html"
        response: Response = FileResponse(STATIC / name)
        given = request.query_params.get("token")
        if token is not None and given is not None:
            response.set_cookie(TOKEN_COOKIE, given, httponly=True, samesite="strict")
        response.headers["Content-Security-Policy"] = _CSP
        return response

    async def runs(request: Request) -> Response:
        q = request.query_params
        offset = _int(q.get("offset"), 0)
        limit = min(max(_int(q.get("limit"), 50), 1), 500)
        return JSONResponse(
            await run_in_threadpool(
                service.list_runs,
                status=q.get("status", ""),
                text=q.get("q", ""),
                offset=offset,
                limit=limit,
            )
        )

    async def start(request: Request) -> Response:
        body = await _body(request)
        tid = await service.start(
            str(body.get("target", "")), body.get("input", ""), body.get("thread_id") or None
        )
        return JSONResponse({"thread_id": tid}, status_code=201)

    async def run(request: Request) -> Response:
        return JSONResponse(await run_in_threadpool(service.run, request.path_params["thread_id"]))

    async def drawing(request: Request) -> Response:
        svg = await run_in_threadpool(service.drawing_svg, request.path_params["thread_id"])
        return Response(svg, media_type="image/svg+xml", headers={"Cache-Control": "no-store"})

    async def history(request: Request) -> Response:
        found = await run_in_threadpool(service.history, request.path_params["thread_id"])
        return JSONResponse({"checkpoints": found})

    async def checkpoint(request: Request) -> Response:
        p = request.path_params
        return JSONResponse(
            await run_in_threadpool(service.checkpoint, p["thread_id"], p["checkpoint_id"])
        )

    async def agent(request: Request) -> Response:
        p = request.path_params
        return JSONResponse(
            await run_in_threadpool(service.agent_detail, p["thread_id"], p["name"])
        )

    async def approve(request: Request) -> Response:
        body = await _body(request)
        tid = await service.approve(request.path_params["thread_id"], body)
        return JSONResponse({"thread_id": tid})

    async def resume(request: Request) -> Response:
        await _body(request)
        tid = await service.resume(request.path_params["thread_id"])
        return JSONResponse({"thread_id": tid})

    async def stop(request: Request) -> Response:
        await _body(request)
        tid = await service.stop(request.path_params["thread_id"])
        return JSONResponse({"thread_id": tid})

    async def fork(request: Request) -> Response:
        body = await _body(request)
        values = body.get("values") or {}
        if not isinstance(values, dict):
            raise UiError("fork: `values` must be a JSON object of state keys")
        tid = await service.fork(
            request.path_params["thread_id"],
            str(body.get("checkpoint_id", "")),
            values,
            body.get("thread_id") or None,
        )
        return JSONResponse({"thread_id": tid}, status_code=201)

    async def events(request: Request) -> Response:
        tid = request.path_params["thread_id"]
        await run_in_threadpool(service.fingerprint, tid)  # 404 before the stream starts
        return StreamingResponse(
            _watch(service, tid, request),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
        )

    routes = [
        Route("/", page),
        Route("/runs/{thread_id:path}", page),
        Route("/api/runs", runs, methods=["GET"]),
        Route("/api/runs", start, methods=["POST"]),
        *run_routes(service),
        Route("/api/run/{thread_id:path}/drawing.svg", drawing),
        Route("/api/run/{thread_id:path}/history", history),
        Route("/api/run/{thread_id:path}/events", events),
        Route("/api/run/{thread_id:path}/checkpoints/{checkpoint_id}", checkpoint),
        Route("/api/run/{thread_id:path}/agents/{name}", agent),
        Route("/api/run/{thread_id:path}/approve", approve, methods=["POST"]),
        Route("/api/run/{thread_id:path}/resume", resume, methods=["POST"]),
        Route("/api/run/{thread_id:path}/fork", fork, methods=["POST"]),
        Route("/api/run/{thread_id:path}/stop", stop, methods=["POST"]),
        Route("/api/run/{thread_id:path}", run),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    middleware = [Middleware(_Guard, token=token)]
    if token is None:
        middleware.insert(0, Middleware(TrustedHostMiddleware, allowed_hosts=LOCAL_HOSTS))

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        await service.close()

    app = Starlette(
        routes=routes,
        middleware=middleware,
        exception_handlers={UiError: _refused, GraphflowError: _refused},
        lifespan=lifespan,
    )
    app.state.service = service
    return app


_CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; frame-ancestors 'none'"
)


async def _refused(request: Request, exc: Exception) -> Response:
    status = exc.status if isinstance(exc, UiError) else 400
    return JSONResponse({"error": str(exc) or type(exc).__name__}, status_code=status)


async def _body(request: Request) -> dict[str, Any]:
    if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
        raise UiError("send the request body as application/json", 415)
    try:
        body = await request.json()
    except ValueError:
        raise UiError("the request body is not valid JSON") from None
    if not isinstance(body, dict):
        raise UiError("the request body must be a JSON object")
    return body


def _int(text: str | None, default: int) -> int:
    try:
        return max(int(text), 0) if text is not None else default
    except ValueError:
        return default


async def _watch(service: Service, thread_id: str, request: Request) -> AsyncIterator[str]:
    """Server-sent events of one run: its typed events as they come, and its state when it moves.

    Two pumps feed one queue, so an event is never held back while the run's state (its
    overlay) is being read: events of a run started here go out as they arrive; the state is
    re-read after events (at most one read at a time) and every `POLL_SECONDS` otherwise (for
    runs of other processes).
    """
    queue: asyncio.Queue[str] = asyncio.Queue()
    dirty = asyncio.Event()

    async def events() -> None:
        current: Any = None
        seen = 0
        while True:
            live = service.live.get(thread_id)
            if live is not current:
                current, seen = live, 0
            if live is None:
                await asyncio.sleep(LIVE_POLL_SECONDS)
                continue
            changed = live.changed
            fresh = live.events[seen:]
            seen += len(fresh)
            for event in fresh:
                queue.put_nowait(_sse("event", event))
            dirty.set()
            if live.done and seen >= len(live.events):
                await asyncio.sleep(LIVE_POLL_SECONDS)
            else:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(changed.wait(), timeout=POLL_SECONDS)

    async def states() -> None:
        last: Any = None
        while True:
            state = await run_in_threadpool(service.fingerprint, thread_id)
            if state != last:
                last = state
                queue.put_nowait(_sse("run", await run_in_threadpool(service.run, thread_id)))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(dirty.wait(), timeout=POLL_SECONDS)
            dirty.clear()

    pumps = [asyncio.create_task(events()), asyncio.create_task(states())]
    try:
        while True:
            try:
                yield await asyncio.wait_for(queue.get(), timeout=POLL_SECONDS)
            except TimeoutError:
                if await request.is_disconnected():
                    return
                for pump in pumps:
                    if pump.done():  # a pump failed (the store went away): end the stream
                        return
                yield ": keep-alive\n\n"
    finally:
        for pump in pumps:
            pump.cancel()


def _sse(name: str, data: Any) -> str:
    return f"event: {name}\ndata: {json.dumps(data, default=str)}\n\n"


class _Guard:
    """Token check (when a token is set) and refusal of cross-site writes."""

    def __init__(self, app: Any, token: str | None) -> None:
        self.app = app
        self.token = token

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        if self.token is not None and not self._allowed(request):
            response = JSONResponse(
                {"error": "this server needs its token: open the URL it printed"}, 401
            )
            await response(scope, receive, send)
            return
        origin = request.headers.get("origin")
        host = request.headers.get("host", "")
        if request.method not in ("GET", "HEAD") and origin and origin.split("://")[-1] != host:
            response = JSONResponse({"error": "cross-site request refused"}, 403)
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def _allowed(self, request: Request) -> bool:
        assert self.token is not None
        given = (
            request.query_params.get("token")
            or request.cookies.get(TOKEN_COOKIE)
            or request.headers.get("authorization", "").removeprefix("Bearer ").strip()
        )
        return bool(given) and hmac.compare_digest(given, self.token)
