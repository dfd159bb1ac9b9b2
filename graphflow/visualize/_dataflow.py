"""Dataflow on the drawing: who writes each state key, and which instructions read it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from graphflow.agents import Agent
from graphflow.state import INPUT
from graphflow.strategies import strategy_for

if TYPE_CHECKING:
    from graphflow.visualize._canvas import Canvas


def own_writes(agent: Agent) -> set[str]:
    """Keys the agent writes itself (its strategy says; `output_key` for an unregistered kind)."""
    try:
        return set(strategy_for(agent).own_writes(agent))
    except Exception:
        return {agent.output_key} if agent.output_key else set()


def add_dataflow(canvas: Canvas, root: Agent) -> None:
    """`data` edges from each writer of a key to each instruction reading it (`{key}` dashed,
    `{key?}` dotted); keys the caller supplies come from an `input` node."""
    writers: dict[str, list[str]] = {}
    supplied = {INPUT}
    for agent in root.walk():
        info = canvas.agents[agent.name]
        for key in sorted(own_writes(agent)):
            writers.setdefault(key, []).append(info.exit)
        for hook in agent.hooks:
            before = f"{agent.name}.before.{hook.name}"
            for key in getattr(hook, "writes", ()):
                writers.setdefault(key, []).append(before if before in canvas.nodes else info.exit)
        supplied |= set(agent.input_keys)
    readers = [
        (agent, placeholder) for agent in root.walk() for placeholder in agent.placeholders()
    ]
    if any(p.name in supplied for _, p in readers):
        keys = ", ".join(sorted(supplied))
        canvas.add_node("input", "input", f"run input\n{keys}", None)
        for key in supplied:
            writers.setdefault(key, []).insert(0, "input")
    for agent, placeholder in readers:
        target = canvas.agents[agent.name].anchor
        optional = placeholder.optional
        for source in writers.get(placeholder.name, []):
            canvas.add_edge(
                source,
                target,
                kind="data",
                label=f"{{{placeholder.name}?}}" if optional else f"{{{placeholder.name}}}",
                style="dotted" if optional else "dashed",
            )
