"""Node helpers shared by the strategies: hook chains, error guards, sub-agent nodes."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langgraph.constants import END, START
from langgraph.errors import GraphBubbleUp

from graphflow.hooks._runner import call_async, call_sync
from graphflow.hooks.base import AgentContext, AgentHook, HookResult
from graphflow.state import AGENT_STATUS, JUMP

if TYPE_CHECKING:
    from langgraph.graph import StateGraph

    from graphflow.agents.base import Agent

SyncFn = Callable[[Any, RunnableConfig], Any]
AsyncFn = Callable[[Any, RunnableConfig], Any]

_COMPLETED_LIKE = {"until": "completed", "exit_loop": "completed", "running": "completed"}


def node(name: str, func: SyncFn, afunc: AsyncFn | None = None) -> RunnableLambda:
    """A graph node with sync and async implementations (both take `(state, config)`)."""
    if afunc is None:

        async def afunc(state: Any, config: RunnableConfig) -> Any:  # type: ignore[misc]
            return func(state, config)

    return RunnableLambda(func, afunc=afunc, name=name)


def agent_hooks(agent: Agent) -> list[AgentHook]:
    return [h for h in agent.hooks if isinstance(h, AgentHook)]


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


def end_reason(agent: Agent, state: dict[str, Any]) -> str:
    status = (state.get(AGENT_STATUS) or {}).get(agent.name, "completed")
    return _COMPLETED_LIKE.get(status, status)


class HookChain:
    """Installs an agent's `before_agent`/`after_agent` hooks as their own nodes around its core.

    START → before_1 → … → before_n → core … core exit → after_n → … → after_1 → END.
    A before hook that returns `HookResult(jump_to="end")` skips the core; after hooks still run.
    """

    def __init__(self, agent: Agent) -> None:
        self.agent = agent
        self.hooks = agent_hooks(agent)
        used: dict[str, int] = {}
        self.names: list[str] = []
        for hook in self.hooks:
            base = hook.name
            used[base] = used.get(base, 0) + 1
            self.names.append(base if used[base] == 1 else f"{base}_{used[base]}")
        self.before = [f"before_agent.{n}" for n in self.names]
        self.after = [f"after_agent.{n}" for n in self.names]

    @property
    def after_entry(self) -> str:
        """Where the core goes when it is done: the first after-hook node, or END."""
        return self.after[-1] if self.after else END

    def install(
        self,
        graph: StateGraph,
        entry: str | list[str],
        core_exit: str | None,
    ) -> None:
        """Wire START → before hooks → `entry`, and `core_exit` → after hooks → END."""
        entries = [entry] if isinstance(entry, str) else list(entry)
        previous = START
        for hook, name in zip(self.hooks, self.before, strict=True):
            graph.add_node(name, self._before_node(hook, name))
            graph.add_edge(previous, name)
            previous = name
        if self.hooks:
            last = previous
            targets = [*entries, self.after_entry]

            def skip_or_enter(state: dict[str, Any]) -> Any:
                return self.after_entry if state.get(JUMP) == "end" else entries

            graph.add_conditional_edges(last, skip_or_enter, targets)
        else:
            for e in entries:
                graph.add_edge(START, e)
        if core_exit is not None:
            graph.add_edge(core_exit, self.after_entry)
        # after hooks run in reverse list order
        chain = list(reversed(list(zip(self.hooks, self.after, strict=True))))
        for i, (hook, name) in enumerate(chain):
            graph.add_node(name, self._after_node(hook, name))
            graph.add_edge(name, chain[i + 1][1] if i + 1 < len(chain) else END)

    def _before_node(self, hook: AgentHook, name: str) -> RunnableLambda:
        agent = self.agent
        first = name == self.before[0]

        def reset(update: dict[str, Any]) -> dict[str, Any]:
            if first and JUMP not in update:
                update[JUMP] = None
            return update

        def run(state: dict[str, Any], config: RunnableConfig) -> Any:
            ctx = AgentContext(agent=agent.name, config=config)
            result = call_sync(hook, "before_agent", "abefore_agent", state, ctx)
            return reset(_hook_update(agent, result, before=True))

        async def arun(state: dict[str, Any], config: RunnableConfig) -> Any:
            ctx = AgentContext(agent=agent.name, config=config)
            result = await call_async(hook, "before_agent", "abefore_agent", state, ctx)
            return reset(_hook_update(agent, result, before=True))

        return node(name, run, arun)

    def _after_node(self, hook: AgentHook, name: str) -> RunnableLambda:
        agent = self.agent

        def run(state: dict[str, Any], config: RunnableConfig) -> Any:
            ctx = AgentContext(agent=agent.name, config=config, reason=end_reason(agent, state))  # type: ignore[arg-type]
            return _hook_update(
                agent, call_sync(hook, "after_agent", "aafter_agent", state, ctx), before=False
            )

        async def arun(state: dict[str, Any], config: RunnableConfig) -> Any:
            ctx = AgentContext(agent=agent.name, config=config, reason=end_reason(agent, state))  # type: ignore[arg-type]
            result = await call_async(hook, "after_agent", "aafter_agent", state, ctx)
            return _hook_update(agent, result, before=False)

        return node(name, run, arun)


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


def guarded(agent: Agent, name: str, func: SyncFn, afunc: AsyncFn | None = None) -> RunnableLambda:
    """A core node of `agent`: when it fails, the agent's after hooks run (reason `error`)."""
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

    # drawings (get_graph(xray=True)) find a sub-agent's graph in the wrapped function's closure
    run.__wrapped__ = func  # type: ignore[attr-defined]
    arun.__wrapped__ = afunc or func  # type: ignore[attr-defined]
    return node(name, run, arun)


def new_messages(sent: list[BaseMessage], result: list[BaseMessage]) -> list[BaseMessage]:
    """Messages in `result` that were not in `sent` (by id)."""
    ids = {m.id for m in sent if m.id}
    return [m for m in result if m.id not in ids]


def status_changes(sent: dict[str, str] | None, result: dict[str, str] | None) -> dict[str, str]:
    sent = sent or {}
    return {k: v for k, v in (result or {}).items() if sent.get(k) != v}
