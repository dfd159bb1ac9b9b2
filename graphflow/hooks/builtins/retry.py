"""`ModelRetry` and `ModelFallback`: survive transient model errors and failing providers.

Both wrap the model call (`wrap_model_call`), so they nest in list order: with
`hooks=[ModelFallback(...), ModelRetry(...)]` each model is retried before the next one is tried.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage
from langgraph.errors import GraphBubbleUp

from graphflow.hooks.base import AsyncModelHandler, ModelHandler, ModelHook, ModelRequest

__all__ = ("ModelFallback", "ModelRetry", "is_transient")

_TRANSIENT_STATUS = frozenset({408, 409, 425, 429})
_TRANSIENT_NAMES = frozenset(
    {
        # openai / anthropic SDKs (matched by class name so neither needs to be installed)
        "RateLimitError",
        "APITimeoutError",
        "APIConnectionError",
        "InternalServerError",
        "ServiceUnavailableError",
        "OverloadedError",
        # httpx transport failures
        "TimeoutException",
        "TransportError",
        "RemoteProtocolError",
        # an HTTP 200 that is no usable reply (`graphflow.exceptions.BadModelReply`): a stream cut
        # short, invalid JSON, no choices — retried like a server error
        "BadModelReply",
    }
)

RetryOn = Callable[[BaseException], bool] | tuple[type[BaseException], ...]
Backoff = float | Callable[[int], float]


def _status_code(exc: BaseException) -> int | None:
    for holder in (exc, getattr(exc, "response", None)):
        code = getattr(holder, "status_code", None) or getattr(holder, "status", None)
        if isinstance(code, int):
            return code
    return None


def is_transient(exc: BaseException) -> bool:
    """Whether `exc` looks like a failure worth retrying.

    True for timeouts, dropped connections, HTTP 408/409/425/429 and 5xx (read from a
    `status_code` attribute, also on `exc.response`), the SDKs' rate-limit/timeout/connection
    exception types (matched by class name, so no SDK needs to be installed) and a 200 reply
    that cannot be used (a stream cut short: `BadModelReply`).
    """
    if isinstance(exc, GraphBubbleUp):
        return False
    if isinstance(exc, TimeoutError | ConnectionError):
        return True
    code = _status_code(exc)
    if code is not None:
        return code in _TRANSIENT_STATUS or code >= 500
    return any(klass.__name__ in _TRANSIENT_NAMES for klass in type(exc).__mro__)


def _matcher(retry_on: RetryOn | None) -> Callable[[BaseException], bool]:
    if retry_on is None:
        return is_transient
    if isinstance(retry_on, tuple):
        types = retry_on
        return lambda exc: isinstance(exc, types)
    return retry_on


class ModelRetry(ModelHook):
    """Retry a model call that failed with a transient error, waiting longer each time."""

    def __init__(
        self,
        max_attempts: int = 3,
        *,
        backoff: Backoff = 0.5,
        max_delay: float = 30.0,
        retry_on: RetryOn | None = None,
    ) -> None:
        """Configure the retries.

        Args:
            max_attempts: calls in all, the first one included (1 = no retry).
            backoff: seconds before the first retry, doubled for each further one; or a
                function of the attempt number (1 for the first retry) returning seconds.
            max_delay: upper bound of one wait.
            retry_on: which errors to retry: exception types or a predicate
                (default `is_transient`).
        """
        if max_attempts < 1:
            raise ValueError(f"ModelRetry: max_attempts must be >= 1, got {max_attempts}")
        self.max_attempts = max_attempts
        """Calls in all, the first one included."""
        self.backoff = backoff
        """Base delay in seconds (doubled per retry), or a function of the retry number."""
        self.max_delay = max_delay
        """Upper bound of one wait, in seconds."""
        self.retry_on = _matcher(retry_on)
        """Predicate: is this error worth another attempt?"""

    def delay(self, retry: int) -> float:
        """Seconds to wait before retry number `retry` (1-based)."""
        raw = self.backoff(retry) if callable(self.backoff) else self.backoff * 2 ** (retry - 1)
        return max(0.0, min(raw, self.max_delay))

    def _should_retry(self, exc: Exception, attempt: int) -> bool:
        return attempt < self.max_attempts and self.retry_on(exc)

    def wrap_model_call(self, request: ModelRequest, handler: ModelHandler) -> AIMessage:
        """Call the model, retrying transient failures."""
        attempt = 1
        while True:
            try:
                return handler(request)
            except GraphBubbleUp:
                raise
            except Exception as exc:
                if not self._should_retry(exc, attempt):
                    raise
                time.sleep(self.delay(attempt))
                attempt += 1

    async def awrap_model_call(
        self, request: ModelRequest, handler: AsyncModelHandler
    ) -> AIMessage:
        """Async twin of `wrap_model_call`."""
        attempt = 1
        while True:
            try:
                return await handler(request)
            except GraphBubbleUp:
                raise
            except Exception as exc:
                if not self._should_retry(exc, attempt):
                    raise
                await asyncio.sleep(self.delay(attempt))
                attempt += 1


class ModelFallback(ModelHook):
    """When the model call fails, try the next model in `models`, in order."""

    def __init__(
        self, models: Sequence[BaseChatModel | str], *, fallback_on: RetryOn | None = None
    ) -> None:
        """Configure the fallbacks.

        Args:
            models: chat models (or `"openai:<name>"` strings) tried in order after the agent's.
            fallback_on: which errors move on to the next model: exception types or a
                predicate (default: any error).
        """
        if not models:
            raise ValueError("ModelFallback: give at least one fallback model")
        from graphflow.models.resolve import check_model

        for model in models:
            # an unknown provider or a non-chat model is refused now, not when the fallback is due
            check_model(model, agent="ModelFallback")
        self.models: list[Any] = list(models)
        """Fallback models, tried in order."""
        self.fallback_on = _matcher(fallback_on) if fallback_on is not None else _any_error
        """Predicate: does this error move on to the next model?"""

    def _attempts(self, request: ModelRequest) -> Iterator[ModelRequest]:
        """The agent's own request, then one per fallback model (built once the first fails)."""
        from graphflow.models import resolve_model

        yield request
        yield from [
            request.override(model=resolve_model(m, agent=request.agent)) for m in self.models
        ]

    def wrap_model_call(self, request: ModelRequest, handler: ModelHandler) -> AIMessage:
        """Call the agent's model, then each fallback, until one succeeds."""
        error: Exception | None = None
        for attempt in self._attempts(request):
            try:
                return handler(attempt)
            except GraphBubbleUp:
                raise
            except Exception as exc:
                if not self.fallback_on(exc):
                    raise
                error = exc
        assert error is not None
        raise error

    async def awrap_model_call(
        self, request: ModelRequest, handler: AsyncModelHandler
    ) -> AIMessage:
        """Async twin of `wrap_model_call`."""
        error: Exception | None = None
        for attempt in self._attempts(request):
            try:
                return await handler(attempt)
            except GraphBubbleUp:
                raise
            except Exception as exc:
                if not self.fallback_on(exc):
                    raise
                error = exc
        assert error is not None
        raise error


def _any_error(exc: BaseException) -> bool:
    return True
