"""Tools: typed errors, per-tool policies (timeout, retries, parallelism, recovery) and built-ins.

A failed call reaches the model as a `ToolMessage` with `status="error"` naming the
`ToolErrorType`, what went wrong and a hint; its `ToolResult` rides along (`tool_result(msg)`).
"""

from graphflow.tools.errors import ToolErrorType, classify_exception
from graphflow.tools.exit_loop import exit_loop, is_exit_loop
from graphflow.tools.policy import (
    DEFAULT_RECOVERY,
    PARALLEL_SAFE,
    TOOL_TIMEOUT,
    Recovery,
    ToolPolicy,
    is_parallel_safe,
)
from graphflow.tools.result import ToolResult, tool_result
from graphflow.tools.serialize import serialize_result

__all__ = (
    "DEFAULT_RECOVERY",
    "PARALLEL_SAFE",
    "Recovery",
    "TOOL_TIMEOUT",
    "ToolErrorType",
    "ToolPolicy",
    "ToolResult",
    "classify_exception",
    "exit_loop",
    "is_exit_loop",
    "is_parallel_safe",
    "serialize_result",
    "tool_result",
)
