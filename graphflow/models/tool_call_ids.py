"""Tool-call ids that answer one call each: empty, missing and repeated ids get unique ones.

A tool result is matched to its call by id. Servers that send `""`, no id, or the same id for
two calls of one reply (llama.cpp-style templates) would have one result answer both calls (the
second never runs) or fail to build the result at all; each such call gets a fresh
`call_gf_<hex>` id here, before anything runs, and the reply is stored with it.
"""

from __future__ import annotations

import uuid
from typing import Any

from langchain_core.messages import AIMessage

__all__ = ("unique_tool_call_ids",)


def _fresh() -> str:
    return f"call_gf_{uuid.uuid4().hex[:16]}"


def unique_tool_call_ids(message: AIMessage) -> AIMessage:
    """`message` with every tool call (valid or not) holding an id no other call of it holds.

    Returns `message` itself when its ids are already unique, else an updated copy (without
    the provider's raw `additional_kwargs["tool_calls"]`, which hold the old ids).
    """
    calls: list[Any] = list(message.tool_calls)
    invalid: list[Any] = list(message.invalid_tool_calls)
    seen: set[str] = set()
    renamed = False
    for group in (calls, invalid):
        for i, call in enumerate(group):
            current = call.get("id")
            if isinstance(current, str) and current.strip() and current not in seen:
                seen.add(current)
                continue
            fresh = _fresh()
            seen.add(fresh)
            group[i] = {**call, "id": fresh}
            renamed = True
    if not renamed:
        return message
    update: dict[str, Any] = {"tool_calls": calls, "invalid_tool_calls": invalid}
    if "tool_calls" in message.additional_kwargs:
        # the provider's raw calls still hold the old ids; the parsed ones are what is sent back
        kept = {k: v for k, v in message.additional_kwargs.items() if k != "tool_calls"}
        update["additional_kwargs"] = kept
    return message.model_copy(update=update)
