"""How an agent kind draws itself: `DrawContext`, `Ports`, and the strategy's `draw` method.

Every kind — built-in or registered with `register_strategy` — is drawn by its strategy's
`draw` method (`graphflow.strategies.kind.KindDescription.draw`); a custom kind overrides it:

```python
def draw(self, agent: MyAgent, ctx: DrawContext) -> Ports:
    fork = ctx.node("fork", "map", kind="fork")
    join = ctx.node("reduce", f"reduce: {agent.reduce.__name__}", kind="join")
    for mapper in agent.sub_agents:
        ports = ctx.child(mapper)          # draws the sub-agent (any kind) inside this box
        ctx.edge(fork, ports.entry)
        ctx.edge(ports.exit, join)
    return Ports(entry=fork, exit=join)    # where arrows into / out of this agent attach
```

The default draws an agent with sub-agents as a sequence of them (the strategy's `children`) and
an agent without sub-agents as a card. Either way the agent's kind is the strategy's `kind_name`
(by default its class name without `Agent`, lower case; set `ctx.kind` to change it), its hooks
are drawn around it, and its details hold its common settings (instruction, output_key, hooks)
and the strategy's `details(agent)` (in `ctx.details` when `draw` is called). The built-in kinds
are drawn through this same context, by their own strategies.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from graphflow.exceptions import GraphflowConfigError
from graphflow.strategies.kind import Ports
from graphflow.visualize.model import EdgeKind, EdgeStyle, NodeKind

if TYPE_CHECKING:
    from collections.abc import Sequence

    from graphflow.agents.base import Agent
    from graphflow.visualize._canvas import Canvas

__all__ = ("DrawContext", "DrawingStrategy", "Ports")


@runtime_checkable
class DrawingStrategy(Protocol):
    """What drawing asks of a strategy: its `draw` method (every `FlowGraphBuildingStrategy` has one)."""

    def draw(self, agent: Any, ctx: DrawContext) -> Ports:
        """Draw `agent` into `ctx` and return where arrows attach."""
        ...


class DrawContext:
    """Drawing surface for one agent: its box, its nodes, edges and sub-agents."""

    def __init__(self, canvas: Canvas, agent: Agent, agent_id: str, kind: str) -> None:
        self._canvas = canvas
        self.agent = agent
        """The agent being drawn."""
        self.agent_id = agent_id
        """Its id in the drawing."""
        self.kind = kind
        """Its kind as shown (assign to change it)."""
        self.details: dict[str, Any] = {}
        """Its settings shown in details (JSON-able values); `detail()` adds one."""

    def node(self, role: str, label: str, *, kind: NodeKind = "step") -> str:
        """Add a node inside this agent's box; returns its id (`<agent id>.<role>`)."""
        return self._canvas.add_node(f"{self.agent_id}.{role}", kind, label, self.agent_id)

    def card(self, label: str | None = None) -> str:
        """The agent's own card (a leaf agent is drawn as one); returns its id (the agent's)."""
        return self._canvas.add_card(self.agent_id, label or self.title())

    def edge(
        self,
        source: str,
        target: str,
        *,
        label: str = "",
        kind: EdgeKind = "flow",
        style: EdgeStyle = "solid",
    ) -> None:
        """Add an arrow between two node ids."""
        self._canvas.add_edge(source, target, kind=kind, label=label, style=style)

    def child(self, agent: Agent) -> Ports:
        """Draw a sub-agent (any kind) inside this agent's box."""
        return self._canvas.draw_agent(agent, parent=self.agent_id)

    def sequence(self, agents: Sequence[Agent]) -> Ports:
        """Draw sub-agents one after another, with arrows in order."""
        if not agents:
            raise GraphflowConfigError(
                f"drawing `{self.agent_id}`: ctx.sequence() got no agents; draw a card with "
                "ctx.card() for an agent without sub-agents"
            )
        ports = [self.child(a) for a in agents]
        for before, after in zip(ports, ports[1:], strict=False):
            self.edge(before.exit, after.entry)
        return Ports(entry=ports[0].entry, exit=ports[-1].exit)

    def detail(self, key: str, value: Any) -> None:
        """Show a setting in the agent's details (side panel, JSON)."""
        self.details[key] = value

    def title(self) -> str:
        """`name · kind` (and `→ output_key`)."""
        from graphflow.visualize._details import title

        return title(self.agent.name, self.kind, self.agent.output_key)
