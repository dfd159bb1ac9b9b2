"""Builds a `Drawing` from an agent tree: each agent drawn by its kind, hooks and tools around it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from graphflow.agents import Agent
from graphflow.exceptions import GraphflowConfigError
from graphflow.hooks.base import AgentHook
from graphflow.strategies.registry import kind_name, strategy_for
from graphflow.visualize._details import common_details
from graphflow.visualize.context import DrawContext, Ports
from graphflow.visualize.model import AgentBox, AgentRun, Drawing, Edge, Node


@dataclass(kw_only=True)
class _Agent:
    agent: Agent
    id: str
    parent: str | None
    depth: int
    tool_of: str | None
    kind: str = ""
    details: dict[str, Any] = field(default_factory=dict)
    children: list[str] = field(default_factory=list)
    ports: Ports | None = None
    title: str = ""

    @property
    def anchor(self) -> str:
        assert self.ports is not None
        return self.ports.anchor or self.ports.entry

    @property
    def exit(self) -> str:
        assert self.ports is not None
        return self.ports.exit


class Canvas:
    """Mutable while drawing; `freeze()` returns the immutable `Drawing`."""

    def __init__(self) -> None:
        self.agents: dict[str, _Agent] = {}
        self.nodes: dict[str, Node] = {}
        self.edges: list[Edge] = []
        self.runs: dict[str, AgentRun] = {}
        self._prefix: dict[str, str] = {}  # agent id -> prefix for the ids of its as_tool agents

    # -- primitives ------------------------------------------------------------------------------

    def add_node(self, node_id: str, kind: Any, label: str, owner: str | None) -> str:
        if node_id in self.nodes:
            raise GraphflowConfigError(
                f"drawing: node id {node_id!r} is used twice; give each ctx.node() of agent "
                f"`{owner}` a distinct role"
            )
        self.nodes[node_id] = Node(id=node_id, kind=kind, label=label, owner=owner)
        return node_id

    def add_card(self, agent_id: str, label: str) -> str:
        # owner is settled in freeze(): the agent's own box if it has one, else its parent's
        return self.add_node(agent_id, "agent", label, agent_id)

    def add_edge(self, source: str, target: str, **data: Any) -> None:
        self.edges.append(Edge(source=source, target=target, **data))

    # -- agents ----------------------------------------------------------------------------------

    def draw_agent(
        self, agent: Agent, *, parent: str | None, tool_of: str | None = None, prefix: str = ""
    ) -> Ports:
        if tool_of is None and parent is not None:
            prefix = self._prefix[parent]  # inside an as_tool agent, ids keep its caller's prefix
        agent_id = prefix + agent.name
        depth = (
            1 if parent is None else self.agents[tool_of or parent].depth + (0 if tool_of else 1)
        )
        entry = _Agent(agent=agent, id=agent_id, parent=parent, depth=depth, tool_of=tool_of)
        self.agents[agent_id] = entry
        self._prefix[agent_id] = prefix
        if parent is not None and tool_of is None:
            self.agents[parent].children.append(agent_id)
        strategy = strategy_for(agent)
        ctx = DrawContext(self, agent, agent_id, kind_name(agent))
        ctx.details.update(strategy.details(agent))
        drawn = strategy.draw(agent, ctx)
        ports = Ports(entry=drawn.entry, exit=drawn.exit, anchor=drawn.anchor or drawn.entry)
        entry.kind, entry.title = ctx.kind, ctx.title()
        entry.details = {**common_details(agent), **ctx.details}
        ports = self._hooks(agent, agent_id, ports)
        entry.ports = ports
        self._tool_agents(strategy.tools(agent), agent_id, parent, ports)
        return ports

    def _hooks(self, agent: Agent, agent_id: str, ports: Ports) -> Ports:
        hooks = [h for h in agent.hooks if isinstance(h, AgentHook)]
        if not hooks:
            return ports
        used: dict[str, int] = {}
        names = []
        for hook in hooks:
            used[hook.name] = used.get(hook.name, 0) + 1
            names.append(hook.name if used[hook.name] == 1 else f"{hook.name}_{used[hook.name]}")
        before = [
            self.add_node(f"{agent_id}.before.{n}", "hook", f"before {n}", agent_id) for n in names
        ]
        after = [
            self.add_node(f"{agent_id}.after.{n}", "hook", f"after {n}", agent_id)
            for n in reversed(names)
        ]
        chain = [*before, ports.entry]
        for a, b in zip(chain, chain[1:], strict=False):
            self.add_edge(a, b, kind="flow")
        chain = [ports.exit, *after]
        for a, b in zip(chain, chain[1:], strict=False):
            self.add_edge(a, b, kind="flow")
        return Ports(entry=before[0], exit=after[-1], anchor=ports.anchor)

    def _tool_agents(
        self, tools: list[Any], agent_id: str, parent: str | None, ports: Ports
    ) -> None:
        """Agents used through `as_tool()` are drawn beside the agent that calls them."""
        for tool in tools:
            inner = getattr(tool, "graphflow_agent", None)
            if not isinstance(inner, Agent):
                continue
            tool_ports = self.draw_agent(
                inner, parent=parent, tool_of=agent_id, prefix=f"{agent_id}."
            )
            self.add_edge(
                ports.anchor or ports.entry,
                tool_ports.entry,
                kind="tool",
                label=f"tool {tool.name}",
                style="dashed",
            )

    # -- result ----------------------------------------------------------------------------------

    def freeze(
        self, root: str, *, xray: bool | int, dataflow: bool, thread_id: str | None
    ) -> Drawing:
        owned = {n.owner for n in self.nodes.values() if n.id != n.owner}
        boxed = {a for a, info in self.agents.items() if info.children or a in owned}
        nodes = []
        for node in self.nodes.values():
            if node.kind == "agent" and node.id == node.owner and node.id not in boxed:
                node = Node(
                    id=node.id, kind=node.kind, label=node.label, owner=self.agents[node.id].parent
                )
            nodes.append(node)
        boxes = []
        for info in self.agents.values():
            assert info.ports is not None
            boxes.append(
                AgentBox(
                    id=info.id,
                    name=info.agent.name,
                    kind=info.kind,
                    parent=info.parent,
                    depth=info.depth,
                    label=info.title,
                    description=info.agent.description,
                    details=info.details,
                    children=tuple(info.children),
                    boxed=info.id in boxed,
                    entry=info.ports.entry,
                    exit=info.ports.exit,
                    anchor=info.ports.anchor or info.ports.entry,
                    tool_of=info.tool_of,
                    run=self.runs.get(info.id),
                )
            )
        return Drawing(
            root=root,
            agents=tuple(boxes),
            nodes=tuple(nodes),
            edges=tuple(self.edges),
            xray=xray,
            dataflow=dataflow,
            thread_id=thread_id,
        )
