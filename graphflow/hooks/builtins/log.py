"""`LoggingHook`: log an agent's start and end, its model calls and its tool calls."""

from __future__ import annotations

import logging
import time
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage
from langgraph.errors import GraphBubbleUp

from graphflow.hooks.base import (
    AgentContext,
    AgentHook,
    AsyncModelHandler,
    AsyncToolHandler,
    ModelHandler,
    ModelHook,
    ModelRequest,
    ToolCallRequest,
    ToolHandler,
    ToolHook,
)

__all__ = ("LoggingHook",)


class LoggingHook(AgentHook, ModelHook, ToolHook):
    """Log through the standard `logging` module (logger `"graphflow"` by default).

    One record when the agent starts, one when it ends (with the reason), one per model call
    (duration, requested tool calls) and one per tool call (arguments, status, duration).
    Failures are logged at WARNING and re-raised.
    """

    def __init__(
        self, logger: logging.Logger | str = "graphflow", level: int = logging.INFO
    ) -> None:
        """Log to `logger` (a logger or its name) at `level`."""
        self.logger = logging.getLogger(logger) if isinstance(logger, str) else logger
        """Where records go."""
        self.level = level
        """Level of the normal records."""

    def _log(self, msg: str, *args: Any, level: int | None = None) -> None:
        self.logger.log(self.level if level is None else level, msg, *args)

    # -- agent -----------------------------------------------------------------------------------

    def before_agent(self, state: dict[str, Any], ctx: AgentContext) -> None:
        """Log the start of the agent."""
        self._log("agent %s started", ctx.agent)

    def after_agent(self, state: dict[str, Any], ctx: AgentContext) -> None:
        """Log the end of the agent and why it ended."""
        if ctx.error is not None:
            self._log(
                "agent %s ended: %s (%s: %s)",
                ctx.agent,
                ctx.reason,
                type(ctx.error).__name__,
                ctx.error,
                level=logging.WARNING,
            )
        else:
            self._log("agent %s ended: %s", ctx.agent, ctx.reason)

    # -- model -----------------------------------------------------------------------------------

    def _model_done(self, request: ModelRequest, response: AIMessage, started: float) -> None:
        calls = [c["name"] for c in response.tool_calls]
        self._log(
            "agent %s model call %d done in %.3fs%s",
            request.agent,
            request.call_number,
            time.perf_counter() - started,
            f"; tool calls: {', '.join(calls)}" if calls else "; final answer",
        )

    def _model_failed(self, request: ModelRequest, exc: BaseException) -> None:
        self._log(
            "agent %s model call %d failed: %s: %s",
            request.agent,
            request.call_number,
            type(exc).__name__,
            exc,
            level=logging.WARNING,
        )

    def wrap_model_call(self, request: ModelRequest, handler: ModelHandler) -> AIMessage:
        """Time and log one model call."""
        started = time.perf_counter()
        try:
            response = handler(request)
        except GraphBubbleUp:
            raise
        except Exception as exc:
            self._model_failed(request, exc)
            raise
        self._model_done(request, response, started)
        return response

    async def awrap_model_call(
        self, request: ModelRequest, handler: AsyncModelHandler
    ) -> AIMessage:
        """Async twin of `wrap_model_call`."""
        started = time.perf_counter()
        try:
            response = await handler(request)
        except GraphBubbleUp:
            raise
        except Exception as exc:
            self._model_failed(request, exc)
            raise
        self._model_done(request, response, started)
        return response

    # -- tools -----------------------------------------------------------------------------------

    def _tool_done(self, request: ToolCallRequest, result: ToolMessage, started: float) -> None:
        call = request.tool_call
        self._log(
            "agent %s tool %s(%s) -> %s in %.3fs",
            request.agent,
            call["name"],
            call.get("args"),
            result.status,
            time.perf_counter() - started,
            level=self.level if result.status != "error" else logging.WARNING,
        )

    def wrap_tool_call(self, request: ToolCallRequest, handler: ToolHandler) -> ToolMessage:
        """Time and log one tool call."""
        started = time.perf_counter()
        result = handler(request)
        self._tool_done(request, result, started)
        return result

    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: AsyncToolHandler
    ) -> ToolMessage:
        """Async twin of `wrap_tool_call`."""
        started = time.perf_counter()
        result = await handler(request)
        self._tool_done(request, result, started)
        return result
