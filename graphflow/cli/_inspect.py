"""`graphflow runs | show`: what the store knows about runs, read without running anything.

`runs` reads each thread from the checkpoints alone (`checkpoint.stored`): it imports no run's
code. A run that did not record its root agent (started before graphflow recorded it, or from
Python) is read through its agent (`agent.runs`), which needs its target.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from graphflow.cli._errors import DONE
from graphflow.cli._kinds import result_key
from graphflow.cli._store import check_store, read_store, target_of
from graphflow.cli._targets import load_agent

if TYPE_CHECKING:
    from graphflow.agents.base import Agent
    from graphflow.checkpoint.runs import RunInfo

__all__ = ("cmd_runs", "cmd_show", "clip", "table")

_CELL = 40
"""Longest cell of the runs table (longer ones are cut with an ellipsis)."""


def clip(value: Any, limit: int = 70) -> str:
    """`value` on one line, cut to `limit` characters with an ellipsis."""
    text = value if isinstance(value, str) else json.dumps(value, default=str, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class _Reader:
    """Reads runs of one store: from the checkpoints, or through their agent when needed."""

    def __init__(self, url: str) -> None:
        from graphflow.checkpoint.leases import lease_store

        self.url = url
        self.saver = read_store(url)  # a SQLite file's rows are read without LangGraph
        self.leases = lease_store(url, self.saver)
        self.agents: dict[str, Agent | Exception] = {}
        self.listed: dict[str, dict[str, RunInfo]] = {}

    def agent(self, target: str) -> Agent:
        if target not in self.agents:
            try:
                self.agents[target] = load_agent(target)
            except Exception as exc:  # noqa: BLE001 - shown in the row, other rows go on
                self.agents[target] = exc
        found = self.agents[target]
        if isinstance(found, Exception):
            raise found
        return found

    def through_agent(self, agent: Agent, thread_id: str, key: str) -> RunInfo | None:
        if key not in self.listed:
            self.listed[key] = {i.thread_id: i for i in agent.runs(checkpointer=self.url)}
        return self.listed[key].get(thread_id)

    def info(self, thread_id: str, agent: Agent | None = None) -> tuple[str, RunInfo | None]:
        """(root agent name, info) of a thread; raises when it cannot be read."""
        from graphflow.checkpoint.runs import settle
        from graphflow.checkpoint.stored import AGENT_KEY, stored_run_info

        found = stored_run_info(self.saver, thread_id)
        if found is None:
            return "?", None
        info, stopped = found
        root = self.saver.get_tuple(
            {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
        ).metadata.get(AGENT_KEY)
        if root is not None and (agent is None or agent.name == root):
            return str(root), settle(info, self.leases, stopped=stopped)
        if agent is None:
            target = target_of(self.saver, thread_id)
            if not target:
                return "?", None
            agent = self.agent(target)
        return agent.name, self.through_agent(agent, thread_id, str(id(agent)))


def _row(name: str, info: RunInfo) -> tuple[str, ...]:
    return (
        info.thread_id,
        name,
        info.status,
        info.agent or "",
        str(info.step),
        str(info.updated_at or "")[:19],
    )


def cmd_runs(args: argparse.Namespace) -> int:
    """`graphflow runs [TARGET]`."""
    from graphflow.checkpoint.runs import thread_ids

    rows: list[tuple[str, ...]] = []
    if args.target:
        check_store(args.checkpointer)
        agent = load_agent(args.target)
        rows = [_row(agent.name, i) for i in agent.runs(checkpointer=args.checkpointer)]
    else:
        reader = _Reader(args.checkpointer)
        for tid in thread_ids(reader.saver):
            try:
                name, info = reader.info(tid)
            except Exception as exc:  # noqa: BLE001 - a damaged thread hides no other
                rows.append((tid, "?", _why_unreadable(exc), "", "", ""))
                continue
            if info is None:
                rows.append((tid, "?", "?", "", "", ""))
            else:
                rows.append(_row(name, info))
    table(("thread", "agent", "status", "last agent", "step", "updated"), rows)
    return DONE


def _why_unreadable(exc: Exception) -> str:
    from graphflow.cli._errors import CliError

    if isinstance(exc, CliError):
        return f"unloadable: {exc}"
    return "unreadable"


def table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> None:
    """A table on stdout: drawn on a terminal, aligned plain text otherwise; long cells cut."""
    rows = [tuple(clip(cell, _CELL) for cell in row) for row in rows]
    if sys.stdout.isatty():
        from rich.console import Console
        from rich.table import Table

        drawn = Table(*header)
        for row in rows:
            drawn.add_row(*row)
        Console().print(drawn)
        return
    widths = [max([len(h), *(len(r[i]) for r in rows)]) for i, h in enumerate(header)]
    for row in (header, *rows):
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())


def cmd_show(args: argparse.Namespace) -> int:
    """`graphflow show [TARGET] THREAD`: a run's agents, outputs, errors and pending answers."""
    from graphflow.cli._running import _target_and_thread, resume_line

    agent, thread_id = _target_and_thread(args)
    snapshot = agent.get_state(thread_id, checkpointer=args.checkpointer)
    reader = _Reader(args.checkpointer)
    _, info = reader.info(thread_id, agent)
    if info is None:
        print(f"thread {thread_id}: no run")
        return DONE
    values = dict(snapshot.values or {})
    statuses = dict(values.get("agent_status") or {})
    passes = _inner_progress(reader.saver, thread_id, agent) if info.status != "done" else {}
    print(
        f"thread {thread_id}: {info.status} (agent {agent.name}, step {info.step}, "
        f"updated {info.updated_at})"
    )
    if "input" in values:
        print(f"input: {clip(values['input'])}")
    print("agents:")
    around = _ancestors(agent, info.agent) if info.status != "done" else set()
    for sub in agent.walk():
        status = statuses.get(sub.name, "not run")
        if (sub.name == info.agent or sub.name in around) and info.status != "done":
            status = info.status  # the innermost agent the run is in (or stopped in), and around it
        if sub.name in passes and not sub.sub_agents_list:
            done = passes[sub.name]
            finished = f"{done} pass{'es' if done != 1 else ''} done"
            status = finished if status == "not run" else f"{status}, {finished}"
        key = result_key(sub)
        output = f"  {key} = {clip(values.get(key))}" if key and key in values else ""
        print(f"  {sub.name:<20} {status:<14}{output}".rstrip())
    if info.error:
        print(f"error: {info.error}")
    for intr in snapshot.interrupts or ():
        print(
            f"pending: {getattr(intr, 'id', '')} {json.dumps(getattr(intr, 'value', intr), default=str)}"
        )
    if info.status in ("failed", "crashed", "stopped", "interrupted"):
        print(f"resume with: {resume_line(args, thread_id)}")
    return DONE


def _inner_progress(saver: Any, thread_id: str, root: Agent) -> dict[str, int]:
    """Agents inside an unfinished run: how many times each finished (a loop's passes).

    The root state learns an inner agent's status only when the agent around it ends, and keeps
    only its last one; each finished run of an agent is one task of its parent's graph (its
    subgraph's namespace is `<name>:<task id>`): a subgraph namespace whose newest checkpoint has
    its status, or — for an agent that may run in its parent's node — a task of the parent's
    namespace that wrote its status.
    """
    from graphflow.exceptions import GraphflowError
    from graphflow.state import AGENT_STATUS
    from graphflow.strategies import strategy_for

    inline_parent = {
        child.name: parent.name
        for parent in root.walk()
        for child in strategy_for(parent).children(parent)
        if strategy_for(child).runs_inline(child)
    }
    finished: dict[str, set[str]] = {}
    try:
        for found in saver.list({"configurable": {"thread_id": thread_id}}):
            namespace = str(found.config["configurable"].get("checkpoint_ns", ""))
            name, _, task = namespace.split("|")[-1].partition(":")
            inner = (found.checkpoint.get("channel_values") or {}).get(AGENT_STATUS) or {}
            if namespace and name in inner:
                finished.setdefault(name, set()).add(task)
            owner = name if namespace else root.name
            for task_id, channel, value in found.pending_writes or ():
                if channel != AGENT_STATUS or not isinstance(value, dict):
                    continue
                for child, status in value.items():
                    if inline_parent.get(child) == owner and status != "running":
                        finished.setdefault(child, set()).add(str(task_id))
    except (GraphflowError, ValueError, TypeError):
        return {}
    return {name: len(tasks) for name, tasks in finished.items()}


def _ancestors(root: Agent, name: str | None) -> set[str]:
    """Names of the agents around the agent `name` (empty when it is not in the tree)."""
    trail: list[str] = []

    def find(agent: Agent) -> bool:
        if agent.name == name:
            return True
        trail.append(agent.name)
        if any(find(child) for child in agent.sub_agents_list):
            return True
        trail.pop()
        return False

    return set(trail) if find(root) else set()
