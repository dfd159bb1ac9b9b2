"""`CompatibleChatOpenAI`: LangChain's `ChatOpenAI` with the fixes OpenAI-compatible servers need.

What it changes, and only for the request/stream shapes that break elsewhere:

* **max tokens** reach the server in the field it reads: `max_tokens` for every provider but
  OpenAI (langchain-openai always renames it to `max_completion_tokens`, which servers such as
  llama.cpp silently ignore).
* **tool-only AI messages** are sent with `content: ""` instead of `null` when the provider's
  preset says so, or after the server rejected a `null` content once (remembered per model).
* **streamed tool calls** whose chunks all repeat the tool name (llama.cpp) are repaired before
  LangChain concatenates them into `get_weatherget_weather…`; correct streams are untouched.
* **client options** (`base_url`, `api_key`, `max_retries`, `default_headers`, `provider`) that
  arrive as call-time settings are dropped from the request: they were applied when the model
  was built (an agent's `model_settings` configure an `"openai:"` model and are also bound to
  every call). So are other `ChatOpenAI` fields that are no request parameter (`stream_usage`).
* **provider parameters** the OpenAI SDK does not know (vLLM's `repetition_penalty`, `top_k`,
  from settings or `model_kwargs`) travel in `extra_body`, where the SDK sends them as body
  fields, instead of failing with `create() got an unexpected keyword argument`.

Everything else is `ChatOpenAI`: build it with `graphflow.models.openai_model(...)` or directly.
"""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import AsyncIterator, Iterator
from contextvars import ContextVar
from typing import Any, Literal

import openai
from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGenerationChunk, ChatResult
from langchain_openai import ChatOpenAI
from openai.resources.chat.completions import Completions

import graphflow.models._learned as _learned
from graphflow.models.options import CLIENT_OPTIONS
from graphflow.models.presets import ProviderPreset, detect_preset, get_preset

__all__ = ("CompatibleChatOpenAI", "field_names", "repair_tool_names")

# what `chat.completions.create()` takes: any other payload key is a TypeError there
_REQUEST_PARAMS = frozenset(inspect.signature(Completions.create).parameters) - {"self"}

# per stream: tool-call index -> name already received (set by _stream/_astream, read per chunk)
_STREAM_NAMES: ContextVar[dict[int, str] | None] = ContextVar(
    "graphflow_stream_names", default=None
)
_END = object()


class CompatibleChatOpenAI(ChatOpenAI):
    """`ChatOpenAI` that adapts requests and streams to the provider's preset and quirks."""

    provider: str | None = None
    """Preset name (`deepseek`, `ollama`, ...); None: detected from the base URL."""
    string_tool_content: bool | None = None
    """Force (`True`) or forbid (`False`) string content on tool-only AI messages; None: the
    preset's setting, or learned from the server's first rejection."""
    max_tokens_field: Literal["max_tokens", "max_completion_tokens"] | None = None
    """Request field for the token limit; None: the preset's."""

    @property
    def preset(self) -> ProviderPreset:
        """The provider preset in effect."""
        if self.provider:
            return get_preset(self.provider)
        # built without base_url, the SDK client read OPENAI_BASE_URL itself: detect from that
        return detect_preset(_learned.base_url_of(self))

    def _uses_string_content(self) -> bool:
        if self.string_tool_content is not None:
            return self.string_tool_content
        return self.preset.string_tool_content or _learned.needs_string_content(self)

    # -- request shaping -------------------------------------------------------------------------

    def _get_request_payload(
        self, input_: Any, *, stop: list[str] | None = None, **kwargs: Any
    ) -> dict:
        for option in CLIENT_OPTIONS:
            kwargs.pop(option, None)
        payload = super()._get_request_payload(input_, stop=stop, **kwargs)
        if "messages" not in payload:  # the Responses API: nothing to adapt
            return payload
        field = self.max_tokens_field or self.preset.max_tokens_field
        other = "max_completion_tokens" if field == "max_tokens" else "max_tokens"
        if other in payload:
            payload[field] = payload.pop(other)
        if self._uses_string_content():
            for message in payload["messages"]:
                if message.get("role") == "assistant" and message.get("content") is None:
                    message["content"] = ""
        unknown = {k: payload.pop(k) for k in [k for k in payload if k not in _REQUEST_PARAMS]}
        provider = {k: v for k, v in unknown.items() if k not in field_names()}
        if provider:
            payload["extra_body"] = {**provider, **dict(payload.get("extra_body") or {})}
        return payload

    def _learn_string_content(self, exc: Exception, messages: list[BaseMessage]) -> bool:
        """Whether `exc` is a rejection of `content: null` that string content fixes."""
        if self.string_tool_content is not None or self._uses_string_content():
            return False
        if not any(_tool_only(m) for m in messages) or not rejects_null_content(exc):
            return False
        _learned.remember_string_content(self)
        return True

    # -- calls -----------------------------------------------------------------------------------

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        try:
            return super()._generate(messages, stop, run_manager, **kwargs)
        except openai.APIStatusError as exc:
            if not self._learn_string_content(exc, messages):
                raise
        return super()._generate(messages, stop, run_manager, **kwargs)

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        try:
            return await super()._agenerate(messages, stop, run_manager, **kwargs)
        except openai.APIStatusError as exc:
            if not self._learn_string_content(exc, messages):
                raise
        return await super()._agenerate(messages, stop, run_manager, **kwargs)

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        token = _STREAM_NAMES.set({})
        try:
            chunks = super()._stream(messages, stop, run_manager, **kwargs)
            try:
                first = next(chunks, _END)  # the request is sent here
            except openai.APIStatusError as exc:
                if not self._learn_string_content(exc, messages):
                    raise
                chunks = super()._stream(messages, stop, run_manager, **kwargs)
                first = next(chunks, _END)
            if first is not _END:
                yield first  # type: ignore[misc]
                yield from chunks
        finally:
            _restore(token)

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        token = _STREAM_NAMES.set({})
        try:
            chunks = super()._astream(messages, stop, run_manager, **kwargs)
            try:
                first = await anext(chunks, _END)
            except openai.APIStatusError as exc:
                if not self._learn_string_content(exc, messages):
                    raise
                chunks = super()._astream(messages, stop, run_manager, **kwargs)
                first = await anext(chunks, _END)
            if first is not _END:
                yield first  # type: ignore[misc]
                async for chunk in chunks:
                    yield chunk
        finally:
            _restore(token)

    def _convert_chunk_to_generation_chunk(
        self, chunk: dict, default_chunk_class: type, base_generation_info: dict | None
    ) -> ChatGenerationChunk | None:
        seen = _STREAM_NAMES.get()
        if seen is not None:
            repair_tool_names(chunk, seen)
        return super()._convert_chunk_to_generation_chunk(
            chunk, default_chunk_class, base_generation_info
        )


@functools.cache
def field_names() -> frozenset[str]:
    """The names (and aliases) of `CompatibleChatOpenAI`'s fields: its constructor's settings."""
    names: set[str] = set()
    for name, info in CompatibleChatOpenAI.model_fields.items():
        names.add(name)
        if info.alias:
            names.add(info.alias)
    return frozenset(names)


def repair_tool_names(chunk: dict, seen: dict[int, str]) -> None:
    """Drop a streamed tool-call name that repeats the one this stream already gave for its index.

    OpenAI sends a tool call's name once, in its first chunk, and LangChain concatenates the
    `name` of every chunk; servers that repeat it would yield `get_weatherget_weather`.
    """
    for choice in chunk.get("choices") or ():
        for call in (choice.get("delta") or {}).get("tool_calls") or ():
            function = call.get("function") or {}
            name = function.get("name")
            index = call.get("index", 0)
            if not name:
                continue
            if seen.get(index) == name:
                function["name"] = None
            elif index not in seen:
                seen[index] = name


def _tool_only(message: BaseMessage) -> bool:
    return (
        isinstance(message, AIMessage)
        and bool(message.tool_calls or message.invalid_tool_calls)
        and not message.content
    )


_CONTENT = re.compile(r"\bcontent\b", re.IGNORECASE)


def rejects_null_content(exc: BaseException) -> bool:
    """Whether a provider error complains about a message's `content` (e.g. `null` not allowed)."""
    if not isinstance(exc, openai.APIStatusError) or exc.status_code not in (400, 422, 500):
        return False
    return bool(_CONTENT.search(f"{exc.message} {exc.body}"))


def _restore(token: Any) -> None:
    try:
        _STREAM_NAMES.reset(token)
    except ValueError:  # the generator was closed from another context
        _STREAM_NAMES.set(None)
