"""Agent hooks as graph nodes: `before_agent`/`after_agent` around an agent's core, and the
error guard that runs the after hooks when a core node fails.

START → before_1 → … → before_n → core … core exit → after_n → … → after_1 → END. A before hook
that returns `HookResult(jump_to="end")` skips the core; the after hooks still run. The last
before hook also writes the agent's entry update (its instruction message, ...), so hooks cost
no step beyond their own nodes; a root agent without hooks gets a `prepare` node for it instead.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from langchain_core.runnables import RunnableConfig
from langgraph.constants import END, START
from langgraph.errors import GraphBubbleUp

from graphflow._internal.hook_calls import call_async, call_sync
from graphflow.hooks.base import AgentContext, AgentHook, HookResult
from graphflow.state import (
    AFTER_AGENT_NODE,
    AGENT_STATUS,
    BEFORE_AGENT_NODE,
    JUMP,
    MESSAGES,
    PREPARE_NODE,
)
from graphflow.strategies._node import AsyncNode, SyncNode, node, router
from graphflow.strategies._storable import ensure_storable

if TYPE_CHECKING:
    from langgraph.graph import StateGraph

    from graphflow.agents.base import Agent
    from graphflow.strategies.base import BuildContext

__all__ = ("HookChain", "agent_hooks", "end_reason", "guarded", "merge_updates")

EntryUpdate = Callable[[Mapping[str, Any]], dict[str, Any]]

_COMPLETED_LIKE = {"until": "completed", "exit_loop": "completed", "running": "completed"}


def agent_hooks(agent: Agent) -> list[AgentHook]:
    """The agent's `AgentHook`s, in list order."""
    return [h for h in agent.hooks if isinstance(h, AgentHook)]


def merge_updates(first: dict[str, Any], second: dict[str, Any]) -> dict[str, Any]:
    """Combine two node updates; message lists are concatenated, statuses merged."""
    merged = {**first, **second}
    if MESSAGES in first and MESSAGES in second:
        merged[MESSAGES] = [*first[MESSAGES], *second[MESSAGES]]
    if AGENT_STATUS in first and AGENT_STATUS in second:
        merged[AGENT_STATUS] = {**first[AGENT_STATUS], **second[AGENT_STATUS]}
    return merged


def _hook_update(agent: Agent, result: Any, *, before: bool) -> dict[str, Any]:
    if result is None:
        return {}
    if isinstance(result, dict):
        return dict(result)
    if isinstance(result, HookResult):
        update = dict(result.update)
        if before and result.jump_to == "end":
            update[JUMP] = "end"
            update[AGENT_STATUS] = {**update.get(AGENT_STATUS, {}), agent.name: "skipped"}
        return update
    raise TypeError(
        f"Agent `{agent.name}`: a hook returned {type(result).__name__}; return a dict, a "
        "HookResult or None"
    )


def _checked(
    agent: Agent, hook: AgentHook, update: dict[str, Any], config: RunnableConfig
) -> dict[str, Any]:
    ensure_storable(update, agent=agent.name, config=config, what=f"hook {hook.name}")
    return update


def end_reason(agent: Agent, state: Mapping[str, Any]) -> str:
    """Why `agent` ended, for its after hooks (a loop's `until` counts as `completed`)."""
    status = (state.get(AGENT_STATUS) or {}).get(agent.name, "completed")
    return _COMPLETED_LIKE.get(status, status)


class HookChain:
    """Wires an agent's entry and its `before_agent`/`after_agent` hook nodes around its core."""

    def __init__(self, agent: Agent) -> None:
        self.agent = agent
        self.hooks = agent_hooks(agent)
        used: dict[str, int] = {}
        self.names: list[str] = []
        for hook in self.hooks:
            base = hook.name
            used[base] = used.get(base, 0) + 1
            self.names.append(base if used[base] == 1 else f"{base}_{used[base]}")
        self.before = [BEFORE_AGENT_NODE.format(n) for n in self.names]
        self.after = [AFTER_AGENT_NODE.format(n) for n in self.names]

    @property
    def after_entry(self) -> str:
        """Where the core goes when it is done: the first after-hook node, or END."""
        return self.after[-1] if self.after else END

    def install(
        self,
        graph: StateGraph,
        entry: str | list[str],
        core_exit: str | None,
        ctx: BuildContext,
        *,
        entry_update: EntryUpdate | None = None,
    ) -> None:
        """Wire START → [prepare | before hooks] → `entry`, and `core_exit` → after hooks → END.

        `entry_update(state)` starts an invocation of the agent: the last before hook writes it;
        without hooks a root agent gets a `prepare` node for it, and a sub-agent's is sent by its
        parent's node (so nothing is wired for it here).
        """
        entries = [entry] if isinstance(entry, str) else list(entry)
        if self.hooks:
            previous = START
            for i, (hook, name) in enumerate(zip(self.hooks, self.before, strict=True)):
                last = i == len(self.hooks) - 1
                graph.add_node(name, self._before_node(hook, name, entry_update if last else None))
                graph.add_edge(previous, name)
                previous = name
            targets = [*entries, self.after_entry]

            def skip_or_enter(state: Mapping[str, Any]) -> Any:
                return self.after_entry if state.get(JUMP) == "end" else entries

            graph.add_conditional_edges(previous, router(skip_or_enter), targets)
        elif ctx.is_root and entry_update is not None:

            def prepare(state: Any, config: RunnableConfig) -> dict[str, Any]:
                return entry_update(state)

            graph.add_node(PREPARE_NODE, guarded(self.agent, PREPARE_NODE, prepare))
            graph.add_edge(START, PREPARE_NODE)
            for e in entries:
                graph.add_edge(PREPARE_NODE, e)
        else:
            for e in entries:
                graph.add_edge(START, e)
        if core_exit is not None:
            graph.add_edge(core_exit, self.after_entry)
        # after hooks run in reverse list order
        chain = list(reversed(list(zip(self.hooks, self.after, strict=True))))
        for i, (hook, name) in enumerate(chain):
            graph.add_node(name, self._after_node(hook))
            graph.add_edge(name, chain[i + 1][1] if i + 1 < len(chain) else END)

    def _before_node(self, hook: AgentHook, name: str, entry_update: EntryUpdate | None) -> Any:
        agent = self.agent
        first = name == self.before[0]

        def finish(state: Mapping[str, Any], update: dict[str, Any]) -> dict[str, Any]:
            if first and JUMP not in update:
                update[JUMP] = None
            if entry_update is not None and update.get(JUMP) != "end":
                # the agent starts here: its entry update sees what the hooks wrote
                update = merge_updates(update, entry_update({**state, **update}))
            return update

        def run(state: dict[str, Any], config: RunnableConfig) -> Any:
            ctx = AgentContext(agent=agent.name, config=config)
            result = call_sync(hook, "before_agent", "abefore_agent", state, ctx)
            return finish(
                state, _checked(agent, hook, _hook_update(agent, result, before=True), config)
            )

        async def arun(state: dict[str, Any], config: RunnableConfig) -> Any:
            ctx = AgentContext(agent=agent.name, config=config)
            result = await call_async(hook, "before_agent", "abefore_agent", state, ctx)
            return finish(
                state, _checked(agent, hook, _hook_update(agent, result, before=True), config)
            )

        return node(name, run, arun)

    def _after_node(self, hook: AgentHook) -> Any:
        agent = self.agent

        def context(state: Mapping[str, Any], config: RunnableConfig) -> AgentContext:
            return AgentContext(agent=agent.name, config=config, reason=end_reason(agent, state))  # type: ignore[arg-type]

        def run(state: dict[str, Any], config: RunnableConfig) -> Any:
            result = call_sync(hook, "after_agent", "aafter_agent", state, context(state, config))
            return _checked(agent, hook, _hook_update(agent, result, before=False), config)

        async def arun(state: dict[str, Any], config: RunnableConfig) -> Any:
            ctx = context(state, config)
            result = await call_async(hook, "after_agent", "aafter_agent", state, ctx)
            return _checked(agent, hook, _hook_update(agent, result, before=False), config)

        return node(AFTER_AGENT_NODE.format(hook.name), run, arun)


def _mark(exc: BaseException, agent: Agent) -> bool:
    """Record that `agent`'s after hooks saw `exc`; False if they already had."""
    seen: set[str] = getattr(exc, "_graphflow_after_hooks", set())
    if agent.name in seen:
        return False
    seen.add(agent.name)
    try:
        exc._graphflow_after_hooks = seen  # type: ignore[attr-defined]
    except AttributeError:
        return False
    return True


def guarded(agent: Agent, name: str, func: SyncNode, afunc: AsyncNode | None = None) -> Any:
    """A core node of `agent`: when it fails, the agent's after hooks run (reason `error`).

    Without agent hooks it is the plain node (no wrapper on the hot path).
    """
    hooks = agent_hooks(agent)
    if not hooks:
        return node(name, func, afunc)

    def on_error(state: Any, config: RunnableConfig, exc: BaseException) -> None:
        if not _mark(exc, agent):
            return
        for hook in reversed(hooks):
            ctx = AgentContext(agent=agent.name, config=config, reason="error", error=exc)
            call_sync(hook, "after_agent", "aafter_agent", dict(state), ctx)

    async def aon_error(state: Any, config: RunnableConfig, exc: BaseException) -> None:
        if not _mark(exc, agent):
            return
        for hook in reversed(hooks):
            ctx = AgentContext(agent=agent.name, config=config, reason="error", error=exc)
            await call_async(hook, "after_agent", "aafter_agent", dict(state), ctx)

    def run(state: Any, config: RunnableConfig) -> Any:
        try:
            return func(state, config)
        except GraphBubbleUp:
            raise
        except Exception as exc:
            on_error(state, config, exc)
            raise

    async def arun(state: Any, config: RunnableConfig) -> Any:
        try:
            if afunc is None:
                return func(state, config)
            return await afunc(state, config)
        except GraphBubbleUp:
            raise
        except Exception as exc:
            await aon_error(state, config, exc)
            raise

    # LangGraph finds a sub-agent's compiled graph in the node function's closure (one
    # `__wrapped__` level deep): it is what makes the node a subgraph for checkpoints and streams
    run.__wrapped__ = func  # type: ignore[attr-defined]
    arun.__wrapped__ = afunc or func  # type: ignore[attr-defined]
    return node(name, run, arun)
