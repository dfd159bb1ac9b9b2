"""Errors raised by graphflow.

Hierarchy::

    GraphflowError                      base of everything graphflow raises
    ├── GraphflowConfigError            the agent tree is misconfigured (raised at build/compile time)
    │   ├── InstructionTemplateError    an instruction template is malformed
    │   └── DataflowError               a placeholder nobody writes, a duplicate name or key
    ├── CheckpointTypeError             a checkpoint holds a type outside the load allowlist
    └── AgentRunError                   something failed while a run was executing
        ├── OutputValidationError       a reply did not validate against `output_schema`
        ├── RoutingError                a router could not choose a valid route
        ├── ParallelBranchError         one or more parallel branches failed
        ├── ToolError                   a tool failed in a way the run cannot recover from
        ├── ModelCallError              a model call failed (endpoint, transport, provider)
        │   ├── ModelConnectionError    the endpoint could not be reached, or dropped the connection
        │   ├── ModelTimeoutError       no reply within the timeout
        │   ├── ModelAuthError          401/403: the key is missing, wrong or lacks permission
        │   ├── ModelRateLimitError     429, still after the retries
        │   ├── ModelServerError        5xx, still after the retries
        │   └── ModelRequestError       another 4xx: unknown model, a parameter the server rejects
        └── CallLimitExceeded           a ModelCallLimit / ToolCallLimit hook (exit="error") tripped
            ├── ModelCallLimitExceeded
            └── ToolCallLimitExceeded

Configuration errors are raised before any model is called; fix the agent definitions. Run errors
leave the run's checkpoints in place: inspect them with `agent.get_state(thread_id)` and continue
with `agent.resume(thread_id)`.
"""

from __future__ import annotations

__all__ = (
    "AgentRunError",
    "CallLimitExceeded",
    "CheckpointTypeError",
    "DataflowError",
    "GraphflowConfigError",
    "GraphflowError",
    "InstructionTemplateError",
    "ModelAuthError",
    "ModelCallError",
    "ModelCallLimitExceeded",
    "ModelConnectionError",
    "ModelRateLimitError",
    "ModelRequestError",
    "ModelServerError",
    "ModelTimeoutError",
    "OutputValidationError",
    "ParallelBranchError",
    "RoutingError",
    "ToolCallLimitExceeded",
    "ToolError",
)


class GraphflowError(Exception):
    """Base class of every error graphflow raises."""


class GraphflowConfigError(GraphflowError, ValueError):
    """The agent tree is misconfigured; raised while building or compiling, never mid-run."""


class InstructionTemplateError(GraphflowConfigError):
    """An instruction template cannot be parsed."""


class DataflowError(GraphflowConfigError):
    """Data cannot flow as declared: an unknown placeholder, a duplicate agent name or key."""


class AgentRunError(GraphflowError, RuntimeError):
    """A run failed while executing. Its checkpoints are kept, so it can be inspected and resumed.

    Attributes:
        agent: name of the agent that failed, when known.
    """

    def __init__(self, message: str, *, agent: str | None = None) -> None:
        super().__init__(message)
        self.agent = agent


class OutputValidationError(AgentRunError):
    """The model's final reply did not validate against the agent's `output_schema`."""


class RoutingError(AgentRunError):
    """A routing agent's model chose no valid route and no fallback was configured."""


class ParallelBranchError(AgentRunError):
    """One or more branches of a `ParallelAgent` failed; the others' outputs were kept.

    Attributes:
        errors: branch name -> error message, for every failed branch.
        completed: output key -> value, for every branch that finished.
    """

    def __init__(
        self,
        message: str,
        *,
        agent: str | None = None,
        errors: dict[str, str] | None = None,
        completed: dict[str, object] | None = None,
    ) -> None:
        super().__init__(message, agent=agent)
        self.errors = dict(errors or {})
        self.completed = dict(completed or {})


class ToolError(AgentRunError):
    """A tool failed in a way the agent cannot recover from."""


class ModelCallError(AgentRunError):
    """A model call failed: the endpoint, the transport or the provider said no.

    Raised after the client's own retries (429, 5xx, timeouts and dropped connections are retried
    with backoff first). The message names the agent path, the model, the endpoint, the fix and
    the resume command; the run's checkpoints are kept, so `resume` re-runs only the failed call.

    Attributes:
        agent_path: `/`-joined names from the root's child down to the failing agent.
        model: the model name sent to the endpoint.
        base_url: the endpoint (`OPENAI_BASE_URL` for OpenAI-compatible servers), if known.
        status_code: the HTTP status, when the server answered.
        thread_id: the run's thread, to resume it.
        retryable: whether the same call may succeed later (rate limit, server error, timeout).
    """

    def __init__(
        self,
        message: str,
        *,
        agent: str | None = None,
        agent_path: str | None = None,
        model: str | None = None,
        base_url: str | None = None,
        status_code: int | None = None,
        thread_id: str | None = None,
        retryable: bool = False,
    ) -> None:
        super().__init__(message, agent=agent)
        self.agent_path = agent_path
        self.model = model
        self.base_url = base_url
        self.status_code = status_code
        self.thread_id = thread_id
        self.retryable = retryable


class ModelConnectionError(ModelCallError, ConnectionError):
    """The model endpoint could not be reached, or it closed the connection without a reply.

    Also a builtin `ConnectionError`, so existing `except ConnectionError` code keeps working.
    """


class ModelTimeoutError(ModelCallError, TimeoutError):
    """The model endpoint did not answer within the timeout (also a builtin `TimeoutError`)."""


class ModelAuthError(ModelCallError):
    """The endpoint refused the credentials (HTTP 401) or the permission (HTTP 403)."""


class ModelRateLimitError(ModelCallError):
    """The endpoint kept answering HTTP 429 (rate limit or quota) after the retries."""


class ModelServerError(ModelCallError):
    """The endpoint kept failing with HTTP 5xx after the retries."""


class ModelRequestError(ModelCallError):
    """The endpoint rejected the request (another 4xx): an unknown model, an unsupported field."""


class CallLimitExceeded(AgentRunError):
    """A call-limit hook with `exit="error"` stopped the run.

    Attributes:
        scope: `"run"` (this invocation of the agent) or `"thread"` (the whole conversation).
        limit: the limit that was reached.
        count: calls already made in that scope.
    """

    def __init__(
        self, message: str, *, agent: str | None = None, scope: str, limit: int, count: int
    ) -> None:
        super().__init__(message, agent=agent)
        self.scope = scope
        self.limit = limit
        self.count = count


class ModelCallLimitExceeded(CallLimitExceeded):
    """`ModelCallLimit(exit="error")`: the agent reached its model-call limit."""


class ToolCallLimitExceeded(CallLimitExceeded):
    """`ToolCallLimit(exit="error")`: the model asked for more tool calls than the limit allows."""


class CheckpointTypeError(GraphflowError, TypeError):
    """A checkpoint holds a type that is not on the deserialization allowlist."""

    def __init__(self, module: str, name: str) -> None:
        self.module = module
        self.name = name
        super().__init__(
            f"checkpoint contains {module}.{name}, which is not on graphflow's deserialization "
            "allowlist (loading a checkpoint never imports or calls arbitrary code). If the type "
            f"is yours and safe to construct, allow it: graphflow.checkpoint.allow_types("
            f"{name}) before compiling, or use it as an agent's output_schema"
        )
