"""xray: each agent's LangGraph nodes drawn inside its box, grouped by their `:`-separated ids.

LangGraph names a nested graph's nodes `<node>:<node>:...:<local name>`; a sub-agent is the node
named after it in its parent's graph. The prefixes are matched against agent names only, so no
graphflow node name is assumed, and every level appears however deep the tree is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from graphflow.agents import Agent

if TYPE_CHECKING:
    from graphflow.visualize._canvas import Canvas


def owner_of(root: Agent, segments: list[str]) -> tuple[Agent, list[str]]:
    """The innermost agent named by the segments, and the segments after it.

    A segment that names no sub-agent (a wrapper node of some strategy) is skipped over, so the
    agents below it are still found.
    """
    current, rest = root, list(segments)
    while rest:
        below = {a.name: a for a in current.walk() if a is not current}
        index = next((i for i, s in enumerate(rest) if s in below), None)
        if index is None:
            break
        current = below[rest[index]]
        rest = rest[index + 1 :]
    return current, rest


def add_xray(canvas: Canvas, root: Agent, xray: bool | int) -> None:
    """Add LangGraph's nodes and edges (`get_graph(xray=...)`) as `xray` nodes and edges."""
    graph = root.compile(False).graph.get_graph(xray=xray)
    mapped: dict[str, str] = {}
    for lg_id in graph.nodes:
        owner, rest = owner_of(root, lg_id.split(":"))
        if not rest:  # a sub-agent LangGraph did not expand at this depth: its own node
            mapped[lg_id] = canvas.agents[owner.name].anchor
            continue
        mapped[lg_id] = canvas.add_node(
            f"{owner.name}.xray.{lg_id}", "xray", ":".join(rest), owner.name
        )
    for edge in graph.edges:
        label = "" if edge.data is None else str(edge.data)
        canvas.add_edge(
            mapped[edge.source],
            mapped[edge.target],
            kind="xray",
            label=label,
            style="dashed" if edge.conditional else "dotted",
        )
