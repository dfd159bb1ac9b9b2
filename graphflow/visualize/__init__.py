"""Drawings of agent trees, built from the tree itself (not from LangGraph's node list).

`draw(agent, format)` renders one drawing model (`Drawing`, see `graphflow.visualize.model`) in a
registered format: Mermaid, Graphviz DOT, PlantUML, an ASCII tree, JSON (the model itself), a
self-contained HTML viewer, SVG/PNG bytes (Graphviz `dot`), or one of your own
(`register_format`, see `graphflow.visualize.formats`). Options add the dataflow of state keys,
LangGraph's own nodes (`xray`), and a run's state from its checkpoints (`thread_id`). Every agent
kind draws itself through `DrawContext` (see `graphflow.visualize.context`).
"""

from typing import Any

from graphflow.visualize._api import build_drawing, draw, draw_to
from graphflow.visualize.context import DrawContext, DrawingStrategy, Ports
from graphflow.visualize.formats import (
    Format,
    format_for_path,
    get_format,
    register_format,
    registered_formats,
)
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
    "Format",
    "Node",
    "Ports",
    "build_drawing",
    "draw",
    "draw_to",
    "format_for_path",
    "registered_formats",
    "get_format",
    "register_format",
)


def __getattr__(name: str) -> Any:
    # FORMATS (names) and SUFFIXES (suffix -> name) are read from the registry when asked, so
    # they include formats registered later
    if name == "FORMATS":
        return tuple(registered_formats())
    if name == "SUFFIXES":
        return {s: f.name for f in registered_formats().values() for s in f.suffixes}
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
