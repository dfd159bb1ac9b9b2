"""Build a LangGraph checkpointer from a URL."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver

from graphflow.exceptions import GraphflowConfigError

__all__ = ("resolve_checkpointer",)


def resolve_checkpointer(spec: Any) -> Any:
    """A LangGraph saver for `spec`.

    Args:
        spec: a `BaseCheckpointSaver` (returned as is); `None` or `"memory:"` for an in-memory
            saver; `"sqlite:///path/runs.db"` (the file is created); `"postgresql://..."` (needs
            the `postgres` extra); `False` for no checkpointer.
    """
    if spec is False:
        return None
    if spec is None:
        return InMemorySaver()
    if isinstance(spec, BaseCheckpointSaver):
        return spec
    if not isinstance(spec, str):
        raise GraphflowConfigError(
            f"checkpointer {spec!r}: pass a LangGraph saver or a URL "
            "(memory:, sqlite:///path/runs.db, postgresql://...)"
        )
    if spec in ("memory:", "memory://"):
        return InMemorySaver()
    if spec.startswith("sqlite:///"):
        from langgraph.checkpoint.sqlite import SqliteSaver

        path = spec[len("sqlite:///") :]
        if path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(path, check_same_thread=False)
        saver = SqliteSaver(conn)
        saver.setup()
        return saver
    if spec.startswith(("postgresql://", "postgres://")):
        try:
            from langgraph.checkpoint.postgres import PostgresSaver
            from psycopg.rows import dict_row
            from psycopg_pool import ConnectionPool
        except ImportError as exc:
            raise ImportError(
                'PostgreSQL checkpoints need: pip install "graphflow-agents[postgres]"'
            ) from exc
        pool = ConnectionPool(
            spec, kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row},
            open=True,
        )
        saver = PostgresSaver(pool)  # type: ignore[arg-type]
        saver.setup()
        return saver
    raise GraphflowConfigError(
        f"checkpointer URL {spec!r} is not supported; use memory:, sqlite:///path/runs.db or "
        "postgresql://user:pass@host:port/db"
    )
