"""A ReAct sub-agent's first model call, made in its parent's node instead of its own subgraph.

A sub-agent without tools and without hooks usually ends after one model call: its whole subgraph
invocation (a second Pregel loop, its channels, three supersteps) would run one model step. So its
parent's node makes that call itself, on exactly the conversation the subgraph would be sent, and
hands back what the subgraph would have returned. When the reply does not end the agent (an empty
reply or a stray tool call to answer, a reply that does not match the output schema), the agent
goes on in its compiled subgraph, started from the conversation so far — the first reply is in
that subgraph's first checkpoint, so every later call is a durable step as before. A task that
runs again after a crash or a failure (LangGraph marks it resuming) skips the inline call and runs
the subgraph, which resumes from its own checkpoints if it had started. When the parent's node
fails after a finished call (a loop's `until` predicate raising), it stores the finished state in
the subgraph first, so the resumed task reads the reply instead of asking again.

Without a `model` task, the call is announced on the `custom` stream (`MODEL_STEP` chunks), which
the typed events turn into the same `ModelStarted` / `ModelFinished` a subgraph's step gives.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableConfig
from langgraph._internal._constants import CONFIG_KEY_RUNTIME
from langgraph.graph import END

from graphflow.state import AGENT_STATUS, MESSAGES, MODEL_CALLS, MODEL_STEP, STOP, merge_dicts
from graphflow.strategies._react_model import ModelStep, route_after_model

if TYPE_CHECKING:
    from graphflow.agents.react import ReactAgent

__all__ = ("InlineModelStep", "runs_inline")

ANSWERED = "answered"
"""`STOP` of a finished state the parent's node stores in the agent's graph: nothing left to do."""

Outcome = tuple[bool, dict[str, Any]]
"""`(done, state)`: the agent's final state, or (not done) the input its subgraph continues from."""


def runs_inline(agent: ReactAgent) -> bool:
    """Whether the agent's first model call may run in its parent's node: no tools, no hooks."""
    return not agent.tools and not agent.call_hooks()


class InlineModelStep:
    """The first model call of one tool-less, hook-less ReAct sub-agent, as `(sent, config)` bodies."""

    def __init__(self, agent: ReactAgent) -> None:
        self.step = ModelStep(agent, [])

    def run(self, sent: dict[str, Any], config: RunnableConfig) -> Outcome:
        """Make the call (sync) unless there is nothing to ask; see `Outcome`."""
        state = self._state(sent)
        if state is None:
            return False, sent
        _announce(config, "sent", state[MESSAGES])
        update = self.step.run(state, config)
        return self._outcome(config, state, update)

    async def arun(self, sent: dict[str, Any], config: RunnableConfig) -> Outcome:
        """Make the call (async) unless there is nothing to ask; see `Outcome`."""
        state = self._state(sent)
        if state is None:
            return False, sent
        _announce(config, "sent", state[MESSAGES])
        update = await self.step.arun(state, config)
        return self._outcome(config, state, update)

    def _state(self, sent: dict[str, Any]) -> dict[str, Any] | None:
        # the state the subgraph's model step would see; None when it would not call the model
        state = {**sent, MODEL_CALLS: 0}
        return state if self.step._before_call(state) is None else None

    def _outcome(
        self, config: RunnableConfig, state: dict[str, Any], update: Mapping[str, Any]
    ) -> Outcome:
        produced = list(update.get(MESSAGES) or ())
        _announce(config, "message", _last_ai(produced))
        after = {**state, **update, MESSAGES: [*state[MESSAGES], *produced]}
        if AGENT_STATUS in update:
            after[AGENT_STATUS] = merge_dicts(state.get(AGENT_STATUS), update[AGENT_STATUS])
        # the subgraph's own router decides: a final answer ends it, anything else asks again
        done = route_after_model(after, done=END, sends=_not_done) == END
        if done and not after.get(STOP):
            # sent to its graph, a finished state ends there without a step (see subagent_node)
            after[STOP] = ANSWERED
        return done, after


def _not_done(state: Mapping[str, Any]) -> str:
    return "tools"


def _last_ai(messages: list[Any]) -> AIMessage | None:
    for message in reversed(messages):
        if isinstance(message, AIMessage):
            return message
    return None


def _announce(config: RunnableConfig, field: str, value: Any) -> None:
    """A `MODEL_STEP` chunk on the custom stream (a no-op when nobody streams it)."""
    configurable = config.get("configurable") or {}
    runtime = configurable.get(CONFIG_KEY_RUNTIME)
    writer = getattr(runtime, "stream_writer", None)
    if writer is not None:
        phase = "start" if field == "sent" else "end"
        writer({MODEL_STEP: phase, "ns": configurable.get("checkpoint_ns", ""), field: value})
