"""Agent, model and tool hooks, and ready-made ones (`graphflow.hooks.builtins`)."""

from graphflow.hooks.base import (
    AgentContext,
    AgentHook,
    EndReason,
    Hook,
    HookResult,
    ModelHook,
    ModelRequest,
    ToolCallRequest,
    ToolHook,
)
from graphflow.hooks.builtins import (
    HumanApproval,
    LoggingHook,
    ModelCallLimit,
    ModelFallback,
    ModelRetry,
    ToolCallLimit,
    is_transient,
)

__all__ = (
    "AgentContext",
    "AgentHook",
    "EndReason",
    "Hook",
    "HookResult",
    "HumanApproval",
    "LoggingHook",
    "ModelCallLimit",
    "ModelFallback",
    "ModelHook",
    "ModelRequest",
    "ModelRetry",
    "ToolCallLimit",
    "ToolCallRequest",
    "ToolHook",
    "is_transient",
)
