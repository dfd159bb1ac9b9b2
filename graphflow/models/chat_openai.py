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

* **unusable 200 replies** (invalid JSON, an HTML page, no `choices`, a stream that ends
  without a `finish_reason`) are a `BadModelReply`, retried like a server error (`max_retries`
  times, with backoff), then explained as a `ModelServerError`.
* **a missing API key** fails the first call, not the building of the model: loading, drawing
  and validating a team need no credentials.

Everything else is `ChatOpenAI`: build it with `graphflow.models.openai_model(...)` or directly.
Any other `BaseChatOpenAI` (a user's `ChatOpenAI`, an `init_chat_model` result, an
`AzureChatOpenAI`) gets the same behaviour from `compatible(model)`, which agents apply to the
model they are given: a copy whose class is the model's own class with `CompatibleMixin` in
front (same fields, same clients).
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
import logging
import re
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Literal

import openai
from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.messages.tool import InvalidToolCall, invalid_tool_call
from langchain_core.outputs import ChatGenerationChunk, ChatResult
from langchain_openai import ChatOpenAI
from langchain_openai.chat_models.base import BaseChatOpenAI
from openai.resources.chat.completions import Completions
from pydantic import PrivateAttr

import graphflow.models._learned as _learned
from graphflow._internal.text import valid_values
from graphflow.exceptions import BadModelReply
from graphflow.models._api_key import require_api_key
from graphflow.models.options import CLIENT_OPTIONS
from graphflow.models.presets import ProviderPreset, detect_preset, get_preset

__all__ = (
    "CompatibleChatOpenAI",
    "CompatibleMixin",
    "compatible",
    "field_names",
    "repair_tool_names",
)

_log = logging.getLogger("graphflow.models")

# what `chat.completions.create()` takes: any other payload key is a TypeError there
_REQUEST_PARAMS = frozenset(inspect.signature(Completions.create).parameters) - {"self"}


@dataclass
class _Stream:
    """What one stream has shown so far (set by _stream/_astream, updated per chunk)."""

    names: dict[int, str] = field(default_factory=dict)
    """Tool-call index -> the name already received."""
    finished: bool = False
    """Whether a choice carried a `finish_reason`."""
    chunks: int = 0
    """Chunks received."""


_STREAM: ContextVar[_Stream | None] = ContextVar("graphflow_stream", default=None)
_END = object()


def reply_backoff(attempt: int) -> float:
    """Seconds to wait before retrying a bad reply (`attempt` 0 is the first retry)."""
    return min(0.5 * 2**attempt, 8.0)


class CompatibleMixin:
    """The compatibility behaviour, for any `BaseChatOpenAI` class it is put in front of.

    It reads its settings with defaults, so a class without `CompatibleChatOpenAI`'s fields
    (a user's `ChatOpenAI`) gets the preset's behaviour for its base URL.
    """

    @property
    def preset(self) -> ProviderPreset:
        """The provider preset in effect."""
        provider = getattr(self, "provider", None)
        if provider:
            return get_preset(provider)
        # built without base_url, the SDK client read OPENAI_BASE_URL itself: detect from that
        return detect_preset(_learned.base_url_of(self))

    def _uses_string_content(self) -> bool:
        forced = getattr(self, "string_tool_content", None)
        if forced is not None:
            return bool(forced)
        return self.preset.string_tool_content or _learned.needs_string_content(self)

    def _check_key(self) -> None:
        require_api_key(self)

    def _retries(self) -> int:
        """The client's retries (`max_retries`; unset, the SDK's default, which its client has)."""
        retries = getattr(self, "max_retries", None)
        if retries is None:
            retries = getattr(getattr(self, "root_client", None), "max_retries", None)
        return retries if isinstance(retries, int) and retries > 0 else 0

    # -- bad replies are retried like server errors ----------------------------------------------

    def invoke(self, input: Any, config: Any = None, *, stop: Any = None, **kwargs: Any) -> Any:
        """`BaseChatModel.invoke`, retrying a `BadModelReply` up to `max_retries` times."""
        attempts = self._retries() + 1
        for attempt in range(attempts):
            try:
                return super().invoke(input, config, stop=stop, **kwargs)  # type: ignore[misc]
            except BadModelReply as exc:
                exc.attempts = attempt + 1
                if attempt + 1 >= attempts:
                    raise
                _log_retry(self, exc, attempt, attempts)
                time.sleep(reply_backoff(attempt))
        raise AssertionError("unreachable: the last attempt returns or raises")

    async def ainvoke(
        self, input: Any, config: Any = None, *, stop: Any = None, **kwargs: Any
    ) -> Any:
        """Async twin of `invoke`."""
        attempts = self._retries() + 1
        for attempt in range(attempts):
            try:
                return await super().ainvoke(input, config, stop=stop, **kwargs)  # type: ignore[misc]
            except BadModelReply as exc:
                exc.attempts = attempt + 1
                if attempt + 1 >= attempts:
                    raise
                _log_retry(self, exc, attempt, attempts)
                await asyncio.sleep(reply_backoff(attempt))
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _create_chat_result(self, response: Any, generation_info: dict | None = None) -> ChatResult:
        if isinstance(response, str | bytes):
            text = response.decode(errors="replace") if isinstance(response, bytes) else response
            raise BadModelReply("the reply was not JSON", _preview(text))
        refused: list[InvalidToolCall] = []
        if isinstance(response, dict | openai.BaseModel):
            body = response if isinstance(response, dict) else response.model_dump()
            if not body.get("error") and not body.get("choices"):
                raise BadModelReply(
                    "the reply had no choices", _preview(json.dumps(body, default=str))
                )
            if any(
                not isinstance(c, dict) or not isinstance(c.get("message"), dict)
                for c in body.get("choices") or ()
            ):
                raise BadModelReply(
                    "a choice of the reply had no message", _preview(json.dumps(body, default=str))
                )
            body, refused = _without_non_object_arguments(body)
            if refused:
                response = body  # (only then: LangChain reads more than the dict from SDK objects)
        result = super()._create_chat_result(response, generation_info)  # type: ignore[misc]
        for generation in result.generations:
            message = generation.message
            if refused and isinstance(message, AIMessage):
                message.invalid_tool_calls = [*message.invalid_tool_calls, *refused]
            _valid_reply(message)
        return result

    # -- request shaping -------------------------------------------------------------------------

    def _get_request_payload(
        self, input_: Any, *, stop: list[str] | None = None, **kwargs: Any
    ) -> dict:
        for option in CLIENT_OPTIONS:
            kwargs.pop(option, None)
        payload = super()._get_request_payload(input_, stop=stop, **kwargs)  # type: ignore[misc]
        if "messages" not in payload:  # the Responses API: nothing to adapt
            return payload
        field = getattr(self, "max_tokens_field", None) or self.preset.max_tokens_field
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
        forced = getattr(self, "string_tool_content", None)
        if forced is not None or self._uses_string_content():
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
        self._check_key()
        with _bad_json():
            try:
                return super()._generate(messages, stop, run_manager, **kwargs)  # type: ignore[misc]
            except openai.APIStatusError as exc:
                if not self._learn_string_content(exc, messages):
                    raise
            return super()._generate(messages, stop, run_manager, **kwargs)  # type: ignore[misc]

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self._check_key()
        with _bad_json():
            try:
                return await super()._agenerate(messages, stop, run_manager, **kwargs)  # type: ignore[misc]
            except openai.APIStatusError as exc:
                if not self._learn_string_content(exc, messages):
                    raise
            return await super()._agenerate(messages, stop, run_manager, **kwargs)  # type: ignore[misc]

    def _checks_finish(self, kwargs: dict[str, Any]) -> bool:
        """Whether the stream is Chat Completions chunks, which end with a `finish_reason`."""
        if "response_format" in kwargs:  # the SDK's beta stream: events, not chunks
            return False
        uses_responses = getattr(self, "_use_responses_api", None)
        model_kwargs = getattr(self, "model_kwargs", None) or {}
        return not (callable(uses_responses) and uses_responses({**kwargs, **model_kwargs}))

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        self._check_key()
        state = _Stream()
        token = _STREAM.set(state)
        try:
            with _bad_json():
                chunks = super()._stream(messages, stop, run_manager, **kwargs)  # type: ignore[misc]
                try:
                    first = next(chunks, _END)  # the request is sent here
                except openai.APIStatusError as exc:
                    if not self._learn_string_content(exc, messages):
                        raise
                    state = _Stream()
                    _STREAM.set(state)
                    chunks = super()._stream(messages, stop, run_manager, **kwargs)  # type: ignore[misc]
                    first = next(chunks, _END)
                if first is not _END:
                    yield first  # type: ignore[misc]
                    yield from chunks
            if not state.finished and self._checks_finish(kwargs):
                raise _incomplete(state)
        finally:
            _restore(token)

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        self._check_key()
        state = _Stream()
        token = _STREAM.set(state)
        try:
            with _bad_json():
                chunks = super()._astream(messages, stop, run_manager, **kwargs)  # type: ignore[misc]
                try:
                    first = await anext(chunks, _END)
                except openai.APIStatusError as exc:
                    if not self._learn_string_content(exc, messages):
                        raise
                    state = _Stream()
                    _STREAM.set(state)
                    chunks = super()._astream(messages, stop, run_manager, **kwargs)  # type: ignore[misc]
                    first = await anext(chunks, _END)
                if first is not _END:
                    yield first  # type: ignore[misc]
                    async for chunk in chunks:
                        yield chunk
            if not state.finished and self._checks_finish(kwargs):
                raise _incomplete(state)
        finally:
            _restore(token)

    def _convert_chunk_to_generation_chunk(
        self, chunk: dict, default_chunk_class: type, base_generation_info: dict | None
    ) -> ChatGenerationChunk | None:
        state = _STREAM.get()
        if state is not None:
            state.chunks += 1
            repair_tool_names(chunk, state.names)
            if any(
                isinstance(c, dict) and c.get("finish_reason") for c in chunk.get("choices") or ()
            ):
                state.finished = True
        generated = super()._convert_chunk_to_generation_chunk(  # type: ignore[misc]
            chunk, default_chunk_class, base_generation_info
        )
        if generated is not None and _valid_reply(generated.message):
            generated.text = generated.message.text
        return generated


class CompatibleChatOpenAI(CompatibleMixin, ChatOpenAI):
    """`ChatOpenAI` that adapts requests and streams to the provider's preset and quirks."""

    provider: str | None = None
    """Preset name (`deepseek`, `ollama`, ...); None: detected from the base URL."""
    string_tool_content: bool | None = None
    """Force (`True`) or forbid (`False`) string content on tool-only AI messages; None: the
    preset's setting, or learned from the server's first rejection."""
    max_tokens_field: Literal["max_tokens", "max_completion_tokens"] | None = None
    """Request field for the token limit; None: the preset's."""
    _missing_key: str | None = PrivateAttr(default=None)
    """Why the model has no API key (raised by its first call), or None."""


@functools.cache
def _adapted_class(cls: type) -> type:
    """`cls` with `CompatibleMixin` in front (one class per model class)."""
    return type(cls.__name__, (CompatibleMixin, cls), {"__module__": cls.__module__})


def compatible(model: Any) -> Any:
    """`model` with graphflow's OpenAI-compatibility fixes, when it is a `BaseChatOpenAI`.

    Other models, and models that already have them, are returned as they are; a
    `BaseChatOpenAI` becomes a shallow copy (same settings, same HTTP clients) whose class
    puts `CompatibleMixin` in front of its own, so `isinstance(copy, type(model))` holds.
    """
    if isinstance(model, CompatibleMixin) or not isinstance(model, BaseChatOpenAI):
        return model
    copy = model.model_copy()
    object.__setattr__(copy, "__class__", _adapted_class(type(model)))
    return copy


@contextmanager
def _bad_json() -> Iterator[None]:
    """Turn a body that does not parse as JSON into a `BadModelReply`."""
    try:
        yield
    except json.JSONDecodeError as exc:
        raise BadModelReply("the reply was not valid JSON", _preview(f"{exc}: {exc.doc}")) from exc


def _incomplete(state: _Stream) -> BadModelReply:
    if not state.chunks:
        return BadModelReply(
            "the streamed reply held no chunks (an empty body, or a page that is no event "
            "stream, such as a proxy's HTML)"
        )
    return BadModelReply(
        "the streamed reply ended without a finish_reason (the server cut it short, as "
        "llama-cpp-python does when another request arrives)"
    )


def _without_non_object_arguments(body: dict) -> tuple[dict, list[InvalidToolCall]]:
    """`body` without the tool calls whose arguments are JSON but no object, and those calls.

    LangChain parses `"arguments": "[1, 2]"` and then fails to build the message with a raw
    pydantic `ValidationError`; such a call is an invalid tool call instead, which the agent
    answers with an error result (as it answers arguments that are not JSON at all).
    """
    refused: list[InvalidToolCall] = []
    choices = []
    for choice in body.get("choices") or ():
        message = choice["message"]
        kept = []
        for call in message.get("tool_calls") or ():
            function = (call or {}).get("function") or {}
            raw = function.get("arguments")
            try:
                args = json.loads(raw) if isinstance(raw, str) and raw.strip() else {}
            except ValueError:
                args = {}  # not JSON: LangChain makes it an invalid call itself
            if isinstance(args, dict):
                kept.append(call)
                continue
            refused.append(
                invalid_tool_call(
                    name=function.get("name"),
                    args=raw,
                    id=(call or {}).get("id"),
                    error=f"the arguments must be a JSON object, got a {type(args).__name__}",
                )
            )
        choices.append({**choice, "message": {**message, "tool_calls": kept or None}})
    if not refused:
        return body, []
    return {**body, "choices": choices}, refused


def _valid_reply(message: BaseMessage) -> bool:
    """Make a reply's text valid Unicode in place (see `graphflow._internal.text`); whether it changed."""
    changed = False
    content = valid_values(message.content)
    if content is not message.content:
        message.content = content
        changed = True
    for name in ("tool_calls", "invalid_tool_calls", "tool_call_chunks"):
        calls = getattr(message, name, None)
        for call in calls or ():
            args = valid_values(call.get("args"))
            if args is not call.get("args"):
                call["args"] = args
                changed = True
    return changed


def _preview(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else f"{text[:limit]}…"


def _log_retry(model: Any, exc: BadModelReply, attempt: int, attempts: int) -> None:
    _log.warning(
        "model %s at %s: %s; retrying (retry %d of %d)",
        _learned.model_name_of(model),
        _learned.base_url_of(model) or "the default endpoint",
        exc.what,
        attempt + 1,
        attempts - 1,
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
        _STREAM.reset(token)
    except ValueError:  # the generator was closed from another context
        _STREAM.set(None)
