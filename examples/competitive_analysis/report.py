"""The report file: the approved draft, how the run went, and the team drawn with this run.

File names come from the product the user typed, so they are made safe and bounded: letters of
any script are kept (`华为 Pura X` → `华为-pura-x`), the rest becomes `-`, and a long name is cut
and given a short hash of the whole input (two long names that share a start still differ). A
report never replaces another run's report: when the name is taken by another thread's report,
this thread's id is added.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
import unicodedata
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from graphflow import Agent

MAX_SLUG = 48
"""Longest slug (in characters) before it is cut and given a hash."""


def slug(product: str, limit: int = MAX_SLUG) -> str:
    """`Huawei Pura X` -> `huawei-pura-x`; `华为` -> `华为`; bounded, and readable in a file name."""
    text = unicodedata.normalize("NFKC", product).casefold()
    words = re.sub(r"[^\w]+|_", "-", text).strip("-")
    if not words:
        return f"product-{_digest(product)}"
    if len(words) <= limit:
        return words
    return f"{words[: limit - 9].rstrip('-')}-{_digest(product)}"


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:8]


def report_path(folder: str | Path, product: str, thread_id: str) -> Path:
    """Where this thread's report goes: `<folder>/<slug>.md`, unless another run's report is there."""
    path = Path(folder) / f"{slug(product)}.md"
    if not path.exists() or _written_by(path, thread_id):
        return path
    return Path(folder) / f"{slug(product)}-{thread_id.rsplit('-', 1)[-1]}.md"


def _written_by(path: Path, thread_id: str) -> bool:
    try:
        return f"thread `{thread_id}`" in path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False


def write_report(
    agent: Agent,
    state: Mapping[str, Any],
    *,
    thread_id: str,
    checkpointer: Any,
    folder: str | Path = "reports",
    models: str = "",
) -> Path:
    """Write the report of a finished run (atomically: a stop leaves no half file); its path."""
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
            *(["", f"*models: {models}*"] if models else []),
            "",
            "```mermaid",
            str(drawing).rstrip(),
            "```",
            "",
        ]
    )
    path = report_path(folder, product, thread_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".report-", suffix=".md")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return path
