"""Checkpointers from URLs (`memory:`, `sqlite:///path/runs.db`, `postgresql://...`), safe
serialization, and run listing.

The names load on first use (PEP 562): `graphflow runs` reads a store through `checkpoint.rows`
and `checkpoint.stored` without the savers and the serializer, which import LangGraph.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from graphflow.checkpoint.runs import CheckpointInfo, RunInfo, list_runs, run_history, run_info
    from graphflow.checkpoint.serde import (
        CheckpointTypeError,
        GraphflowSerializer,
        allow_types,
        safe_serializer,
        schema_types,
    )
    from graphflow.checkpoint.urls import (
        needs_async_saver,
        open_async_checkpointer,
        resolve_checkpointer,
    )

_HOMES = {
    "CheckpointInfo": "runs",
    "RunInfo": "runs",
    "list_runs": "runs",
    "run_history": "runs",
    "run_info": "runs",
    "CheckpointTypeError": "serde",
    "GraphflowSerializer": "serde",
    "allow_types": "serde",
    "safe_serializer": "serde",
    "schema_types": "serde",
    "needs_async_saver": "urls",
    "open_async_checkpointer": "urls",
    "resolve_checkpointer": "urls",
}

__all__ = (
    "CheckpointInfo",
    "CheckpointTypeError",
    "GraphflowSerializer",
    "RunInfo",
    "allow_types",
    "list_runs",
    "needs_async_saver",
    "open_async_checkpointer",
    "resolve_checkpointer",
    "run_history",
    "run_info",
    "safe_serializer",
    "schema_types",
)


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
