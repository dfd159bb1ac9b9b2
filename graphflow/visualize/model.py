"""The drawing model: one description of an agent tree that every format renders.

A `Drawing` is built from the agent tree (never from LangGraph's node list), so what it shows is
what the user declared: agents, flows and their semantics. Its JSON form (`Drawing.to_dict()`,
`draw(agent, "json")`) is stable and versioned by `SCHEMA_VERSION`:

```text
{
  "schema": "graphflow.drawing", "version": 1,
  "root": "<root agent id>",
  "options": {"xray": false|true|<depth>, "dataflow": bool, "thread_id": str|null},
  "agents": [            # every agent, depth first (as_tool agents right after their caller)
    {"id", "name", "kind", "parent", "depth", "label", "description",
     "details": {...},   # kind-specific settings, see `AgentBox.details`
     "children": [ids], "boxed": bool, "entry", "exit", "anchor", "tool_of",
     "run": null | {"status", "detail", "model_calls", "tool_calls", "loop_passes"}}
  ],
  "nodes": [{"id", "kind", "label", "owner"}],   # everything that is drawn as a shape
  "edges": [{"source", "target", "kind", "label", "style"}]
}
```

Ids: a tree agent's id is its name (unique in a tree); an agent reached through a tool made with
`agent.as_tool()` has the id `<caller id>.<name>`; other nodes have ids `<agent id>.<role>`
(`survey.fork`, `mission.before.Audit`, `refine.xray.model`). Agent names are identifiers, so
these ids never collide with an agent's.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

__all__ = (
    "SCHEMA_VERSION",
    "AgentBox",
    "AgentRun",
    "Drawing",
    "Edge",
    "EdgeKind",
    "EdgeStyle",
    "Node",
    "NodeKind",
    "RunStatus",
)

SCHEMA_VERSION = 1
"""Version of the JSON form; bumped on any incompatible change."""

NodeKind = Literal["agent", "fork", "join", "decision", "hook", "input", "step", "xray"]
"""`agent`: a leaf agent's card; `fork`/`join`: where branches split and merge; `decision`: a
router's choice; `hook`: a before/after agent hook; `input`: the run's input (dataflow);
`step`: any other node a custom drawing adds; `xray`: a LangGraph node (xray only)."""

EdgeKind = Literal["flow", "loop", "route", "fallback", "tool", "data", "xray"]
"""`flow`: runs next; `loop`: a loop's back edge; `route`/`fallback`: a router's choices;
`tool`: an agent used as a tool; `data`: an output key read by an instruction; `xray`: a
LangGraph edge."""

EdgeStyle = Literal["solid", "dashed", "dotted", "bold"]
"""How renderers draw an edge."""

RunStatus = Literal["done", "running", "failed", "interrupted", "not_reached"]
"""An agent's state in a run (the run overlay)."""


@dataclass(frozen=True, kw_only=True)
class Node:
    """One shape of the drawing."""

    id: str
    """Unique id (a leaf agent's card has the agent's id)."""
    kind: NodeKind
    """What the shape stands for."""
    label: str
    """Text, lines separated by `\\n`."""
    owner: str | None
    """Id of the agent whose box holds the node (None: outside every agent, e.g. `input`)."""


@dataclass(frozen=True, kw_only=True)
class Edge:
    """One arrow of the drawing."""

    source: str
    """Id of the node it starts at."""
    target: str
    """Id of the node it points to."""
    kind: EdgeKind
    """What it means."""
    label: str = ""
    """Text on the arrow."""
    style: EdgeStyle = "solid"
    """Line style."""


@dataclass(frozen=True, kw_only=True)
class AgentRun:
    """What a run's checkpoints say about one agent (the run overlay)."""

    status: RunStatus
    """`done`, `running`, `failed`, `interrupted` or `not_reached`."""
    detail: str = ""
    """How it ended (`completed`, `until`, `max_iterations`, ..., a router's choice `→ beta`),
    the error of a failed agent, or what an interrupted agent is waiting for."""
    model_calls: int | None = None
    """Model calls made in this thread (None: not known for this kind)."""
    tool_calls: int | None = None
    """Tool calls made in this thread (None: not known for this kind)."""
    loop_passes: int | None = None
    """Loop passes started in this thread (loops only)."""


@dataclass(frozen=True, kw_only=True)
class AgentBox:
    """One agent of the tree, with where it is drawn."""

    id: str
    """Unique id: the name for tree agents, `<caller>.<name>` for as_tool agents."""
    name: str
    """The agent's name."""
    kind: str
    """`react`, `sequential`, `parallel`, `loop`, `routing`, `function`, or a custom kind."""
    parent: str | None
    """Id of the agent whose box holds this one (for an as_tool agent: its caller's)."""
    depth: int
    """1 for the root; an as_tool agent has its caller's depth."""
    label: str
    """Title: name and kind (and `→ output_key`)."""
    description: str = ""
    """The agent's description."""
    details: Mapping[str, Any] = field(default_factory=dict)
    """Kind-specific settings, JSON-able: `instruction`, `reads` (placeholders), `output_key`,
    `hooks` ([{name, kinds}]), `tools` (names), `system_prompt`, `max_iterations`, `until`,
    `exit_loop`, `merge`, `merge_output_key`, `max_concurrency`, `routes`
    ([{name, description}]), `fallback`, `multi`, `max_retries`, `fn`, `writes`, ..."""
    children: tuple[str, ...] = ()
    """Ids of the sub-agents drawn inside this agent's box."""
    boxed: bool = False
    """Drawn as a box (cluster) holding nodes; else the agent is a single card node."""
    entry: str
    """Node where control enters the agent."""
    exit: str
    """Node where control leaves the agent."""
    anchor: str
    """Node that stands for the agent itself (its card, a router's decision, else `entry`)."""
    tool_of: str | None = None
    """For an agent used through `as_tool()`: id of the calling agent."""
    run: AgentRun | None = None
    """Run overlay (when drawn with a `thread_id`)."""


@dataclass(frozen=True, kw_only=True)
class Drawing:
    """The whole drawing: agents, nodes and edges."""

    root: str
    """Id of the root agent."""
    agents: tuple[AgentBox, ...]
    """Every agent, depth first."""
    nodes: tuple[Node, ...]
    """Every shape."""
    edges: tuple[Edge, ...]
    """Every arrow."""
    xray: bool | int = False
    """Whether (or how deep) LangGraph's own nodes are shown."""
    dataflow: bool = False
    """Whether `data` edges are shown."""
    thread_id: str | None = None
    """The run the overlay shows."""

    def agent(self, agent_id: str) -> AgentBox:
        """The agent with this id."""
        for box in self.agents:
            if box.id == agent_id:
                return box
        raise KeyError(f"no agent {agent_id!r} in the drawing of {self.root!r}")

    def node(self, node_id: str) -> Node:
        """The node with this id."""
        for node in self.nodes:
            if node.id == node_id:
                return node
        raise KeyError(f"no node {node_id!r} in the drawing of {self.root!r}")

    def members(self, agent_id: str | None) -> tuple[list[Node], list[AgentBox]]:
        """Nodes and boxed agents drawn directly inside `agent_id`'s box (None: the top level)."""
        nodes = [n for n in self.nodes if n.owner == agent_id]
        boxes = [a for a in self.agents if a.boxed and a.parent == agent_id]
        return nodes, boxes

    def to_dict(self) -> dict[str, Any]:
        """The stable JSON-able form (see the module docstring)."""
        return {
            "schema": "graphflow.drawing",
            "version": SCHEMA_VERSION,
            "root": self.root,
            "options": {"xray": self.xray, "dataflow": self.dataflow, "thread_id": self.thread_id},
            "agents": [_plain(asdict(a)) for a in self.agents],
            "nodes": [asdict(n) for n in self.nodes],
            "edges": [asdict(e) for e in self.edges],
        }

    def to_json(self, *, indent: int | None = 2) -> str:
        """`to_dict()` as JSON text (keys in a fixed order)."""
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value
