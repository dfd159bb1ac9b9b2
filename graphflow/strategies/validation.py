"""Tree validation: everything about an agent tree that can be known before any model is called.

Unique names, usable keys, no agent inside itself, a bounded depth, and the dataflow contract:
every required `{placeholder}` is written by an agent that runs before the one reading it, and
agents that may run concurrently write distinct keys. Each failure is a `DataflowError` naming
the agent, the key and the fix.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from graphflow.agents.base import check_identifier
from graphflow.exceptions import DataflowError
from graphflow.state import INPUT, LOOP_ITERATION, NODE_NAMES

if TYPE_CHECKING:
    from graphflow.agents.base import Agent
    from graphflow.strategies.base import BuildContext
    from graphflow.strategies.builder import FlowGraphBuilder

__all__ = (
    "MAX_DEPTH",
    "check_distinct_writes",
    "check_structure",
    "check_placeholders",
    "hook_writes",
    "validate_tree",
)

MAX_DEPTH = 48
"""Deepest agent nesting graphflow builds. Each level is a LangGraph invocation nested in its
parent's (about 25 Python frames), so far deeper trees would exhaust Python's stack mid-run."""

_RESERVED_NODE_NAMES = NODE_NAMES | {"finish"}


def hook_writes(agent: Agent) -> set[str]:
    """Keys the agent's hooks declare they write (`Hook.writes`)."""
    return {key for hook in agent.hooks for key in getattr(hook, "writes", ())}


def check_structure(root: Agent) -> None:
    """Raise `DataflowError` for a cycle, a duplicate name or a tree nested too deep."""
    seen: dict[str, Agent] = {}
    stack: list[tuple[Agent, int]] = [(root, 1)]
    for agent in root.walk():  # raises DataflowError on a cycle
        if agent.name in seen:
            other = seen[agent.name]
            what = "the same agent object twice" if other is agent else "two agents"
            raise DataflowError(
                f"agent name `{agent.name}` is used by {what} in the tree of `{root.name}`; "
                "names must be unique in a tree (they name graph nodes and checkpoint "
                "namespaces) — rename one, or build a second agent with model_copy(update="
                "{'name': ...})"
            )
        seen[agent.name] = agent
    while stack:
        agent, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise DataflowError(
                f"agent `{agent.name}` is nested {depth} levels deep in `{root.name}`; graphflow "
                f"builds trees up to {MAX_DEPTH} levels — flatten the tree (a SequentialAgent "
                "takes any number of sub-agents)"
            )
        stack.extend((child, depth + 1) for child in agent.sub_agents_list)


def validate_tree(builder: FlowGraphBuilder, root: Agent, ctx: BuildContext) -> None:
    """Check the tree's keys and dataflow (after `check_structure`) before anything is built.

    Raises:
        DataflowError: what is wrong, where, and how to fix it.
    """
    names = {agent.name for agent in root.walk()}
    for agent in root.walk():
        for key in sorted(hook_writes(agent)):
            try:
                check_identifier(key, "state key")
            except ValueError as exc:
                raise DataflowError(
                    f"Agent `{agent.name}`: a hook declares writes={key!r}, which is not a "
                    f"usable state key: {exc}"
                ) from None
    keys = ctx.tree_keys
    clashes = sorted(names & keys)
    if clashes:
        raise DataflowError(
            f"agent name(s) {clashes} are also state keys (output or input keys); LangGraph "
            "nodes may not share a name with a state key — rename the agent or the key"
        )
    reserved = sorted(keys & _RESERVED_NODE_NAMES)
    if reserved:
        owners = sorted(
            a.name
            for a in root.walk()
            if (builder.own_writes(a) | set(a.input_keys)) & set(reserved)
        )
        raise DataflowError(
            f"state key(s) {reserved} (used by agent(s) {owners or [root.name]}) collide with "
            f"graphflow's node names {sorted(_RESERVED_NODE_NAMES)}; rename the output_key or "
            "input key"
        )
    builder.check(root, frozenset({INPUT, *root.input_keys}), ctx)


def check_distinct_writes(builder: FlowGraphBuilder, agents: list[Agent], what: str) -> None:
    """Raise `DataflowError` if two of `agents` (which may run concurrently) write one key."""
    owners: dict[str, str] = {}
    for agent in agents:
        for key in sorted(builder.writes(agent)):
            if key in owners:
                raise DataflowError(
                    f"{what}: `{owners[key]}` and `{agent.name}` both write `{key}` and may "
                    "run concurrently; concurrent agents must write distinct output keys — "
                    "rename one output_key"
                )
            owners[key] = agent.name


def check_placeholders(agent: Agent, available: frozenset[str], ctx: BuildContext) -> None:
    """Raise `DataflowError` for a required placeholder no earlier agent writes."""
    known = set(available) | ({LOOP_ITERATION} if ctx.in_loop else set())
    for placeholder in agent.placeholders():
        if placeholder.optional or placeholder.name in known:
            continue
        later = (
            ""
            if placeholder.name not in ctx.tree_keys
            else (
                f" ({placeholder.name!r} is written, but not before `{agent.name}` runs; reorder "
                f"the agents, or write {{{placeholder.name}?}} if a later loop pass provides it)"
            )
        )
        hint = (
            " ({loop_iteration} exists only inside a LoopAgent)"
            if placeholder.name == LOOP_ITERATION
            else ""
        )
        raise DataflowError(
            f"Agent `{agent.name}`: instruction uses {{{placeholder.name}}} but no earlier "
            f"agent writes that key{later}{hint}; known keys: {', '.join(sorted(known))}. "
            f"Fix: write it from an earlier agent's output_key, declare it in input_keys, or "
            f"make it optional with {{{placeholder.name}?}}"
        )
