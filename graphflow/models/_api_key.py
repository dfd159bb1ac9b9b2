"""`require_api_key`: a model built without an API key says so when it is needed, not before."""

from __future__ import annotations

from typing import Any

from graphflow.exceptions import GraphflowConfigError

__all__ = ("require_api_key",)


def require_api_key(model: Any) -> None:
    """Raise now what a model built without an API key would raise at its first call.

    Models from strings and `openai_model(...)` are built without a key when none is set, so a
    team can be loaded, drawn and compiled without credentials; a runner calls this when a run
    starts to fail before any agent has run.

    Raises:
        GraphflowConfigError: the model has no key; the message names the variable to set.
    """
    missing = getattr(model, "_missing_key", None)
    if isinstance(missing, str) and missing:
        raise GraphflowConfigError(missing)
