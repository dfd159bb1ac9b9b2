"""Run overlay: each agent's state in a run, read from the run's checkpoints.

Sources (all public LangGraph / graphflow facts): the thread's `StateSnapshot` with
`subgraphs=True` (pending tasks, their errors and interrupts, nested states), `agent_status` in
state values, and the checkpointer's `list()` over every namespace (a sub-agent's namespace
segment is `<agent name>:<task id>`) for per-agent counts, which each agent's strategy reads
(`read_run`, see `graphflow.strategies.kind`).
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage
from langgraph.checkpoint.base import BaseCheckpointSaver

from graphflow._internal.approval import is_approval_request
from graphflow.agents import Agent
from graphflow.checkpoint.serde import schema_types
from graphflow.checkpoint.stored import namespaces
from graphflow.checkpoint.urls import reading_checkpointer
from graphflow.exceptions import RunNotFoundError
from graphflow.state import AGENT_STATUS, HELD_MESSAGES, MESSAGES
from graphflow.strategies.branch_errors import branch_cause
from graphflow.strategies.kind import RunCounts
from graphflow.strategies.registry import strategy_for
from graphflow.visualize._xray import owner_of
from graphflow.visualize.model import AgentRun, RunStatus

_DONE = {"completed", "until", "exit_loop", "max_iterations", "skipped"}


@dataclass(kw_only=True)
class _Path:
    status: RunStatus
    detail: str = ""


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
        invocations = _invocations(root, saver, thread_id)
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
        read = strategy_for(agent).read_run(agent, invocations.get(agent.name, []))
        runs[agent.name] = _with_counts(status, detail, read)
    return runs


def _reading(root: Agent, checkpointer: Any) -> AbstractContextManager[Any]:
    """The saver to count with.

    The one given (what `agent.draw` passes), a URL's opened for reading (never created), or
    none (the agent's default store is known to the runtime only).
    """
    if isinstance(checkpointer, str):
        return reading_checkpointer(checkpointer, allowed_types=schema_types(root.walk()))
    return nullcontext(checkpointer if isinstance(checkpointer, BaseCheckpointSaver) else None)


def _with_counts(status: RunStatus, detail: str, counts: RunCounts) -> AgentRun:
    if counts.outcome and status == "done":
        detail = counts.outcome  # what it did (a router: what it chose)
    return AgentRun(
        status=status,
        detail=detail,
        model_calls=counts.model_calls,
        tool_calls=counts.tool_calls,
        loop_passes=counts.loop_passes,
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
        text = f"{type(error).__name__}: {error}"
    else:
        text = _readable(str(error))
    # a branch that ran in its parent's node failed there: its own error, as if from its graph
    return branch_cause(text) or text


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
    if is_approval_request(value):
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


def _invocations(root: Agent, saver: Any, thread_id: str) -> dict[str, list[list[Any]]]:
    """Per agent: the checkpoints of each namespace it ran in, in checkpoint order."""
    if saver is None:
        return {}
    out: dict[str, list[list[Any]]] = {}
    for ns, tuples in namespaces(saver, thread_id).items():
        names = [segment.split(":", 1)[0] for segment in ns.split("|")] if ns else []
        agent, rest = owner_of(root, names)
        if rest or (agent is root and ns):
            continue  # a namespace of something else (e.g. an agent running as a tool)
        out.setdefault(agent.name, []).append(tuples)
        strategy = strategy_for(agent)
        for child in strategy.children(agent):
            if strategy_for(child).runs_inline(child):
                out.setdefault(child.name, []).append(_own_writes(child, tuples))
    return out


def _own_writes(agent: Agent, tuples: list[Any]) -> list[Any]:
    """The parent's checkpoints of an agent that may run in its parent's node, each with only
    the AI messages named after it among its writes (what it wrote there, whoever relays it)."""

    def own(value: Any) -> list[Any]:
        values = value.values() if isinstance(value, dict) else [value]
        found = []
        for item in values:
            for message in item if isinstance(item, list) else [item]:
                if isinstance(message, AIMessage) and message.name == agent.name:
                    found.append(message)
        return found

    reduced = []
    for tup in tuples:
        if (tup.metadata or {}).get("source") == "input":
            continue
        writes = [
            (task, MESSAGES, found)
            for task, channel, value in tup.pending_writes or ()
            if channel in (MESSAGES, HELD_MESSAGES) and (found := own(value))
        ]
        reduced.append(tup._replace(pending_writes=writes))
    return reduced
