"""Drawings of agent trees, built from the tree itself (not from LangGraph's node list).

`draw(agent, format)` renders one drawing model (`Drawing`, see `graphflow.visualize.model`) as
Mermaid, Graphviz DOT, PlantUML, an ASCII tree, JSON (the model itself), a self-contained HTML
viewer, or SVG/PNG bytes (Graphviz `dot`). Options add the dataflow of state keys, LangGraph's own
nodes (`xray`), and a run's state from its checkpoints (`thread_id`). Custom agent kinds draw
themselves through `DrawContext` (see `graphflow.visualize.context`).
"""

from graphflow.visualize._api import (
    FORMATS,
    SUFFIXES,
    build_drawing,
    draw,
    draw_to,
    format_for_path,
)
from graphflow.visualize.context import DrawContext, DrawingStrategy, Ports
from graphflow.visualize.model import (
    SCHEMA_VERSION,
    AgentBox,
    AgentRun,
    Drawing,
    Edge,
    Node,
)

__all__ = (
    "FORMATS",
    "SCHEMA_VERSION",
    "SUFFIXES",
    "AgentBox",
    "AgentRun",
    "DrawContext",
    "Drawing",
    "DrawingStrategy",
    "Edge",
    "Node",
    "Ports",
    "build_drawing",
    "draw",
    "draw_to",
    "format_for_path",
)
