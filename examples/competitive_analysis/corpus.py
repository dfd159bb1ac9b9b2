"""The bundled product notes (`notes/*.md`) and the search over them that `web_search` runs.

A note is a title line, `aliases:` and `category:` lines, and one fact per `- kind: text` line.
The search scores each note by the query words found in its title and aliases (three points
each) and in its facts (one point each), and returns the best notes' facts as text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

NOTES = Path(__file__).resolve().parent / "notes"
"""The folder of product notes."""

FACT_KINDS = ("spec", "price", "strength", "weakness", "competitor")


@dataclass(frozen=True, kw_only=True)
class Note:
    """One product's notes."""

    product: str
    aliases: tuple[str, ...] = ()
    category: str = ""
    facts: tuple[tuple[str, str], ...] = field(default_factory=tuple)
    """(kind, text) pairs in file order."""

    def names(self) -> str:
        """The title and aliases, lower case."""
        return " ".join((self.product, *self.aliases)).lower()


def parse_note(text: str) -> Note:
    """A `Note` from the text of a notes file."""
    product, aliases, category, facts = "", (), "", []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("# "):
            product = line[2:].strip()
        elif line.startswith("aliases:"):
            aliases = tuple(a.strip() for a in line[8:].split(",") if a.strip())
        elif line.startswith("category:"):
            category = line[9:].strip()
        elif line.startswith("- ") and ":" in line:
            kind, _, fact = line[2:].partition(":")
            if kind.strip() in FACT_KINDS:
                facts.append((kind.strip(), fact.strip()))
    return Note(product=product, aliases=aliases, category=category, facts=tuple(facts))


@cache
def load_notes(folder: Path = NOTES) -> tuple[Note, ...]:
    """Every note in `folder`, by file name."""
    return tuple(
        parse_note(p.read_text(encoding="utf-8"))
        for p in sorted(folder.glob("*.md"))
        if p.name != "README.md"
    )


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower()))


def search_notes(query: str, limit: int = 1, folder: Path = NOTES) -> list[Note]:
    """The notes that best match `query`, best first (empty when no word matches)."""
    wanted = _words(query)
    scored = []
    for note in load_notes(folder):
        score = 3 * len(wanted & _words(note.names()))
        score += len(wanted & _words(" ".join(text for _, text in note.facts)))
        if score:
            scored.append((score, note.product, note))
    scored.sort(key=lambda s: (-s[0], s[1]))
    return [note for _, _, note in scored[:limit]]


def format_results(query: str, notes: list[Note]) -> str:
    """The text the search tool returns: one `- kind: fact` line per fact."""
    head = f"[offline search results for {query!r}]"
    if not notes:
        known = ", ".join(n.product for n in load_notes())
        return f"{head} no product notes match. Products in the notes: {known}."
    blocks = []
    for note in notes:
        lines = [f"product: {note.product} ({note.category})"]
        lines += [f"- {kind}: {text}" for kind, text in note.facts]
        blocks.append("\n".join(lines))
    return head + "\n" + "\n\n".join(blocks)
