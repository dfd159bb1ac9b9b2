"""Pure functions that turn a conversation into what the model is sent.

A *round* is an AI message that calls tools plus the results that follow it. Observation ids are
the 1-based position of a tool result among the tool results of the agent's checkpointed history
(`obs_1`, `obs_2`, ...), so they are the same on every call and after a resume.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from graphflow.messages import MASK_MARK, RECALL_MARK, SUMMARY_MARK

_SPACES = re.compile(r"\s+")


def text_of(message: BaseMessage) -> str:
    """A message's text (content blocks joined)."""
    content = message.content
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict) and block.get("type") == "text":
            parts.append(str(block.get("text", "")))
    return "\n".join(parts)


def observation_id(ordinal: int) -> str:
    """The observation id of the `ordinal`-th tool result (1-based)."""
    return f"obs_{ordinal}"


def tool_ordinals(history: Sequence[BaseMessage]) -> dict[str, int]:
    """Tool result message id -> its 1-based position among the history's tool results."""
    out: dict[str, int] = {}
    count = 0
    for message in history:
        if isinstance(message, ToolMessage):
            count += 1
            if message.id:
                out[message.id] = count
    return out


def round_starts(messages: Sequence[BaseMessage]) -> list[int]:
    """Indices of the AI messages that call tools."""
    return [i for i, m in enumerate(messages) if isinstance(m, AIMessage) and m.tool_calls]


def region_start(messages: Sequence[BaseMessage]) -> int | None:
    """The first index that may be summarized, or None when there is no tool round yet.

    Pinned before it: the system messages and everything up to the last user/instruction message
    before the first tool round — the task itself stays word for word.
    """
    starts = round_starts(messages)
    if not starts:
        return None
    first = starts[0]
    pinned = 0
    for i in range(first):
        if isinstance(messages[i], SystemMessage | HumanMessage):
            pinned = i + 1
    return pinned


def call_names(messages: Sequence[BaseMessage]) -> dict[str, str]:
    """Tool call id -> tool name, from the AI messages."""
    return {
        str(call["id"]): call["name"]
        for m in messages
        if isinstance(m, AIMessage)
        for call in m.tool_calls
        if call.get("id")
    }


def gist(text: str, limit: int) -> str:
    """The first non-blank line of `text`, whitespace collapsed, cut to `limit` characters."""
    if limit <= 0:
        return ""
    for line in text.splitlines():
        line = _SPACES.sub(" ", line).strip()
        if line:
            return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"
    return ""


def placeholder(tool: str, chars: int, obs_id: str, gist_text: str = "") -> str:
    """`[web_search result (2,140 chars) omitted — recall_observation("obs_17")]` (+ the gist)."""
    text = f'[{tool} result ({chars:,} chars) omitted — recall_observation("{obs_id}")]'
    return f"{text} Gist: {gist_text}" if gist_text else text


@dataclass(frozen=True, kw_only=True)
class Masked:
    """A tool result replaced by a placeholder in the view."""

    obs_id: str
    """Its observation id."""
    original: ToolMessage
    """The message as checkpointed."""
    tool: str
    """The tool's name."""
    stored: bool
    """True when the original is already in the offload store (a recall's own result)."""


def mask(
    messages: Sequence[BaseMessage],
    *,
    keep_last: int,
    min_chars: int,
    gist_chars: int,
    ordinals: dict[str, int],
    keep_tokens: int | None = None,
    cost: Callable[[str], int] | None = None,
) -> tuple[list[BaseMessage], list[Masked]]:
    """Replace the results of all but the newest rounds by placeholders.

    The newest `keep_last` rounds stay whole, as far as their maskable results fit in
    `keep_tokens` tokens (as counted by `cost`; None: no budget); the newest round always stays
    whole. Only results of the checkpointed history (those with an ordinal) of at least
    `min_chars` characters are masked or counted; calls, reasoning and small results stay whole.
    """

    def maskable(message: BaseMessage) -> bool:
        return (
            isinstance(message, ToolMessage)
            and message.id in ordinals
            and MASK_MARK not in message.additional_kwargs
            and len(text_of(message)) >= min_chars
        )

    starts = round_starts(messages)
    protected_from = _kept_from(
        messages, starts, keep_last, keep_tokens, maskable, cost or (lambda text: len(text))
    )
    names = call_names(messages)
    out: list[BaseMessage] = []
    masked: list[Masked] = []
    for index, message in enumerate(messages):
        if index >= protected_from or not maskable(message):
            out.append(message)
            continue
        assert isinstance(message, ToolMessage) and message.id is not None
        recalled = message.additional_kwargs.get(RECALL_MARK)
        obs_id = str(recalled) if recalled else observation_id(ordinals[message.id])
        tool = message.name or names.get(message.tool_call_id, "tool")
        masked.append(Masked(obs_id=obs_id, original=message, tool=tool, stored=bool(recalled)))
        out.append(masked_copy(message, tool, obs_id, gist_chars))
    return out, masked


def masked_copy(message: ToolMessage, tool: str, obs_id: str, gist_chars: int) -> ToolMessage:
    """`message` as sent once masked: its placeholder, marked with its observation id."""
    text = text_of(message)
    return message.model_copy(
        update={
            "content": placeholder(tool, len(text), obs_id, gist(text, gist_chars)),
            "additional_kwargs": {**message.additional_kwargs, MASK_MARK: obs_id},
            "artifact": None,
        }
    )


def _kept_from(
    messages: Sequence[BaseMessage],
    starts: list[int],
    keep_last: int,
    keep_tokens: int | None,
    maskable: Callable[[BaseMessage], bool],
    cost: Callable[[str], int],
) -> int:
    """The index from which results stay whole: the start of the oldest round kept."""
    if not starts:
        return 0
    kept = starts[-keep_last:]
    if keep_tokens is None:
        return kept[0] if len(starts) > keep_last else 0
    # newest first: a round stays whole while the results kept so far fit in the budget
    bounds = [*kept, len(messages)]
    used = 0
    for j in range(len(kept) - 1, -1, -1):
        size = sum(cost(text_of(m)) for m in messages[bounds[j] : bounds[j + 1]] if maskable(m))
        if j < len(kept) - 1 and used + size > keep_tokens:
            return bounds[j + 1]
        used += size
    return kept[0] if len(starts) > keep_last else 0


def summary_message(summary: dict[str, Any]) -> HumanMessage:
    """The marked message that stands for the summarized rounds in the view."""
    rounds = int(summary.get("rounds") or 0)
    header = (
        f"[Summary of earlier work — {rounds} tool round{'s' if rounds != 1 else ''} condensed by "
        "graphflow; their tool results stay available through recall_observation]"
    )
    return HumanMessage(
        content=f"{header}\n\n{summary['text']}",
        additional_kwargs={SUMMARY_MARK: rounds},
        id=f"gf-summary-{summary['through']}",
    )


def apply_summary(
    messages: Sequence[BaseMessage], summary: dict[str, Any] | None
) -> tuple[list[BaseMessage], bool]:
    """Replace the summarized messages (region start through `summary["through"]`) by it."""
    if not summary:
        return list(messages), False
    start = region_start(messages)
    through = next(
        (i for i, m in enumerate(messages) if m.id and m.id == summary.get("through")), None
    )
    if start is None or through is None or through < start:
        return list(messages), False  # the history it summarized is gone (or never was)
    return [*messages[:start], summary_message(summary), *messages[through + 1 :]], True


def choose_cut(messages: Sequence[BaseMessage], keep_last: int) -> tuple[int, int] | None:
    """`(span start, cut)`: summarize `messages[start:cut]`, keep the last `keep_last` rounds.

    The cut is always the start of a round, so no tool call is separated from its results.
    """
    summary_at = next(
        (i for i, m in enumerate(messages) if SUMMARY_MARK in m.additional_kwargs), None
    )
    start = summary_at + 1 if summary_at is not None else region_start(messages)
    if start is None:
        return None
    tail = [i for i in round_starts(messages) if i >= start]
    if keep_last < 1 or len(tail) <= keep_last:
        return None
    cut = tail[-keep_last]
    return (start, cut) if cut > start else None
