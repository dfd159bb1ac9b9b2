"""`ToolResult`: the uniform outcome of one tool call, and how it rides on a `ToolMessage`.

Every tool call of a ReAct agent ends in a `ToolMessage`. The model reads its `content`; the
structured outcome is kept beside it in `additional_kwargs["graphflow_tool_result"]` (plain JSON,
so it survives every checkpointer's serializer) and read back with `tool_result(message)`.
A failed call's message has `status="error"` and a content that names the error type, says what
went wrong and how to fix the call::

    Error [INVALID_PARAM] in tool `get_weather`: 1 validation error for get_weather ...
    Hint: fix the arguments to match the tool's parameters (names, types, required fields) and call it again
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from langchain_core.messages import BaseMessage, ToolMessage

from graphflow.tools.errors import ToolErrorType

__all__ = ("RESULT_KEY", "ToolResult", "error_content", "tool_result")

RESULT_KEY = "graphflow_tool_result"
"""The `ToolMessage.additional_kwargs` key holding a call's `ToolResult` (as a dict)."""


@dataclass(frozen=True, kw_only=True)
class ToolResult:
    """What one tool call produced: `{success, error_type, error_message, data}`."""

    success: bool
    """Whether the call succeeded."""
    error_type: ToolErrorType | None = None
    """Why it failed (None on success)."""
    error_message: str | None = None
    """What went wrong, as shown to the model (None on success)."""
    data: Any = None
    """The serialized result the model saw (the message content)."""
    attempts: int = 1
    """How many times the tool was called for this result (retries after a timeout count)."""

    def as_dict(self) -> dict[str, Any]:
        """The JSON form stored on the `ToolMessage` (without `data`, which is its content)."""
        return {
            "success": self.success,
            "error_type": None if self.error_type is None else str(self.error_type),
            "error_message": self.error_message,
            "attempts": self.attempts,
        }


def tool_result(message: BaseMessage) -> ToolResult | None:
    """The `ToolResult` of a tool call's message, or None for a message graphflow did not make."""
    if not isinstance(message, ToolMessage):
        return None
    stored = message.additional_kwargs.get(RESULT_KEY)
    if not isinstance(stored, dict):
        return None
    kind = stored.get("error_type")
    return ToolResult(
        success=bool(stored.get("success")),
        error_type=None if kind is None else ToolErrorType(kind),
        error_message=stored.get("error_message"),
        data=message.content,
        attempts=int(stored.get("attempts") or 1),
    )


def error_content(error_type: ToolErrorType, tool: str, message: str, hint: str) -> str:
    """The text a model reads for a failed call: type, what went wrong, how to fix it."""
    return f"Error [{error_type}] in tool `{tool}`: {message}\nHint: {hint}"
