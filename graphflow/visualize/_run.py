"""Run overlay: each agent's state in a run, read from the run's checkpoints.

Sources (all public LangGraph / graphflow facts): the thread's `StateSnapshot` with
`subgraphs=True` (pending tasks, their errors and interrupts, nested states), `agent_status` in
state values, and the checkpointer's `list()` over every namespace (a sub-agent's namespace
segment is `<agent name>:<task id>`) for per-agent counts.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage
from langgraph.checkpoint.base import BaseCheckpointSaver

from graphflow.agents import Agent, FunctionAgent, LlmRoutingAgent, LoopAgent
from graphflow.checkpoint.serde import schema_types
from graphflow.checkpoint.urls import reading_checkpointer
from graphflow.exceptions import RunNotFoundError
from graphflow.state import AGENT_STATUS, LOOP_ITERATION, MESSAGES, ROUTE_ERRORS, ROUTES
from graphflow.tools.approval import APPROVAL_REQUEST
from graphflow.visualize._xray import owner_of
from graphflow.visualize.model import AgentRun, RunStatus

_DONE = {"completed", "until", "exit_loop", "max_iterations", "skipped"}


@dataclass(kw_only=True)
class _Path:
    status: RunStatus
    detail: str = ""


@dataclass(kw_only=True)
class _Counts:
    model_calls: int = 0
    tool_calls: int = 0
    loop_passes: int = 0
    routes: list[str] = field(default_factory=list)
    routes_at: str = ""  # checkpoint id of the latest choice (a router in a loop chooses again)
    seen: set[str] = field(default_factory=set)


def run_overlay(root: Agent, thread_id: str, checkpointer: Any) -> dict[str, AgentRun]:
    """Agent name -> `AgentRun` for every agent of `root`'s tree in thread `thread_id`."""
    snapshot = root.get_state(thread_id, checkpointer=checkpointer)
    if snapshot.config is None or not snapshot.created_at:
        raise RunNotFoundError(
            f"draw: no run with thread id {thread_id!r} for agent `{root.name}` in the "
            "checkpointer; list the runs with agent.runs(checkpointer=...) or `graphflow runs`, "
            "and pass the same checkpointer the run used"
        )
    statuses: dict[str, str] = {}
    active: dict[str, _Path] = {}
    _walk(root, root, snapshot, statuses, active)
    finished = not snapshot.next and not snapshot.tasks
    with _reading(root, checkpointer) as saver:
        counts = _count(root, saver, thread_id)
    runs: dict[str, AgentRun] = {}
    for agent in root.walk():
        if agent.name in active:
            path = active[agent.name]
            status, detail = path.status, path.detail
        elif agent is root and not finished:
            status, detail = _root_state(snapshot)
        elif agent.name in statuses:
            raw = statuses[agent.name]
            status = "done" if raw in _DONE else "failed" if raw == "error" else "running"
            detail = raw
        elif agent is root:
            status, detail = "done", "completed"
        else:
            status, detail = "not_reached", ""
        runs[agent.name] = _with_counts(agent, status, detail, counts.get(agent.name))
    return runs


def _reading(root: Agent, checkpointer: Any) -> AbstractContextManager[Any]:
    """The saver to count with.

    The one given (what `agent.draw` passes), a URL's opened for reading (never created), or
    none (the agent's default store is known to the runtime only).
    """
    if isinstance(checkpointer, str):
        return reading_checkpointer(checkpointer, allowed_types=schema_types(root.walk()))
    return nullcontext(checkpointer if isinstance(checkpointer, BaseCheckpointSaver) else None)


def _with_counts(agent: Agent, status: RunStatus, detail: str, counts: _Counts | None) -> AgentRun:
    counts = counts or _Counts()
    leaf = not agent.sub_agents_list
    router = isinstance(agent, LlmRoutingAgent)
    calls_known = leaf and not isinstance(agent, FunctionAgent | LlmRoutingAgent)
    if router and counts.routes and status == "done":
        detail = "→ " + ", ".join(counts.routes)  # what it chose
    return AgentRun(
        status=status,
        detail=detail,
        model_calls=counts.model_calls if calls_known or router else None,
        tool_calls=counts.tool_calls if calls_known else None,
        loop_passes=counts.loop_passes if isinstance(agent, LoopAgent) else None,
    )


def _walk(
    root: Agent,
    current: Agent,
    snapshot: Any,
    statuses: dict[str, str],
    active: dict[str, _Path],
) -> None:
    """Merge `agent_status` (deeper states are newer) and mark the agents of pending tasks."""
    statuses.update(dict((snapshot.values or {}).get(AGENT_STATUS) or {}))
    for task in snapshot.tasks or ():
        owner, rest = owner_of(current, [task.name])
        nested = getattr(task, "state", None)
        has_state = nested is not None and hasattr(nested, "tasks")
        if owner is not current and not rest:
            path = _task_path(task, nested if has_state else None)
            if path is not None:
                active[owner.name] = path
        if has_state:
            _walk(root, owner, nested, statuses, active)


def _root_state(snapshot: Any) -> tuple[RunStatus, str]:
    """The root of an unfinished run has no task of its own: its pending tasks say its state."""
    for task in snapshot.tasks or ():
        error = _deepest_error(task)
        if error:
            return "failed", error
    pending = [text for task in snapshot.tasks or () for text in _interrupts(task)]
    if pending:
        return "interrupted", "; ".join(pending)
    return "running", ""


def _task_path(task: Any, nested: Any) -> _Path | None:
    """A pending task's state: failed, interrupted, running; None if its graph already ended."""
    error = _deepest_error(task)
    if error:
        return _Path(status="failed", detail=error)
    pending = list(_interrupts(task))
    if pending:
        return _Path(status="interrupted", detail="; ".join(pending))
    if nested is not None and not nested.next and nested.created_at:
        return None  # its subgraph finished (a sibling's failure keeps the task pending)
    if getattr(task, "result", None) is not None:
        return None  # its writes are saved: it finished (an agent running inline, no subgraph)
    return _Path(status="running")


def _deepest_error(task: Any) -> str:
    nested = getattr(task, "state", None)
    if nested is not None and hasattr(nested, "tasks"):
        for sub in nested.tasks or ():
            found = _deepest_error(sub)
            if found:
                return found
    error = getattr(task, "error", None)
    if error is None:
        return ""
    if isinstance(error, BaseException):
        return f"{type(error).__name__}: {error}"
    return _readable(str(error))


_REPR = re.compile(r"(?s)([A-Za-z_][\w.]*)\((.*)\)")


def _readable(text: str) -> str:
    """`ValueError('boom')` (how checkpoints store an error) as `ValueError: boom`."""
    match = _REPR.fullmatch(text.strip())
    if match is None:
        return text
    try:
        args = ast.literal_eval(f"({match.group(2)},)") if match.group(2) else ()
    except (ValueError, SyntaxError):
        return text
    return f"{match.group(1)}: {', '.join(str(a) for a in args)}" if args else match.group(1)


def pending_text(value: Any) -> str:
    """What an interrupt waits for, in words: `approve delete({"path": "/a"}) — PERMISSION_DENIED:
    …` for a tool approval, a question's text, else the value as compact JSON."""
    if isinstance(value, str):
        return value
    if not isinstance(value, dict):
        return json.dumps(value, default=str, ensure_ascii=False)
    if value.get("type") == APPROVAL_REQUEST:
        call = f"approve {value.get('tool')}({json.dumps(value.get('args'), default=str)})"
        error = value.get("error")
        if isinstance(error, dict):
            return f"{call} — {error.get('type')}: {error.get('message')}"
        return call + (f" — {value['description']}" if value.get("description") else "")
    for key in ("question", "message", "prompt", "description"):
        if isinstance(value.get(key), str):
            return str(value[key])
    return json.dumps(value, default=str, ensure_ascii=False)


def _interrupts(task: Any) -> Iterable[str]:
    for intr in getattr(task, "interrupts", ()) or ():
        yield pending_text(getattr(intr, "value", intr))
    nested = getattr(task, "state", None)
    if not getattr(task, "interrupts", None) and nested is not None and hasattr(nested, "tasks"):
        for sub in nested.tasks or ():
            yield from _interrupts(sub)


def _count(root: Agent, saver: Any, thread_id: str) -> dict[str, _Counts]:
    """Per agent: model calls and tool calls (messages its namespaces produced), loop passes."""
    if saver is None:
        return {}
    by_ns: dict[str, list[Any]] = {}
    for tup in saver.list({"configurable": {"thread_id": thread_id}}):
        ns = str(tup.config["configurable"].get("checkpoint_ns", ""))
        if ns:
            by_ns.setdefault(ns, []).append(tup)
    counts: dict[str, _Counts] = {}
    for ns, tuples in by_ns.items():
        names = [segment.split(":", 1)[0] for segment in ns.split("|")]
        agent, rest = owner_of(root, names)
        if rest or agent is root:
            continue  # a namespace of something else (e.g. an agent running as a tool)
        tuples.sort(key=lambda t: str(t.config["configurable"].get("checkpoint_id", "")))
        entry = counts.setdefault(agent.name, _Counts())
        values = [t.checkpoint.get("channel_values", {}) for t in tuples]
        if isinstance(agent, LoopAgent):
            passes = [v[LOOP_ITERATION] for v in values if v.get(LOOP_ITERATION) is not None]
            entry.loop_passes += max(passes) + 1 if passes else 0
        if isinstance(agent, LlmRoutingAgent):
            _count_decisions(entry, tuples)
        if agent.sub_agents_list:
            continue  # a flow's messages are its sub-agents' answers
        # the messages the agent's own steps wrote, read from the steps' writes (so it holds
        # however the conversation channel is stored); the writes saved with the `input`
        # checkpoint are the conversation it was handed (earlier agents' answers), not its own
        for tup in tuples:
            if (tup.metadata or {}).get("source") == "input":
                continue
            for _task, channel, value in tup.pending_writes or ():
                if channel != MESSAGES:
                    continue
                for message in value if isinstance(value, list) else [value]:
                    if getattr(message, "id", None) in entry.seen:
                        continue
                    entry.seen.add(str(getattr(message, "id", None) or id(message)))
                    if isinstance(message, AIMessage):
                        entry.model_calls += 1
                    elif isinstance(message, ToolMessage):
                        entry.tool_calls += 1
    return counts


def _count_decisions(entry: _Counts, tuples: list[Any]) -> None:
    """A router's model calls: each attempt writes its choice (`ROUTES`) or, to be retried, the
    errors so far (`ROUTE_ERRORS`); the empty values are resets, not calls. A last attempt that
    fails the run writes nothing, so it is not counted."""
    for tup in tuples:
        for task, channel, value in tup.pending_writes or ():
            if channel not in (ROUTES, ROUTE_ERRORS) or not value or task in entry.seen:
                continue
            entry.seen.add(task)
            entry.model_calls += 1
            at = str(tup.config["configurable"].get("checkpoint_id", ""))
            if channel == ROUTES and at >= entry.routes_at:
                entry.routes, entry.routes_at = list(value), at
