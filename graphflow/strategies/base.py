"""The strategy protocol: how one agent kind becomes a LangGraph `StateGraph`."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from typing import TYPE_CHECKING, Any

from langchain_core.messages import AIMessage, BaseMessage

from graphflow.state import build_state_schema
from graphflow.strategies.kind import KindDescription

if TYPE_CHECKING:
    from langgraph.graph import StateGraph

    from graphflow.agents.base import Agent
    from graphflow.strategies.builder import FlowGraphBuilder

__all__ = ("BuildContext", "FlowGraphBuildingStrategy", "final_answer", "input_reads")


@dataclass(frozen=True, kw_only=True)
class BuildContext:
    """What a strategy knows about the tree while building one agent's graph."""

    builder: FlowGraphBuilder
    """The builder: use it to build sub-agents (`builder.child_node`)."""
    keys: frozenset[str]
    """The state keys of this agent's graph: every key of the tree for the root and for agents
    running user code (hooks, functions), else only what the agent and its sub-agents read or
    write — a sub-agent's checkpoints then hold its own data, not a copy of the whole state."""
    tree_keys: frozenset[str] = frozenset()
    """Every state key of the tree (output keys and input keys)."""
    path: tuple[str, ...] = ()
    """Names from the root to this agent."""
    in_loop: bool = False
    """Whether a `LoopAgent` encloses this agent."""
    is_root: bool = False
    """Whether this agent is the root of the tree (its graph is the one users invoke)."""
    extra: Mapping[str, Any] = field(default_factory=dict)
    """Extra schema fields for this agent's graph (private channels)."""

    def schema(self, extra: Mapping[str, Any] | None = None) -> type:
        """This graph's state schema, plus `extra` private channels."""
        return build_state_schema(self.keys, extra={**self.extra, **(extra or {})})

    def child(self, agent: Agent, *, in_loop: bool | None = None) -> BuildContext:
        """The context for a sub-agent."""
        return replace(
            self,
            keys=self.builder.keys_for(agent, self.tree_keys),
            path=(*self.path, agent.name),
            in_loop=self.in_loop if in_loop is None else in_loop,
            is_root=False,
            extra={},
        )


class FlowGraphBuildingStrategy(KindDescription, ABC):
    """Turns one kind of agent into a `StateGraph` running on the tree's shared state.

    Only `build_graph` is required. The other methods describe the agent to the builder (what it
    writes and reads, where its result is) and how its subgraph exchanges state with its parent;
    their defaults fit most agents. What graphflow asks a kind beyond building it (children,
    drawing, details, event roles, run counts) comes from `KindDescription`
    (`graphflow.strategies.kind`). Register a strategy for your own agent class with
    `register_strategy(MyAgent, MyStrategy())`.
    """

    consumes_exit_loop: bool = False
    """True for loops: an `exit_loop` inside stops here and does not reach enclosing agents."""

    @abstractmethod
    def build_graph(self, agent: Agent, ctx: BuildContext) -> StateGraph:
        """Build the agent's uncompiled graph on `ctx.schema()`."""

    def own_writes(self, agent: Agent) -> set[str]:
        """State keys this agent writes itself (not counting sub-agents)."""
        return {agent.output_key} if agent.output_key else set()

    def reads(self, agent: Agent) -> set[str] | None:
        """State keys this agent reads inside its own graph, or None when it may read any key.

        Sub-agents are not counted (the builder adds theirs). The default, None, suits agents that run user code over the state: their graph gets
        every key of the tree. The keys of an agent's instruction are not counted here: its entry
        update is rendered where the agent starts (its parent's node), and the builder makes those
        keys available there. Built-in kinds say what they read, so a sub-agent's graph carries
        only the keys its agents use — and its checkpoints store only those.
        """
        return None

    def result_key(self, agent: Agent) -> str | None:
        """The key holding this agent's result, for parents that collect results.

        Default: `output_key(agent)`, the key it writes its own result to.
        """
        return self.output_key(agent)

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

    def entry_update(
        self, agent: Agent, state: Mapping[str, Any], ctx: BuildContext
    ) -> dict[str, Any]:
        """The state update that starts one invocation of the agent (default: none).

        A ReAct agent's instruction message, a loop's pass counter. graphflow applies it without
        a step of its own: the parent's sub-agent node sends it with the agent's input, the last
        `before_agent` hook node writes it with its own update, and only a root agent without
        hooks gets a `prepare` node for it.
        """
        return {}

    def starts(
        self, agent: Agent, ctx: BuildContext
    ) -> Callable[[Mapping[str, Any]], dict[str, Any]]:
        """`entry_update` for `agent` in `ctx`, as `state -> update` (what a hook node calls)."""
        return partial(self.entry_update, agent, ctx=ctx)

    def inline(self, agent: Agent, ctx: BuildContext) -> tuple[Any, Any] | None:
        """`(sync, async)` node bodies that run the agent in its parent's graph, or None.

        An agent whose whole graph would be one node (a `FunctionAgent` without hooks) runs as a
        node of its parent instead of a subgraph: the same semantics without a second LangGraph
        invocation. The bodies take `(state, config)` and return the agent's update.
        """
        return None

    def inline_step(self, agent: Agent, ctx: BuildContext) -> tuple[Any, Any] | None:
        """`(sync, async)` bodies that run the agent's first step in its parent's node, or None.

        For an agent whose graph usually ends after one step (a ReAct agent without tools or
        hooks): the parent's node runs that step itself instead of invoking the agent's subgraph.
        The bodies take `(sent, config)`, where `sent` is what the subgraph would be sent, and
        return `(done, state)`: the agent's final state (what its graph would return), or — not
        done — the input its compiled graph continues from. A final state sent to the graph must
        end it without a step of its own: when the parent's node fails after a finished step, the
        state is stored that way. A task LangGraph runs again (resume, retry) always runs the
        graph, which resumes from its own checkpoints.
        """
        return None

    def hand_back(self, agent: Agent, new_messages: list[BaseMessage]) -> list[BaseMessage]:
        """Which of the messages the agent produced reach its parent (default: all)."""
        return [_without_tool_calls(m) if _dangling(m, new_messages) else m for m in new_messages]


def input_reads(agent: Agent) -> set[str]:
    """What an agent reading only its instruction needs: the placeholders and declared inputs."""
    return {p.name for p in agent.placeholders()} | set(agent.input_keys)


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
        usage_metadata=getattr(message, "usage_metadata", None),
    )


def _plain_reply(message: AIMessage, agent_name: str) -> bool:
    """Whether `message` is an `AIMessage` named `agent_name` with no tool calls of any kind."""
    return (
        type(message) is AIMessage
        and message.name == agent_name
        and not message.tool_calls
        and not message.invalid_tool_calls
        and "tool_calls" not in message.additional_kwargs
    )


def final_answer(agent_name: str, new_messages: list[BaseMessage]) -> list[BaseMessage]:
    """The agent's last AI message, tagged with its name and stripped of tool calls."""
    for message in reversed(new_messages):
        if isinstance(message, AIMessage):
            if message.tool_calls and not message.text.strip():
                return []  # its last turn only called tools (e.g. exit_loop): nothing to say
            if _plain_reply(message, agent_name):
                return [message]  # already what a copy would be (the common final answer)
            final = _without_tool_calls(message)
            final.name = agent_name
            return [final]
    return []
