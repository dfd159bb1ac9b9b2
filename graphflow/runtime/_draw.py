"""Drawings of an agent tree (LangGraph's own xray Mermaid and JSON until `graphflow.visualize`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphflow.exceptions import GraphflowConfigError
from graphflow.runtime import graphs

if TYPE_CHECKING:
    from graphflow.agents.base import Agent

__all__ = ("draw", "draw_to")


def draw(agent: Agent, format: str = "mermaid", **options: Any) -> str:
    """Draw the graph with nested agents expanded as subgraphs: `mermaid` or `json`."""
    graph = graphs.compiled(agent, False).get_graph(xray=True)
    if format == "mermaid":
        return graph.draw_mermaid()
    if format == "json":
        return json.dumps(graph.to_json(), default=str, indent=2)
    raise GraphflowConfigError(f"draw: unknown format {format!r}; use mermaid or json")


def draw_to(agent: Agent, path: Any, **options: Any) -> Path:
    """Write `draw(agent, <suffix>)` to `path`."""
    target = Path(path)
    fmt = {".mmd": "mermaid", ".json": "json"}.get(target.suffix, target.suffix.lstrip("."))
    target.write_text(draw(agent, fmt, **options))
    return target
