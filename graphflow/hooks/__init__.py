"""Agent, model and tool hooks."""

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

__all__ = (
    "AgentContext",
    "AgentHook",
    "EndReason",
    "Hook",
    "HookResult",
    "ModelHook",
    "ModelRequest",
    "ToolCallRequest",
    "ToolHook",
)
