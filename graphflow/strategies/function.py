"""Strategy for `FunctionAgent`: the user's function as a node.

Without agent hooks a `FunctionAgent` runs inline — one node of its parent's graph, no subgraph
of its own. With hooks (or as the root) it is a graph of one `run` node between its hook nodes.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
from typing import TYPE_CHECKING, Any

from langchain_core.runnables import RunnableConfig
from langgraph.graph import StateGraph
from typing_extensions import override

from graphflow._internal.workers import run_coroutine
from graphflow.exceptions import AgentRunError
from graphflow.state import AGENT_STATUS, RUN_NODE
from graphflow.strategies._agent_hooks import HookChain, guarded
from graphflow.strategies._storable import ensure_storable
from graphflow.strategies.base import BuildContext, FlowGraphBuildingStrategy
from graphflow.strategies.kind import MODEL_FIELDS, Ports, RunCounts, callable_name, card_label

if TYPE_CHECKING:
    from collections.abc import Sequence

    from graphflow.visualize.context import DrawContext

__all__ = ("FunctionStrategy",)


class FunctionStrategy(FlowGraphBuildingStrategy):
    """Builds a `FunctionAgent`'s graph, or runs it inline in its parent's."""

    unused_fields = MODEL_FIELDS

    @override
    def own_writes(self, agent: Any) -> set[str]:
        return set(agent.writes) | ({agent.output_key} if agent.output_key else set())

    @override
    def inline(self, agent: Any, ctx: BuildContext) -> tuple[Any, Any] | None:
        return self._bodies(agent)

    @override
    def runs_inline(self, agent: Any) -> bool:
        return True

    @override
    def details(self, agent: Any) -> dict[str, Any]:
        details: dict[str, Any] = {"fn": callable_name(agent.fn)}
        if agent.writes:
            details["writes"] = list(agent.writes)
        return details

    @override
    def draw(self, agent: Any, ctx: DrawContext) -> Ports:
        card = ctx.card(card_label(agent, f"{ctx.kind} · {ctx.details.get('fn')}"))
        return Ports(entry=card, exit=card)

    @override
    def read_run(self, agent: Any, invocations: Sequence[Sequence[Any]]) -> RunCounts:
        return RunCounts()  # a function makes no model or tool calls of its own

    def _bodies(self, agent: Any) -> tuple[Any, Any]:
        fn = agent.fn
        is_async = inspect.iscoroutinefunction(fn)
        allowed = set(agent.writes)

        def to_update(value: Any) -> dict[str, Any]:
            update: dict[str, Any] = {AGENT_STATUS: {agent.name: "completed"}}
            if agent.output_key:
                update[agent.output_key] = value
                return update
            if value is None:
                return update
            if not isinstance(value, dict):
                raise AgentRunError(
                    f"FunctionAgent `{agent.name}` has no output_key, so its function must return "
                    f"a dict update; it returned {type(value).__name__}. Set output_key to store "
                    "the value, or return {key: value}",
                    agent=agent.name,
                )
            unknown = sorted(set(value) - allowed)
            if unknown:
                raise AgentRunError(
                    f"FunctionAgent `{agent.name}` returned keys {unknown} that it does not "
                    f"declare; add them to writes=[...] (declared: {sorted(allowed)})",
                    agent=agent.name,
                )
            update.update(value)
            return update

        def checked(update: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
            ensure_storable(update, agent=agent.name, config=config, what="its function")
            return update

        def run(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
            if is_async:
                return checked(to_update(run_coroutine(lambda: fn(state))), config)
            value = fn(state)
            if inspect.isawaitable(value):
                value = run_coroutine(lambda: value)
            return checked(to_update(value), config)

        async def arun(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
            if is_async:
                return checked(to_update(await fn(state)), config)
            # the function may block: run it on a thread, in a copy of this context (LangGraph's
            # config, interrupt() and get_config() live in contextvars)
            ctx = contextvars.copy_context()
            value = await asyncio.get_running_loop().run_in_executor(None, ctx.run, fn, state)
            if inspect.isawaitable(value):
                value = await value
            return checked(to_update(value), config)

        return run, arun

    @override
    def build_graph(self, agent: Any, ctx: BuildContext) -> StateGraph:
        graph: StateGraph = StateGraph(ctx.schema())
        hooks = HookChain(agent)
        run, arun = self._bodies(agent)
        graph.add_node(RUN_NODE, guarded(agent, RUN_NODE, run, arun))
        hooks.install(graph, RUN_NODE, RUN_NODE, ctx)
        return graph
