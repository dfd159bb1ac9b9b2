"""Strategy for `ParallelAgent`: branches in one superstep, then the `gf_merge` join.

Branches run as tasks of one LangGraph superstep — concurrently under `invoke` (thread pool) and
`ainvoke` (asyncio). A failing branch waits for its running siblings (so their results are saved
as the step's writes), then raises `ParallelBranchError` (see `_branch_barrier`). On `resume`,
LangGraph re-runs only the failed task, under the same task id, so the failed branch continues
from its own last checkpoint instead of starting over. Branch messages reach the parent in
declaration order at `gf_merge`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any

from langchain_core.runnables import RunnableConfig
from langgraph.graph import StateGraph
from typing_extensions import override

from graphflow.instructions import render_value
from graphflow.state import AGENT_STATUS, HELD_MESSAGES, MERGE_NODE, MESSAGES, merge_dicts
from graphflow.strategies._agent_hooks import HookChain, guarded
from graphflow.strategies._storable import ensure_storable
from graphflow.strategies.base import BuildContext, FlowGraphBuildingStrategy
from graphflow.strategies.kind import MODEL_FIELDS, ChildRole, Ports, callable_name

if TYPE_CHECKING:
    from graphflow.visualize.context import DrawContext

__all__ = ("ParallelStrategy", "merge_results", "release_held")


def release_held(state: Mapping[str, Any], names: list[str]) -> dict[str, Any]:
    """The update handing held branch messages on in declaration order, and clearing them.

    Concurrent branches finish in any order, and LangGraph applies one step's writes in node-name
    order, so branches park their messages in `HELD_MESSAGES` until the join releases them.
    """
    held = state.get(HELD_MESSAGES) or {}
    update: dict[str, Any] = {}
    ordered = [m for n in names for m in held.get(n) or []]
    if ordered:
        update[MESSAGES] = ordered
    if held:
        update[HELD_MESSAGES] = dict.fromkeys(held)
    return update


def _merge_name(agent: Any) -> str:
    return agent.merge if isinstance(agent.merge, str) else callable_name(agent.merge)


def merge_results(merge: Any, results: dict[str, Any]) -> Any:
    """Merge branch results (output key -> value, in declaration order)."""
    if merge == "dict":
        return dict(results)
    if merge == "list":
        return list(results.values())
    if merge == "concat":
        return "\n\n".join(render_value(v) for v in results.values() if v is not None)
    return merge(dict(results))


class ParallelStrategy(FlowGraphBuildingStrategy):
    """Builds a `ParallelAgent`'s graph."""

    unused_fields = MODEL_FIELDS

    @override
    def own_writes(self, agent: Any) -> set[str]:
        return {k for k in (agent.output_key, agent.merged_key) if k}

    @override
    def reads(self, agent: Any) -> set[str] | None:
        return set(agent.input_keys)

    @override
    def output_key(self, agent: Any) -> str | None:
        return agent.merged_key

    @override
    def details(self, agent: Any) -> dict[str, Any]:
        details: dict[str, Any] = {"merge": _merge_name(agent)}
        if agent.merged_key:
            details["merge_output_key"] = agent.merged_key
        details["max_concurrency"] = agent.max_concurrency
        return details

    @override
    def draw(self, agent: Any, ctx: DrawContext) -> Ports:
        bound = (
            f"max_concurrency={agent.max_concurrency}" if agent.max_concurrency else "all at once"
        )
        fork = ctx.node("fork", f"fork · {bound}", kind="fork")
        into = f" → {agent.merged_key}" if agent.merged_key else ""
        join = ctx.node("join", f"join · merge={_merge_name(agent)}{into}", kind="join")
        for branch in agent.sub_agents:
            ports = ctx.child(branch)
            ctx.edge(fork, ports.entry)
            ctx.edge(ports.exit, join)
        return Ports(entry=fork, exit=join)

    @override
    def child_role(self, agent: Any, child: Any, task_input: Mapping[str, Any] | None) -> ChildRole:
        return ChildRole(branch=child.name)

    @override
    def invoke_config(self, agent: Any) -> dict[str, Any]:
        # Without a bound, LangGraph's sync thread pool defaults to min(32, cpus + 4) workers,
        # which serialises branches beyond that on small machines: size it to the branches.
        return {"max_concurrency": agent.max_concurrency or len(agent.sub_agents)}

    @override
    def check_dataflow(
        self, agent: Any, available: frozenset[str], ctx: BuildContext
    ) -> frozenset[str]:
        builder = ctx.builder
        builder.check_distinct_writes(agent.sub_agents, f"ParallelAgent `{agent.name}` branches")
        after = available
        for branch in agent.sub_agents:
            # every branch starts from the same state: it cannot read a sibling's output
            after = after | builder.check(branch, available, ctx.child(branch))
        return after | self.own_writes(agent)

    @override
    def build_graph(self, agent: Any, ctx: BuildContext) -> StateGraph:
        graph: StateGraph = StateGraph(
            ctx.schema({HELD_MESSAGES: Annotated[dict[str, Any], merge_dicts]})
        )
        hooks = HookChain(agent)
        builder = ctx.builder
        branches = list(agent.sub_agents)
        names = [b.name for b in branches]
        keys = {b.name: builder.result_key(b) for b in branches}

        def merge(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
            results = {k: state.get(k) for b in branches if (k := keys[b.name])}
            update: dict[str, Any] = {AGENT_STATUS: {agent.name: "completed"}}
            update.update(release_held(state, names))
            if agent.merged_key:
                update[agent.merged_key] = merge_results(agent.merge, results)
                if callable(agent.merge):
                    merged = {agent.merged_key: update[agent.merged_key]}
                    ensure_storable(merged, agent=agent.name, config=config, what="its merge")
            if agent.output_key and agent.output_key != agent.merged_key:
                update[agent.output_key] = (
                    update.get(agent.merged_key) if agent.merged_key else None
                )
            return update

        for branch in branches:
            graph.add_node(
                branch.name,
                builder.child_node(
                    branch,
                    ctx.child(branch),
                    branch_of=agent,
                    owner=agent,
                    collect_messages=HELD_MESSAGES,
                ),
            )
        graph.add_node(MERGE_NODE, guarded(agent, MERGE_NODE, merge))
        # a join edge: gf_merge runs once every branch of this invocation has finished
        graph.add_edge(names, MERGE_NODE)
        hooks.install(graph, names, MERGE_NODE, ctx)
        return graph
