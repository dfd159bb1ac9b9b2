"""The strategy protocol: how one agent kind becomes a LangGraph `StateGraph`."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from langchain_core.messages import AIMessage, BaseMessage

from graphflow.state import build_state_schema

if TYPE_CHECKING:
    from langgraph.graph import StateGraph

    from graphflow.agents.base import Agent
    from graphflow.strategies.builder import FlowGraphBuilder

__all__ = ("BuildContext", "FlowGraphBuildingStrategy")


@dataclass(frozen=True, kw_only=True)
class BuildContext:
    """What a strategy knows about the tree while building one agent's graph."""

    builder: FlowGraphBuilder
    """The builder: use it to build sub-agents (`builder.child_node`)."""
    keys: frozenset[str]
    """Every state key of the tree (output keys and input keys)."""
    path: tuple[str, ...] = ()
    """Names from the root to this agent."""
    in_loop: bool = False
    """Whether a `LoopAgent` encloses this agent."""
    extra: Mapping[str, Any] = field(default_factory=dict)
    """Extra schema fields for this agent's graph (private channels)."""

    def schema(self, extra: Mapping[str, Any] | None = None) -> type:
        """The tree's state schema, plus `extra` private channels for this graph."""
        return build_state_schema(self.keys, extra={**self.extra, **(extra or {})})

    def child(self, agent: Agent, *, in_loop: bool | None = None) -> BuildContext:
        """The context for a sub-agent."""
        return replace(
            self,
            path=(*self.path, agent.name),
            in_loop=self.in_loop if in_loop is None else in_loop,
            extra={},
        )


class FlowGraphBuildingStrategy(ABC):
    """Turns one kind of agent into a `StateGraph` running on the tree's shared state.

    Only `build_graph` is required. The other methods describe the agent to the builder (what it
    writes, where its result is) and how its subgraph exchanges state with its parent; their
    defaults fit most agents. Register a strategy for your own agent class with
    `register_strategy(MyAgent, MyStrategy())`.
    """

    consumes_exit_loop: bool = False
    """True for loops: an `exit_loop` inside stops here and does not reach enclosing agents."""

    @abstractmethod
    def build_graph(self, agent: Agent, ctx: BuildContext) -> StateGraph:
        """Build the agent's uncompiled graph on `ctx.schema()`."""

    def children(self, agent: Agent) -> list[Agent]:
        """Sub-agents whose graphs are nested in this one."""
        return agent.sub_agents_list

    def own_writes(self, agent: Agent) -> set[str]:
        """State keys this agent writes itself (not counting sub-agents)."""
        return {agent.output_key} if agent.output_key else set()

    def result_key(self, agent: Agent) -> str | None:
        """The key holding this agent's result, for parents that collect results."""
        return agent.output_key

    def check_dataflow(
        self, agent: Agent, available: frozenset[str], ctx: BuildContext
    ) -> frozenset[str]:
        """Check placeholders against the keys `available` before this agent runs.

        Returns the keys available after it. The default runs sub-agents in sequence.
        """
        ctx.builder.check_placeholders(agent, available, ctx)
        for child in self.children(agent):
            available = ctx.builder.check(child, available, ctx.child(child))
        return available | self.own_writes(agent)

    def invoke_config(self, agent: Agent) -> dict[str, Any]:
        """Extra run config for this agent's subgraph (e.g. `max_concurrency`)."""
        return {}

    def hand_back(self, agent: Agent, new_messages: list[BaseMessage]) -> list[BaseMessage]:
        """Which of the messages the agent produced reach its parent (default: all)."""
        return [_without_tool_calls(m) if _dangling(m, new_messages) else m for m in new_messages]


def _dangling(message: BaseMessage, messages: list[BaseMessage]) -> bool:
    if not isinstance(message, AIMessage) or not message.tool_calls:
        return False
    answered = {getattr(m, "tool_call_id", None) for m in messages}
    return any(tc["id"] not in answered for tc in message.tool_calls)


def _without_tool_calls(message: BaseMessage) -> BaseMessage:
    kwargs = {k: v for k, v in message.additional_kwargs.items() if k != "tool_calls"}
    return AIMessage(
        content=message.content,
        name=message.name,
        id=message.id,
        additional_kwargs=kwargs,
        response_metadata=message.response_metadata,
    )


def final_answer(agent_name: str, new_messages: list[BaseMessage]) -> list[BaseMessage]:
    """The agent's last AI message, tagged with its name and stripped of tool calls."""
    for message in reversed(new_messages):
        if isinstance(message, AIMessage):
            if message.tool_calls and not message.text.strip():
                return []  # its last turn only called tools (e.g. exit_loop): nothing to say
            final = _without_tool_calls(message)
            final.name = agent_name
            return [final]
    return []
