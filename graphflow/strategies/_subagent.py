"""The sub-agent node: one node of a parent's graph that runs a sub-agent and hands back its work.

The node sends the sub-agent what it reads (its keys, the conversation, and its entry update —
the rendered instruction — so starting it costs no step of its own), runs its compiled subgraph
with the node's own config (so the subgraph keeps its checkpoint namespace, inherits the
checkpointer and callbacks, and interrupts bubble up), and returns only what the sub-agent
writes: its keys, its status, and the messages its strategy hands back. A parent flow may add
its own completion to that update (`finalize`), which saves it a bookkeeping node.

An agent whose strategy can run it `inline` (a `FunctionAgent` without hooks) runs right here,
on the parent's state, with no subgraph at all.
"""

from __future__ import annotations

import asyncio
from collections import ChainMap
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from langchain_core.messages import BaseMessage, RemoveMessage
from langchain_core.runnables import RunnableConfig
from langgraph._internal._constants import CONFIG_KEY_RESUMING
from langgraph.errors import GraphBubbleUp
from langgraph.graph.message import REMOVE_ALL_MESSAGES

from graphflow.exceptions import ParallelBranchError
from graphflow.state import (
    AGENT_STATUS,
    EXIT_LOOP,
    KEEP_SUBGRAPHS,
    LOOP_ITERATION,
    MESSAGES,
    ROUTES,
    is_private,
)
from graphflow.strategies import _branch_barrier as barrier
from graphflow.strategies._agent_hooks import agent_hooks, guarded
from graphflow.strategies._node import node
from graphflow.strategies.branch_errors import FAILED, SAVED
from graphflow.strategies.registry import strategy_for

if TYPE_CHECKING:
    from graphflow.agents.base import Agent
    from graphflow.strategies.base import BuildContext
    from graphflow.strategies.builder import FlowGraphBuilder

__all__ = ("Finalize", "Prepare", "subagent_node")

Prepare = Callable[[Mapping[str, Any], dict[str, Any]], dict[str, Any]]
"""`(parent state, data sent) -> data sent`: rewrite what a sub-agent is sent (a router's query)."""
Finalize = Callable[[Mapping[str, Any], dict[str, Any]], dict[str, Any]]
"""`(parent state, update) -> update`: add the parent flow's own writes to a sub-agent's update."""


def _messages_sent(parent: list[BaseMessage], entry: list[Any]) -> tuple[list[Any], int]:
    """The conversation a sub-agent starts from, and how many of its messages are the parent's."""
    sent = list(parent)
    for message in entry:
        if isinstance(message, RemoveMessage) and message.id == REMOVE_ALL_MESSAGES:
            sent = []
        else:
            sent.append(message)
    return sent, len(sent) - sum(1 for m in entry if not isinstance(m, RemoveMessage))


def _produced(sent: list[BaseMessage], own: int, result: list[BaseMessage]) -> list[BaseMessage]:
    """The messages the sub-agent added: its entry messages and what it wrote after them."""
    # the subgraph's history is what it was sent plus what it appended — unless a hook removed
    # or replaced messages, in which case fall back to comparing ids
    if len(result) >= len(sent) and (own == 0 or result[own - 1].id == sent[own - 1].id):
        return result[own:]
    parent_ids = {m.id for m in sent[:own] if m.id}
    return [m for m in result if m.id not in parent_ids]


def status_changes(
    sent: Mapping[str, str] | None, result: Mapping[str, str] | None
) -> dict[str, str]:
    """The statuses a sub-agent changed."""
    sent = sent or {}
    return {k: v for k, v in (result or {}).items() if sent.get(k) != v}


def _sent_keys(builder: FlowGraphBuilder, child: Agent, ctx: BuildContext) -> tuple[str, ...]:
    """The state keys a sub-agent is sent (besides the conversation and its entry update).

    One that may read any key gets them all, the loop pass and the statuses. A flow gets its
    keys (its completion falls back on a key's value from before it ran) and the loop pass when
    an agent inside reads it. A leaf gets only what it reads: a key it only writes would be one
    more channel in its first checkpoint, read by nobody. Statuses a sub-agent changes are
    merged back as changes, so only one that may read any key is sent them.
    """
    reads = builder.reads(child)
    if reads is None:
        wanted: Iterable[str] = (*ctx.keys, LOOP_ITERATION, AGENT_STATUS)
    elif strategy_for(child).children(child):
        wanted = (*ctx.keys, *((LOOP_ITERATION,) if LOOP_ITERATION in reads else ()))
    else:
        wanted = (k for k in (*ctx.keys, LOOP_ITERATION) if k in reads)
    return tuple(dict.fromkeys(k for k in wanted if k != MESSAGES))


def subagent_node(
    builder: FlowGraphBuilder,
    child: Agent,
    ctx: BuildContext,
    *,
    prepare: Prepare | None = None,
    branch_of: Agent | None = None,
    owner: Agent | None = None,
    collect_messages: str | None = None,
    finalize: Finalize | None = None,
) -> Any:
    """A node of the parent's graph that runs `child` and hands back only what it writes.

    It is `FlowGraphBuilder.child_node` (the builder is its first argument).

    Args:
        builder: the builder of the tree.
        child: the sub-agent.
        ctx: the sub-agent's build context (`parent_ctx.child(child)`).
        prepare: `(state, data) -> data` rewrites what is sent to the subgraph (a router's query).
        branch_of: the `ParallelAgent` this node is a branch of: on failure it waits for its
            running siblings, then raises `ParallelBranchError` naming the branch.
        owner: the parent agent, whose after hooks run (reason `error`) if this node fails.
        collect_messages: write the handed-back messages to this channel as
            `{child name: messages}` instead of appending them to `messages` (a parallel
            parent appends them itself, in declaration order).
        finalize: `(state, update) -> update` adds the parent's own writes to the update
            (a sequence's completion, a loop's exit check), saving the parent a node.
    """
    strategy = strategy_for(child)
    writes = builder.writes(child)
    consumes_exit = strategy.consumes_exit_loop
    hooks_inside = bool(agent_hooks(child))
    inline = None if hooks_inside else strategy.inline(child, ctx)
    lead = None if hooks_inside or inline is not None else strategy.inline_step(child, ctx)
    keys = _sent_keys(builder, child, ctx)

    def hand_back(
        state: Mapping[str, Any], sent: dict[str, Any], own: int, result: dict[str, Any]
    ) -> dict[str, Any]:
        update: dict[str, Any] = {
            k: result[k] for k in writes if k in result and result[k] is not state.get(k)
        }
        sent_messages = sent.get(MESSAGES) or []
        produced = _produced(sent_messages, own, result.get(MESSAGES) or [])
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
        return finalize(state, update) if finalize else update

    if inline is not None:
        body, abody = inline

        def view(state: dict[str, Any]) -> dict[str, Any]:
            # what the agent sees: the parent's state, with a router's rewritten query applied
            return prepare(state, dict(state)) if prepare is not None else state

        def execute(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
            update = body(view(state), config)
            return finalize(state, update) if finalize else update

        async def aexecute(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
            update = await abody(view(state), config)
            return finalize(state, update) if finalize else update

    else:
        compiled = builder.compiled(child, ctx)
        extra_config = strategy.invoke_config(child)

        def send(state: Mapping[str, Any]) -> tuple[dict[str, Any], int]:
            data = {k: state[k] for k in keys if k in state}
            data[MESSAGES] = list(state.get(MESSAGES) or ())
            if prepare is not None:
                data = prepare(state, data)
            if hooks_inside:
                return data, len(data[MESSAGES])
            # the entry (the instruction) sees what `prepare` changed, e.g. a rewritten input
            entry = strategy.entry_update(child, ChainMap(data, state), ctx)  # type: ignore[arg-type]
            entry_messages = entry.pop(MESSAGES, ())
            data.update(entry)
            data[MESSAGES], own = _messages_sent(data[MESSAGES], list(entry_messages))
            return data, own

        def config_for(config: RunnableConfig) -> Any:
            # the node's own config keeps the subgraph's checkpoint namespace, callbacks and
            # interrupts; only a parent's concurrency bound must not reach into the sub-agent
            if extra_config or config.get("max_concurrency") is not None:
                return {**config, "max_concurrency": None, **extra_config}
            return config

        def execute(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
            sent, own = send(state)
            if lead is not None and not _whole_graph(config):
                done, result = lead[0](sent, config)
                if done:
                    try:
                        return hand_back(state, sent, own, result)
                    except Exception:
                        compiled.invoke(result, config_for(config))  # keep the finished call
                        raise
                result = compiled.invoke(result, config_for(config))
            else:
                result = compiled.invoke(sent, config_for(config))
            return hand_back(state, sent, own, result)

        async def aexecute(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
            sent, own = send(state)
            if lead is not None and not _whole_graph(config):
                done, result = await lead[1](sent, config)
                if done:
                    try:
                        return hand_back(state, sent, own, result)
                    except Exception:
                        # the parent's own step failed after the call (a loop's until): the
                        # finished state goes to the subgraph, where a resumed task reads it
                        await compiled.ainvoke(result, config_for(config))
                        raise
                result = await compiled.ainvoke(result, config_for(config))
            else:
                result = await compiled.ainvoke(sent, config_for(config))
            return hand_back(state, sent, own, result)

    if branch_of is None:
        return _wrap(child, owner, execute, aexecute)

    def run(state: dict[str, Any], config: RunnableConfig) -> Any:
        key = barrier.group_key(config)
        entry = barrier.enter(key, child.name, _expected(branch_of, state))
        try:
            update = execute(state, config)
        except GraphBubbleUp:
            barrier.finish(key, entry, None)
            raise
        except Exception as exc:
            siblings = barrier.wait_for_siblings(key, entry)
            raise _branch_error(branch_of, child, exc, siblings) from exc
        barrier.finish(key, entry, update)
        return update

    async def arun(state: dict[str, Any], config: RunnableConfig) -> Any:
        key = barrier.group_key(config)
        entry = barrier.enter(key, child.name, _expected(branch_of, state))
        failed = barrier.sibling_failed(key)
        if failed is not None:
            barrier.finish(key, entry, None)
            # LangGraph is about to cancel this task: wait for it rather than start work that
            # could not be stopped (a function on a thread) and would run again on resume
            await asyncio.sleep(_LATE_WAIT)
            raise _not_started(branch_of, child, failed)
        try:
            update = await aexecute(state, config)
        except GraphBubbleUp:
            barrier.finish(key, entry, None)
            raise
        except BaseException as exc:
            if not isinstance(exc, Exception):
                barrier.finish(key, entry, None)
                raise  # cancelled: LangGraph stopped this task, nothing to report
            siblings = await barrier.await_siblings(key, entry)
            raise _branch_error(branch_of, child, exc, siblings) from exc
        barrier.finish(key, entry, update)
        return update

    # LangGraph finds the sub-agent's graph in the node function's closure (see `guarded`)
    run.__wrapped__ = execute  # type: ignore[attr-defined]
    arun.__wrapped__ = aexecute  # type: ignore[attr-defined]
    return _wrap(child, owner, run, arun)


def _whole_graph(config: RunnableConfig) -> bool:
    """Whether the sub-agent must run in its subgraph: LangGraph runs this task again (a resumed
    run's first step, a retry: the subgraph resumes from its checkpoints), or the run's raw
    stream is read (its namespaces are the subgraphs')."""
    configurable = config.get("configurable") or {}
    return bool(configurable.get(CONFIG_KEY_RESUMING) or configurable.get(KEEP_SUBGRAPHS))


def _wrap(child: Agent, owner: Agent | None, run: Any, arun: Any) -> Any:
    if owner is not None:
        return guarded(owner, child.name, run, arun)
    return node(child.name, run, arun)


def _expected(branch_of: Agent, state: Mapping[str, Any]) -> int:
    # how many branches run in this step: the chosen routes of a multi router, else all
    return len(state.get(ROUTES) or ()) or len(getattr(branch_of, "sub_agents", ()))


_LATE_WAIT = 5.0


def _not_started(branch_of: Agent, child: Agent, failed: str) -> ParallelBranchError:
    return ParallelBranchError(
        f"{type(branch_of).__name__} `{branch_of.name}`: branch `{child.name}` was not started "
        f"because branch `{failed}` had failed; resume the run (agent.resume(thread_id)) to run "
        "both",
        agent=branch_of.name,
        errors={},
    )


def _branch_error(
    branch_of: Agent, child: Agent, exc: Exception, siblings: dict[str, dict[str, Any]]
) -> ParallelBranchError:
    # the finished siblings' output keys (not their messages, status or private channels)
    completed = {
        k: v
        for outputs in siblings.values()
        for k, v in outputs.items()
        if k not in (MESSAGES, AGENT_STATUS) and not is_private(k)
    }
    return ParallelBranchError(
        f"{type(branch_of).__name__} `{branch_of.name}`: branch `{child.name}{FAILED}"
        f"{type(exc).__name__}: {exc}{SAVED} "
        f"({', '.join(sorted(siblings)) or 'none'}); resume the run "
        "(agent.resume(thread_id)) to re-run only the failed branch from its last "
        "checkpoint",
        agent=branch_of.name,
        errors={child.name: f"{type(exc).__name__}: {exc}"},
        completed=completed,
    )
