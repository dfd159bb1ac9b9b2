"""Strategy for `SequentialAgent`: sub-agent nodes in a chain.

There is no bookkeeping node: the last sub-agent's node also writes the sequence's own status and
`output_key` (inside a loop, so does a sub-agent that called `exit_loop`, which skips the rest).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from langgraph.graph import StateGraph
from typing_extensions import override

from graphflow.state import AGENT_STATUS, EXIT_LOOP
from graphflow.strategies._agent_hooks import HookChain
from graphflow.strategies._node import router
from graphflow.strategies._subagent import Finalize
from graphflow.strategies.base import BuildContext, FlowGraphBuildingStrategy
from graphflow.strategies.kind import MODEL_FIELDS
from graphflow.strategies.registry import strategy_for

__all__ = ("SequentialStrategy", "chain")


def chain(
    graph: StateGraph,
    agent: Any,
    ctx: BuildContext,
    children: list[Any],
    *,
    exit_to: str,
    after_last: str,
    finalize: Finalize,
    proceed: Callable[[Mapping[str, Any]], bool] | None,
    in_loop: bool,
) -> None:
    """Add `children` as nodes run one after another.

    The last child's node applies `finalize`; inside a loop so does a child that called
    `exit_loop`. Without `proceed` the chain is plain edges ending at `after_last`; with it each
    child goes on (the last one to `after_last`) while `proceed(state)` holds, else to `exit_to`.
    """
    builder = ctx.builder
    names = [c.name for c in children]

    def exit_step(state: Mapping[str, Any], update: dict[str, Any]) -> dict[str, Any]:
        return finalize(state, update) if update.get(EXIT_LOOP) else update

    for i, child in enumerate(children):
        last = i == len(children) - 1
        graph.add_node(
            child.name,
            builder.child_node(
                child,
                ctx.child(child, in_loop=in_loop),
                owner=agent,
                finalize=finalize if last else (exit_step if in_loop else None),
            ),
        )
    for here, nxt in zip(names, [*names[1:], after_last], strict=True):
        if proceed is None or nxt == exit_to:
            graph.add_edge(here, nxt)
            continue

        def step(state: Mapping[str, Any], nxt: str = nxt) -> str:
            return nxt if proceed(state) else exit_to

        graph.add_conditional_edges(here, router(step), sorted({nxt, exit_to}))


class SequentialStrategy(FlowGraphBuildingStrategy):
    """Builds a `SequentialAgent`'s graph."""

    unused_fields = MODEL_FIELDS

    @override
    def reads(self, agent: Any) -> set[str] | None:
        return set(agent.input_keys)

    @override
    def result_key(self, agent: Any) -> str | None:
        """Its own output_key, else the last sub-agent's result key."""
        last = agent.sub_agents[-1]
        return agent.output_key or strategy_for(last).result_key(last)

    def completion(self, agent: Any, last_key: str | None) -> Finalize:
        """The `finalize` writing the sequence's status and output."""

        def complete(state: Mapping[str, Any], update: dict[str, Any]) -> dict[str, Any]:
            statuses = {**update.get(AGENT_STATUS, {}), agent.name: "completed"}
            out = {**update, AGENT_STATUS: statuses}
            if agent.output_key:
                out[agent.output_key] = (
                    update.get(last_key, state.get(last_key)) if last_key else None
                )
            return out

        return complete

    @override
    def build_graph(self, agent: Any, ctx: BuildContext) -> StateGraph:
        graph: StateGraph = StateGraph(ctx.schema())
        hooks = HookChain(agent)
        children = list(agent.sub_agents)
        done = hooks.after_entry
        chain(
            graph,
            agent,
            ctx,
            children,
            exit_to=done,
            after_last=done,
            finalize=self.completion(agent, ctx.builder.result_key(children[-1])),
            # inside a loop, a sub-agent that called exit_loop skips the rest of the sequence
            proceed=(lambda state: not state.get(EXIT_LOOP)) if ctx.in_loop else None,
            in_loop=ctx.in_loop,
        )
        hooks.install(graph, children[0].name, None, ctx)
        return graph
