"""`ToolErrorType` and the mapping from what a tool raised to the type that decides its recovery.

Mapping (first match wins):

* graphflow's typed errors (`ToolTimeoutError`, `InvalidToolParamError`, `ToolPermissionError`,
  `ToolResourceNotFoundError`; any `ToolError` carries its `error_type`) → their type;
* `TimeoutError` (and `asyncio.TimeoutError`) → `TIMEOUT`;
* a pydantic `ValidationError`, or a `TypeError` raised while binding the arguments to the tool
  (missing, unexpected or duplicated arguments) → `INVALID_PARAM`;
* `PermissionError` → `PERMISSION_DENIED`;
* `FileNotFoundError`, `LookupError` (`KeyError`, `IndexError`) → `RESOURCE_NOT_FOUND`;
* anything else — `SystemExit` from a tool included — → `UNKNOWN`.
"""

from __future__ import annotations

import re
from enum import StrEnum

from pydantic import ValidationError as PydanticValidationError

from graphflow.exceptions import ToolError

__all__ = ("ToolErrorType", "classify_exception", "default_hint")


class ToolErrorType(StrEnum):
    """Why a tool call failed; each type has its own recovery (see `ToolPolicy`)."""

    TIMEOUT = "TIMEOUT"
    """The call took longer than its policy's `timeout` (or the tool raised `TimeoutError`)."""
    INVALID_PARAM = "INVALID_PARAM"
    """The arguments were wrong or missing, or the model named a tool that does not exist."""
    PERMISSION_DENIED = "PERMISSION_DENIED"
    """The action is not allowed."""
    RESOURCE_NOT_FOUND = "RESOURCE_NOT_FOUND"
    """What the call asked for does not exist (or its server cannot be reached)."""
    UNKNOWN = "UNKNOWN"
    """Anything else: a bug or an outage the model cannot fix. Ends the run (resumable)."""


_HINTS = {
    ToolErrorType.TIMEOUT: (
        "the tool did not answer in time; try again later, with a smaller request, or use "
        "another tool"
    ),
    ToolErrorType.INVALID_PARAM: (
        "fix the arguments to match the tool's parameters (names, types, required fields) and "
        "call it again"
    ),
    ToolErrorType.PERMISSION_DENIED: (
        "this action is not allowed; do not repeat it unchanged — use something you are "
        "allowed to access, or tell the user"
    ),
    ToolErrorType.RESOURCE_NOT_FOUND: (
        "check the name, id or path (list what exists first if you can) and call again with "
        "one that exists"
    ),
    ToolErrorType.UNKNOWN: "the tool failed unexpectedly; the run stops so the cause can be fixed",
}

# what Python says when call arguments do not fit a signature
_BINDING = re.compile(
    r"missing \d+ required|unexpected keyword argument|takes \d+ positional argument|"
    r"takes from \d+ to \d+ positional|got multiple values for argument|"
    r"positional-only arguments passed as keyword"
)


def default_hint(error_type: ToolErrorType) -> str:
    """The hint shown to the model for `error_type` when the error brings none of its own."""
    return _HINTS[error_type]


def classify_exception(exc: BaseException) -> ToolErrorType:
    """The `ToolErrorType` of an exception a tool raised (see the module docstring)."""
    if isinstance(exc, ToolError):
        try:
            return ToolErrorType(exc.error_type)
        except ValueError:
            return ToolErrorType.UNKNOWN
    if isinstance(exc, TimeoutError):
        return ToolErrorType.TIMEOUT
    if isinstance(exc, PydanticValidationError):
        return ToolErrorType.INVALID_PARAM
    if isinstance(exc, TypeError) and _is_binding_error(exc):
        return ToolErrorType.INVALID_PARAM
    if isinstance(exc, PermissionError):
        return ToolErrorType.PERMISSION_DENIED
    if isinstance(exc, FileNotFoundError | LookupError):
        return ToolErrorType.RESOURCE_NOT_FOUND
    return ToolErrorType.UNKNOWN


def _is_binding_error(exc: TypeError) -> bool:
    """A `TypeError` from calling the tool with arguments that do not fit, not one raised inside.

    When arguments do not bind, the called function never starts: the deepest frame of the
    traceback is the caller (LangChain's tool machinery), not the tool's own code.
    """
    if not _BINDING.search(str(exc)):
        return False
    tb = exc.__traceback__
    if tb is None:
        return True
    while tb.tb_next is not None:
        tb = tb.tb_next
    # by module, not by path: a user's project may well live in a folder named `graphflow`
    module = str(tb.tb_frame.f_globals.get("__name__") or "")
    return module.startswith(("langchain_core.", "graphflow."))
