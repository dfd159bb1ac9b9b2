"""Build a LangGraph checkpointer from a URL (sync savers, and async savers for `ainvoke`)."""

from __future__ import annotations

import asyncio
import os
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver

from graphflow._internal.passwords import hide_passwords
from graphflow.checkpoint._damaged import named_errors
from graphflow.checkpoint._fencing import fenced
from graphflow.checkpoint._pg_timeout import PG_CONNECT_TIMEOUT_ENV, pg_timeout
from graphflow.checkpoint.serde import safe_serializer
from graphflow.exceptions import CheckpointStoreError, GraphflowConfigError

__all__ = (
    "needs_async_saver",
    "open_async_checkpointer",
    "pg_timeout",
    "reading_checkpointer",
    "resolve_checkpointer",
    "safe_url",
    "store_exists",
)

_POSTGRES = ("postgresql://", "postgres://")
_SQLITE = "sqlite:///"
_MEMORY = ("memory:", "memory://")


CHECKPOINTER_ENV = "GRAPHFLOW_CHECKPOINTER"
"""The store of runs whose agent names none (a URL); see `graphflow.runtime.graphs`."""


def _named(spec: str) -> str:
    """`spec` quoted, and where it came from when that is not the caller's code."""
    if os.environ.get(CHECKPOINTER_ENV) == spec:
        return f"{spec!r} (from {CHECKPOINTER_ENV})"
    return repr(spec)


def _store_error(spec: str, path: str, problem: str, fix: str) -> CheckpointStoreError:
    return CheckpointStoreError(
        f"checkpointer {_named(spec)}: {problem} (path {path}); {fix}", store=spec
    )


def _sqlite_target(spec: str) -> Path | None:
    """The file a `sqlite:///` URL names (None for `:memory:`), checked without touching the disk.

    It is a path, not a directory, with no file where a folder should be.
    """
    path = spec[len(_SQLITE) :]
    if "?" in path:
        raise GraphflowConfigError(
            f"checkpointer URL {_named(spec)}: query parameters are not supported; use "
            "sqlite:///path/to/runs.db"
        )
    if not path.strip():
        raise GraphflowConfigError(
            f"checkpointer URL {_named(spec)} names no file; write sqlite:///runs.db (relative to the "
            "working directory) or sqlite:////absolute/path/runs.db"
        )
    if path == ":memory:":
        return None
    target = Path(path).expanduser()
    if target.is_dir():
        raise _store_error(spec, str(target), "that is a directory", "name a file inside it")
    parent = target.parent
    for ancestor in (parent, *parent.parents):
        if ancestor.exists():
            if not ancestor.is_dir():
                raise _store_error(
                    spec, str(target), f"{ancestor} is a file, not a folder", "choose another path"
                )
            break
    return target


def _sqlite_path(spec: str) -> str:
    """The file of a `sqlite:///` URL, checked: its folder exists or can be made, it is writable."""
    target = _sqlite_target(spec)
    if target is None:
        return ":memory:"
    parent = target.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _store_error(
            spec, str(target), f"its folder cannot be made ({exc.strerror})", "choose another path"
        ) from None
    writable = os.access(target, os.W_OK) if target.exists() else os.access(parent, os.W_OK)
    if not writable:
        raise _store_error(
            spec,
            str(target),
            "it is read-only for this process",
            "choose a writable location, or fix its permissions",
        )
    return str(target)


def _open_sqlite(spec: str, path: str) -> sqlite3.Connection:
    """A connection to an SQLite file that is checked to be a usable database."""
    existed = Path(path).exists()
    try:
        conn = sqlite3.connect(path, check_same_thread=False, timeout=30)
        conn.execute("PRAGMA schema_version").fetchone()  # reads the header: not-a-db fails here
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        size = conn.execute("PRAGMA page_size").fetchone()[0]
    except sqlite3.DatabaseError as exc:
        if not existed:  # nothing to blame but the place (root passes os.access on /proc)
            raise _store_error(
                spec,
                path,
                f"the database file cannot be created there ({exc})",
                "choose a writable location, or fix its permissions",
            ) from None
        raise _store_error(
            spec,
            path,
            f"the file is not a usable SQLite database ({exc})",
            "point the URL at another file, or move this one away (a new file is created)",
        ) from None
    actual = Path(path).stat().st_size if Path(path).exists() else 0
    # in WAL mode (SqliteSaver's) committed pages may still be in the -wal file only: a store
    # another connection is using, or one whose process died, is not truncated
    wal = Path(f"{path}-wal")
    if actual + (wal.stat().st_size if wal.exists() else 0) < pages * size:
        conn.close()
        raise _store_error(
            spec,
            path,
            f"the database is truncated ({actual} bytes of {pages * size})",
            "restore it from a backup, or point the URL at another file",
        )
    return conn


def _setup_failed(spec: str, path: str, exc: sqlite3.DatabaseError) -> CheckpointStoreError:
    if "locked" in str(exc):
        return _store_error(
            spec,
            path,
            f"its tables cannot be created ({exc})",
            "another connection holds a write lock on the file (a long transaction, an sqlite3 "
            "shell with BEGIN open); end it and try again",
        )
    return _store_error(spec, path, f"its tables cannot be created ({exc})", "check the file")


def _unsupported(spec: Any) -> GraphflowConfigError:
    if not isinstance(spec, str):
        return GraphflowConfigError(
            f"checkpointer {spec!r}: pass a LangGraph saver or a URL "
            "(memory:, sqlite:///path/runs.db, postgresql://...)"
        )
    return GraphflowConfigError(
        f"checkpointer URL {_named(spec)} is not supported; use memory:, sqlite:///path/runs.db or "
        "postgresql://user@host:port/db"
    )


def _postgres_missing(exc: ImportError) -> ImportError:
    return ImportError('PostgreSQL checkpoints need: pip install "graphflow-agents[postgres]"')


def resolve_checkpointer(spec: Any, *, allowed_types: Iterable[type] = ()) -> Any:
    """A LangGraph saver for `spec`.

    Savers built here use `GraphflowSerializer` (no pickle; unknown types raise
    `CheckpointTypeError`); `allowed_types` are added to its allowlist. Every saver returned
    (one passed in too: the same object) checks a run's lease before each write (see
    `graphflow.checkpoint._fencing`).

    Args:
        spec: a `BaseCheckpointSaver` (returned as is); `None` or `"memory:"` for an in-memory
            saver; `"sqlite:///path/runs.db"` (the file is created); `"postgresql://..."` (needs
            the `postgres` extra); `False` for no checkpointer.
        allowed_types: classes (output schemas, ...) the saver may construct when loading.
    """
    if spec is False:
        return None
    if isinstance(spec, BaseCheckpointSaver):
        return fenced(spec)
    serde = safe_serializer(allowed_types)
    if spec is None or spec in _MEMORY:
        return fenced(InMemorySaver(serde=serde))
    if not isinstance(spec, str):
        raise _unsupported(spec)
    if spec.startswith(_SQLITE):
        from graphflow.checkpoint._sqlite_file import FollowingSqliteSaver

        path = _sqlite_path(spec)
        saver = named_errors(
            FollowingSqliteSaver, _open_sqlite(spec, path), serde=serde, store=spec
        )
        saver.follow(path, lambda: _open_sqlite(spec, _sqlite_path(spec)))
        try:
            saver.setup()
        except sqlite3.DatabaseError as exc:
            raise _setup_failed(spec, path, exc) from None
        return fenced(saver)
    if spec.startswith(_POSTGRES):
        try:
            from langgraph.checkpoint.postgres import PostgresSaver
            from psycopg.rows import dict_row
            from psycopg_pool import ConnectionPool
        except ImportError as exc:
            raise _postgres_missing(exc) from exc
        timeout = pg_timeout()
        _probe_postgres(spec, timeout)
        pool = ConnectionPool(spec, **_pool_options(ConnectionPool, dict_row, timeout))
        try:
            pool.open(wait=True, timeout=timeout)
        except Exception as exc:
            pool.close()
            raise _pg_unreachable(spec, timeout, exc) from None
        psaver = named_errors(PostgresSaver, pool, serde=serde, store=safe_url(spec))
        try:
            if spec not in _SET_UP:
                with _setup_lock(spec, timeout):
                    psaver.setup()
                _SET_UP.add(spec)
        except Exception as exc:
            pool.close()
            raise _pg_setup_failed(spec, exc) from None
        return fenced(psaver)
    raise _unsupported(spec)


def store_exists(spec: Any) -> bool:
    """Whether runs may already be stored at `spec`.

    False only for a `sqlite:///` URL whose file does not exist: a read of such a store must
    answer "no run", not create the file.
    """
    if not (isinstance(spec, str) and spec.startswith(_SQLITE)):
        return True
    target = _sqlite_target(spec)  # a URL that can never work is an error for reads too
    return target is None or target.is_file()


@contextmanager
def reading_checkpointer(spec: str, *, allowed_types: Iterable[type] = ()) -> Iterator[Any]:
    """A saver to read the runs stored at the URL `spec`, closed on exit.

    None when the store does not exist (`store_exists`): reading never creates a store file.
    """
    if not store_exists(spec):
        yield None
        return
    saver = resolve_checkpointer(spec, allowed_types=allowed_types)
    try:
        yield saver
    finally:
        conn = getattr(saver, "conn", None)  # a SQLite connection or a PostgreSQL pool
        if conn is not None:
            conn.close()


def _pool_options(pool_class: Any, row_factory: Any, timeout: float) -> dict[str, Any]:
    """What the sync and the async PostgreSQL pools of a URL are opened with."""
    return {
        "kwargs": {
            "autocommit": True,
            "prepare_threshold": 0,
            "row_factory": row_factory,
            "connect_timeout": int(timeout),
        },
        "timeout": timeout,
        "reconnect_timeout": timeout,
        # a connection is checked before use: after a server restart the pool's idle
        # connections are dead, and the resume would fail on the first one
        "check": pool_class.check_connection,
        "open": False,
    }


def _probe_postgres(spec: str, timeout: float) -> None:
    """Connect once, directly: an unreachable server fails at once, with its own reason.

    (A pool would retry in the background and log each attempt until its timeout.)
    """
    import psycopg

    try:
        psycopg.connect(spec, connect_timeout=int(timeout)).close()
    except psycopg.Error as exc:
        raise _pg_unreachable(spec, timeout, exc) from None


_SETUP_LOCK = 0x6772_6166_6C6F_77  # "graflow": one advisory lock id for every process
"""PostgreSQL advisory lock held while a process sets up the store's tables."""
_SETUP_WAIT = 120.0
"""Seconds a process waits for another to finish setting up the store."""
_SET_UP: set[str] = set()
"""PostgreSQL URLs whose tables this process has set up (an async run opens its own saver: the
setup, with its lock, is paid once per process, not once per run)."""


def _take_setup_lock(spec: str, timeout: float) -> Any:
    """A connection holding the setup lock (closing it releases the lock).

    LangGraph's `setup()` creates tables and runs migrations; two processes doing it at once
    (the workers of a batch starting together) collide on PostgreSQL's catalog ("duplicate key
    value violates unique constraint pg_type_typname_nsp_index"), so they take turns.
    """
    import time

    import psycopg

    conn = psycopg.connect(spec, connect_timeout=int(timeout), autocommit=True)
    try:
        # polled, not waited for in one statement: a waiting statement holds a snapshot, and the
        # holder's `CREATE INDEX CONCURRENTLY` would wait for it in turn (a deadlock nobody sees)
        deadline = time.monotonic() + _SETUP_WAIT
        while not conn.execute("SELECT pg_try_advisory_lock(%s)", (_SETUP_LOCK,)).fetchone()[0]:  # type: ignore[index]
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"another process kept setting up the store for {_SETUP_WAIT:g} s"
                )
            time.sleep(0.1)
    except BaseException:
        conn.close()
        raise
    return conn


@contextmanager
def _setup_lock(spec: str, timeout: float) -> Iterator[None]:
    conn = _take_setup_lock(spec, timeout)
    try:
        yield
    finally:
        conn.close()


def _pg_setup_failed(spec: str, exc: BaseException) -> CheckpointStoreError:
    reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return CheckpointStoreError(
        f"checkpointer {safe_url(spec)!r}: setting up graphflow's tables in PostgreSQL failed "
        f"({reason}); check that the user may create tables in that database",
        store=safe_url(spec),
    )


def safe_url(spec: str) -> str:
    """`spec` with its password hidden (a URL's `user:pass@`, a conninfo's `password=`)."""
    return hide_passwords(spec)


def _pg_unreachable(spec: str, timeout: float, exc: BaseException) -> CheckpointStoreError:
    reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return CheckpointStoreError(
        f"checkpointer {safe_url(spec)!r}: PostgreSQL cannot be reached (waited at most "
        f"{timeout:g} s: {reason}); check that the server runs and the URL's host, port, database and "
        f"credentials (wait longer with {PG_CONNECT_TIMEOUT_ENV}=seconds)",
        store=safe_url(spec),
    )


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


def _rollback_and_close(raw: sqlite3.Connection) -> None:
    try:
        raw.rollback()
    finally:
        raw.close()


async def _build_async(
    spec: str, types: tuple[type, ...]
) -> tuple[Any, Callable[[], Awaitable[None]]]:
    serde = safe_serializer(types)
    if spec.startswith(_SQLITE):
        import aiosqlite
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        path = _sqlite_path(spec)
        _open_sqlite(spec, path).close()  # the same checks as the sync saver
        conn = await aiosqlite.connect(path, timeout=30)
        saver = named_errors(AsyncSqliteSaver, conn, serde=serde, store=spec)
        try:
            await saver.setup()
        except sqlite3.DatabaseError as exc:
            await conn.close()
            raise _setup_failed(spec, path, exc) from None

        async def close() -> None:
            # A checkpoint write cancelled between its INSERT and its COMMIT (a parallel step that
            # failed) leaves a transaction open; its cursor, kept alive by the cancelled task's
            # traceback, keeps the closed connection open with it, and the file stays locked for
            # the next run of this process (the resume). The write never completed, so it is
            # rolled back: LangGraph runs that task again. Rollback and close are one job of the
            # connection's own thread, after the writes queued before it and with no room for a
            # straggler's write in between (aiosqlite has no public call for that).
            try:
                await conn._execute(_rollback_and_close, conn._conn)
            finally:
                await conn.close()

        return fenced(saver), close
    try:
        from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
        from psycopg.rows import dict_row
        from psycopg_pool import AsyncConnectionPool
    except ImportError as exc:
        raise _postgres_missing(exc) from exc
    timeout = pg_timeout()
    await asyncio.to_thread(_probe_postgres, spec, timeout)
    pool = AsyncConnectionPool(
        spec, min_size=1, **_pool_options(AsyncConnectionPool, dict_row, timeout)
    )
    try:
        await pool.open(wait=True, timeout=timeout)
    except Exception as exc:
        await pool.close()
        raise _pg_unreachable(spec, timeout, exc) from None
    psaver = named_errors(AsyncPostgresSaver, pool, serde=serde, store=safe_url(spec))
    try:
        if spec not in _SET_UP:
            lock = await asyncio.to_thread(_take_setup_lock, spec, timeout)
            try:
                await psaver.setup()
            finally:
                await asyncio.to_thread(lock.close)
            _SET_UP.add(spec)
    except Exception as exc:
        await pool.close()
        raise _pg_setup_failed(spec, exc) from None
    return fenced(psaver), pool.close
