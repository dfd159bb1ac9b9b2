"""What every renderer shares: status colours, run-overlay text, titles, the walk over nested boxes."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TypeVar

from graphflow.visualize.model import AgentBox, AgentRun, Drawing, Node

T = TypeVar("T")

STATUS_COLORS: dict[str, tuple[str, str]] = {
    # status: (fill, stroke)
    "done": ("#d4edda", "#2e7d32"),
    "running": ("#cfe2ff", "#0d6efd"),
    "failed": ("#f8d7da", "#c62828"),
    "interrupted": ("#fff3cd", "#e67e00"),
    "not_reached": ("#eeeeee", "#9e9e9e"),
}
STATUS_MARKS = {
    "done": "✔ done",
    "running": "▶ running",
    "failed": "✖ failed",
    "interrupted": "‖ interrupted",
    "not_reached": "○ not reached",
}
KIND_FILL = {"agent": "#ffffff", "hook": "#f3e5f5", "xray": "#f5f5f5", "input": "#e3f2fd"}


def run_text(run: AgentRun | None, *, max_detail: int = 80) -> str:
    """`✔ done (until) · model calls 2 · tool calls 1 · passes 1` — empty without a run.

    `max_detail=0` leaves out the detail (how it ended, the error, what is pending)."""
    if run is None:
        return ""
    head = STATUS_MARKS[run.status]
    if max_detail and run.detail and run.detail not in ("completed", "running"):
        detail = run.detail if len(run.detail) <= max_detail else run.detail[: max_detail - 1] + "…"
        head += f" ({detail})"
    parts = [head]
    if run.model_calls is not None:
        parts.append(f"model calls {run.model_calls}")
    if run.tool_calls is not None:
        parts.append(f"tool calls {run.tool_calls}")
    if run.loop_passes is not None:
        parts.append(f"passes {run.loop_passes}")
    return " · ".join(parts)


def box_title(box: AgentBox, *, one_line: bool = False) -> str:
    """A box's title, with the run line under it (`one_line`: after it, without the detail,
    which the agent inside that failed or waits shows on its own card)."""
    if one_line:
        text = run_text(box.run, max_detail=0)
        return box.label + (f" · {text}" if text else "")
    text = run_text(box.run)
    return box.label + (f"\n{text}" if text else "")


def node_label(drawing: Drawing, node: Node, agents: dict[str, AgentBox]) -> str:
    """A node's label; an agent's card gets its run line."""
    box = agents.get(node.id) if node.kind == "agent" else None
    text = run_text(box.run) if box else ""
    return node.label + (f"\n{text}" if text else "")


def shape_of(node: Node, agents: dict[str, AgentBox]) -> str:
    """The shape a node is drawn as: its kind, except `function` for a FunctionAgent's card (a
    plain step box, where other agents' cards are rounded)."""
    box = agents.get(node.id) if node.kind == "agent" else None
    return "function" if box is not None and box.kind == "function" else node.kind


def status_of(node: Node, agents: dict[str, AgentBox]) -> str | None:
    box = agents.get(node.id) if node.kind == "agent" else None
    return box.run.status if box and box.run else None


def nest(
    drawing: Drawing,
    target: T,
    node: Callable[[T, Node], None],
    box: Callable[[T, AgentBox], AbstractContextManager[T]],
    owner: str | None = None,
) -> None:
    """Visit the drawing as nested boxes, the way mermaid, PlantUML and DOT write them.

    For `owner`'s box (None: the top level): `node(target, n)` for each node drawn in it, then
    for each box in it `with box(target, b) as inner:` and the same walk inside with `inner`
    (an indent, a Graphviz cluster, ...): the context opens and closes the renderer's block.
    """
    nodes, boxes = drawing.members(owner)
    for member in nodes:
        node(target, member)
    for inner_box in boxes:
        with box(target, inner_box) as inner:
            nest(drawing, inner, node, box, inner_box.id)
