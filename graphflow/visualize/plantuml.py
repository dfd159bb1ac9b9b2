"""PlantUML: agents as nested rectangles (a component diagram), the flow as arrows."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from graphflow.visualize._ids import SafeIds
from graphflow.visualize._style import (
    STATUS_COLORS,
    box_title,
    nest,
    node_label,
    shape_of,
    status_of,
)
from graphflow.visualize.model import SCHEMA_VERSION, AgentBox, Drawing, Node

__all__ = ("render",)

# PlantUML's `agent` element is a plain box: rectangles are rounded (skinparam RoundCorner)
_ELEMENTS = {
    "agent": "rectangle",
    "function": "agent",
    "step": "agent",
    "fork": "card",
    "join": "card",
    "decision": "usecase",
    "hook": "card",
    "input": "file",
    "xray": "card",
}
_ARROWS = {"solid": "-->", "dashed": "-[dashed]->", "dotted": "-[dotted]->", "bold": "-[bold]->"}
_EDGE_COLORS = {"loop": "#6a1b9a", "data": "#1565c0", "tool": "#00838f", "xray": "#757575"}


def _text(label: str) -> str:
    """Text for a quoted PlantUML name or an arrow label (PlantUML breaks lines at a literal backslash-n)."""
    return label.replace("\\", "\\\\").replace('"', "'").replace("\n", "\\n")


def render(drawing: Drawing) -> str:
    """The drawing as PlantUML text (`@startuml` … `@enduml`)."""
    ids = SafeIds()
    agents = {a.id: a for a in drawing.agents}
    lines = [
        f"@startuml {drawing.root}",
        f"' graphflow drawing (schema {SCHEMA_VERSION})",
        "skinparam shadowing false",
        "skinparam defaultFontName DejaVu Sans",
        "skinparam defaultFontSize 11",
        "skinparam rectangle {\n  RoundCorner 12\n}",
        "skinparam agent {\n  BorderColor #181818\n}",
        "top to bottom direction",
    ]

    def color(status: str | None) -> str:
        return f" {STATUS_COLORS[status][0]}" if status else ""

    def emit_node(indent: str, node: Node) -> None:
        element = _ELEMENTS.get(shape_of(node, agents), "rectangle")
        label = _text(node_label(drawing, node, agents))
        lines.append(
            f'{indent}{element} "{label}" as {ids(node.id)}{color(status_of(node, agents))}'
        )

    @contextmanager
    def emit_box(indent: str, box: AgentBox) -> Iterator[str]:
        status = box.run.status if box.run else None
        lines.append(
            f'{indent}rectangle "{_text(box_title(box))}" as {ids(box.id, "c")}{color(status)} {{'
        )
        yield indent + "  "
        lines.append(f"{indent}}}")

    nest(drawing, "", emit_node, emit_box)
    for edge in drawing.edges:
        arrow = _ARROWS[edge.style]
        if edge.kind in _EDGE_COLORS:
            style = edge.style if edge.style != "solid" else "plain"
            arrow = f"-[{_EDGE_COLORS[edge.kind]},{style}]->"
        label = f" : {_text(edge.label)}" if edge.label else ""
        lines.append(f"{ids(edge.source)} {arrow} {ids(edge.target)}{label}")
    lines.append("@enduml")
    return "\n".join(lines) + "\n"
