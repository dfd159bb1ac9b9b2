"""Build a LangGraph checkpointer from a URL (sync savers, and async savers for `ainvoke`)."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver

from graphflow.checkpoint.serde import safe_serializer
from graphflow.exceptions import GraphflowConfigError

__all__ = ("needs_async_saver", "open_async_checkpointer", "resolve_checkpointer")

_POSTGRES = ("postgresql://", "postgres://")
_SQLITE = "sqlite:///"
_MEMORY = ("memory:", "memory://")


def _sqlite_path(spec: str) -> str:
    path = spec[len(_SQLITE) :]
    if "?" in path:
        raise GraphflowConfigError(
            f"checkpointer URL {spec!r}: query parameters are not supported; use "
            "sqlite:///path/to/runs.db"
        )
    path = str(Path(path).expanduser()) if path.startswith("~") else path
    if path != ":memory:":
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    return path


def _unsupported(spec: Any) -> GraphflowConfigError:
    if not isinstance(spec, str):
        return GraphflowConfigError(
            f"checkpointer {spec!r}: pass a LangGraph saver or a URL "
            "(memory:, sqlite:///path/runs.db, postgresql://...)"
        )
    return GraphflowConfigError(
        f"checkpointer URL {spec!r} is not supported; use memory:, sqlite:///path/runs.db or "
        "postgresql://user:pass@host:port/db"
    )


def _postgres_missing(exc: ImportError) -> ImportError:
    return ImportError('PostgreSQL checkpoints need: pip install "graphflow-agents[postgres]"')


def resolve_checkpointer(spec: Any, *, allowed_types: Iterable[type] = ()) -> Any:
    """A LangGraph saver for `spec`.

    Savers built here use `GraphflowSerializer` (no pickle; unknown types raise
    `CheckpointTypeError`); `allowed_types` are added to its allowlist.

    Args:
        spec: a `BaseCheckpointSaver` (returned as is); `None` or `"memory:"` for an in-memory
            saver; `"sqlite:///path/runs.db"` (the file is created); `"postgresql://..."` (needs
            the `postgres` extra); `False` for no checkpointer.
        allowed_types: classes (output schemas, ...) the saver may construct when loading.
    """
    if spec is False:
        return None
    if isinstance(spec, BaseCheckpointSaver):
        return spec
    serde = safe_serializer(allowed_types)
    if spec is None or spec in _MEMORY:
        return InMemorySaver(serde=serde)
    if not isinstance(spec, str):
        raise _unsupported(spec)
    if spec.startswith(_SQLITE):
        from langgraph.checkpoint.sqlite import SqliteSaver

        conn = sqlite3.connect(_sqlite_path(spec), check_same_thread=False)
        saver = SqliteSaver(conn, serde=serde)
        saver.setup()
        return saver
    if spec.startswith(_POSTGRES):
        try:
            from langgraph.checkpoint.postgres import PostgresSaver
            from psycopg.rows import dict_row
            from psycopg_pool import ConnectionPool
        except ImportError as exc:
            raise _postgres_missing(exc) from exc
        pool = ConnectionPool(
            spec,
            kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row},
            open=True,
        )
        psaver = PostgresSaver(pool, serde=serde)  # type: ignore[arg-type]
        psaver.setup()
        return psaver
    raise _unsupported(spec)


def needs_async_saver(spec: Any) -> bool:
    """Whether `spec` is a URL whose sync saver cannot serve `ainvoke` (SQLite, PostgreSQL)."""
    return isinstance(spec, str) and spec.startswith((_SQLITE, *_POSTGRES))


@asynccontextmanager
async def open_async_checkpointer(
    spec: str, *, allowed_types: Iterable[type] = ()
) -> AsyncIterator[Any]:
    """Open the async saver (`AsyncSqliteSaver`, `AsyncPostgresSaver`) for a URL, and close it.

    Async connections belong to the event loop that made them, so graphflow opens one per
    `ainvoke`/`astream` call and closes it when the call ends (nothing outlives the loop). Pass
    your own saver instance to keep a connection or pool across calls.
    """
    saver, close = await _build_async(spec, tuple(allowed_types))
    try:
        yield saver
    finally:
        await close()


async def _build_async(
    spec: str, types: tuple[type, ...]
) -> tuple[Any, Callable[[], Awaitable[None]]]:
    serde = safe_serializer(types)
    if spec.startswith(_SQLITE):
        import aiosqlite
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        conn = await aiosqlite.connect(_sqlite_path(spec))
        saver = AsyncSqliteSaver(conn, serde=serde)
        await saver.setup()
        return saver, conn.close
    try:
        from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
        from psycopg.rows import dict_row
        from psycopg_pool import AsyncConnectionPool
    except ImportError as exc:
        raise _postgres_missing(exc) from exc
    pool = AsyncConnectionPool(
        spec,
        min_size=1,
        kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row},
        open=False,
    )
    await pool.open()
    psaver = AsyncPostgresSaver(pool, serde=serde)  # type: ignore[arg-type]
    await psaver.setup()
    return psaver, pool.close
