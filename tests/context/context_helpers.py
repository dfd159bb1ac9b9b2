"""Shared helpers for the context-engineering tests: scripted runs with big tool results."""

from __future__ import annotations

from collections.abc import Callable

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.tools import tool

from graphflow.testing import tool_call

RESULT_CHARS = 2140


def big_result(query: str, size: int = RESULT_CHARS) -> str:
    """A deterministic tool result of exactly `size` characters."""
    head = f"Findings for {query}: the Pura X has a 16:10 outer screen.\n"
    filler = "".join(f" fact-{query}-{i}" for i in range(size))
    return (head + filler)[:size]


@tool
def web_search(query: str) -> str:
    """Search the web."""
    return big_result(query)


def rounds_so_far(messages: list[BaseMessage]) -> int:
    """AI messages that called tools, i.e. completed tool rounds in a request."""
    return sum(1 for m in messages if isinstance(m, AIMessage) and m.tool_calls)


def searching(
    rounds: int,
    *,
    tool: str = "web_search",
    query: str = "q{}",
    recall_at: dict[int, str] | None = None,
    answer: str = "done",
) -> Callable[[list[BaseMessage], int], AIMessage | str]:
    """A scripted model's function: round r calls `tool` with `query.format(r)`, or recalls
    `recall_at[r]`; after `rounds` rounds it answers. Rounds are counted in the request, so
    use it with masking only (a summary removes rounds from the request)."""

    def script(messages: list[BaseMessage], n: int) -> AIMessage | str:
        r = rounds_so_far(messages)
        if recall_at and r in recall_at:
            return tool_call("recall_observation", {"id": recall_at[r]})
        return tool_call(tool, {"query": query.format(r)}) if r < rounds else answer

    return script


def next_round(messages: list[BaseMessage], arg: str = "query") -> int:
    """The round a scripted model is at, read from the newest call in its request.

    (Counting rounds in the request would go wrong once older rounds are summarized away.)
    Queries are named `q<round>` or `<round>-<k>`.
    """
    for message in reversed(messages):
        if isinstance(message, AIMessage) and message.tool_calls:
            value = str(message.tool_calls[0]["args"].get(arg, ""))
            digits = value.lstrip("q").split("-")[0]
            if digits.isdigit():
                return int(digits) + 1
    return 0


def placeholders(messages: list[BaseMessage]) -> list[str]:
    return [
        str(m.content)
        for m in messages
        if isinstance(m, ToolMessage) and "graphflow_masked" in m.additional_kwargs
    ]


def shape(requests: list[list[BaseMessage]]) -> list[list[tuple]]:
    """Requests without ids (message and call ids differ between threads)."""
    return [
        [
            (
                m.type,
                str(m.content),
                tuple(
                    (c["name"], str(sorted(c["args"].items())))
                    for c in getattr(m, "tool_calls", []) or []
                ),
            )
            for m in request
        ]
        for request in requests
    ]


FIVE_SECTION_SUMMARY = (
    "## Goal\nFind the Pura X screen facts.\n"
    "## Progress\nSearched several queries.\n"
    "## Key Decisions\nUse web_search only.\n"
    "## Critical Context\nobs_1 holds the first result; screen ratio 16:10.\n"
    "## Next Steps\nWrite the answer."
)
