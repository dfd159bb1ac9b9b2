"""Model-call failures explained: provider and transport errors become `ModelCallError`s.

`explain_model_error` turns an exception from a chat model (openai SDK, langchain-core's
`ModelError` family, httpx transport errors, builtin timeouts) into the matching graphflow error,
naming the agent path, the model, the endpoint, the fix and the resume command. Anything else
(a bug in a hook, a graphflow error, a LangGraph interrupt) is not a model-call failure and is
left alone. The core wraps every model call in `model_call_errors(...)`; hooks inside it (such
as `ModelRetry`) still see the provider's own exception.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from graphflow._internal.commands import resume_hint
from graphflow.exceptions import (
    AbandonedModelCall,
    BadModelReply,
    GraphflowError,
    ModelAuthError,
    ModelCallError,
    ModelConnectionError,
    ModelRateLimitError,
    ModelRequestError,
    ModelServerError,
    ModelTimeoutError,
)
from graphflow.models._learned import base_url_of, model_name_of

__all__ = (
    "agent_path_of",
    "explain_model_error",
    "is_format_rejection",
    "model_call_errors",
    "status_code_of",
)

_FORMAT_WORDS = re.compile(
    r"response_format|json_schema|json_object|tool_choice|guided_json|structured output|"
    r"\btools?\b|\bfunctions?\b",
    re.IGNORECASE,
)
_TIMEOUT_NAMES = ("Timeout",)
_CONNECTION_NAMES = (
    "APIConnectionError",
    "ConnectError",
    "ConnectionError",
    "RemoteProtocolError",
    "ReadError",
    "WriteError",
    "NetworkError",
    "TransportError",
    "ServerDisconnectedError",
)


# transport errors raised once the server had the request: it went away before replying in full
_DROPPED_NAMES = ("RemoteProtocolError", "ReadError", "ServerDisconnectedError", "IncompleteRead")


def _causes(exc: BaseException) -> list[BaseException]:
    """`exc` and what it was raised from, outermost first (the SDK wraps httpx's own error)."""
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in chain and len(chain) < 12:
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


def _dropped(exc: BaseException) -> bool:
    return any(type(e).__name__ in _DROPPED_NAMES for e in _causes(exc))


def _connection_failure(exc: BaseException, *, streamed: bool) -> str:
    if streamed:
        return "the model endpoint closed the connection in the middle of its streamed reply"
    if _dropped(exc):
        return "the model endpoint closed the connection before it replied in full"
    return "cannot reach the model endpoint"


def _mid_stream(exc: BaseException) -> bool:
    """Whether it failed while a streamed reply was being read (the SDK does not retry that)."""
    for cause in _causes(exc):
        tb = cause.__traceback__
        while tb is not None:
            if str(tb.tb_frame.f_globals.get("__name__", "")).startswith("openai._streaming"):
                return True
            tb = tb.tb_next
    return False


def status_code_of(exc: BaseException) -> int | None:
    """The HTTP status a provider error carries (on the error or its `response`), if any."""
    for holder in (exc, getattr(exc, "response", None)):
        code = getattr(holder, "status_code", None)
        if isinstance(code, int) and not isinstance(code, bool):
            return code
    return None


def _text(exc: BaseException) -> str:
    body = getattr(exc, "body", None)
    try:
        body_text = json.dumps(body) if body is not None else ""
    except (TypeError, ValueError):
        body_text = str(body)
    return f"{getattr(exc, 'message', None) or exc} {body_text}"


def is_format_rejection(exc: BaseException) -> bool:
    """Whether the server rejected the *shape* of a request, not its content or the network.

    True for a 4xx (or the 500 some servers answer with) whose text names `response_format`,
    `json_schema`, `json_object`, `tools`, `tool_choice` or functions.
    """
    code = status_code_of(exc)
    if code is None or code in (401, 403, 404, 408, 409, 429) or code in (502, 503, 504):
        return False
    return 400 <= code < 600 and bool(_FORMAT_WORDS.search(_text(exc)))


def _names(exc: BaseException) -> list[str]:
    return [klass.__name__ for klass in type(exc).__mro__]


def _kind(exc: BaseException) -> type[ModelCallError] | None:
    if isinstance(exc, BadModelReply):
        return ModelServerError
    names = _names(exc)
    if isinstance(exc, TimeoutError) or any(t in n for n in names for t in _TIMEOUT_NAMES):
        return ModelTimeoutError
    code = status_code_of(exc)
    if code is not None:
        if code in (401, 403):
            return ModelAuthError
        if code == 429:
            return ModelRateLimitError
        if code >= 500:
            return ModelServerError
        if 400 <= code < 500:
            return ModelRequestError
    if isinstance(exc, ConnectionError) or any(n in _CONNECTION_NAMES for n in names):
        return ModelConnectionError
    by_langchain = {
        "ModelAuthenticationError": ModelAuthError,
        "ModelPermissionDeniedError": ModelAuthError,
        "ModelRateLimitError": ModelRateLimitError,
        "ModelAPIError": ModelServerError,
        "ModelInvalidRequestError": ModelRequestError,
        "ModelNotFoundError": ModelRequestError,
        "ContextOverflowError": ModelRequestError,
    }
    for name in names:
        if name in by_langchain:
            return by_langchain[name]
    return None


def agent_path_of(agent: str, config: Any) -> str:
    """`/`-joined agent names from the checkpoint namespace down to `agent` (the running node)."""
    configurable = (config or {}).get("configurable") or {}
    namespace = str(configurable.get("checkpoint_ns") or "")
    names = [segment.split(":")[0] for segment in namespace.split("|") if segment][:-1]
    if not names or names[-1] != agent:
        names.append(agent)
    return "/".join(names)


def _endpoint(model: Any) -> tuple[str | None, str]:
    url = base_url_of(model)
    shown = url or "the provider's default endpoint"
    return url, shown


def _body_detail(body: Any) -> str:
    """The server's own words from an error body that is not OpenAI-shaped (FastAPI `detail`)."""
    if isinstance(body, dict) and isinstance(body.get("detail"), list) and body["detail"]:
        first = body["detail"][0]
        if isinstance(first, dict):
            where = ".".join(str(p) for p in first.get("loc") or ())
            return f"{where}: {first.get('msg')}" if where else str(first.get("msg"))
    if isinstance(body, dict) and isinstance(body.get("detail"), str):
        return body["detail"]
    try:
        return json.dumps(body)[:200] if body else ""
    except (TypeError, ValueError):
        return str(body)[:200]


DETAIL_LIMIT = 1000
"""Most characters of the server's own words an error message keeps."""


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _detail(exc: BaseException) -> str:
    """The server's (or the transport's) own words, on one line, cut to `DETAIL_LIMIT`."""
    if isinstance(exc, BadModelReply):
        text = exc.detail or exc.what
    else:
        text = _one_line(str(getattr(exc, "message", None) or exc)) or type(exc).__name__
    if re.fullmatch(r"Error code: \d+", text):  # the SDK found no OpenAI-style message
        extra = _body_detail(getattr(exc, "body", None))
        text = f"{text} ({extra})" if extra else text
    elif text.rstrip(".") == "Connection error":  # the SDK's words; the transport says more
        root = _one_line(str(_causes(exc)[-1]))
        if root and root.rstrip(".") != "Connection error":
            text = f"Connection error ({root.rstrip('. ')})"
    text = _one_line(text)
    if len(text) > DETAIL_LIMIT:
        text = f"{text[:DETAIL_LIMIT].rstrip()}… ({len(text) - DETAIL_LIMIT} more characters)"
    return text.rstrip(" .")


def _retries_made(exc: BaseException) -> int | None:
    """How many times the call was retried before `exc`, when the error says."""
    for cause in _causes(exc):
        if isinstance(cause, BadModelReply):
            return cause.attempts - 1
        # the openai SDK numbers each attempt in a request header; the error keeps the last one
        headers = getattr(getattr(cause, "request", None), "headers", None)
        value = headers.get("x-stainless-retry-count") if headers is not None else None
        if isinstance(value, str) and value.isdigit():
            return int(value)
    return None


def _wait_refused(exc: BaseException) -> str:
    """Why a retryable error was not retried: a `Retry-After` longer than the client waits."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return ""
    for header, divisor in (("retry-after-ms", 1000), ("retry-after", 1)):
        value = headers.get(header)
        try:
            seconds = float(value) / divisor if value is not None else None
        except ValueError:
            continue
        if seconds is not None:
            try:
                from openai._constants import MAX_RETRY_AFTER_DELAY as limit
            except ImportError:  # pragma: no cover - a future SDK
                limit = 120
            if seconds > limit:
                return (
                    f", not retried: the server asked to wait {seconds:g} s, more than the "
                    f"client's limit of {limit:g} s"
                )
            return ""
    return ""


def _key_env(model: Any) -> str:
    preset = getattr(model, "preset", None)
    env = getattr(preset, "api_key_env", None)
    return env if isinstance(env, str) and env else "OPENAI_API_KEY"


def _fix(kind: type[ModelCallError], exc: BaseException, model: Any, name: str) -> str:
    base = os.environ.get("OPENAI_BASE_URL")
    if kind is ModelConnectionError:
        where = f"OPENAI_BASE_URL ({'now ' + base if base else 'not set'}) or the model's base_url"
        if _dropped(exc):
            return (
                "The server went away mid-request (stopped, restarted or crashed, or a proxy "
                f"cut the reply): check its logs, that it is running, and that {where} points "
                "at it"
            )
        return f"Check that the server is running and that {where} points at it"
    if kind is ModelTimeoutError:
        return (
            "Raise the timeout (GRAPHFLOW_MODEL_TIMEOUT, or model_settings={'timeout': ...}), "
            "lower max_tokens, or check that the server is not overloaded"
        )
    if kind is ModelAuthError:
        return f"Check the API key ({_key_env(model)}) and that it belongs to this endpoint"
    if kind is ModelRateLimitError:
        return (
            "Wait or raise your quota; lower the concurrency (ParallelAgent max_concurrency) or "
            "allow more retries (GRAPHFLOW_MODEL_RETRIES, model_settings={'max_retries': ...})"
        )
    if is_format_rejection(exc):
        return (
            "The server rejected the request format; set structured_output='json_mode' or "
            "'prompt' on the agent, or name the provider (provider=... / GRAPHFLOW_PROVIDER) so "
            "its preset is used"
        )
    if isinstance(exc, BadModelReply):
        return (
            "Check that the base URL points at the model server itself (not a proxy or web "
            "page) and its logs; a server that serves one request at a time (llama-cpp-python) "
            "cuts a reply when another arrives: lower the concurrency (ParallelAgent "
            "max_concurrency) or allow more retries (model_settings={'max_retries': ...})"
        )
    if kind is ModelServerError:
        return "The server failed; check its logs and that it can serve this model"
    if status_code_of(exc) == 404:
        return (
            f"Check the model name (GRAPHFLOW_MODEL or 'openai:<model>'): the endpoint does not "
            f"serve {name!r}, or OPENAI_BASE_URL lacks its /v1 suffix"
        )
    return "Check the model name and the model_settings sent to this endpoint"


def explain_model_error(
    exc: BaseException,
    *,
    agent: str,
    model: Any,
    config: Any = None,
    agent_path: str | None = None,
) -> ModelCallError | None:
    """The graphflow error for a failed model call, or None when `exc` is not one.

    Args:
        exc: what the chat model raised.
        agent: the agent that made the call.
        model: the chat model that was called.
        config: the node's `RunnableConfig` (gives the agent path and the thread to resume).
        agent_path: overrides the path read from `config`.
    """
    if isinstance(exc, AbandonedModelCall) and exc.agent_path is None:
        return _abandoned(exc, agent=agent, model=model, config=config, agent_path=agent_path)
    if isinstance(exc, GraphflowError) and not isinstance(exc, BadModelReply):
        return None
    if "GraphBubbleUp" in _names(exc):
        return None
    kind = _kind(exc)
    if kind is None:
        return None
    path = agent_path or agent_path_of(agent, config)
    name = model_name_of(model)
    url, shown = _endpoint(model)
    bad_reply = isinstance(exc, BadModelReply)
    code = 200 if bad_reply else status_code_of(exc)
    retries = _retries_made(exc)
    retryable = kind in (ModelConnectionError, ModelTimeoutError, ModelRateLimitError)
    retryable = retryable or kind is ModelServerError
    streamed = kind is ModelConnectionError and _mid_stream(exc)
    if retries:
        after = f", after {retries} {'retry' if retries == 1 else 'retries'}"
    else:
        after = _wait_refused(exc) if retryable else ""
    what = {
        ModelConnectionError: _connection_failure(exc, streamed=streamed),
        ModelTimeoutError: "the model endpoint did not answer in time"
        + (
            f" ({model.request_timeout:g} s)"
            if isinstance(getattr(model, "request_timeout", None), int | float)
            else ""
        ),
        ModelAuthError: f"the model endpoint refused the credentials (HTTP {code})",
        ModelRateLimitError: "the model endpoint is rate limiting (HTTP 429)",
        ModelServerError: f"the model endpoint failed (HTTP {code})",
        ModelRequestError: f"the model endpoint rejected the request (HTTP {code})",
    }[kind]
    if isinstance(exc, BadModelReply):
        what = f"the model endpoint sent a reply that cannot be used (HTTP 200: {exc.what})"
    thread = _thread_of(config)
    message = (
        f"Agent `{path}`: {what} (model {name!r} at {shown}{after}): {_detail(exc)}. "
        f"{_fix(kind, exc, model, name)}.{_resume(thread)}"
    )
    return kind(
        message,
        agent=agent,
        agent_path=path,
        model=name,
        base_url=url,
        status_code=code,
        thread_id=thread,
        retryable=retryable,
    )


def _thread_of(config: Any) -> str | None:
    thread = ((config or {}).get("configurable") or {}).get("thread_id")
    return str(thread) if thread else None


def _resume(thread: str | None) -> str:
    if not thread:
        return ""
    return f" Resume the run with {resume_hint(thread)}."


def _abandoned(
    exc: AbandonedModelCall, *, agent: str, model: Any, config: Any, agent_path: str | None
) -> ModelTimeoutError:
    """A call cut off by the agent's `model_timeout` (which bounds every client attempt)."""
    path = agent_path or agent_path_of(agent, config)
    name = model_name_of(model)
    url, shown = _endpoint(model)
    thread = _thread_of(config)
    per_attempt = getattr(model, "request_timeout", None)
    retries = getattr(model, "max_retries", None)
    client = ""
    if isinstance(per_attempt, int | float) and isinstance(retries, int) and exc.limit:
        if per_attempt * (retries + 1) >= exc.limit:  # the client would have waited longer
            client = (
                f" (it bounds the whole call: the client's {per_attempt:g} s per attempt × "
                f"{retries + 1} attempts should fit in it, or lower GRAPHFLOW_MODEL_TIMEOUT)"
            )
    message = (
        f"Agent `{path}`: the model call took longer than model_timeout={exc.limit} s and was "
        f"abandoned (model {name!r} at {shown}). Raise the agent's model_timeout{client}, lower "
        f"max_tokens, or add ModelRetry to retry it.{_resume(thread)}"
    )
    return ModelTimeoutError(
        message,
        agent=agent,
        agent_path=path,
        model=name,
        base_url=url,
        thread_id=thread,
        retryable=True,
    )


@contextmanager
def model_call_errors(*, agent: str, model: Any, config: Any = None) -> Iterator[None]:
    """Re-raise a failed model call inside the block as its `ModelCallError` (see above)."""
    try:
        yield
    except Exception as exc:
        explained = explain_model_error(exc, agent=agent, model=model, config=config)
        if explained is None:
            raise
        raise explained from exc
