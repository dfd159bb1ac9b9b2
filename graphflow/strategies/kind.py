"""What graphflow asks an agent kind beyond building it: drawing, details, event roles, run counts.

`FlowGraphBuildingStrategy` inherits `KindDescription`, so a strategy is the one place that
describes its kind. Drawings (`graphflow.visualize`), typed events (`graphflow.events`), the run
overlay and `graphflow show` ask these methods and never look at an agent's class; the built-in
kinds answer them in their own strategy modules, exactly as a kind registered with
`register_strategy` does. Every method has a default that fits a plain kind, so a custom strategy
overrides only what its kind does differently:

```python
class VoteStrategy(FlowGraphBuildingStrategy):
    def build_graph(self, agent, ctx): ...
    def details(self, agent):                      # shown in the drawing's side panel / JSON
        return {"rule": agent.rule}
    def child_role(self, agent, child, task_input):  # events of the judges carry a branch
        return ChildRole(branch=child.name)
    def draw(self, agent, ctx):                    # see graphflow.visualize.context
        ...
```
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from langchain_core.messages import AIMessage, ToolMessage

from graphflow.state import MESSAGES, MODEL_CALLS

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool

    from graphflow.agents.base import Agent
    from graphflow.visualize.context import DrawContext

__all__ = (
    "ChildRole",
    "KindDescription",
    "MODEL_FIELDS",
    "Ports",
    "RunCounts",
    "callable_name",
    "card_label",
    "count_calls",
    "model_name",
)


@dataclass(frozen=True, kw_only=True)
class Ports:
    """Where arrows attach to a drawn agent."""

    entry: str
    """Node id arrows into the agent point to."""
    exit: str
    """Node id arrows out of the agent start from."""
    anchor: str | None = None
    """Node that stands for the agent itself (default: `entry`)."""


@dataclass(frozen=True, kw_only=True)
class ChildRole:
    """What a sub-agent's run is to its parent, as its events say (`Event.branch`, `.iteration`).

    None keeps the parent's own value (a sub-agent of a branch is in that branch).
    """

    branch: str | None = None
    """The branch the sub-agent runs as (parallel branches, a router's concurrent routes)."""
    iteration: int | None = None
    """The pass of the parent's loop the sub-agent runs in."""


@dataclass(frozen=True, kw_only=True)
class RunCounts:
    """What a run's checkpoints say about one agent, for the run overlay (None: not counted)."""

    model_calls: int | None = None
    """Model calls the agent made itself."""
    tool_calls: int | None = None
    """Tool calls the agent made itself."""
    loop_passes: int | None = None
    """Passes of a loop started."""
    outcome: str = ""
    """What the agent did, shown as its detail once it is done (a router: `→ beta`)."""


def callable_name(fn: Any) -> str:
    """A stable, readable name for a function (never its address), for details and labels."""
    name = getattr(fn, "__name__", None) or type(fn).__name__
    return str(name)


def model_name(model: Any) -> str:
    """A model's name for details: the string given, else its `model_name` / `model`."""
    if isinstance(model, str):
        return model
    for attr in ("model_name", "model"):
        value = getattr(model, attr, None)
        if isinstance(value, str) and value:
            return value
    return type(model).__name__


def card_label(agent: Agent, kind_line: str) -> str:
    """A leaf agent's card: its name, a line about its kind, and `→ output_key`."""
    lines = [agent.name, kind_line]
    if agent.output_key:
        lines.append(f"→ {agent.output_key}")
    return "\n".join(lines)


def count_calls(invocations: Sequence[Sequence[Any]]) -> RunCounts:
    """Model and tool calls an agent made, from the checkpoints of its invocations.

    The messages its own steps wrote are read from the steps' writes (so the count holds however
    the conversation channel is stored); the writes saved with an `input` checkpoint are the
    conversation it was handed (earlier agents' answers), not its own.
    """
    seen: set[str] = set()
    model_calls = tool_calls = 0
    for tuples in invocations:
        for tup in tuples:
            if (tup.metadata or {}).get("source") == "input":
                first = _started_after_call(tup.pending_writes or ())
                if first is not None and getattr(first, "id", None) not in seen:
                    seen.add(str(first.id))
                    model_calls += 1
                continue
            for _task, channel, value in tup.pending_writes or ():
                if channel != MESSAGES:
                    continue
                for message in value if isinstance(value, list) else [value]:
                    if getattr(message, "id", None) in seen:
                        continue
                    seen.add(str(getattr(message, "id", None) or id(message)))
                    if isinstance(message, AIMessage):
                        model_calls += 1
                    elif isinstance(message, ToolMessage):
                        tool_calls += 1
    return RunCounts(model_calls=model_calls, tool_calls=tool_calls)


def _started_after_call(writes: Sequence[Any]) -> Any:
    """The reply of a call made before the agent's graph started, from its input's writes.

    A ReAct sub-agent makes its first call in its parent's node and, when that reply does not end
    it, goes on in its graph from the conversation so far, started at `MODEL_CALLS` 1: the reply
    is then the last AI message of its input, not a write of its own steps.
    """
    if not any(channel == MODEL_CALLS and value for _task, channel, value in writes):
        return None
    for _task, channel, value in writes:
        if channel == MESSAGES:
            replies = [m for m in value if isinstance(m, AIMessage)]
            return replies[-1] if replies else None
    return None


MODEL_FIELDS = frozenset({"include_contents", "return_reasoning_contents"})
"""`Agent` fields only an agent that talks to a model uses (flows and functions ignore them)."""


class KindDescription:
    """How graphflow describes one agent kind: the part of a strategy that is not building.

    Mixed into `FlowGraphBuildingStrategy`; override what your kind does differently.
    """

    unused_fields: frozenset[str] = frozenset()
    """Fields of `Agent` this kind ignores (e.g. `MODEL_FIELDS` for a flow): drawings leave
    them out of its details."""

    def children(self, agent: Agent) -> list[Agent]:
        """Sub-agents whose graphs are nested in this one (drawn inside it, run by it)."""
        return agent.sub_agents_list

    def kind_name(self, agent_type: type[Agent]) -> str:
        """The kind's name in drawings, for the class the strategy is registered for.

        Default: the class name without `Agent`, lower case (`MapReduceAgent` → `mapreduce`).
        """
        name = agent_type.__name__
        return (
            name[: -len("Agent")] if name.endswith("Agent") and name != "Agent" else name
        ).lower()

    def output_key(self, agent: Agent) -> str | None:
        """The key the agent writes its own result to (default `agent.output_key`).

        `AgentFinished.output_key` and `graphflow show` report it; a parent collecting results
        asks `result_key`, which defaults to this.
        """
        return agent.output_key

    def tools(self, agent: Agent) -> list[BaseTool]:
        """The tools the agent's model may call (drawn beside it when they run an agent)."""
        return []

    def details(self, agent: Agent) -> dict[str, Any]:
        """The kind's settings shown in drawings (side panel, JSON), JSON-able.

        The settings every agent has (instruction, output_key, hooks, ...) are added by the
        drawing; list only what your kind adds (`{"merge": "dict", "max_concurrency": 4}`).
        """
        return {}

    def draw(self, agent: Agent, ctx: DrawContext) -> Ports:
        """Draw the agent into `ctx` and return where arrows attach.

        Default: its children one after another, or a card for an agent without children.
        `ctx.details` already holds `details(agent)`; see `graphflow.visualize.context`.
        """
        children = self.children(agent)
        if children:
            return ctx.sequence(children)
        card = ctx.card(card_label(agent, ctx.kind))
        return Ports(entry=card, exit=card)

    def child_role(
        self, agent: Agent, child: Agent, task_input: Mapping[str, Any] | None
    ) -> ChildRole:
        """What `child`'s run is to `agent`, for its events (branch, loop pass).

        `task_input` is what the child's task was started with (its state, or None). Default:
        neither (the child keeps `agent`'s own branch and iteration).
        """
        return ChildRole()

    def runs_inline(self, agent: Agent) -> bool:
        """Whether the agent may run as a node of its parent's graph (see `inline`).

        Its custom stream chunks then arrive in its parent's namespace; events attribute them to
        it while it is the one such agent running there.
        """
        return False

    def read_run(self, agent: Agent, invocations: Sequence[Sequence[Any]]) -> RunCounts:
        """The agent's counts in a run, for the run overlay.

        `invocations` holds, per namespace the agent ran in (one per invocation, a loop's body
        one per pass), its `CheckpointTuple`s in checkpoint order. Default: an agent without
        children counts its model and tool calls (`count_calls`); a flow counts nothing itself.
        """
        if self.children(agent):
            return RunCounts()
        return count_calls(invocations)
