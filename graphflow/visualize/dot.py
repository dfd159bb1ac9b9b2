"""Graphviz DOT: agents as nested clusters, built with the `graphviz` package (quoting is its job)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

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
from graphflow.visualize.model import AgentBox, Drawing, Node

if TYPE_CHECKING:
    import graphviz

__all__ = ("render", "to_graphviz")

_FONT = "DejaVu Sans"
_SHAPES: dict[str, dict[str, str]] = {
    "agent": {"shape": "box", "style": "rounded,filled"},
    "function": {"shape": "box", "style": "filled"},
    "step": {"shape": "box", "style": "filled"},
    "fork": {"shape": "box", "style": "rounded,filled", "fontsize": "9", "fillcolor": "#fafafa"},
    "join": {"shape": "box", "style": "rounded,filled", "fontsize": "9", "fillcolor": "#fafafa"},
    "decision": {"shape": "diamond", "style": "filled", "fillcolor": "#fffde7"},
    "hook": {"shape": "cds", "style": "filled", "fontsize": "9"},
    "input": {"shape": "parallelogram", "style": "filled"},
    "xray": {"shape": "box", "style": "dashed,filled", "fontsize": "9"},
}
_EDGES: dict[str, dict[str, str]] = {
    "flow": {},
    "loop": {"constraint": "false", "color": "#6a1b9a", "fontcolor": "#6a1b9a"},
    "route": {"color": "#795548"},
    "fallback": {"color": "#795548"},
    "tool": {"color": "#00838f", "fontcolor": "#00838f", "constraint": "false"},
    "data": {"color": "#1565c0", "fontcolor": "#1565c0", "constraint": "false"},
    "xray": {"color": "#757575", "fontsize": "8"},
}


def _text(label: str) -> Any:
    # the graphviz package keeps backslash escapes for DOT: escape literal backslashes, then
    # turn line breaks into DOT's centred `\n`. Graphviz reads character entities in every
    # label (`&lt;` would show as `<`), so `&` is written as one; and `nohtml` keeps a label
    # that looks like `<...>` a quoted string (else it is emitted bare, as an HTML-like label,
    # and a route description like `<urgent>` breaks `dot`).
    text = label.replace("\\", "\\\\").replace("\n", "\\n").replace("&", "&amp;")
    return graphviz_module().nohtml(text) if text else text


def graphviz_module() -> Any:
    """The `graphviz` package, or an ImportError that names the extra to install."""
    try:
        import graphviz
    except ImportError as exc:
        raise ImportError(
            'DOT, SVG and PNG drawings need the graphviz package: pip install "graphflow-agents[viz]"'
        ) from exc
    return graphviz


def to_graphviz(drawing: Drawing) -> graphviz.Digraph:
    """The drawing as a `graphviz.Digraph` (render it with `.pipe(format=...)`)."""
    graphviz = graphviz_module()
    ids = SafeIds()
    agents = {a.id: a for a in drawing.agents}
    graph = graphviz.Digraph(
        drawing.root,
        graph_attr={
            "rankdir": "TB",
            "fontname": _FONT,
            "fontsize": "11",
            "newrank": "true",
            "nodesep": "0.3",
            "ranksep": "0.35",
        },
        node_attr={"fontname": _FONT, "fontsize": "10", "fillcolor": "white"},
        edge_attr={"fontname": _FONT, "fontsize": "9"},
    )

    def add_node(target: Any, node: Node) -> None:
        shape = shape_of(node, agents)
        attrs = dict(_SHAPES.get(shape, _SHAPES["step"]))
        if node.kind in KIND_FILL and "fillcolor" not in attrs:
            attrs["fillcolor"] = KIND_FILL[node.kind]
        status = status_of(node, agents)
        if status:
            attrs["fillcolor"], attrs["color"] = STATUS_COLORS[status]
        target.node(ids(node.id), _text(node_label(drawing, node, agents)), **attrs)

    @contextmanager
    def add_box(target: Any, box: AgentBox) -> Iterator[Any]:
        with target.subgraph(name=f"cluster_{ids(box.id, 'c')}") as cluster:
            attrs = {"label": _text(box_title(box)), "style": "rounded", "color": "#607d8b"}
            if box.run is not None:
                fill, stroke = STATUS_COLORS[box.run.status]
                attrs.update(style="rounded,filled", fillcolor=fill, color=stroke)
            cluster.attr(**attrs)
            yield cluster

    nest(drawing, graph, add_node, add_box)
    for edge in drawing.edges:
        attrs = dict(_EDGES.get(edge.kind, {}))
        if edge.style != "solid":
            attrs["style"] = edge.style
        graph.edge(ids(edge.source), ids(edge.target), label=_text(edge.label) or None, **attrs)
    return graph


def render(drawing: Drawing) -> str:
    """The drawing as DOT source text."""
    return str(to_graphviz(drawing).source)
