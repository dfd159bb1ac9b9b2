"""The run page's reading routes: the timeline, one invocation, the diff of two checkpoints.

`GET /api/run/<thread>/timeline`: the agent invocations (see `_timeline`);
`GET /api/run/<thread>/invocations/<id>`: what one did (see `_invocation`);
`GET /api/run/<thread>/diff?a=<checkpoint>&b=<checkpoint>`: what changed from `a` to `b`.
"""

from __future__ import annotations

from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from graphflow.ui._diff import diff_values
from graphflow.ui._invocation import events_detail, stored_detail
from graphflow.ui._service import Service, UiError
from graphflow.ui._timeline import Invocation, live_timeline, stored_timeline

__all__ = ("RunReader", "run_routes")


class RunReader:
    """Reads a run's timeline, invocations and checkpoint differences for the run page."""

    CACHED = 32
    """Threads whose stored timeline is kept (the page asks for it again with each click)."""

    def __init__(self, service: Service) -> None:
        """Read through `service` (its store, loaded targets and the runs going on here)."""
        self.service = service
        self._cache: dict[str, tuple[Any, list[Invocation]]] = {}

    def timeline(self, thread_id: str) -> list[Invocation]:
        """The run's invocations: from its checkpoints, and its events while it runs here."""
        service = self.service
        target = service._run_target(thread_id)
        compiled = service.compiled(target)
        info = service.info(thread_id, target)
        stored = self._stored(compiled, thread_id, info.status, info.checkpoint_id) if info else []
        live = service.live.get(thread_id)
        if live is not None and not live.done:
            return live_timeline(stored, list(live.events))
        return stored

    def _stored(
        self, compiled: Any, thread_id: str, status: str, checkpoint_id: str
    ) -> list[Invocation]:
        """`stored_timeline`, read again only when the run has moved (a newer checkpoint or write
        in any namespace, another status)."""
        saver = compiled.graph.checkpointer
        newest = next(iter(saver.list({"configurable": {"thread_id": thread_id}}, limit=1)), None)
        stamp = (
            status,
            checkpoint_id,
            None if newest is None else newest.config["configurable"].get("checkpoint_id"),
            None if newest is None else len(newest.pending_writes or ()),
        )
        cached = self._cache.get(thread_id)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        items = stored_timeline(compiled, thread_id, run_status=status)
        if len(self._cache) >= self.CACHED:
            self._cache.pop(next(iter(self._cache)))
        self._cache[thread_id] = (stamp, items)
        return items

    def invocation(self, thread_id: str, invocation_id: str) -> dict[str, Any]:
        """What one invocation of the timeline did."""
        items = self.timeline(thread_id)
        item = next((i for i in items if i.id == invocation_id), None)
        if item is None:
            raise UiError(f"no invocation {invocation_id!r} in thread {thread_id!r}", 404)
        compiled = self.service.compiled(self.service._run_target(thread_id))
        if item.source == "store":
            return stored_detail(compiled, thread_id, item)
        live = self.service.live.get(thread_id)
        events = list(live.events) if live is not None else []
        stored = self._stored_twin(compiled, thread_id, item)
        return events_detail(events, item, stored)

    def _stored_twin(
        self, compiled: Any, thread_id: str, item: Invocation
    ) -> dict[str, Any] | None:
        """The stored detail of the invocation an event row stands for (its latest like it)."""
        info = self.service.info(thread_id, self.service._run_target(thread_id))
        if info is None:
            return None  # nothing checkpointed yet: the events alone
        rows = self._stored(compiled, thread_id, info.status, info.checkpoint_id)
        twins = [
            i
            for i in rows
            if i.path == item.path and i.branch == item.branch and i.iteration == item.iteration
        ]
        return stored_detail(compiled, thread_id, twins[-1]) if twins else None

    def diff(self, thread_id: str, first: str, second: str) -> dict[str, Any]:
        """What changed in the run's state from checkpoint `first` to checkpoint `second`."""
        if not first or not second:
            raise UiError("diff: give two checkpoint ids, ?a=...&b=...")
        before = self.service.checkpoint(thread_id, first)
        after = self.service.checkpoint(thread_id, second)
        return {
            "a": {k: before[k] for k in ("checkpoint_id", "step")},
            "b": {k: after[k] for k in ("checkpoint_id", "step")},
            **diff_values(before["values"], after["values"]),
        }


def run_routes(service: Service) -> list[Route]:
    """The routes of `RunReader`, to put before the app's `/api/run/<thread>` route."""
    reader = RunReader(service)

    async def timeline(request: Request) -> Response:
        items = await run_in_threadpool(reader.timeline, request.path_params["thread_id"])
        return JSONResponse({"invocations": [i.as_dict() for i in items]})

    async def invocation(request: Request) -> Response:
        p = request.path_params
        found = await run_in_threadpool(reader.invocation, p["thread_id"], p["invocation_id"])
        return JSONResponse(found)

    async def diff(request: Request) -> Response:
        q = request.query_params
        found = await run_in_threadpool(
            reader.diff, request.path_params["thread_id"], q.get("a", ""), q.get("b", "")
        )
        return JSONResponse(found)

    return [
        Route("/api/run/{thread_id:path}/timeline", timeline),
        Route("/api/run/{thread_id:path}/invocations/{invocation_id:path}", invocation),
        Route("/api/run/{thread_id:path}/diff", diff),
    ]
