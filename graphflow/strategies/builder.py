"""`FlowGraphBuilder`: picks a strategy per agent type and builds the tree's one graph."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langgraph.errors import GraphBubbleUp

from graphflow.agents.base import Agent, _check_identifier
from graphflow.exceptions import DataflowError, GraphflowConfigError, ParallelBranchError
from graphflow.state import (
    AGENT_STATUS,
    EXIT_LOOP,
    INPUT,
    LOOP_ITERATION,
    MESSAGES,
    ROUTES,
)
from graphflow.strategies import _siblings
from graphflow.strategies._nodes import guarded, new_messages, node, status_changes
from graphflow.strategies.base import BuildContext, FlowGraphBuildingStrategy

if TYPE_CHECKING:
    from collections.abc import Callable

    from langgraph.graph import StateGraph

__all__ = ("FlowGraphBuilder", "register_strategy", "strategy_for")

_REGISTRY: dict[type[Agent], FlowGraphBuildingStrategy] = {}
_RESERVED_NODE_NAMES = frozenset({"model", "tools", "prepare", "finish", "run"})


def register_strategy(agent_type: type[Agent], strategy: FlowGraphBuildingStrategy) -> None:
    """Use `strategy` to build every agent of `agent_type` (and its subclasses).

    This is how you add an agent kind without touching graphflow.
    """
    if not (isinstance(agent_type, type) and issubclass(agent_type, Agent)):
        raise GraphflowConfigError(f"register_strategy: {agent_type!r} is not an Agent subclass")
    if not isinstance(strategy, FlowGraphBuildingStrategy):
        raise GraphflowConfigError(
            f"register_strategy: {strategy!r} is not a FlowGraphBuildingStrategy instance"
        )
    # load the built-ins first: they are loaded only while the registry is empty
    _ensure_builtins()
    _REGISTRY[agent_type] = strategy


def strategy_for(agent: Agent) -> FlowGraphBuildingStrategy:
    """The registered strategy for `agent`'s type (the nearest registered base class)."""
    _ensure_builtins()
    for klass in type(agent).__mro__:
        if klass in _REGISTRY:
            return _REGISTRY[klass]
    raise GraphflowConfigError(
        f"no strategy builds {type(agent).__name__} (agent {agent.name!r}); register one with "
        f"graphflow.register_strategy({type(agent).__name__}, YourStrategy())"
    )


def _ensure_builtins() -> None:
    if _REGISTRY:
        return
    from graphflow.strategies import _defaults

    _defaults.register_builtins()


class FlowGraphBuilder:
    """Builds the one LangGraph graph of an agent tree."""

    def build(self, root: Agent) -> StateGraph:
        """Validate the tree, then build the root's `StateGraph`.

        Raises:
            GraphflowConfigError: duplicate names or keys, unknown placeholders, ...
        """
        keys = self._validate(root)
        ctx = BuildContext(builder=self, keys=frozenset(keys), path=(root.name,))
        return strategy_for(root).build_graph(root, ctx)

    # -- tree facts -----------------------------------------------------------------------------

    def writes(self, agent: Agent) -> set[str]:
        """Keys `agent` and its sub-agents write."""
        strategy = strategy_for(agent)
        out = set(strategy.own_writes(agent)) | _hook_writes(agent)
        for child in strategy.children(agent):
            out |= self.writes(child)
        return out

    def result_key(self, agent: Agent) -> str | None:
        """The key holding `agent`'s result."""
        return strategy_for(agent).result_key(agent)

    # -- validation -----------------------------------------------------------------------------

    def _validate(self, root: Agent) -> set[str]:
        seen: dict[str, Agent] = {}
        for agent in root.walk():
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
        for agent in root.walk():
            for key in sorted(_hook_writes(agent)):
                try:
                    _check_identifier(key, "state key")
                except ValueError as exc:
                    raise DataflowError(
                        f"Agent `{agent.name}`: a hook declares writes={key!r}, which is not a "
                        f"usable state key: {exc}"
                    ) from None
        keys = self.writes(root) | set(root.input_keys)
        for agent in root.walk():
            keys |= set(agent.input_keys)
        clashes = sorted(set(seen) & keys)
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
                if (strategy_for(a).own_writes(a) | set(a.input_keys)) & set(reserved)
            )
            raise DataflowError(
                f"state key(s) {reserved} (used by agent(s) {owners or [root.name]}) collide with "
                f"graphflow's node names {sorted(_RESERVED_NODE_NAMES)}; rename the output_key or "
                "input key"
            )
        ctx = BuildContext(builder=self, keys=frozenset(keys), path=(root.name,))
        self.check(root, frozenset({INPUT, *root.input_keys}), ctx)
        return keys

    def check(self, agent: Agent, available: frozenset[str], ctx: BuildContext) -> frozenset[str]:
        """Check `agent` (and its sub-agents) given the keys available before it runs."""
        available = available | set(agent.input_keys) | _hook_writes(agent)
        return strategy_for(agent).check_dataflow(agent, available, ctx) | _hook_writes(agent)

    def check_distinct_writes(self, agents: list[Agent], what: str) -> None:
        """Raise `DataflowError` if two of `agents` (which may run concurrently) write one key."""
        owners: dict[str, str] = {}
        for agent in agents:
            for key in sorted(self.writes(agent)):
                if key in owners:
                    raise DataflowError(
                        f"{what}: `{owners[key]}` and `{agent.name}` both write `{key}` and may "
                        "run concurrently; concurrent agents must write distinct output keys — "
                        "rename one output_key"
                    )
                owners[key] = agent.name

    def check_placeholders(
        self, agent: Agent, available: frozenset[str], ctx: BuildContext
    ) -> None:
        """Raise `DataflowError` for a required placeholder no earlier agent writes."""
        known = set(available) | ({LOOP_ITERATION} if ctx.in_loop else set())
        for placeholder in agent.placeholders():
            if placeholder.optional or placeholder.name in known:
                continue
            later = (
                ""
                if placeholder.name not in ctx.keys
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

    # -- sub-agent nodes -------------------------------------------------------------------------

    def child_node(
        self,
        child: Agent,
        ctx: BuildContext,
        *,
        prepare: Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]] | None = None,
        branch_of: Agent | None = None,
        owner: Agent | None = None,
        collect_messages: str | None = None,
    ) -> RunnableLambda:
        """A node that runs `child`'s compiled subgraph and hands back only what it writes.

        Args:
            child: the sub-agent.
            ctx: the sub-agent's build context (`parent_ctx.child(child)`).
            prepare: `(state, data) -> data` rewrites what is sent to the subgraph (a router's query).
            branch_of: the `ParallelAgent` this node is a branch of: on failure it waits for its
                running siblings, then raises `ParallelBranchError` naming the branch.
            owner: the parent agent, whose after hooks run (reason `error`) if this node fails.
            collect_messages: write the handed-back messages to this channel as
                `{child name: messages}` instead of appending them to `messages` (a parallel
                parent appends them itself, in declaration order).
        """
        strategy = strategy_for(child)
        # compiled without a checkpointer: it inherits the parent's and keeps its own
        # checkpoints in the parent's store, so a resumed run resumes inside it.
        compiled = strategy.build_graph(child, ctx).compile(checkpointer=None, name=child.name)
        writes = self.writes(child)
        config_extra = {"max_concurrency": None, **strategy.invoke_config(child)}
        consumes_exit = strategy.consumes_exit_loop

        def send(state: dict[str, Any]) -> dict[str, Any]:
            data = {k: v for k, v in state.items() if not k.startswith("gf_")}
            data[MESSAGES] = list(state.get(MESSAGES) or [])
            return prepare(state, data) if prepare else data

        def back(sent: dict[str, Any], result: dict[str, Any]) -> dict[str, Any]:
            update: dict[str, Any] = {k: result[k] for k in writes if k in result}
            produced = new_messages(sent.get(MESSAGES, []), result.get(MESSAGES, []))
            handed: list[BaseMessage] = strategy.hand_back(child, produced)
            if collect_messages:
                update[collect_messages] = {child.name: handed or None}
            elif handed:
                update[MESSAGES] = handed
            changes = status_changes(sent.get(AGENT_STATUS), result.get(AGENT_STATUS))
            if changes:
                update[AGENT_STATUS] = changes
            if result.get(EXIT_LOOP) and not consumes_exit:
                update[EXIT_LOOP] = True
            return update

        def branch_error(exc: Exception, siblings: dict[str, dict[str, Any]]) -> Exception:
            assert branch_of is not None
            # the finished siblings' output keys (not their messages, status or private channels)
            completed = {
                k: v
                for outputs in siblings.values()
                for k, v in outputs.items()
                if k not in (MESSAGES, AGENT_STATUS) and not k.startswith("gf_")
            }
            return ParallelBranchError(
                f"{type(branch_of).__name__} `{branch_of.name}`: branch `{child.name}` failed: "
                f"{type(exc).__name__}: {exc} — the branches that finished are saved "
                f"({', '.join(sorted(siblings)) or 'none'}); resume the run "
                "(agent.resume(thread_id)) to re-run only the failed branch from its last "
                "checkpoint",
                agent=branch_of.name,
                errors={child.name: f"{type(exc).__name__}: {exc}"},
                completed=completed,
            )

        def expected(state: dict[str, Any]) -> int:
            # how many branches run in this step: the chosen routes of a multi router, else all
            return len(state.get(ROUTES) or ()) or len(getattr(branch_of, "sub_agents", ()))

        def run(state: dict[str, Any], config: RunnableConfig) -> Any:
            sent = send(state)
            if branch_of is None:
                result = compiled.invoke(sent, {**config, **config_extra})  # type: ignore[call-overload]
                return back(sent, result)
            key = _siblings.group_key(config)
            entry = _siblings.enter(key, child.name, expected(state))
            try:
                result = compiled.invoke(sent, {**config, **config_extra})  # type: ignore[call-overload]
            except GraphBubbleUp:
                _siblings.finish(key, entry, None)
                raise
            except Exception as exc:
                raise branch_error(exc, _siblings.wait_for_siblings(key, entry)) from exc
            update = back(sent, result)
            _siblings.finish(key, entry, update)
            return update

        async def arun(state: dict[str, Any], config: RunnableConfig) -> Any:
            sent = send(state)
            if branch_of is None:
                result = await compiled.ainvoke(sent, {**config, **config_extra})  # type: ignore[call-overload]
                return back(sent, result)
            key = _siblings.group_key(config)
            entry = _siblings.enter(key, child.name, expected(state))
            try:
                result = await compiled.ainvoke(sent, {**config, **config_extra})  # type: ignore[call-overload]
            except GraphBubbleUp:
                _siblings.finish(key, entry, None)
                raise
            except BaseException as exc:
                if not isinstance(exc, Exception):
                    _siblings.finish(key, entry, None)
                    raise  # cancelled: LangGraph stopped this task, nothing to report
                raise branch_error(exc, await _siblings.await_siblings(key, entry)) from exc
            update = back(sent, result)
            _siblings.finish(key, entry, update)
            return update

        if owner is not None:
            return guarded(owner, child.name, run, arun)
        return node(child.name, run, arun)


def _hook_writes(agent: Agent) -> set[str]:
    return {key for hook in agent.hooks for key in getattr(hook, "writes", ())}


def query_message(text: str) -> HumanMessage:
    """A user message carrying a router's rewritten query."""
    import uuid

    return HumanMessage(content=text, id=f"route-{uuid.uuid4()}")
