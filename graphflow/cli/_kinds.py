"""What the CLI asks about agent kinds and drawing formats — the one place to switch.

When strategies answer `result_key` themselves and drawing formats live in one registry, these
two become calls to them; nothing else in the CLI knows either.
"""

from __future__ import annotations

from typing import Any

__all__ = ("DRAW_FORMATS", "result_key")

DRAW_FORMATS = ("mermaid", "dot", "plantuml", "ascii", "json", "html", "svg", "png")
"""The formats `graphflow draw -f` takes (the first is the default)."""


def result_key(agent: Any) -> str | None:
    """The state key that holds `agent`'s result (a merging agent's merged key, else its output)."""
    return getattr(agent, "merged_key", None) or agent.output_key
