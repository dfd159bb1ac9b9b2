"""Strategy for `SequentialAgent`: sub-agent nodes in a chain, then `gf_done`."""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.graph import StateGraph
from typing_extensions import override

from graphflow.state import AGENT_STATUS, EXIT_LOOP
from graphflow.strategies._nodes import HookChain, node
from graphflow.strategies.base import BuildContext, FlowGraphBuildingStrategy

__all__ = ("SequentialStrategy", "chain")


def chain(
    graph: StateGraph,
    agent: Any,
    ctx: BuildContext,
    children: list[Any],
    exit_to: str,
    *,
    in_loop: bool,
) -> None:
    """Add `children` as nodes run one after another, ending at `exit_to`.

    Inside a loop, a sub-agent that called `exit_loop` skips the rest of the chain.
    """
    builder = ctx.builder
    names = [c.name for c in children]
    for child in children:
        graph.add_node(
            child.name, builder.child_node(child, ctx.child(child, in_loop=in_loop), owner=agent)
        )
    for here, nxt in zip(names, [*names[1:], exit_to], strict=True):
        if in_loop and nxt != exit_to:
            graph.add_conditional_edges(
                here,
                lambda s, nxt=nxt: exit_to if s.get(EXIT_LOOP) else nxt,
                [nxt, exit_to],
            )
        else:
            graph.add_edge(here, nxt)


class SequentialStrategy(FlowGraphBuildingStrategy):
    """Builds a `SequentialAgent`'s graph."""

    @override
    def result_key(self, agent: Any) -> str | None:
        """Its own output_key, else the last sub-agent's result key."""
        from graphflow.strategies.builder import strategy_for

        last = agent.sub_agents[-1]
        return agent.output_key or strategy_for(last).result_key(last)

    @override
    def build_graph(self, agent: Any, ctx: BuildContext) -> StateGraph:
        graph: StateGraph = StateGraph(ctx.schema())
        hooks = HookChain(agent)
        children = list(agent.sub_agents)
        last_key = ctx.builder.result_key(children[-1])

        def done(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
            update: dict[str, Any] = {AGENT_STATUS: {agent.name: "completed"}}
            if agent.output_key:
                update[agent.output_key] = state.get(last_key) if last_key else None
            return update

        graph.add_node("gf_done", node("gf_done", done))
        chain(graph, agent, ctx, children, "gf_done", in_loop=ctx.in_loop)
        hooks.install(graph, children[0].name, "gf_done")
        return graph
