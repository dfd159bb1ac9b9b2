"""Test doubles for graphflow applications: a scripted chat model that never touches a network.

`ScriptedChatModel` is a LangChain `BaseChatModel`. It replies from a list, or from a function of
(messages, call number); it emits tool calls, streams token by token (sync and async), supports
`bind_tools` and `with_structured_output`, can sleep to simulate latency, and records every
request it receives in `.requests`::

    model = ScriptedChatModel(replies=[
        tool_call("search", {"query": "Pura X"}),
        "Pura X has a 16:10 foldable screen.",
    ])

A reply may be a string, an `AIMessage`, a pydantic model or dict (for structured output), the
result of `tool_call(...)`, or an exception instance (raised, to test retries).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.exceptions import OutputParserException
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable, RunnableLambda
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, SkipValidation, ValidationError

__all__ = ("ScriptedChatModel", "tool_call", "tool_calls")

Reply = str | AIMessage | BaseModel | dict[str, Any] | BaseException
ReplyFn = Callable[[list[BaseMessage], int], Reply]

_ids = itertools.count(1)


def tool_calls(*calls: tuple[str, dict[str, Any]], content: str = "") -> AIMessage:
    """An AI reply that requests several tool calls in one turn: `tool_calls(("a", {}), ...)`."""
    return AIMessage(
        content=content,
        tool_calls=[
            {"name": name, "args": dict(args), "id": f"call_{next(_ids)}", "type": "tool_call"}
            for name, args in calls
        ],
    )


def tool_call(name: str, args: dict[str, Any] | None = None, *, content: str = "") -> AIMessage:
    """An AI reply that requests one tool call."""
    return tool_calls((name, args or {}), content=content)


class ScriptedChatModel(BaseChatModel):
    """A chat model that replies from a script and records what it was sent.

    Thread-safe: parallel branches may share one instance; each call takes the next reply.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    # SkipValidation: pydantic would try to coerce each reply into an AIMessage and crash on a
    # pydantic model or exception reply; replies are used exactly as given.
    replies: SkipValidation[Sequence[Reply]] = Field(default_factory=list)
    """Replies returned in order, one per call. Ignored when `fn` is given."""
    fn: ReplyFn | None = None
    """`fn(messages, call_number)` computes each reply; call numbers start at 0."""
    latency: float = 0.0
    """Seconds to wait before each reply (`asyncio.sleep` in async calls, `time.sleep` in sync)."""
    model_name: str = "scripted"
    """Reported in `ls_model_name` and used to pick a tokenizer."""

    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _calls: int = PrivateAttr(default=0)
    _requests: list[list[BaseMessage]] = PrivateAttr(default_factory=list)
    _request_tools: list[list[str]] = PrivateAttr(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "graphflow-scripted"

    @property
    def requests(self) -> list[list[BaseMessage]]:
        """Every message list this model was sent, in call order."""
        return self._requests

    @property
    def request_tools(self) -> list[list[str]]:
        """The names of the tools bound for each request, in call order."""
        return self._request_tools

    @property
    def calls(self) -> int:
        """How many times the model has been called."""
        return self._calls

    def reset(self) -> None:
        """Forget recorded requests and restart the script from its first reply."""
        with self._lock:
            self._calls = 0
            self._requests.clear()
            self._request_tools.clear()

    # -- the script -------------------------------------------------------------------------

    def _next(self, messages: list[BaseMessage], tools: list[Any] | None) -> Reply:
        with self._lock:
            n = self._calls
            self._calls += 1
            self._requests.append(list(messages))
            self._request_tools.append([_tool_name(t) for t in tools or []])
        if self.fn is not None:
            return self.fn(list(messages), n)
        if n >= len(self.replies):
            raise IndexError(
                f"ScriptedChatModel ran out of replies: call {n + 1} but only "
                f"{len(self.replies)} scripted. Last message sent: {messages[-1].content!r}"
                if messages
                else f"ScriptedChatModel ran out of replies at call {n + 1}"
            )
        return self.replies[n]

    def _to_message(self, reply: Reply) -> AIMessage:
        if isinstance(reply, BaseException):
            raise reply
        if isinstance(reply, AIMessage):
            return reply.model_copy(deep=True)
        if isinstance(reply, str):
            return AIMessage(content=reply)
        if isinstance(reply, BaseModel):
            return AIMessage(content=reply.model_dump_json())
        if isinstance(reply, dict):
            return AIMessage(content=json.dumps(reply))
        raise TypeError(f"ScriptedChatModel cannot reply with {type(reply).__name__}")

    # -- BaseChatModel -------------------------------------------------------------------------

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        reply = self._next(messages, kwargs.get("tools"))
        if self.latency:
            time.sleep(self.latency)
        return ChatResult(generations=[ChatGeneration(message=self._to_message(reply))])

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        reply = self._next(messages, kwargs.get("tools"))
        if self.latency:
            await asyncio.sleep(self.latency)
        return ChatResult(generations=[ChatGeneration(message=self._to_message(reply))])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        reply = self._next(messages, kwargs.get("tools"))
        if self.latency:
            time.sleep(self.latency)
        for chunk in _chunks(self._to_message(reply)):
            if run_manager:
                run_manager.on_llm_new_token(str(chunk.message.content), chunk=chunk)
            yield chunk

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        reply = self._next(messages, kwargs.get("tools"))
        if self.latency:
            await asyncio.sleep(self.latency)
        for chunk in _chunks(self._to_message(reply)):
            if run_manager:
                await run_manager.on_llm_new_token(str(chunk.message.content), chunk=chunk)
            yield chunk

    def bind_tools(
        self, tools: Sequence[Any], *, tool_choice: str | None = None, **kwargs: Any
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Bind tools; their names are recorded in `request_tools` for each call."""
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

    def with_structured_output(  # type: ignore[override]
        self, schema: Any, *, include_raw: bool = False, **kwargs: Any
    ) -> Runnable[LanguageModelInput, Any]:
        """Parse each reply (a model, a dict or JSON text) into `schema`."""

        def parse(raw: AIMessage) -> Any:
            try:
                parsed = _parse_structured(schema, raw)
            except (ValidationError, ValueError) as exc:
                if include_raw:
                    return {"raw": raw, "parsed": None, "parsing_error": exc}
                raise OutputParserException(str(exc), llm_output=str(raw.content)) from exc
            return {"raw": raw, "parsed": parsed, "parsing_error": None} if include_raw else parsed

        return self | RunnableLambda(parse)


def _tool_name(tool: Any) -> str:
    if isinstance(tool, dict):
        return str(tool.get("function", {}).get("name", tool.get("name", "?")))
    return str(getattr(tool, "name", tool))


def _chunks(message: AIMessage) -> Iterator[ChatGenerationChunk]:
    """Split a reply into token chunks; tool calls ride on the last chunk."""
    text = message.content if isinstance(message.content, str) else json.dumps(message.content)
    tokens = re.findall(r"\S+\s*|\s+", text) or [""]
    for i, token in enumerate(tokens):
        last = i == len(tokens) - 1
        chunk = AIMessageChunk(
            content=token,
            id=message.id,
            tool_call_chunks=[
                {
                    "name": tc["name"],
                    "args": json.dumps(tc["args"]),
                    "id": tc["id"],
                    "index": j,
                    "type": "tool_call_chunk",
                }
                for j, tc in enumerate(message.tool_calls)
            ]
            if last
            else [],
            chunk_position="last" if last else None,
            usage_metadata=message.usage_metadata if last else None,
        )
        yield ChatGenerationChunk(message=chunk)


def _parse_structured(schema: Any, raw: AIMessage) -> Any:
    text = raw.content if isinstance(raw.content, str) else json.dumps(raw.content)
    data = json.loads(_strip_fences(text))
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        return schema.model_validate(data)
    return data


def _strip_fences(text: str) -> str:
    match = re.search(r"```(?:json)?\s*(.*?)```", text, re.DOTALL)
    return match.group(1) if match else text
