"""`draw` / `draw_to`: an agent tree as text (mermaid, dot, plantuml, ascii, json, html) or an image."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from graphflow.exceptions import GraphflowConfigError

if TYPE_CHECKING:
    from graphflow.agents.base import Agent
    from graphflow.visualize.model import Drawing

__all__ = ("FORMATS", "SUFFIXES", "build_drawing", "draw", "draw_to", "format_for_path")

FORMATS = ("mermaid", "dot", "plantuml", "ascii", "json", "html", "svg", "png")
"""Every format `draw` knows; `svg` and `png` are bytes, the others text."""

SUFFIXES = {
    ".mmd": "mermaid",
    ".mermaid": "mermaid",
    ".dot": "dot",
    ".gv": "dot",
    ".puml": "plantuml",
    ".plantuml": "plantuml",
    ".txt": "ascii",
    ".json": "json",
    ".html": "html",
    ".htm": "html",
    ".svg": "svg",
    ".png": "png",
}
"""File suffix -> format, for `draw_to` and `graphflow draw -o`."""


def build_drawing(
    agent: Agent,
    *,
    xray: bool | int = False,
    dataflow: bool = False,
    thread_id: str | None = None,
    checkpointer: Any = None,
) -> Drawing:
    """The drawing model of `agent`'s tree (what every format renders).

    Args:
        agent: the root of the tree.
        xray: also show each agent's LangGraph nodes (True: every level; an int: that depth).
        dataflow: show which agent writes each key and which instructions read it.
        thread_id: colour the drawing from this run's checkpoints.
        checkpointer: the checkpointer of that run (a saver or URL; default: the agent's).
    """
    from graphflow.visualize._canvas import Canvas

    canvas = Canvas()
    canvas.draw_agent(agent, parent=None)
    if xray:
        from graphflow.visualize._xray import add_xray

        add_xray(canvas, agent, xray)
    if dataflow:
        from graphflow.visualize._dataflow import add_dataflow

        add_dataflow(canvas, agent)
    if thread_id is not None:
        from graphflow.visualize._run import run_overlay

        canvas.runs = dict(run_overlay(agent, thread_id, checkpointer))
    return canvas.freeze(agent.name, xray=xray, dataflow=dataflow, thread_id=thread_id)


def _renderer(format: str) -> Callable[[Drawing], str | bytes]:
    if format == "mermaid":
        from graphflow.visualize.mermaid import render as mermaid

        return mermaid
    if format == "dot":
        from graphflow.visualize.dot import render as dot

        return dot
    if format == "plantuml":
        from graphflow.visualize.plantuml import render as plantuml

        return plantuml
    if format == "ascii":
        from graphflow.visualize.ascii import render as ascii_tree

        return ascii_tree
    if format == "json":
        return lambda drawing: drawing.to_json() + "\n"
    if format == "html":
        from graphflow.visualize.html import render as html

        return html
    if format in ("svg", "png"):
        from graphflow.visualize.image import render_image

        return lambda drawing: render_image(drawing, format)
    raise GraphflowConfigError(f"draw: unknown format {format!r}; use one of {', '.join(FORMATS)}")


def draw(
    agent: Agent,
    format: str = "mermaid",
    *,
    xray: bool | int = False,
    dataflow: bool = False,
    thread_id: str | None = None,
    checkpointer: Any = None,
) -> str | bytes:
    """Draw `agent`'s tree: text for mermaid/dot/plantuml/ascii/json/html, bytes for svg/png.

    Raises:
        GraphflowConfigError: an unknown format.
        RunNotFoundError: `thread_id` names no run in the checkpointer.
        RendererMissingError: svg/png without Graphviz's `dot` program.
        ImportError: dot/svg/png without the `graphviz` package (`graphflow-agents[viz]`).
    """
    render = _renderer(format)
    if thread_id is not None and not isinstance(checkpointer, BaseCheckpointSaver):
        # the runtime finds the run's store (a URL, or the agent's default) for reading, without
        # remembering or creating it, and draws through here again with its saver
        return agent.draw(
            format, xray=xray, dataflow=dataflow, thread_id=thread_id, checkpointer=checkpointer
        )
    drawing = build_drawing(
        agent, xray=xray, dataflow=dataflow, thread_id=thread_id, checkpointer=checkpointer
    )
    return render(drawing)


def format_for_path(path: str | Path) -> str:
    """The format a file name asks for (`team.svg` → svg)."""
    suffix = Path(path).suffix.lower()
    if suffix not in SUFFIXES:
        raise GraphflowConfigError(
            f"draw_to: cannot tell the format of {str(path)!r} from its suffix {suffix!r}; use "
            f"one of {', '.join(sorted(SUFFIXES))} or pass format="
        )
    return SUFFIXES[suffix]


def draw_to(
    agent: Agent,
    path: str | Path,
    *,
    format: str | None = None,
    xray: bool | int = False,
    dataflow: bool = False,
    thread_id: str | None = None,
    checkpointer: Any = None,
) -> Path:
    """Write the drawing to `path` (format from its suffix unless given); returns the path."""
    out = Path(path)
    content = draw(
        agent,
        format or format_for_path(out),
        xray=xray,
        dataflow=dataflow,
        thread_id=thread_id,
        checkpointer=checkpointer,
    )
    if isinstance(content, bytes):
        out.write_bytes(content)
    else:
        out.write_text(content, encoding="utf-8")
    return out
