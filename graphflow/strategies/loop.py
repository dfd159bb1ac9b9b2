"""Strategy for `LoopAgent`: gf_loop_start → body… → gf_check ⟲ (a do-while loop)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.graph import StateGraph
from langgraph.types import Command
from typing_extensions import override

from graphflow.state import AGENT_STATUS, EXIT_LOOP, LOOP_ITERATION
from graphflow.strategies._nodes import HookChain, guarded, node
from graphflow.strategies.base import BuildContext
from graphflow.strategies.sequential import SequentialStrategy, chain

__all__ = ("LoopStrategy",)


class LoopStrategy(SequentialStrategy):
    """Builds a `LoopAgent`'s graph: a repeated sequence (its result key is the sequence's)."""

    consumes_exit_loop = True

    @override
    def check_dataflow(
        self, agent: Any, available: frozenset[str], ctx: BuildContext
    ) -> frozenset[str]:
        ctx.builder.check_placeholders(agent, available, ctx)
        inner = replace(ctx, in_loop=True)
        for child in agent.sub_agents:
            available = ctx.builder.check(child, available, inner.child(child))
        return available | self.own_writes(agent)

    @override
    def build_graph(self, agent: Any, ctx: BuildContext) -> StateGraph:
        graph: StateGraph = StateGraph(ctx.schema())
        hooks = HookChain(agent)
        body = list(agent.sub_agents)
        first = body[0].name
        last_key = ctx.builder.result_key(body[-1])

        def start(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
            return {LOOP_ITERATION: 0, EXIT_LOOP: False, AGENT_STATUS: {agent.name: "running"}}

        def check(state: dict[str, Any], config: RunnableConfig) -> Command:
            iteration = int(state.get(LOOP_ITERATION) or 0)
            if state.get(EXIT_LOOP):
                reason = "exit_loop"
            elif agent.until is not None and agent.until(state):
                reason = "until"
            elif iteration + 1 >= agent.max_iterations:
                reason = "max_iterations"
            else:
                return Command(goto=first, update={LOOP_ITERATION: iteration + 1})
            update: dict[str, Any] = {AGENT_STATUS: {agent.name: reason}, EXIT_LOOP: False}
            if agent.output_key:
                update[agent.output_key] = state.get(last_key) if last_key else None
            return Command(goto=hooks.after_entry, update=update)

        graph.add_node("gf_loop_start", node("gf_loop_start", start))
        graph.add_node(
            "gf_check", guarded(agent, "gf_check", check), destinations=(first, hooks.after_entry)
        )
        chain(graph, agent, replace(ctx, in_loop=True), body, "gf_check", in_loop=True)
        graph.add_edge("gf_loop_start", first)
        hooks.install(graph, "gf_loop_start", None)
        return graph
