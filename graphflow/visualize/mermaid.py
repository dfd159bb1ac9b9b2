"""Mermaid flowchart: agents as nested subgraphs, the flow as arrows."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from graphflow.visualize._ids import SafeIds
from graphflow.visualize._style import (
    KIND_FILL,
    STATUS_COLORS,
    box_title,
    nest,
    node_label,
    shape_of,
    status_of,
)
from graphflow.visualize.model import SCHEMA_VERSION, AgentBox, Drawing, Node

__all__ = ("render",)

_SHAPES = {
    "agent": ('("', '")'),
    "function": ('["', '"]'),
    "step": ('["', '"]'),
    "fork": ('(["', '"])'),
    "join": ('(["', '"])'),
    "decision": ('{"', '"}'),
    "hook": ('>"', '"]'),
    "input": ('[/"', '"/]'),
    "xray": ('["', '"]'),
}
_ARROWS = {"solid": "-->", "dashed": "-.->", "dotted": "-.->", "bold": "==>"}


def _text(label: str) -> str:
    """Label text safe inside a quoted Mermaid label."""
    out = (
        label.replace("#", "#35;").replace('"', "#quot;").replace("<", "#lt;").replace(">", "#gt;")
    )
    return out.replace("\n", "<br/>")


def render(drawing: Drawing) -> str:
    """The drawing as Mermaid `flowchart` text."""
    ids = SafeIds()
    agents = {a.id: a for a in drawing.agents}
    lines = [f"%% graphflow drawing of {drawing.root} (schema {SCHEMA_VERSION})", "flowchart TB"]
    classes: dict[str, list[str]] = {}
    styles: list[str] = []

    def emit_node(indent: str, node: Node) -> None:
        left, right = _SHAPES.get(shape_of(node, agents), _SHAPES["step"])
        safe = ids(node.id)
        lines.append(f"{indent}{safe}{left}{_text(node_label(drawing, node, agents))}{right}")
        status = status_of(node, agents)
        classes.setdefault(status or node.kind, []).append(safe)

    @contextmanager
    def emit_box(indent: str, box: AgentBox) -> Iterator[str]:
        safe = ids(box.id, "c")
        # Mermaid lays a subgraph out as if its title were one short line
        lines.append(f'{indent}subgraph {safe}["{_text(box_title(box, one_line=True))}"]')
        lines.append(f"{indent}  direction TB")
        yield indent + "  "
        lines.append(f"{indent}end")
        if box.run is not None:
            fill, stroke = STATUS_COLORS[box.run.status]
            styles.append(f"style {safe} fill:{fill},stroke:{stroke}")

    nest(drawing, "  ", emit_node, emit_box)
    link_styles: list[str] = []
    for index, edge in enumerate(drawing.edges):
        label = f'|"{_text(edge.label)}"|' if edge.label else ""
        if edge.kind == "loop":
            # Mermaid's layout ranks by declared direction, and a back edge declared as it runs
            # turns the loop's body upside down; so it is declared forward, arrow at its start
            lines.append(f"  {ids(edge.target)} <{_ARROWS[edge.style]}{label} {ids(edge.source)}")
            link_styles.append(f"  linkStyle {index} marker-end:none")
        else:
            lines.append(f"  {ids(edge.source)} {_ARROWS[edge.style]}{label} {ids(edge.target)}")
            if edge.style == "dotted":  # Mermaid has one broken line: dots set apart from dashes
                link_styles.append(f"  linkStyle {index} stroke-dasharray:1 4")
    for status, (fill, stroke) in STATUS_COLORS.items():
        if status in classes:
            lines.append(f"  classDef {status} fill:{fill},stroke:{stroke}")
    for kind, fill in KIND_FILL.items():
        if kind in classes:
            extra = ",stroke-dasharray:3 3" if kind == "xray" else ""
            lines.append(f"  classDef {kind} fill:{fill}{extra}")
    for name, members in classes.items():
        if name in STATUS_COLORS or name in KIND_FILL:
            lines.append(f"  class {','.join(members)} {name}")
    lines.extend(f"  {s}" for s in styles)
    lines.extend(link_styles)
    return "\n".join(lines) + "\n"
