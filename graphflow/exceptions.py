"""Errors raised by graphflow.

Hierarchy::

    GraphflowError                      base of everything graphflow raises
    ├── GraphflowConfigError            the agent tree is misconfigured (raised at build/compile time)
    │   ├── AgentSpecError              an agent's options are invalid (names the agent and field)
    │   ├── InstructionTemplateError    an instruction template is malformed
    │   ├── DataflowError               a placeholder nobody writes, a duplicate name or key, a cycle
    │   └── InputError                  what was passed to invoke/resume cannot start a run
    ├── CheckpointStoreError            the checkpoint store cannot be opened or used (URL, file, server)
    ├── CheckpointTypeError             a checkpoint holds a type outside the load allowlist
    ├── RunStateError                   the thread is not in a state that allows the request
    │   ├── RunNotFoundError            no run is stored under that thread id
    │   └── ThreadBusyError             another run holds the thread
    │       └── LeaseLostError          this run lost the thread to another (it was paused too long)
    ├── RendererMissingError            a program a drawing format needs is not installed
    ├── OffloadKeyError                 an offload-store key is not an observation or summary id
    ├── MCPConnectionError              an MCP server could not be started, reached or listed
    └── AgentRunError                   something failed while a run was executing
        ├── OutputValidationError       a reply did not validate against `output_schema`
        ├── RoutingError                a router could not choose a valid route
        ├── ParallelBranchError         one or more parallel branches failed
        ├── ToolError                   a tool failed in a way the run cannot recover from
        │   ├── ToolTimeoutError        raised by a tool: TIMEOUT (retried, then told to the model)
        │   ├── InvalidToolParamError   raised by a tool: INVALID_PARAM (the model regenerates)
        │   ├── ToolPermissionError     raised by a tool: PERMISSION_DENIED
        │   └── ToolResourceNotFoundError raised by a tool: RESOURCE_NOT_FOUND
        ├── ModelCallError              a model call failed (endpoint, transport, provider)
        │   ├── ModelConnectionError    the endpoint could not be reached, or dropped the connection
        │   ├── ModelTimeoutError       no reply within the timeout
        │   ├── ModelAuthError          401/403: the key is missing, wrong or lacks permission
        │   ├── ModelRateLimitError     429, still after the retries
        │   ├── ModelServerError        5xx, still after the retries
        │   └── ModelRequestError       another 4xx: unknown model, a parameter the server rejects
        ├── StateValueError             a value written to state cannot be stored in a checkpoint
        └── CallLimitExceeded           a ModelCallLimit / ToolCallLimit hook (exit="error") tripped
            ├── ModelCallLimitExceeded
            └── ToolCallLimitExceeded

A tool chooses how its failure is handled by raising a `ToolError` subclass (the error types of
`graphflow.tools.ToolErrorType`); graphflow raises a plain `ToolError` (type `UNKNOWN`) when a
tool failure ends the run.

Configuration errors are raised before any model is called; fix the agent definitions. Run errors
leave the run's checkpoints in place: inspect them with `agent.get_state(thread_id)` and continue
with `agent.resume(thread_id)`.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic import ValidationError

__all__ = (
    "AgentRunError",
    "AgentSpecError",
    "CallLimitExceeded",
    "CheckpointStoreError",
    "CheckpointTypeError",
    "DataflowError",
    "GraphflowConfigError",
    "GraphflowError",
    "InputError",
    "InstructionTemplateError",
    "InvalidToolParamError",
    "LeaseLostError",
    "MCPConnectionError",
    "ModelAuthError",
    "ModelCallError",
    "ModelCallLimitExceeded",
    "ModelConnectionError",
    "ModelRateLimitError",
    "ModelRequestError",
    "ModelServerError",
    "ModelTimeoutError",
    "OffloadKeyError",
    "OutputValidationError",
    "ParallelBranchError",
    "RendererMissingError",
    "RoutingError",
    "RunNotFoundError",
    "RunStateError",
    "StateValueError",
    "ThreadBusyError",
    "ToolCallLimitExceeded",
    "ToolError",
    "ToolPermissionError",
    "ToolResourceNotFoundError",
    "ToolTimeoutError",
)


_URL_PASSWORD = re.compile(r"://([^:/@\s]+):[^@\s]*@")
# a secret in a URL's query (an endpoint's `?api_key=`, a store's `?password=`); values stop at
# a quote, so a quoted URL in a message keeps its closing quote
_QUERY_PASSWORD = re.compile(
    r"([?&](?:password|passwd|pwd|api[_-]?key|apikey|key|token|access[_-]?token|secret|"
    r"client[_-]?secret|sig|signature|subscription[_-]?key)=)[^&\s'\"#]*",
    re.IGNORECASE,
)
_CONNINFO_PASSWORD = re.compile(r"(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s&'\"]+)")


def _hide_passwords(text: str) -> str:
    """`text` with the passwords and keys of URLs and conninfo strings shown as `***`.

    A URL's `user:pass@` and secret query values (`?password=`, `?api_key=`, `?token=`...), and
    a conninfo's `password=`.
    """
    text = _URL_PASSWORD.sub(r"://\1:***@", text)
    text = _QUERY_PASSWORD.sub(r"\1***", text)
    return _CONNINFO_PASSWORD.sub(r"\1***", text)


class GraphflowError(Exception):
    """Base class of every error graphflow raises.

    A password in a store or endpoint URL that a message names is shown as `***`: messages end
    up in logs and terminals.
    """

    def __init__(self, *args: object) -> None:
        super().__init__(*(_hide_passwords(a) if isinstance(a, str) else a for a in args))


class GraphflowConfigError(GraphflowError, ValueError):
    """The agent tree is misconfigured; raised while building or compiling, never mid-run."""


class AgentSpecError(GraphflowConfigError):
    """An agent's options are invalid; the message names the agent, each field and the fix.

    Attributes:
        agent: the agent's name, when it was given.
        fields: `(field path, message)` for every invalid field.
    """

    def __init__(
        self,
        message: str,
        *,
        agent: str | None = None,
        fields: list[tuple[str, str]] | None = None,
        details: list[Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.agent = agent
        self.fields = list(fields or [])
        self._details = list(details or [])

    def errors(self) -> list[Any]:
        """The underlying pydantic errors (as `pydantic.ValidationError.errors()` gives them)."""
        return list(self._details)

    @classmethod
    def from_validation(cls, kind: str, name: Any, exc: ValidationError) -> AgentSpecError:
        """The error for a pydantic `ValidationError` raised while defining an agent of `kind`."""
        errors: list[tuple[str, str]] = []
        for error in exc.errors():
            where = ".".join(str(p) for p in error.get("loc", ())) or "(agent)"
            message = str(error.get("msg", ""))
            if message.startswith("Value error, "):
                message = message[len("Value error, ") :]
            elif error.get("type") not in ("missing",) and "input" in error:
                shown = repr(error["input"])
                message += f" (got {shown[:80] + '…' if len(shown) > 80 else shown})"
            errors.append((where, message))
        who = f"{kind} `{name}`" if isinstance(name, str) and name else kind
        lines = "; ".join(f"{where}: {message}" for where, message in errors)
        return cls(
            f"{who}: {lines}",
            agent=name if isinstance(name, str) else None,
            fields=errors,
            details=exc.errors(),
        )


class InputError(GraphflowConfigError):
    """What was passed to `invoke`/`stream`/`resume` cannot start or continue a run."""


class CheckpointStoreError(GraphflowError):
    """The checkpoint store cannot be used (a malformed URL, not a database, no server answers).

    Raised when the store is opened, or mid-run when it fails (the run's checkpoints up to then
    are kept: resume once the store is back).

    Attributes:
        store: the URL (or saver type) of the store.
        resumable: the store failed mid-run, so the run can continue once it works again (not
            for a store that never opened, or a thread whose checkpoints are damaged).
    """

    def __init__(self, message: str, *, store: str | None = None, resumable: bool = False) -> None:
        super().__init__(message)
        self.store = None if store is None else _hide_passwords(store)
        self.resumable = resumable


class RunStateError(GraphflowError, LookupError):
    """The thread is not in a state that allows what was asked (resume, answer, new input)."""


class RunNotFoundError(RunStateError):
    """No run is stored under the thread id in this checkpointer."""


class ThreadBusyError(RunStateError):
    """Another run holds the thread (one run per thread at a time).

    Attributes:
        thread_id: the busy thread.
        owner: who holds it (`host:pid`), when known.
    """

    def __init__(self, message: str, *, thread_id: str, owner: str | None = None) -> None:
        super().__init__(message)
        self.thread_id = thread_id
        self.owner = owner


class LeaseLostError(ThreadBusyError):
    """This run's lease on its thread was taken over by another run; it stopped writing.

    A run whose process was paused past its heartbeat (SIGSTOP, a frozen VM, a debugger) is
    declared crashed and another run may take the thread over. When the paused run wakes up it
    must not write a checkpoint or start a tool call any more: each of those checks the lease
    first (in the same transaction as the write) and raises this instead. Nothing is lost — the
    thread goes on in the run that holds it now (`owner`).
    """


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
    """A tool failed. Raised by graphflow when the failure ends the run; raised by tools to type it.

    A tool may raise a subclass to choose its error type (and so its recovery); a plain
    `ToolError` raised by a tool is `UNKNOWN`. When graphflow raises it, the run stops with its
    checkpoints kept: fix the cause, then `agent.resume(thread_id)` re-runs the failed call.

    Attributes:
        agent: name of the agent whose tool failed, when known.
        tool: name of the tool, when known.
        tool_call_id: id of the failed call, when known.
        error_type: one of `graphflow.tools.ToolErrorType` (a string).
        hint: how to fix the call, shown to the model with the error.
    """

    error_type: str = "UNKNOWN"
    """The `ToolErrorType` value this class stands for."""

    def __init__(
        self,
        message: str,
        *,
        agent: str | None = None,
        tool: str | None = None,
        tool_call_id: str | None = None,
        hint: str | None = None,
        error_type: str | None = None,
    ) -> None:
        super().__init__(message, agent=agent)
        if error_type is not None:
            self.error_type = error_type
        self.tool = tool
        self.tool_call_id = tool_call_id
        self.hint = hint


class ToolTimeoutError(ToolError):
    """Raise from a tool when an operation timed out (`TIMEOUT`: retried with backoff)."""

    error_type = "TIMEOUT"


class InvalidToolParamError(ToolError):
    """Raise from a tool when its arguments are wrong (`INVALID_PARAM`: the model regenerates)."""

    error_type = "INVALID_PARAM"


class ToolPermissionError(ToolError):
    """Raise from a tool when the action is not allowed (`PERMISSION_DENIED`)."""

    error_type = "PERMISSION_DENIED"


class ToolResourceNotFoundError(ToolError):
    """Raise from a tool when what it was asked for does not exist (`RESOURCE_NOT_FOUND`)."""

    error_type = "RESOURCE_NOT_FOUND"


class MCPConnectionError(GraphflowError):
    """An MCP server could not be started, reached or listed while its tools were discovered.

    Attributes:
        server: name of the server in the `mcpServers` config.
    """

    def __init__(self, message: str, *, server: str) -> None:
        super().__init__(message)
        self.server = server


class StateValueError(AgentRunError, TypeError):
    """An agent wrote a value that a checkpoint cannot store (a function, a client, ...)."""


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
            f"is yours and safe to construct, allow it with graphflow.allow_types({name}) (it takes "
            "effect at once), or use it as an agent's output_schema"
        )


class RendererMissingError(GraphflowError, RuntimeError):
    """A drawing format needs a program that is not installed (e.g. Graphviz `dot` for svg/png)."""


class OffloadKeyError(GraphflowError, ValueError):
    """A key given to a context offload store is not an observation id (`obs_17`) or summary id.

    Keys are checked before any store or file is touched, so a forged id (`../x`, another
    thread's path) can never read data outside the current thread's namespace.
    """
