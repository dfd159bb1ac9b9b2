"""Checkpointers from URLs (`memory:`, `sqlite:///path/runs.db`, `postgresql://...`), safe
serialization, and run listing."""

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
