"""Ready-made hooks: human approval, call limits, retries and fallbacks, logging."""

from graphflow.hooks.builtins.approval import APPROVAL_REQUEST, HumanApproval
from graphflow.hooks.builtins.limits import LIMIT_MARK, ModelCallLimit, ToolCallLimit
from graphflow.hooks.builtins.log import LoggingHook
from graphflow.hooks.builtins.retry import ModelFallback, ModelRetry, is_transient

__all__ = (
    "APPROVAL_REQUEST",
    "HumanApproval",
    "LIMIT_MARK",
    "LoggingHook",
    "ModelCallLimit",
    "ModelFallback",
    "ModelRetry",
    "ToolCallLimit",
    "is_transient",
)
