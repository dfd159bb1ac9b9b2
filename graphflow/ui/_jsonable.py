"""State values as JSON for the page: messages, models and dataclasses made plain, the rest as text."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from langchain_core.messages import BaseMessage

from graphflow.state import is_private

__all__ = ("jsonable", "public_values")


def jsonable(value: Any, depth: int = 0) -> Any:
    """`value` as something `json.dumps` takes (unknown objects become their `repr`)."""
    if depth > 20:
        return repr(value)
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, BaseMessage):
        out: dict[str, Any] = {
            "type": value.type,
            "id": value.id,
            "name": value.name,
            "content": jsonable(value.content, depth + 1),
        }
        calls = getattr(value, "tool_calls", None)
        if calls:
            out["tool_calls"] = [
                {"name": c.get("name"), "args": jsonable(c.get("args"), depth + 1)} for c in calls
            ]
        status = getattr(value, "status", None)
        if status is not None:
            out["status"] = status
        return out
    if isinstance(value, Mapping):
        return {str(k): jsonable(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [jsonable(v, depth + 1) for v in value]
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        try:
            return jsonable(dump(), depth + 1)
        except Exception:  # noqa: BLE001 - shown as text instead
            return repr(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return jsonable(dataclasses.asdict(value), depth + 1)
    return repr(value)


def public_values(values: Mapping[str, Any] | None) -> dict[str, Any]:
    """The state's public keys as JSON (graphflow's private bookkeeping keys left out)."""
    return {k: jsonable(v) for k, v in (values or {}).items() if not is_private(k)}
