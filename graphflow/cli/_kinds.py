"""What the CLI asks about agent kinds and drawing formats: the strategies and the format registry.

The CLI starts without LangGraph, so it reads the drawing-format registry only once something
has loaded it (a target that registers its own format, or a test); until then it offers the
built-in formats, and `graphflow draw` checks the format against the registry once the target is
loaded. A kind's result key is its strategy's answer (`output_key`).
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = ("DRAW_FORMATS", "draw_formats", "format_help", "result_key")

DRAW_FORMATS = ("mermaid", "dot", "plantuml", "ascii", "json", "html", "svg", "png")
"""The built-in formats (the first is the default)."""


def draw_formats() -> tuple[str, ...]:
    """The formats `graphflow draw -f` offers: the registry's when loaded, else the built-in ones."""
    formats = sys.modules.get("graphflow.visualize.formats")
    if formats is None:
        return DRAW_FORMATS
    return tuple(formats.registered_formats())


def format_help() -> str:
    """The formats in a line, for `graphflow draw --help`."""
    return ", ".join(f"{n} (default)" if n == DRAW_FORMATS[0] else n for n in draw_formats())


def result_key(agent: Any) -> str | None:
    """The state key that holds `agent`'s result, as its kind's strategy says."""
    from graphflow.strategies.registry import output_key

    return output_key(agent)
