"""`ToolPolicy`: how one tool is called — timeout, retries, parallelism, recovery by error type.

Recovery table (the defaults follow Lynxe's practice; a policy's `recovery` overrides entries):

==================  ==========  ===============================================================
error type          default     meaning
==================  ==========  ===============================================================
TIMEOUT             "retry"     call again up to `max_retries` times with exponential backoff,
                                then hand the error to the model
INVALID_PARAM       "return"    hand the error to the model so it regenerates the call; after
                                `max_invalid_params` such errors in a row the run stops
PERMISSION_DENIED   "return"    hand the error to the model (`requires_approval=True`: pause
                                for a human — retry / skip with a message / abort)
RESOURCE_NOT_FOUND  "return"    as PERMISSION_DENIED
UNKNOWN             "raise"     stop the run with `ToolError`; `agent.resume(thread_id)` after
                                the fix re-runs the failed call
==================  ==========  ===============================================================

Parallel calls are **opt-in** (`parallel_safe`, default: not safe). Only the tool's author knows
whether two calls may overlap — whether it writes files, spends money, or depends on an earlier
call of the same turn — and a model that asks for several calls at once cannot know it either
(Lynxe: "explicit over implicit; never let the LLM decide what may run in parallel"). Unmarked
calls therefore run one after another in call order; calls of tools marked safe (by policy, by
`tool.metadata["parallel_safe"]`, or by an MCP server's `readOnlyHint`) run concurrently.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

from graphflow.tools.errors import ToolErrorType

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool

__all__ = (
    "DEFAULT_RECOVERY",
    "PARALLEL_SAFE",
    "TOOL_TIMEOUT",
    "Recovery",
    "ToolPolicy",
    "is_parallel_safe",
    "policy_for",
)

Recovery = Literal["retry", "return", "approval", "raise"]
"""What happens after a failed call: retry it, return the error to the model, pause for a human,
or stop the run with `ToolError`."""

DEFAULT_RECOVERY: Mapping[ToolErrorType, Recovery] = {
    ToolErrorType.TIMEOUT: "retry",
    ToolErrorType.INVALID_PARAM: "return",
    ToolErrorType.PERMISSION_DENIED: "return",
    ToolErrorType.RESOURCE_NOT_FOUND: "return",
    ToolErrorType.UNKNOWN: "raise",
}
"""The recovery of each error type when a policy does not override it."""

PARALLEL_SAFE = "parallel_safe"
"""`tool.metadata` key: `True` marks a tool whose calls may run concurrently."""
TOOL_TIMEOUT = "timeout"
"""`tool.metadata` key: the tool's own timeout in seconds (an MCP server entry's `timeout`),
used when the tool's policy does not set `timeout` itself."""


class ToolPolicy(BaseModel):
    """How calls of one tool run and recover. Give one per tool or a default for all.

    Example:
        ```python
        ReactAgent(..., tools=[search, write_file],
                   default_tool_policy=ToolPolicy(timeout=20),
                   tool_policies={"search": ToolPolicy(timeout=5, parallel_safe=True)})
        ```
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    timeout: float | None = Field(default=30.0, gt=0)
    """Seconds one call may take, sync tools included (they run in a worker thread that is
    abandoned — not killed — when the time is up; async tools are cancelled, and abandoned
    if they take more than a second to stop). None: no limit.
    A policy that leaves it unset yields to the tool's own `metadata["timeout"]` (an MCP
    server's `timeout` in `mcp.json`)."""
    max_retries: int = Field(default=3, ge=0)
    """Retries after a failure whose recovery is `"retry"` (TIMEOUT by default)."""
    backoff: float = Field(default=0.5, ge=0)
    """Seconds before the first retry; doubled before each further one."""
    parallel_safe: bool | None = None
    """Whether calls of this tool may overlap other parallel-safe calls of the same model turn.
    None: from the tool (`metadata["parallel_safe"]`, an MCP tool's `readOnlyHint`), else False."""
    requires_approval: bool = False
    """On PERMISSION_DENIED or RESOURCE_NOT_FOUND, pause for a human (retry / skip / abort)
    instead of handing the error to the model."""
    max_invalid_params: int = Field(default=3, ge=0)
    """INVALID_PARAM errors in a row one tool may hand back to the model; the next one stops
    the run with `InvalidToolParamError` (a model that cannot form the call should not loop)."""
    max_result_chars: int | None = Field(default=20_000, gt=0)
    """Longer results are truncated to this many characters, with a note. None: never."""
    recovery: dict[ToolErrorType, Recovery] = Field(default_factory=dict)
    """Overrides of the recovery table for this tool, e.g. `{ToolErrorType.UNKNOWN: "return"}`."""

    def recovery_for(self, error_type: ToolErrorType) -> Recovery:
        """What happens after a failure of `error_type` under this policy."""
        if error_type in self.recovery:
            return self.recovery[error_type]
        if self.requires_approval and error_type in (
            ToolErrorType.PERMISSION_DENIED,
            ToolErrorType.RESOURCE_NOT_FOUND,
        ):
            return "approval"
        return DEFAULT_RECOVERY[error_type]


def policy_for(
    name: str,
    policies: Mapping[str, ToolPolicy],
    default: ToolPolicy | None,
    tool: BaseTool | None = None,
) -> ToolPolicy:
    """The policy of tool `name`: its own, else the agent's default, else `ToolPolicy()`.

    When that policy does not set `timeout` and `tool` declares one (`metadata["timeout"]`),
    the tool's timeout applies.
    """
    policy = policies.get(name) or default or ToolPolicy()
    own = (tool.metadata or {}).get(TOOL_TIMEOUT) if tool is not None else None
    if own is not None and "timeout" not in policy.model_fields_set:
        return policy.model_copy(update={"timeout": float(own)})
    return policy


def is_parallel_safe(tool: BaseTool | None, policy: ToolPolicy) -> bool:
    """Whether calls of `tool` may run concurrently (see `ToolPolicy.parallel_safe`)."""
    if policy.parallel_safe is not None:
        return policy.parallel_safe
    return tool is not None and (tool.metadata or {}).get(PARALLEL_SAFE) is True
