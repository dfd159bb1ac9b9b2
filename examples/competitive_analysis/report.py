"""The report file: the approved draft, how the run went, and the team drawn with this run."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from graphflow import Agent


def slug(product: str) -> str:
    """`Huawei Pura X` -> `huawei-pura-x` (the report's file name)."""
    return re.sub(r"[^a-z0-9]+", "-", product.lower()).strip("-") or "product"


def write_report(
    agent: Agent,
    state: Mapping[str, Any],
    *,
    thread_id: str,
    checkpointer: Any,
    folder: str | Path = "reports",
) -> Path:
    """Write `<folder>/<product>.md` from a finished run's state; its path."""
    product = str(state["input"])
    ended = state["agent_status"]["refine"]
    verdict = "approved by the reviewer" if ended == "until" else f"not approved (loop: {ended})"
    drawing = agent.draw("mermaid", thread_id=thread_id, checkpointer=checkpointer)
    text = "\n".join(
        [
            str(state["draft_article"]).rstrip(),
            "",
            "---",
            f"*{verdict}; thread `{thread_id}`; last review: "
            f"{str(state.get('review_feedback', '')).strip()!r}*",
            "",
            "```mermaid",
            str(drawing).rstrip(),
            "```",
            "",
        ]
    )
    path = Path(folder) / f"{slug(product)}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path
