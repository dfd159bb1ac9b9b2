"""What the web UI does, apart from HTTP: list runs, read one, start, approve, resume and fork.

Everything goes through the objects Python users have: `agent.compile(store)` (a
`CompiledAgent`: `astream`, `history`, `get_state`, `draw`), `graphflow.checkpoint.runs`
(`thread_ids`, `run_info`) and `graphflow.visualize.build_drawing` (the run overlay). Reads are
synchronous (the stores' sync savers) and are called from a worker thread by the routes; runs
are asyncio tasks of the server's loop whose typed events are kept for the pages that watch.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langgraph.types import Command

from graphflow._internal.approval import APPROVE, EDIT, REJECT, approval_answer
from graphflow.checkpoint.runs import RunInfo
from graphflow.checkpoint.stored import AGENT_KEY
from graphflow.checkpoint.urls import resolve_checkpointer, safe_url, store_exists
from graphflow.exceptions import InputError, RunNotFoundError, UiError
from graphflow.tools.approval import check_resume_value
from graphflow.ui._jsonable import jsonable, public_values
from graphflow.ui._runs import owner_of, refusal, runs_page, settled_info
from graphflow.visualize import build_drawing

if TYPE_CHECKING:
    from graphflow.agents.base import Agent
    from graphflow.runtime.compiled import CompiledAgent

__all__ = ("LiveRun", "Service", "UiError")

TARGET_KEY = "graphflow_target"
"""The checkpoint metadata key naming the run's target (the one `graphflow run` writes)."""


@dataclass
class LiveRun:
    """A run started by this server: its typed events (JSON) as they come."""

    thread_id: str
    target: str
    events: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None
    done: bool = False
    task: asyncio.Task[None] | None = None
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    def notify(self) -> None:
        """Wake the pages waiting for this run (each waits on the event it saw)."""
        old, self.changed = self.changed, asyncio.Event()
        old.set()


def normalise_target(target: str) -> str:
    """`target` with its file made absolute, as `graphflow run` records it."""
    where, sep, attr = target.rpartition(":")
    if target.endswith((".yaml", ".yml", ".json")):
        return str(Path(target).resolve())
    if where.endswith(".py") or "/" in where:
        return f"{Path(where).resolve()}{sep}{attr}"
    return target


class Service:
    """The UI's operations on one store, for the loaded targets."""

    def __init__(
        self,
        targets: Mapping[str, Agent],
        checkpointer: str,
        *,
        load: Callable[[str], Agent] | None = None,
    ) -> None:
        """Serve `targets` (name -> agent tree) and the runs in `checkpointer` (a URL)."""
        self.targets: dict[str, Agent] = dict(targets)
        self.checkpointer = checkpointer
        self.store = safe_url(checkpointer) if isinstance(checkpointer, str) else "custom saver"
        self._load = load
        self._normal = {normalise_target(name): name for name in self.targets}
        self.live: dict[str, LiveRun] = {}
        self._bare_saver: Any = None
        self._compiled: dict[str, CompiledAgent] = {}

    # -- targets and the store ---------------------------------------------------------------------

    def compiled(self, target: str) -> CompiledAgent:
        """The target's `CompiledAgent` on the store (cached by `agent.compile`)."""
        found = self._compiled.get(target)
        if found is None:  # the loaded trees are not changed while served: compiled once
            found = self._compiled[target] = self.agent(target).compile(self.checkpointer)
        return found

    def agent(self, target: str) -> Agent:
        """The loaded target `target` (recorded targets loaded on first use when a loader is set)."""
        if target in self.targets:
            return self.targets[target]
        if self._load is None:
            raise UiError(f"unknown target {target!r}; loaded: {', '.join(self.targets)}", 404)
        try:
            agent = self._load(target)
        except Exception as exc:  # noqa: BLE001 - shown on the page
            raise UiError(f"cannot load target {target!r}: {exc}", 404) from None
        self.targets[target] = agent
        self._normal[normalise_target(target)] = target
        return agent

    def _saver(self) -> Any:
        """The store's saver, or None when the store does not exist (reading creates nothing)."""
        if not store_exists(self.checkpointer):
            return None
        if self.targets:
            return self.compiled(next(iter(self.targets))).graph.checkpointer
        if self._bare_saver is None:  # no target yet: the runs' recorded targets load later
            self._bare_saver = resolve_checkpointer(self.checkpointer)
        return self._bare_saver

    def target_of(self, saver: Any, thread_id: str) -> str | None:
        """The loaded target that ran `thread_id` (recorded in its checkpoints), or None."""
        cfg = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
        for i, found in enumerate(saver.list(cfg)):
            recorded = (found.metadata or {}).get(TARGET_KEY)
            if recorded:
                name = self._normal.get(normalise_target(str(recorded)))
                if name is None and self._load is not None:
                    with contextlib.suppress(UiError):
                        self.agent(str(recorded))
                        name = str(recorded)
                return name
            if i >= 20:
                break
        return next(iter(self.targets)) if len(self.targets) == 1 else None

    # -- the runs list ----------------------------------------------------------------------------

    def list_runs(
        self, *, status: str = "", text: str = "", offset: int = 0, limit: int = 50
    ) -> dict[str, Any]:
        """One page of runs, newest first (see `_runs.runs_page`)."""
        return runs_page(self, status=status, text=text, offset=offset, limit=limit)

    def info(self, thread_id: str, target: str | None) -> RunInfo | None:
        """The thread's `RunInfo`, settled with its lease and stop mark (`_runs.settled_info`)."""
        return settled_info(self, thread_id, target)

    # -- one run ----------------------------------------------------------------------------------

    def _run_target(self, thread_id: str) -> str:
        live = self.live.get(thread_id)
        if live is not None:
            return live.target
        saver = self._saver()
        if saver is None:
            raise UiError(f"no run is stored under thread {thread_id!r} in {self.store}", 404)
        target = self.target_of(saver, thread_id)
        if target is None:
            raise UiError(
                f"thread {thread_id!r} was not started by a loaded target; "
                "start the UI with its TARGET",
                404,
            )
        return target

    def fingerprint(self, thread_id: str) -> tuple[Any, ...]:
        """What changes when the run moves on (its status and latest checkpoint)."""
        target = self._run_target(thread_id)
        info = self.info(thread_id, target)
        live = self.live.get(thread_id)
        return (
            None if info is None else (info.status, info.checkpoint_id),
            None if live is None else (live.done, live.error),
        )

    def run(self, thread_id: str) -> dict[str, Any]:
        """A run: status, pending approvals, and every agent's state in it (the overlay)."""
        target = self._run_target(thread_id)
        info = self.info(thread_id, target)
        live = self.live.get(thread_id)
        if info is None:
            if live is not None:  # started, nothing checkpointed yet
                return {
                    "thread_id": thread_id,
                    "target": target,
                    "status": "failed" if live.error else "running",
                    "error": live.error,
                    "agents": [],
                    "approvals": [],
                    "live": not live.done,
                    "store": self.store,
                }
            raise UiError(f"no run is stored under thread {thread_id!r} in {self.store}", 404)
        compiled = self.compiled(target)
        drawing = build_drawing(
            compiled.agent, thread_id=thread_id, checkpointer=compiled.graph.checkpointer
        )
        agents = []
        for box in drawing.agents:
            run = box.run
            agents.append(
                {
                    "name": box.name,
                    "kind": box.kind,
                    "depth": box.depth,
                    "parent": box.parent,
                    "tool_of": box.tool_of,
                    "status": run.status if run else "not_reached",
                    "detail": run.detail if run else "",
                    "model_calls": run.model_calls if run else None,
                    "tool_calls": run.tool_calls if run else None,
                    "loop_passes": run.loop_passes if run else None,
                }
            )
        approvals = []
        if info.status == "interrupted":
            snapshot = compiled.get_state(thread_id)
            for intr in _interrupts(snapshot):
                approvals.append({"id": intr.id, "value": jsonable(intr.value)})
        status = info.status
        if live is not None and not live.done and status in ("crashed", "done"):
            status = "running"  # between the lease and the first checkpoint
        return {
            "thread_id": thread_id,
            "target": target,
            "status": status,
            "agent": info.agent,
            "step": info.step,
            "updated_at": info.updated_at,
            "checkpoint_id": info.checkpoint_id,
            "error": info.error or (live.error if live else None),
            "hint": info.hint,
            "next": list(info.next),
            "agents": agents,
            "approvals": approvals,
            "live": live is not None and not live.done,
            "owner": owner_of(self, thread_id) if status == "running" else None,
            "store": self.store,
        }

    def drawing_svg(self, thread_id: str) -> bytes:
        """The team's drawing coloured by the run (SVG)."""
        compiled = self.compiled(self._run_target(thread_id))
        out = compiled.draw("svg", thread_id=thread_id)
        return out if isinstance(out, bytes) else out.encode()

    def history(self, thread_id: str) -> list[dict[str, Any]]:
        """The run's root checkpoints, newest first."""
        compiled = self.compiled(self._run_target(thread_id))
        try:
            found = compiled.history(thread_id)
        except RunNotFoundError as exc:
            raise UiError(str(exc), 404) from None
        return [
            {
                "checkpoint_id": c.checkpoint_id,
                "parent_id": c.parent_id,
                "step": c.step,
                "source": c.source,
                "created_at": c.created_at,
                "next": list(c.next),
            }
            for c in found
        ]

    def checkpoint(self, thread_id: str, checkpoint_id: str) -> dict[str, Any]:
        """The state values at one checkpoint of the run."""
        compiled = self.compiled(self._run_target(thread_id))
        cfg: Any = {"configurable": {"thread_id": thread_id, "checkpoint_id": checkpoint_id}}
        snapshot = compiled.graph.get_state(cfg)
        if snapshot.created_at is None:
            raise UiError(f"no checkpoint {checkpoint_id!r} in thread {thread_id!r}", 404)
        return {
            "checkpoint_id": checkpoint_id,
            "step": (snapshot.metadata or {}).get("step"),
            "next": list(snapshot.next),
            "values": public_values(snapshot.values),
        }

    def agent_detail(self, thread_id: str, name: str) -> dict[str, Any]:
        """What one agent left in the run's latest state: its messages and its output key."""
        compiled = self.compiled(self._run_target(thread_id))
        member = next((a for a in compiled.agent.walk() if a.name == name), None)
        if member is None:
            raise UiError(f"no agent {name!r} in target {compiled.agent.name!r}", 404)
        values = compiled.get_state(thread_id).values or {}
        calls: set[str] = set()  # the agent's tool calls: their results are its too
        messages = []
        for m in values.get("messages", []) or []:
            if getattr(m, "name", "") == name:
                calls.update(str(c.get("id")) for c in getattr(m, "tool_calls", None) or ())
                messages.append(jsonable(m))
            elif getattr(m, "tool_call_id", None) in calls:
                messages.append(jsonable(m))
        key = getattr(member, "output_key", None)
        return {
            "name": name,
            "description": getattr(member, "description", "") or "",
            "output_key": key,
            "output": jsonable(values.get(key)) if key else None,
            "messages": messages,
        }

    # -- acting -----------------------------------------------------------------------------------

    async def start(self, target: str, text: Any, thread_id: str | None = None) -> str:
        """Start a run of `target` on an input (text, or a JSON object of state keys)."""
        self.agent(target)
        data: Any = text
        if isinstance(text, str) and text.strip().startswith("{"):
            try:
                data = json.loads(text)
            except json.JSONDecodeError as exc:
                raise UiError(f"the input looks like JSON but is not valid: {exc}") from None
        tid = thread_id or f"ui-{uuid.uuid4().hex[:12]}"
        return await self._launch(target, tid, data)

    async def approve(self, thread_id: str, answer: Mapping[str, Any]) -> str:
        """Answer the run's pending approvals (what `graphflow approve` sends), then continue it.

        `answer`: `{decision: approve | reject | edit, reason?, args?, id?}`; with `id` (an
        interrupt id) only that paused call is answered, else every pending one.
        """
        decision = str(answer.get("decision", APPROVE))
        if decision not in (APPROVE, REJECT, EDIT):
            raise UiError(f"unknown decision {decision!r}; use approve, reject or edit")
        reason = str(answer.get("reason") or "rejected") if decision == REJECT else None
        value = approval_answer(decision, reason=reason, args=answer.get("args"))
        target = self._run_target(thread_id)
        compiled = self.compiled(target)
        snapshot = await asyncio.to_thread(compiled.get_state, thread_id)
        pending = _interrupts(snapshot)
        if not pending:
            raise UiError(f"thread {thread_id!r} is not waiting for an approval", 409)
        chosen = answer.get("id")
        resume: Any = value if len(pending) == 1 else {intr.id: value for intr in pending}
        if chosen:  # one paused call of several (the others are asked again)
            if chosen not in {intr.id for intr in pending}:
                raise UiError(f"thread {thread_id!r} has no pending approval {chosen!r}", 409)
            resume = {chosen: value}
        try:
            check_resume_value(pending, resume)
        except ValueError as exc:
            raise UiError(str(exc)) from None
        return await self._launch(target, thread_id, Command(resume=resume))

    async def resume(self, thread_id: str) -> str:
        """Continue a failed, crashed or stopped run from its last checkpoint."""
        target = self._run_target(thread_id)
        return await self._launch(target, thread_id, None)

    async def fork(
        self,
        thread_id: str,
        checkpoint_id: str,
        values: Mapping[str, Any],
        new_thread: str | None = None,
    ) -> str:
        """Copy the run at `checkpoint_id` into a new thread, apply `values`, and run the copy.

        The original thread is not written to: the checkpoint (with its pending writes) is
        put into the new thread, and LangGraph's `update_state` forks from it there.
        """
        target = self._run_target(thread_id)
        compiled = self.compiled(target)
        tid = new_thread or f"{thread_id}-fork-{uuid.uuid4().hex[:6]}"
        await asyncio.to_thread(_copy_checkpoint, compiled, thread_id, checkpoint_id, tid, values)
        return await self._launch(target, tid, None)

    async def stop(self, thread_id: str) -> str:
        """Stop a run started by this server: its task is cancelled, its checkpoints stay.

        LangGraph records the cancelled step as failed (`CancelledError`); `resume` runs it
        again from the last checkpoint.
        """
        live = self.live.get(thread_id)
        if live is None or live.done or live.task is None:
            refused = await asyncio.to_thread(refusal, self, thread_id, "stop")
            if refused:
                raise UiError(refused, 409)
            raise UiError(
                f"thread {thread_id!r} is not running in this server (a run of another process "
                "is stopped in that process)",
                409,
            )
        live.task.cancel()
        with contextlib.suppress(BaseException):
            await live.task
        return thread_id

    async def _launch(self, target: str, thread_id: str, data: Any) -> str:
        """Run `data` on the thread as an asyncio task; wait until it started or failed."""
        current = self.live.get(thread_id)
        if current is not None and not current.done:
            raise UiError(f"thread {thread_id!r} is already running in this server", 409)
        refused = await asyncio.to_thread(refusal, self, thread_id, "run")
        if refused:  # another process runs it: refused before anything is written
            raise UiError(refused, 409)
        compiled = self.compiled(target)
        live = LiveRun(thread_id=thread_id, target=target)
        started = asyncio.Event()
        recorded = {TARGET_KEY: normalise_target(target), AGENT_KEY: compiled.agent.name}
        config: Any = {"metadata": recorded}  # what `graphflow run` records

        async def go() -> None:
            try:
                async for event in compiled.astream(data, thread_id=thread_id, config=config):
                    live.events.append(event.to_json())
                    started.set()
                    live.notify()
            except asyncio.CancelledError:
                live.error = "stopped from the UI"
            except Exception as exc:  # noqa: BLE001 - shown on the page
                live.error = f"{type(exc).__name__}: {exc}"
            finally:
                live.done = True
                started.set()
                live.notify()

        self.live[thread_id] = live
        live.task = asyncio.create_task(go())
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(started.wait(), timeout=10)
        if live.done and live.error and not live.events:
            del self.live[thread_id]
            raise UiError(live.error, 409 if "lease" in live.error.lower() else 400)
        return thread_id

    async def close(self) -> None:
        """Wait for the runs started here (the server is stopping)."""
        tasks = [r.task for r in self.live.values() if r.task is not None and not r.done]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(BaseException):
                await task


def _interrupts(snapshot: Any) -> list[Any]:
    """The snapshot's pending interrupts, nested agents' included, each once."""
    out: list[Any] = []
    stack = [snapshot]
    while stack:
        snap = stack.pop()
        for intr in getattr(snap, "interrupts", ()) or ():
            if intr not in out:
                out.append(intr)
        for task in getattr(snap, "tasks", ()) or ():
            for intr in task.interrupts or ():
                if intr not in out:
                    out.append(intr)
            if getattr(task, "state", None) is not None and hasattr(task.state, "tasks"):
                stack.append(task.state)
    return out


def _copy_checkpoint(
    compiled: CompiledAgent,
    thread_id: str,
    checkpoint_id: str,
    new_thread: str,
    values: Mapping[str, Any],
) -> None:
    graph = compiled.graph
    saver: Any = graph.checkpointer
    source: Any = {
        "configurable": {
            "thread_id": thread_id,
            "checkpoint_ns": "",
            "checkpoint_id": checkpoint_id,
        }
    }
    found = saver.get_tuple(source)
    if found is None:
        raise UiError(f"no checkpoint {checkpoint_id!r} in thread {thread_id!r}", 404)
    if saver.get_tuple({"configurable": {"thread_id": new_thread, "checkpoint_ns": ""}}):
        raise UiError(f"thread {new_thread!r} already exists; choose another name", 409)
    target_cfg: Any = {"configurable": {"thread_id": new_thread, "checkpoint_ns": ""}}
    stored = saver.put(
        target_cfg,
        found.checkpoint,
        {**(found.metadata or {}), "source": "fork"},
        dict(found.checkpoint.get("channel_versions", {})),
    )
    writes: dict[str, list[tuple[str, Any]]] = {}
    for task_id, channel, value in found.pending_writes or ():
        writes.setdefault(task_id, []).append((channel, value))
    for task_id, items in writes.items():
        saver.put_writes(stored, items, task_id)
    if values:
        unknown = [k for k in values if k not in graph.channels]
        if unknown:
            raise InputError(f"fork: no state key {', '.join(unknown)} in this team")
        graph.update_state(stored, dict(values))
