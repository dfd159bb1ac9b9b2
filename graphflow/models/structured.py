"""Structured output that works on every OpenAI-compatible server, and the ReAct model call.

Methods (`structured_output=` on `ReactAgent` and `LlmRoutingAgent`):

* `json_schema` — `response_format: {"type": "json_schema", ...}` (OpenAI, vLLM, Ollama).
* `function_calling` — the schema is offered as a tool the model must call.
* `json_mode` — `response_format: {"type": "json_object"}` plus the schema in the prompt.
* `prompt` — the schema in the prompt only; the reply's JSON is validated (works everywhere).
* `auto` (default) — for OpenAI-compatible models, the provider preset's methods best first;
  when the server rejects one (an error naming `response_format`, `tools` or `tool_choice`) the
  next is tried and the one that worked is remembered for that model. For other LangChain chat
  models: `prompt` in a ReAct agent, the model's own `with_structured_output` in a router.

`response_format` travels in `extra_body`, so langchain-openai sends a plain
`chat.completions.create` (its `parse()` path needs strict tools and an OpenAI-shaped reply).
"""

from __future__ import annotations

import json
import logging
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, TypeVar, get_args

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from pydantic import BaseModel

import graphflow.models._learned as _learned
from graphflow.exceptions import GraphflowConfigError
from graphflow.models.errors import is_format_rejection
from graphflow.models.presets import detect_preset
from graphflow.models.timeout import acall_with_timeout, call_with_timeout

__all__ = (
    "STRUCTURED_OUTPUT_METHODS",
    "StructuredOutput",
    "ainvoke_chat",
    "ainvoke_structured",
    "invoke_chat",
    "invoke_structured",
    "parse_structured",
    "schema_note",
    "structured_methods",
)

StructuredOutput = Literal["auto", "json_schema", "function_calling", "json_mode", "prompt"]
"""How an agent asks for structured output; see the module docstring."""
STRUCTURED_OUTPUT_METHODS: tuple[str, ...] = get_args(StructuredOutput)

M = TypeVar("M", bound=BaseModel)
_log = logging.getLogger("graphflow.models")
_NATIVE = "native"  # the model's own with_structured_output (non-OpenAI models in a router)


def _openai_compatible(model: Any) -> bool:
    # not imported yet means no model can be one: teams on other models never load langchain-openai
    base = sys.modules.get("langchain_openai.chat_models.base")
    return base is not None and isinstance(model, base.BaseChatOpenAI)


def structured_methods(
    model: Any, requested: str = "auto", *, otherwise: str = "prompt"
) -> tuple[str, ...]:
    """The methods a call tries, in order: the requested one, or `auto`'s plan for `model`.

    `otherwise` is `auto`'s method for models that are not OpenAI-compatible.
    """
    if requested not in STRUCTURED_OUTPUT_METHODS:
        raise GraphflowConfigError(
            f"structured_output={requested!r}; expected one of "
            f"{', '.join(STRUCTURED_OUTPUT_METHODS)}"
        )
    if requested != "auto":
        return (requested,)
    if not _openai_compatible(model):
        return (otherwise,)
    preset = getattr(model, "preset", None) or detect_preset(_learned.base_url_of(model))
    plan = tuple(preset.structured_output)
    learned = _learned.learned_method(model)
    if learned in plan:
        plan = plan[plan.index(learned) :]
    return plan


def schema_note(schema: type[BaseModel]) -> str:
    """The instruction that asks for a JSON reply (the test server and humans can read it)."""
    return (
        "When you give your final answer, reply with only a JSON object matching this JSON "
        f"schema: {json.dumps(schema.model_json_schema())}"
    )


def _response_format(schema: type[BaseModel], method: str) -> dict[str, Any]:
    if method == "json_mode":
        return {"type": "json_object"}
    return {
        "type": "json_schema",
        "json_schema": {
            "name": schema.__name__,
            "schema": schema.model_json_schema(),
            "strict": False,
        },
    }


def _prepare(
    model: Any,
    tools: Sequence[Any],
    settings: Mapping[str, Any] | None,
    schema: type[BaseModel] | None,
    method: str,
) -> Any:
    """`model` with its tools, settings and the method's request fields bound."""
    kwargs: dict[str, Any] = dict(settings or {})
    offered = list(tools)
    tool_choice: str | None = None
    if schema is not None and method == "function_calling":
        offered.append(schema)
        # with real tools the model may call them first; the schema tool ends the turn
        tool_choice = "required" if tools else schema.__name__
    if schema is not None and method in ("json_schema", "json_mode"):
        response_format = _response_format(schema, method)
        if _openai_compatible(model):
            kwargs["extra_body"] = {
                **dict(getattr(model, "extra_body", None) or {}),
                **dict(kwargs.get("extra_body") or {}),
                "response_format": response_format,
            }
        else:
            kwargs["response_format"] = response_format
    runnable: Any = model
    if offered:
        runnable = (
            model.bind_tools(offered, tool_choice=tool_choice)
            if tool_choice
            else model.bind_tools(offered)
        )
    if kwargs:
        runnable = runnable.bind(**kwargs)
    return runnable


def _prepared(
    cache: dict[str, Any] | None,
    model: Any,
    tools: Sequence[Any],
    settings: Mapping[str, Any] | None,
    schema: type[BaseModel] | None,
    method: str,
) -> Any:
    """`_prepare`, looked up in (and added to) a caller's cache keyed by method."""
    if cache is None:
        return _prepare(model, tools, settings, schema, method)
    runnable = cache.get(method)
    if runnable is None:
        runnable = cache[method] = _prepare(model, tools, settings, schema, method)
    return runnable


def _finish(reply: Any, schema: type[BaseModel] | None, method: str) -> AIMessage:
    message = reply if isinstance(reply, AIMessage) else AIMessage(content=str(reply))
    if schema is None or method != "function_calling":
        return message
    ours = [tc for tc in message.tool_calls if tc["name"] == schema.__name__]
    if not ours:
        return message
    others = [tc for tc in message.tool_calls if tc["name"] != schema.__name__]
    if others:
        # the model also wants real tools: run them; it answers through the schema tool later
        kept = {k: v for k, v in message.additional_kwargs.items() if k != "tool_calls"}
        return message.model_copy(update={"tool_calls": others, "additional_kwargs": kept})
    # the schema tool's arguments are the answer: a plain final message, no dangling tool call
    return AIMessage(
        content=json.dumps(ours[0]["args"]),
        id=message.id,
        name=message.name,
        response_metadata=message.response_metadata,
        usage_metadata=message.usage_metadata,
    )


def _fallback(model: Any, exc: Exception, plan: tuple[str, ...], index: int) -> bool:
    if index + 1 >= len(plan) or not is_format_rejection(exc):
        return False
    _log.warning(
        "model %s rejected structured_output=%r (%s); trying %r",
        _learned.model_name_of(model),
        plan[index],
        str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__,
        plan[index + 1],
    )
    return True


def invoke_chat(
    model: BaseChatModel,
    messages: Sequence[BaseMessage],
    *,
    tools: Sequence[Any] = (),
    settings: Mapping[str, Any] | None = None,
    output_schema: type[BaseModel] | None = None,
    structured_output: str = "auto",
    config: RunnableConfig | None = None,
    timeout: float | None = None,
    timed_out: Callable[[], BaseException] | None = None,
    prepared: dict[str, Any] | None = None,
) -> AIMessage:
    """One model call of a ReAct agent: tools and settings bound, structured output requested.

    With `output_schema`, the reply that ends the turn is JSON text for the schema (a schema
    tool call is turned into that text); the caller validates it. Without, a plain call.
    `timeout` seconds bound the call (`timed_out()` is raised then); `prepared` is a cache of the
    bound model per method that a caller with fixed tools and settings keeps across calls.
    """
    plan = structured_methods(model, structured_output) if output_schema is not None else ("none",)
    for index, method in enumerate(plan):
        runnable = _prepared(prepared, model, tools, settings, output_schema, method)
        try:
            reply = call_with_timeout(runnable, list(messages), config, timeout, timed_out)
        except Exception as exc:
            if _fallback(model, exc, plan, index):
                continue
            raise
        if output_schema is not None and structured_output == "auto":
            _learned.remember_method(model, method)
        return _finish(reply, output_schema, method)
    raise AssertionError("unreachable: the last method either returns or raises")


async def ainvoke_chat(
    model: BaseChatModel,
    messages: Sequence[BaseMessage],
    *,
    tools: Sequence[Any] = (),
    settings: Mapping[str, Any] | None = None,
    output_schema: type[BaseModel] | None = None,
    structured_output: str = "auto",
    config: RunnableConfig | None = None,
    timeout: float | None = None,
    timed_out: Callable[[], BaseException] | None = None,
    prepared: dict[str, Any] | None = None,
) -> AIMessage:
    """Async twin of `invoke_chat`."""
    plan = structured_methods(model, structured_output) if output_schema is not None else ("none",)
    for index, method in enumerate(plan):
        runnable = _prepared(prepared, model, tools, settings, output_schema, method)
        try:
            reply = await acall_with_timeout(runnable, list(messages), config, timeout, timed_out)
        except Exception as exc:
            if _fallback(model, exc, plan, index):
                continue
            raise
        if output_schema is not None and structured_output == "auto":
            _learned.remember_method(model, method)
        return _finish(reply, output_schema, method)
    raise AssertionError("unreachable: the last method either returns or raises")


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


def parse_structured(schema: type[M], reply: AIMessage | str) -> M:
    """Validate a reply's JSON (bare, fenced, or the outermost `{...}` in prose) into `schema`.

    Raises:
        pydantic.ValidationError: the JSON does not match the schema.
        ValueError: the reply holds no JSON object.
    """
    text = reply if isinstance(reply, str) else reply.text
    match = _FENCE.search(text)
    candidate = (match.group(1) if match else text).strip()
    if not candidate.startswith("{"):
        start, end = candidate.find("{"), candidate.rfind("}")
        if start < 0 or end <= start:
            raise ValueError(f"the reply held no JSON object: {text[:200]!r}")
        candidate = candidate[start : end + 1]
    return schema.model_validate_json(candidate)


def _with_note(messages: Sequence[BaseMessage], schema: type[BaseModel]) -> list[BaseMessage]:
    """The messages with the schema note appended to the leading system message.

    Many chat templates (llama.cpp, vLLM) reject a system message that is not the first one.
    """
    out = list(messages)
    note = schema_note(schema)
    if out and isinstance(out[0], SystemMessage) and isinstance(out[0].content, str):
        out[0] = SystemMessage(content=f"{out[0].content}\n\n{note}", id=out[0].id)
    else:
        out.insert(0, SystemMessage(content=note))
    return out


def _parse_native(schema: type[M], out: Any) -> M:
    if isinstance(out, dict) and "parsing_error" in out:
        error = out.get("parsing_error")
        if isinstance(error, ValueError):  # ValidationError and OutputParserException too
            raise error
        if error is not None or out.get("parsed") is None:
            raise ValueError(str(error or "the reply held no choice"))
        out = out["parsed"]
    return out if isinstance(out, schema) else schema.model_validate(out)


def _native(model: Any, schema: type[BaseModel], method: str) -> Any:
    kwargs = {} if method in ("auto", _NATIVE) else {"method": method}
    return model.with_structured_output(schema, include_raw=True, **kwargs)


def _route(model: Any, method: str) -> tuple[str, ...]:
    plan = structured_methods(model, method, otherwise=_NATIVE)
    if plan == (_NATIVE,) or (not _openai_compatible(model) and method != "prompt"):
        return (_NATIVE,)
    return plan


def invoke_structured(
    model: BaseChatModel,
    schema: type[M],
    messages: Sequence[BaseMessage],
    *,
    method: str = "auto",
    config: RunnableConfig | None = None,
    settings: Mapping[str, Any] | None = None,
    timeout: float | None = None,
    timed_out: Callable[[], BaseException] | None = None,
) -> M:
    """Ask `model` for one `schema` instance, with `method` (see the module docstring).

    Raises:
        pydantic.ValidationError | ValueError: the reply did not match the schema (re-ask).
        Exception: what the model raised (wrap it with `model_call_errors`).
    """
    plan = _route(model, method)
    if plan == (_NATIVE,):
        native = _native(model, schema, method)
        out = call_with_timeout(native, list(messages), config, timeout, timed_out)
        return _parse_native(schema, out)
    reply = invoke_chat(
        model,
        _with_note(messages, schema),
        settings=settings,
        output_schema=schema,
        structured_output=method,
        config=config,
        timeout=timeout,
        timed_out=timed_out,
    )
    return parse_structured(schema, reply)


async def ainvoke_structured(
    model: BaseChatModel,
    schema: type[M],
    messages: Sequence[BaseMessage],
    *,
    method: str = "auto",
    config: RunnableConfig | None = None,
    settings: Mapping[str, Any] | None = None,
    timeout: float | None = None,
    timed_out: Callable[[], BaseException] | None = None,
) -> M:
    """Async twin of `invoke_structured`."""
    plan = _route(model, method)
    if plan == (_NATIVE,):
        native = _native(model, schema, method)
        out = await acall_with_timeout(native, list(messages), config, timeout, timed_out)
        return _parse_native(schema, out)
    reply = await ainvoke_chat(
        model,
        _with_note(messages, schema),
        settings=settings,
        output_schema=schema,
        structured_output=method,
        config=config,
        timeout=timeout,
        timed_out=timed_out,
    )
    return parse_structured(schema, reply)
