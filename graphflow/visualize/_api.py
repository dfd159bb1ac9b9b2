"""`draw` / `draw_to`: an agent tree in any registered format (see `graphflow.visualize.formats`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from graphflow.visualize.formats import format_for_path, get_format

if TYPE_CHECKING:
    from graphflow.agents.base import Agent
    from graphflow.visualize.model import Drawing

__all__ = ("build_drawing", "draw", "draw_to")


def build_drawing(
    agent: Agent,
    *,
    xray: bool | int = False,
    dataflow: bool = False,
    thread_id: str | None = None,
    checkpointer: Any = None,
) -> Drawing:
    """The drawing model of `agent`'s tree (what every format renders).

    The tree is validated first, as a run validates it: a tree that cannot run (an unknown
    `{placeholder}`, duplicate names, an agent class without a strategy) is not drawn.

    Args:
        agent: the root of the tree.
        xray: also show each agent's LangGraph nodes (True: every level; an int: that depth).
        dataflow: show which agent writes each key and which instructions read it.
        thread_id: colour the drawing from this run's checkpoints.
        checkpointer: the checkpointer of that run (a saver or URL; default: the agent's).

    Raises:
        GraphflowConfigError: the tree is not valid (what is wrong and how to fix it).
    """
    from graphflow.strategies.builder import FlowGraphBuilder
    from graphflow.visualize._canvas import Canvas

    FlowGraphBuilder().validate(agent)

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


def draw(
    agent: Agent,
    format: str = "mermaid",
    *,
    xray: bool | int = False,
    dataflow: bool = False,
    thread_id: str | None = None,
    checkpointer: Any = None,
) -> str | bytes:
    """Draw `agent`'s tree in a registered format: text (mermaid, dot, ...) or bytes (svg, png).

    Raises:
        GraphflowConfigError: an unknown format, or a tree that is not valid.
        RunNotFoundError: `thread_id` names no run in the checkpointer.
        RendererMissingError: svg/png without Graphviz's `dot` program.
        ImportError: dot/svg/png without the `graphviz` package (`graphflow-agents[viz]`).
    """
    fmt = get_format(format)
    if thread_id is not None and not isinstance(checkpointer, BaseCheckpointSaver):
        # the runtime finds the run's store (a URL, or the agent's default) for reading, without
        # remembering or creating it, and draws through here again with its saver
        return agent.draw(
            format, xray=xray, dataflow=dataflow, thread_id=thread_id, checkpointer=checkpointer
        )
    drawing = build_drawing(
        agent, xray=xray, dataflow=dataflow, thread_id=thread_id, checkpointer=checkpointer
    )
    return fmt.render(drawing)


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
