"""A self-contained HTML viewer: inline SVG drawn by an inline script from the drawing model.

One file, no network (a Content-Security-Policy forbids every fetch): pan (drag) and zoom (wheel),
collapsible nested agents (▾ on a box), and a side panel with an agent's details on click
(kind, instruction template, tools, output_key, hooks, loop and route settings, run state).
The layout is computed in the page, so collapsing a box re-lays the drawing out.
"""

from __future__ import annotations

import html
from importlib import resources

from graphflow.visualize.model import Drawing

__all__ = ("render",)


def _asset(name: str) -> str:
    return resources.files("graphflow.visualize").joinpath("_html", name).read_text("utf-8")


def render(drawing: Drawing) -> str:
    """The drawing as one HTML page."""
    data = drawing.to_json(indent=None)
    # inside <script>, "</script" ends the element and "<!--" changes how the rest is parsed:
    # write <, > and & as \u escapes (the same JSON for JSON.parse)
    data = data.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    title = html.escape(f"{drawing.root} · graphflow")
    return (
        _asset("viewer.html")
        .replace("{{title}}", title)
        .replace("{{style}}", _asset("viewer.css"))
        .replace("{{script}}", _asset("viewer.js"))
        .replace("{{drawing}}", data)
    )
