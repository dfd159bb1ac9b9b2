"""Strategy for `FunctionAgent`: one node that calls the user's function."""

from __future__ import annotations

import asyncio
import contextvars
import inspect
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.graph import StateGraph
from typing_extensions import override

from graphflow.exceptions import AgentRunError
from graphflow.hooks._runner import run_sync_in_thread
from graphflow.state import AGENT_STATUS
from graphflow.strategies._nodes import HookChain, guarded
from graphflow.strategies.base import BuildContext, FlowGraphBuildingStrategy

__all__ = ("FunctionStrategy",)


class FunctionStrategy(FlowGraphBuildingStrategy):
    """Builds a `FunctionAgent`'s graph."""

    @override
    def children(self, agent: Any) -> list[Any]:
        return []

    @override
    def own_writes(self, agent: Any) -> set[str]:
        return set(agent.writes) | ({agent.output_key} if agent.output_key else set())

    @override
    def build_graph(self, agent: Any, ctx: BuildContext) -> StateGraph:
        graph: StateGraph = StateGraph(ctx.schema())
        hooks = HookChain(agent)
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

        def run(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
            if is_async:
                return to_update(run_sync_in_thread(lambda: fn(state)))
            value = fn(state)
            if inspect.isawaitable(value):
                value = run_sync_in_thread(lambda: value)
            return to_update(value)

        async def arun(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
            if is_async:
                return to_update(await fn(state))
            # copy the context: LangGraph's config (interrupt(), get_config()) lives in contextvars
            ctx = contextvars.copy_context()
            value = await asyncio.get_running_loop().run_in_executor(None, ctx.run, fn, state)
            if inspect.isawaitable(value):
                value = await value
            return to_update(value)

        graph.add_node("run", guarded(agent, "run", run, arun))
        hooks.install(graph, "run", "run")
        return graph
