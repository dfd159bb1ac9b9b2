"""Scripted demo models for the team: offline, and their replies are built from the notes.

Each is a `ScriptedChatModel` with a reply function that reads what the agent was sent (its
instruction, the tool results) the way a real model would, so a different product gives a
different report, and the reviewer's feedback changes the next draft.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import BaseMessage

from graphflow.messages import is_instruction
from graphflow.testing import ScriptedChatModel, tool_call

NO_NOTES = "no product notes match"


def _instruction(messages: list[BaseMessage]) -> str:
    return next((m.text for m in reversed(messages) if is_instruction(m)), "")


def _between(text: str, start: str, end: str | None = None) -> str:
    _, _, rest = text.partition(start)
    return (rest.partition(end)[0] if end else rest).strip()


def _facts(text: str) -> dict[str, list[str]]:
    facts: dict[str, list[str]] = {}
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("- ") and ":" in line:
            kind, _, fact = line[2:].partition(":")
            facts.setdefault(kind.strip(), []).append(fact.strip())
        elif line.startswith("product:"):
            facts.setdefault("product", []).append(line[8:].strip())
    return facts


def researcher_reply(messages: list[BaseMessage], n: int) -> Any:
    """Search for the product named in the instruction, then summarise what came back."""
    product = _between(_instruction(messages), "Research").rstrip(".") or "product"
    results = [m for m in messages if m.type == "tool"]
    if not results:
        return tool_call("web_search", {"query": product})
    found = results[-1].text
    if NO_NOTES in found:
        return f"No facts found for {product}: {found.split('] ', 1)[-1]}"
    return f"Key facts about {product}:\n" + found.split("\n", 1)[-1]


def writer_reply(messages: list[BaseMessage], n: int) -> str:
    """A Markdown report from the facts in the instruction; a competitors section on request."""
    text = _instruction(messages)
    product = _between(text, "Write a report on ", " from these facts:")
    research = _between(text, "from these facts:", "\nFeedback:")
    feedback = _between(text, "\nFeedback:")
    facts = _facts(research)
    if not facts.get("spec"):
        return (
            f"# {product}: competitive analysis\n\nThe research found no product notes for "
            f"{product}, so there is nothing sourced to compare yet."
        )
    title, _, category = facts.get("product", [product])[0].partition(" (")
    strengths, weaknesses = facts.get("strength", []), facts.get("weakness", [])
    parts = [
        f"# {title}: competitive analysis",
        f"*{category.rstrip(')') or 'product'}*",
        "## Verdict",
        f"Its main draw: {strengths[0] if strengths else 'n/a'}. The catch: "
        f"{weaknesses[0] if weaknesses else 'n/a'}.",
        "## Key specs",
        *(f"- {s}" for s in facts["spec"]),
        *(f"- Price: {p}" for p in facts.get("price", [])),
        "## Strengths",
        *(f"- {s}" for s in strengths),
        "## Weaknesses",
        *(f"- {w}" for w in weaknesses),
    ]
    if "competitor" in feedback.lower():
        parts += ["## Competitors", *(f"- {c}" for c in facts.get("competitor", []))]
    return "\n".join(parts)


def reviewer_reply(messages: list[BaseMessage], n: int) -> str:
    """APPROVE a sourced draft that compares competitors; otherwise say what is missing."""
    draft = _instruction(messages)
    if "no product notes" in draft:
        return "Not yet: the draft has no sourced facts. Add notes for this product first."
    if "## Competitors" not in draft:
        return "Add a competitor comparison section: name the closest rivals and how they differ."
    return "APPROVE"


def demo_models() -> tuple[ScriptedChatModel, ScriptedChatModel, ScriptedChatModel]:
    """Fresh (researcher, writer, reviewer) demo models."""
    return (
        ScriptedChatModel(fn=researcher_reply),
        ScriptedChatModel(fn=writer_reply),
        ScriptedChatModel(fn=reviewer_reply),
    )
