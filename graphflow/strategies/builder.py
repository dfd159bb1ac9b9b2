"""`FlowGraphBuilder`: builds the one LangGraph graph of an agent tree, strategy by strategy."""

from __future__ import annotations

from collections.abc import Hashable, MutableMapping
from typing import TYPE_CHECKING, Any

from graphflow.state import INPUT
from graphflow.strategies import validation
from graphflow.strategies._subagent import subagent_node
from graphflow.strategies.base import BuildContext, input_reads
from graphflow.strategies.registry import strategy_for

if TYPE_CHECKING:
    from langgraph.graph import StateGraph
    from langgraph.graph.state import CompiledStateGraph

    from graphflow.agents.base import Agent

__all__ = ("FlowGraphBuilder",)


class FlowGraphBuilder:
    """Builds the one LangGraph graph of an agent tree.

    One builder serves one build: it caches what it learns about the tree (writes, reads, keys).
    Compiled sub-agent graphs go into `subgraphs`, a mapping the caller owns (the runtime keeps
    one for every build, `graphflow.runtime.graphs.SUBGRAPHS`), checked against the sub-agent's
    `fingerprint()` and keyed by the keys it runs on: rebuilding a tree whose sub-agents did not
    change reuses their graphs, and a changed sub-agent is rebuilt. Without one, each build
    compiles its sub-agents afresh.
    """

    def __init__(self, *, subgraphs: MutableMapping[Hashable, Any] | None = None) -> None:
        self._subgraphs: MutableMapping[Hashable, Any] = {} if subgraphs is None else subgraphs
        self._writes: dict[int, frozenset[str]] = {}
        self._reads: dict[int, frozenset[str] | None] = {}
        self.input_keys: frozenset[str] = frozenset()
        """Keys the caller supplies (`input` and every declared `input_keys` entry)."""

    def build(self, root: Agent) -> StateGraph:
        """Validate the tree, then build the root's `StateGraph`.

        Raises:
            GraphflowConfigError: duplicate names or keys, unknown placeholders, a cycle, ...
        """
        ctx = self.validate(root)
        return strategy_for(root).build_graph(root, ctx)

    def validate(self, root: Agent) -> BuildContext:
        """Check the tree as a run would, without building it; returns the root's context.

        Drawing a tree runs this too, so a tree that cannot run is not drawn as if it could.

        Raises:
            GraphflowConfigError: duplicate names or keys, unknown placeholders, a cycle, an
                agent class without a registered strategy, ...
        """
        validation.check_structure(root)
        self.input_keys = frozenset({INPUT} | {k for a in root.walk() for k in a.input_keys})
        keys = frozenset(self.writes(root)) | self.input_keys
        ctx = BuildContext(builder=self, keys=keys, tree_keys=keys, path=(root.name,), is_root=True)
        validation.validate_tree(self, root, ctx)
        return ctx

    # -- tree facts -----------------------------------------------------------------------------

    def own_writes(self, agent: Agent) -> set[str]:
        """Keys `agent` writes itself, hooks included (not counting sub-agents)."""
        return set(strategy_for(agent).own_writes(agent)) | validation.hook_writes(agent)

    def writes(self, agent: Agent) -> set[str]:
        """Keys `agent` and its sub-agents write."""
        cached = self._writes.get(id(agent))
        if cached is None:
            out = self.own_writes(agent)
            for child in strategy_for(agent).children(agent):
                out |= self.writes(child)
            cached = self._writes[id(agent)] = frozenset(out)
        return set(cached)

    def reads(self, agent: Agent) -> frozenset[str] | None:
        """Keys read inside `agent`'s graph, or None when some agent there may read any key.

        That is what it reads itself, what its sub-agents' graphs read, and what starting its
        sub-agents needs (their instructions' keys).
        """
        if id(agent) in self._reads:
            return self._reads[id(agent)]
        strategy = strategy_for(agent)
        own = None if agent.hooks else strategy.reads(agent)
        out: set[str] | None = None if own is None else set(own) | set(agent.input_keys)
        for child in strategy.children(agent):
            inner = self.reads(child)
            if out is None or inner is None:
                out = None
            else:
                out |= inner | input_reads(child)
        result = self._reads[id(agent)] = None if out is None else frozenset(out)
        return result

    def keys_for(self, agent: Agent, tree_keys: frozenset[str]) -> frozenset[str]:
        """The keys of `agent`'s graph: what its subtree reads and writes, or all if it may read any."""
        reads = self.reads(agent)
        if reads is None:
            return tree_keys
        return frozenset(reads | self.writes(agent)) & tree_keys

    def result_key(self, agent: Agent) -> str | None:
        """The key holding `agent`'s result."""
        return strategy_for(agent).result_key(agent)

    # -- validation (for strategies' `check_dataflow`) -------------------------------------------

    def check(self, agent: Agent, available: frozenset[str], ctx: BuildContext) -> frozenset[str]:
        """Check `agent` (and its sub-agents) given the keys available before it runs."""
        hooks = validation.hook_writes(agent)
        available = available | set(agent.input_keys) | hooks
        return strategy_for(agent).check_dataflow(agent, available, ctx) | hooks

    def check_distinct_writes(self, agents: list[Agent], what: str) -> None:
        """Raise `DataflowError` if two of `agents` (which may run concurrently) write one key."""
        validation.check_distinct_writes(self, agents, what)

    def check_placeholders(
        self, agent: Agent, available: frozenset[str], ctx: BuildContext
    ) -> None:
        """Raise `DataflowError` for a required placeholder no earlier agent writes."""
        validation.check_placeholders(agent, available, ctx)

    # -- sub-agents -------------------------------------------------------------------------------

    def compiled(self, child: Agent, ctx: BuildContext) -> CompiledStateGraph:
        """`child`'s compiled subgraph for `ctx` (reused while the child's spec is unchanged).

        Compiled without a checkpointer of its own: it inherits the parent's and keeps its own
        checkpoints under its namespace, so a resumed run resumes inside it.
        """
        fingerprint = child.fingerprint()
        key = (
            id(child),
            ctx.keys,
            ctx.tree_keys if self.reads(child) is None else None,
            ctx.in_loop,
            tuple(sorted(ctx.extra)),
        )
        hit = self._subgraphs.get(key)
        if hit is not None and hit[0] == fingerprint:
            return hit[2]  # type: ignore[no-any-return]
        graph = strategy_for(child).build_graph(child, ctx)
        compiled = graph.compile(checkpointer=None, name=child.name)
        # the agents are kept with the fingerprint so their identities stay unique while cached
        self._subgraphs[key] = (fingerprint, list(child.walk()), compiled)
        return compiled

    child_node = subagent_node
    """`child_node(child, ctx, *, prepare=, branch_of=, owner=, collect_messages=, finalize=)`: a
    node that runs `child` (its compiled subgraph) and hands back only what it writes (see
    `graphflow.strategies._subagent.subagent_node` for the options)."""
