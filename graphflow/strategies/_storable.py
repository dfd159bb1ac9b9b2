"""Refuse a state value a checkpoint could not give back, when it is written — not on resume.

A value of a type outside the checkpointer's allowlist (a function, a client, a class nobody
allowed) is stored without complaint and fails only when the run is loaded again — after the
step that wrote it, and its side effects, have to be repeated. So the values user code writes (a
`FunctionAgent`'s result, a hook's update, a tool's artifact, a merge function's result) are
checked against the running saver's allowlist before they are written. Runs without a
checkpointer, or on a saver with another serializer, are not checked.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.runnables import RunnableConfig

from graphflow.checkpoint.serde import allowlist_of, storing_advice, unstorable
from graphflow.exceptions import StateValueError
from graphflow.state import MESSAGES

__all__ = ("ensure_storable",)


def ensure_storable(
    update: Mapping[str, Any], *, agent: str, config: RunnableConfig | None, what: str
) -> None:
    """Raise `StateValueError` if `update` (written by `what` of `agent`) holds an unstorable value."""
    allowed = allowlist_of(config)
    if allowed is None:
        return
    for key, value in update.items():
        if key == MESSAGES:
            continue  # messages are built by graphflow and LangChain: always storable
        found = unstorable(value, allowed, path=key)
        if found is not None:
            advice = storing_advice(
                found,
                "a checkpoint cannot store that type (loading the run again would have to "
                "construct it). Return plain data (str, numbers, lists, dicts, pydantic models of "
                "an output_schema), or allow the class: graphflow.checkpoint.allow_types(TheClass)",
            )
            raise StateValueError(
                f"Agent `{agent}`: {what} wrote {found} to state key `{key}`; {advice}",
                agent=agent,
            )
