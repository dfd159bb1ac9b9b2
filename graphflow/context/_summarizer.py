"""The summarizer: a bounded, chunked, map-reduce call of a chat model into five sections.

The summarizer's own input never exceeds its budget: the transcript is packed into chunks that
fit (a message longer than a chunk is split, never silently cut); each chunk is summarized; the
partial summaries — and the previous summary, when there is one — are merged, in chunks again
if need be (summaries of summaries), until one remains.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Sequence

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from graphflow.context._view import call_names, text_of
from graphflow.context.tokens import TokenCounter
from graphflow.messages import MASK_MARK, SUMMARY_MARK, is_instruction

SECTIONS = ("Goal", "Progress", "Key Decisions", "Critical Context", "Next Steps")

SYSTEM_PROMPT = """You condense the working history of an AI agent so it can continue its task \
with less context. Write a summary with exactly these five Markdown sections, in this order:

## Goal
The task the agent was given, in the user's own terms.
## Progress
What has been done so far and what each step found.
## Key Decisions
Choices made and why; approaches that failed and must not be repeated.
## Critical Context
Exact facts needed later: file paths, names, identifiers, URLs, numbers and figures, and the \
observation ids (obs_N) of tool results worth recalling with recall_observation.
## Next Steps
What remains to be done; say so plainly if the task looks complete.

Be specific and factual. Do not invent anything that is not in the history."""

_HEADING = re.compile(
    r"^\s{0,3}(?:#{1,6}\s*|\*\*)\s*([A-Za-z][A-Za-z ]+?)\s*:?\s*(?:\*\*)?\s*:?\s*$"
)

Invoke = Callable[[list[BaseMessage]], AIMessage]
log = logging.getLogger("graphflow.context")


def render(messages: Sequence[BaseMessage], observation_ids: dict[str, str]) -> list[str]:
    """One transcript entry per message (system messages are left out)."""
    names = call_names(messages)
    entries: list[str] = []
    for message in messages:
        text = text_of(message)
        if isinstance(message, SystemMessage):
            continue
        if isinstance(message, ToolMessage):
            tool = message.name or names.get(message.tool_call_id, "tool")
            obs = observation_ids.get(message.id or "") or message.additional_kwargs.get(MASK_MARK)
            label = f"Result of {tool}" + (f" ({obs}, recallable)" if obs else "")
            entries.append(f"{label}: {text}")
        elif isinstance(message, AIMessage):
            calls = "".join(
                f"\n  -> calls {c['name']}({json.dumps(c.get('args', {}), default=str)})"
                for c in message.tool_calls
            )
            entries.append(f"Assistant: {text}{calls}")
        elif SUMMARY_MARK in message.additional_kwargs:
            entries.append(f"Earlier summary:\n{text}")
        elif is_instruction(message):
            entries.append(f"Instruction: {text}")
        else:
            entries.append(f"User: {text}")
    return entries


def normalize(text: str) -> str:
    """`text` with exactly the five sections, in order (a missing one says so)."""
    found: dict[str, list[str]] = {}
    current: str | None = None
    preamble: list[str] = []
    for line in text.strip().splitlines():
        match = _HEADING.match(line)
        title = match.group(1).strip().lower() if match else None
        section = next((s for s in SECTIONS if title == s.lower()), None)
        if section is not None:
            current = section
            found.setdefault(section, [])
        elif current is None:
            preamble.append(line)
        else:
            found[current].append(line)
    if not found:  # free text: keep it all as the progress made
        found["Progress"] = preamble
    elif any(line.strip() for line in preamble):
        found.setdefault("Progress", [])[:0] = preamble
    parts = []
    for section in SECTIONS:
        body = "\n".join(found.get(section, [])).strip() or "(not stated)"
        parts.append(f"## {section}\n{body}")
    return "\n\n".join(parts)


CUT_NOTE = "… [cut to fit the context window]"


def fit(text: str, counter: TokenCounter, max_tokens: int) -> str:
    """`text` within `max_tokens`: each of its sections cut to an equal share, headings kept.

    A summarizer may answer at any length; what it returns must still fit the window it was
    meant to relieve. Cutting per section (not the tail) keeps the five sections, so Next Steps
    survives a runaway Progress.
    """
    if len(text) <= max_tokens or counter.count_text(text) <= max_tokens:
        return text  # (a token is at least one character)
    lines = text.splitlines()
    starts = [i for i, line in enumerate(lines) if _HEADING.match(line)] or [0]
    if starts[0] != 0:
        starts.insert(0, 0)
    sections = [lines[a:b] for a, b in zip(starts, [*starts[1:], len(lines)], strict=True)]
    note = counter.count_text(CUT_NOTE)
    headings = [s[0] if s and _HEADING.match(s[0]) else "" for s in sections]
    spare = max_tokens - sum(counter.count_text(h) + 2 for h in headings) - note * len(sections)
    share = max(1, spare // len(sections))
    parts: list[str] = []
    for heading, section in zip(headings, sections, strict=True):
        body = "\n".join(section[1:] if heading else section).strip()
        if counter.count_text(body) > share:
            body = counter.truncate(body, share).rstrip() + CUT_NOTE
        parts.append(f"{heading}\n{body}" if heading else body)
    cut = "\n\n".join(parts)
    # (a budget too small for the headings themselves: cut the whole text)
    if counter.count_text(cut) > max_tokens:
        cut = counter.truncate(text, max(1, max_tokens - note - 2)).rstrip() + CUT_NOTE
    return cut


class Summarizer:
    """Summarizes a transcript within a token budget per call."""

    def __init__(self, invoke: Invoke, counter: TokenCounter, budget: int) -> None:
        self.invoke = invoke
        self.counter = counter
        self.budget = max(budget, 256)
        self.calls = 0

    def _call(self, request: str) -> str:
        self.calls += 1
        reply = self.invoke([SystemMessage(content=SYSTEM_PROMPT), HumanMessage(content=request)])
        text = text_of(reply).strip()
        if not text:
            raise ValueError("the summarizer returned an empty reply")
        return text

    def _room(self) -> int:
        return self.budget - self.counter.count_text(SYSTEM_PROMPT) - 64

    def _split(self, entry: str, room: int) -> list[str]:
        pieces: list[str] = []
        rest = entry
        while rest:
            piece = self.counter.truncate(rest, room)
            if not piece:  # a single character over budget: take it anyway
                piece = rest[:1]
            pieces.append(piece)
            rest = rest[len(piece) :]
        return pieces

    def _pack(self, items: list[str], room: int) -> list[list[str]]:
        groups: list[list[str]] = []
        size = 0
        for item in items:
            cost = self.counter.count_text(item) + 2
            if groups and size + cost <= room:
                groups[-1].append(item)
                size += cost
            else:
                groups.append([item])
                size = cost
        return groups

    def summarize(self, previous: str | None, entries: list[str]) -> str:
        """One summary of `previous` (if any) and the transcript `entries`."""
        room = self._room()
        pieces = [p for e in entries for p in self._split(e, room)]
        if previous:
            whole = f"Earlier summary:\n{previous}\n\nWhat happened since:\n" + "\n\n".join(pieces)
            if self.counter.count_text(whole) <= room:
                return normalize(self._call(whole))
        partials = [
            self._call("Conversation to summarize:\n" + "\n\n".join(group))
            for group in self._pack(pieces, room)
        ]
        items = ([previous] if previous else []) + partials
        while len(items) > 1:
            groups = self._pack(items, room)
            if len(groups) == len(items):  # every item fills a chunk: shorten them so two fit
                log.warning(
                    "summaries of %d chunks are each too long to merge within %d tokens; "
                    "shortening them",
                    len(items),
                    self.budget,
                )
                items = [self.counter.truncate(i, room // 2 - 2) for i in items]
                groups = self._pack(items, room)
            items = [
                self._call(
                    "Partial summaries of one history, oldest first; merge them into one:\n\n"
                    + "\n\n---\n\n".join(group)
                )
                if len(group) > 1
                else group[0]
                for group in groups
            ]
        return normalize(items[0])
