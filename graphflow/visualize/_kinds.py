"""How the built-in kinds draw themselves, through the same `DrawContext` custom kinds use."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from graphflow.agents import (
    Agent,
    FunctionAgent,
    LlmRoutingAgent,
    LoopAgent,
    ParallelAgent,
    ReactAgent,
    SequentialAgent,
)
from graphflow.strategies import strategy_for
from graphflow.tools.exit_loop import is_exit_loop
from graphflow.visualize._details import (
    builtin_details,
    callable_name,
    card_label,
    common_details,
    loop_ends,
)
from graphflow.visualize.context import DrawContext, Ports


def _leaf(agent: Agent, ctx: DrawContext) -> Ports:
    ctx.details.update(builtin_details(agent))
    card = ctx.card(card_label(agent, ctx.kind, ctx.details))
    return Ports(entry=card, exit=card)


def _sequential(agent: SequentialAgent, ctx: DrawContext) -> Ports:
    ctx.details.update(builtin_details(agent))
    return ctx.sequence(agent.sub_agents)


def _parallel(agent: ParallelAgent, ctx: DrawContext) -> Ports:
    ctx.details.update(builtin_details(agent))
    bound = f"max_concurrency={agent.max_concurrency}" if agent.max_concurrency else "all at once"
    fork = ctx.node("fork", f"fork · {bound}", kind="fork")
    merge = agent.merge if isinstance(agent.merge, str) else callable_name(agent.merge)
    into = f" → {agent.merged_key}" if agent.merged_key else ""
    join = ctx.node("join", f"join · merge={merge}{into}", kind="join")
    for branch in agent.sub_agents:
        ports = ctx.child(branch)
        ctx.edge(fork, ports.entry)
        ctx.edge(ports.exit, join)
    return Ports(entry=fork, exit=join)


def has_exit_loop(agent: LoopAgent) -> bool:
    """Whether a ReAct agent in the loop's body (not in a nested loop) has the `exit_loop` tool."""

    def search(node: Agent) -> bool:
        if isinstance(node, ReactAgent) and any(is_exit_loop(t) for t in node.tool_objects()):
            return True
        return any(search(c) for c in node.sub_agents_list if not isinstance(c, LoopAgent))

    return any(search(c) for c in agent.sub_agents if not isinstance(c, LoopAgent))


def _loop(agent: LoopAgent, ctx: DrawContext) -> Ports:
    exits = has_exit_loop(agent)
    ctx.details.update(builtin_details(agent, exit_loop_in_body=exits))
    ports = ctx.sequence(agent.sub_agents)
    label = "repeat · " + "\nor ".join(loop_ends(ctx.details))
    ctx.edge(ports.exit, ports.entry, kind="loop", label=label, style="bold")
    return ports


def _routing(agent: LlmRoutingAgent, ctx: DrawContext) -> Ports:
    ctx.details.update(builtin_details(agent))
    how = "LLM picks routes" if agent.multi else "LLM picks a route"
    decision = ctx.node("decide", f"{agent.name}?\n{how}", kind="decision")
    join = ctx.node(
        "join", "routed" + (f" → {agent.output_key}" if agent.output_key else ""), kind="join"
    )
    for route in agent.sub_agents:
        ports = ctx.child(route)
        ctx.edge(decision, ports.entry, kind="route", label=route.description or route.name)
        if route.name == agent.fallback:
            ctx.edge(decision, ports.entry, kind="fallback", label="fallback", style="dashed")
        ctx.edge(ports.exit, join)
    return Ports(entry=decision, exit=join, anchor=decision)


Drawer = Callable[[Any, DrawContext], Ports]

BUILTINS: tuple[tuple[type[Agent], str, Drawer], ...] = (
    (ReactAgent, "react", _leaf),
    (FunctionAgent, "function", _leaf),
    (SequentialAgent, "sequential", _sequential),
    (ParallelAgent, "parallel", _parallel),
    (LoopAgent, "loop", _loop),
    (LlmRoutingAgent, "routing", _routing),
)
"""Each built-in agent class, its kind's name, and how it is drawn."""


def builtin(agent: Agent) -> tuple[str, Drawer] | None:
    """The kind and drawer of a built-in agent (None for a custom kind)."""
    for klass, kind, drawer in BUILTINS:
        if isinstance(agent, klass):
            return kind, drawer
    return None


def default_drawer(agent: Agent, ctx: DrawContext) -> Ports:
    """A custom kind whose strategy has no `draw`: its sub-agents in sequence, or a card."""
    ctx.details.update(common_details(agent))
    children = strategy_children(agent)
    if children:
        return ctx.sequence(children)
    card = ctx.card(
        f"{agent.name}\n{ctx.kind}" + (f"\n→ {agent.output_key}" if agent.output_key else "")
    )
    return Ports(entry=card, exit=card)


def strategy_children(agent: Agent) -> list[Agent]:
    """The sub-agents the agent's strategy nests (falls back to `sub_agents_list`)."""
    try:
        return list(strategy_for(agent).children(agent))
    except Exception:  # an unregistered kind: draw what the spec declares
        return agent.sub_agents_list
