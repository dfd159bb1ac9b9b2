"""Fenced savers: a checkpoint write checks the run's lease in the same transaction as the write.

A run carries its `Fence` (see `graphflow.checkpoint.leases`) in `config["configurable"]`. The
savers graphflow runs on — built from URLs, or passed as instances — check it in `put` /
`put_writes` (and their async twins) so that a process that lost its lease (paused past its
heartbeat, its thread taken over) cannot write after the takeover:

* SQLite: `BEGIN IMMEDIATE` (the file's write lock, which a takeover needs too), read the lease
  row, then LangGraph's own INSERT and COMMIT — one transaction.
* PostgreSQL: a transaction that reads the lease row `FOR SHARE` (a takeover's `UPDATE` waits
  for it), then LangGraph's own statements.
* In memory: the check and the write under the lock every lease operation takes.

Writes without a fence (LangGraph used directly, `update_state`) are LangGraph's, unchanged.

The same wrapper checks every value a run writes to a state key against the saver's allowlist
before it is committed, on every store alike (`unstorable`): whatever wrote it — a function, a
hook, a custom strategy, a tool's `Command` — a value the checkpoint could not load back is a
`StateValueError` now, not a thread that fails at its next step or when it is read.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import threading
from collections.abc import AsyncIterator, Iterator
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.types import _DeltaSnapshot

from graphflow.checkpoint.leases import (
    Fence,
    MemoryLeases,
    PostgresLeases,
    SqliteLeases,
    fence_of,
    holder_in,
)
from graphflow.checkpoint.serde import GraphflowSerializer, storing_advice, unstorable
from graphflow.exceptions import StateValueError
from graphflow.state import MESSAGES, is_private

__all__ = ("fenced", "fenced_class")

_WRITING = "writing a checkpoint"
_active: contextvars.ContextVar[Fence | None] = contextvars.ContextVar(
    "graphflow_fence", default=None
)
"""The fence of the write in progress in this context (read by the overridden cursors)."""


@contextlib.contextmanager
def _writing(config: Any) -> Iterator[Fence | None]:
    fence = fence_of(config)
    token = _active.set(fence)
    try:
        yield fence
    finally:
        _active.reset(token)


class _FencedWrites(BaseCheckpointSaver):  # (a saver base: instances can change class)
    """`put`/`put_writes` (and async twins) that make the run's fence active around the write.

    The savers' own transaction seams (`cursor`, `_cursor`, the lock) do the check. Written
    values are checked first (`_refuse_unstorable`).
    """

    def put(self, config: Any, checkpoint: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: D102
        _refuse_unstorable(self, config, _changed(checkpoint, *args, **kwargs))
        with _writing(config):
            return super().put(config, checkpoint, *args, **kwargs)

    # (explicit `task_path`: LangGraph passes it only to a `put_writes` whose signature names it,
    # and without it writes replay in task-id order, not in the order of the calls)
    def put_writes(  # noqa: D102
        self, config: Any, writes: Any, task_id: str, task_path: str = ""
    ) -> Any:
        _refuse_unstorable(self, config, writes)
        with _writing(config):
            return super().put_writes(config, writes, task_id, task_path)

    async def aput(self, config: Any, checkpoint: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: D102
        _refuse_unstorable(self, config, _changed(checkpoint, *args, **kwargs))
        with _writing(config):
            return await super().aput(config, checkpoint, *args, **kwargs)

    async def aput_writes(  # noqa: D102
        self, config: Any, writes: Any, task_id: str, task_path: str = ""
    ) -> Any:
        _refuse_unstorable(self, config, writes)
        with _writing(config):
            return await super().aput_writes(config, writes, task_id, task_path)


def _changed(checkpoint: Any, *args: Any, **kwargs: Any) -> list[tuple[str, Any]]:
    """The channel values a `put(config, checkpoint, metadata, new_versions)` changes."""
    versions = kwargs.get("new_versions", args[1] if len(args) > 1 else None) or {}
    values = checkpoint.get("channel_values") or {}
    return [(k, values[k]) for k in versions if k in values]


def _refuse_unstorable(saver: Any, config: Any, writes: Any) -> None:
    """`StateValueError` for a write to a state key that the saver could not load back.

    LangGraph's own channels (`__error__`, `__pregel_tasks`, `branch:...`), graphflow's private
    ones and the conversation are built by LangGraph and graphflow, and not looked into.
    """
    serde = getattr(saver, "serde", None)
    if not isinstance(serde, GraphflowSerializer) or fence_of(config) is None:
        return
    allowed = serde.allowed
    for channel, value in writes:
        if not isinstance(channel, str) or not channel.isidentifier():
            continue
        if channel.startswith("__") or channel == MESSAGES or is_private(channel):
            continue
        if isinstance(value, _DeltaSnapshot):
            value = value.value
        found = unstorable(value, allowed, path=channel)
        if found is None:
            continue
        ns = str(((config or {}).get("configurable") or {}).get("checkpoint_ns") or "")
        agent = ns.split("|")[-1].split(":")[0] or None
        where = f"Agent `{agent}`" if agent else "The run"
        advice = storing_advice(
            found,
            "a checkpoint cannot store that type (loading the run again would have to construct "
            "it), so nothing was written. Write plain data (str, numbers, lists, dicts, pydantic "
            "models of an output_schema), or allow the class: "
            "graphflow.checkpoint.allow_types(TheClass)",
        )
        raise StateValueError(
            f"{where} wrote {found} to state key `{channel}`; {advice}",
            agent=agent,
        )


class _FencedMemory(_FencedWrites):
    """`InMemorySaver`: check and write under the lock of the process's leases."""

    def put(self, config: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: D102
        with _memory_guard(fence_of(config)):
            return super().put(config, *args, **kwargs)

    def put_writes(  # noqa: D102
        self, config: Any, writes: Any, task_id: str, task_path: str = ""
    ) -> Any:
        with _memory_guard(fence_of(config)):
            return super().put_writes(config, writes, task_id, task_path)

    async def aput(self, config: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: D102
        return self.put(config, *args, **kwargs)

    async def aput_writes(  # noqa: D102
        self, config: Any, writes: Any, task_id: str, task_path: str = ""
    ) -> Any:
        return self.put_writes(config, writes, task_id, task_path)


@contextlib.contextmanager
def _memory_guard(fence: Fence | None) -> Iterator[None]:
    if fence is None:
        yield
        return
    if isinstance(fence.store, MemoryLeases):
        with fence.store.lock:
            fence.verify(fence.store.current(fence.thread_id), _WRITING)
            yield
        return
    fence.check(_WRITING)  # (an in-memory saver whose leases live elsewhere)
    yield


class _FencedSqlite(_FencedWrites):
    """`SqliteSaver`: its `cursor()` opens `BEGIN IMMEDIATE` and checks the lease first."""

    lock: Any
    conn: Any

    @contextlib.contextmanager
    def cursor(self, transaction: bool = True) -> Iterator[Any]:  # noqa: D102
        fence = _active.get()
        if fence is None or not transaction or not isinstance(fence.store, SqliteLeases):
            if fence is not None and transaction:
                fence.check(_WRITING)  # (its leases live elsewhere: checked, not atomically)
            with super().cursor(transaction) as cur:  # type: ignore[misc]
                yield cur
            return
        # (LangGraph's cursor(), with the transaction opened and the lease read first)
        with self.lock:
            self.setup()  # type: ignore[attr-defined]
            self.conn.execute("BEGIN IMMEDIATE")
            done = False
            try:
                fence.verify(holder_in(self.conn, fence.thread_id), _WRITING)
                cur = self.conn.cursor()
                try:
                    yield cur
                finally:
                    cur.close()
                done = True
            finally:
                if done:
                    self.conn.commit()
                else:
                    self.conn.rollback()


class _TaskLock:
    """An asyncio lock the task holding it may take again (wraps the saver's own lock)."""

    def __init__(self, inner: asyncio.Lock) -> None:
        self._inner = inner
        self._owner: asyncio.Task[Any] | None = None
        self._depth = 0

    async def __aenter__(self) -> None:
        task = asyncio.current_task()
        if self._owner is not None and self._owner is task:
            self._depth += 1
            return
        await self._inner.acquire()
        self._owner, self._depth = task, 1

    async def __aexit__(self, *exc: object) -> None:
        self._depth -= 1
        if self._depth == 0:
            self._owner = None
            self._inner.release()

    def locked(self) -> bool:  # noqa: D102
        return self._inner.locked()


class _FencedAsyncSqlite(_FencedWrites):
    """`AsyncSqliteSaver`: `BEGIN IMMEDIATE`, the lease read, then LangGraph's INSERT and COMMIT.

    LangGraph's `aput` takes the saver's lock and commits; the lock is made re-entrant for the
    task that holds it, so the check and LangGraph's write are one transaction under one lock.
    """

    lock: Any
    conn: Any

    async def aput(self, config: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: D102
        async with self._fenced(config) as _:
            return await super().aput(config, *args, **kwargs)

    async def aput_writes(  # noqa: D102
        self, config: Any, writes: Any, task_id: str, task_path: str = ""
    ) -> Any:
        async with self._fenced(config) as _:
            return await super().aput_writes(config, writes, task_id, task_path)

    @contextlib.asynccontextmanager
    async def _fenced(self, config: Any) -> AsyncIterator[None]:
        fence = fence_of(config)
        if fence is None or not isinstance(fence.store, SqliteLeases):
            if fence is not None:
                await asyncio.to_thread(fence.check, _WRITING)
            yield
            return
        if not isinstance(self.lock, _TaskLock):
            self.lock = _TaskLock(self.lock)
        await self.setup()  # type: ignore[attr-defined]
        async with self.lock:
            await self.conn.execute("BEGIN IMMEDIATE")
            try:
                async with self.conn.execute(
                    "SELECT owner, host, pid, heartbeat FROM graphflow_leases WHERE thread_id = ?",
                    (fence.thread_id,),
                ) as cur:
                    row = await cur.fetchone()
            except Exception as exc:
                if "no such table" not in str(exc):
                    await self.conn.rollback()
                    raise
                row = None
            try:
                fence.verify(holder_in(_Row(row), fence.thread_id), _WRITING)
                yield  # LangGraph's write, which commits
            except BaseException:
                await self.conn.rollback()
                raise


class _Row:
    """A fetched row posing as a connection (so `holder_in` reads it)."""

    def __init__(self, row: Any) -> None:
        self._row = row

    def execute(self, *_: Any) -> _Row:
        return self

    def fetchone(self) -> Any:
        return self._row


class _FencedPostgres(_FencedWrites):
    """`PostgresSaver`: its `_cursor()` runs in a transaction that reads the lease `FOR SHARE`."""

    lock: Any
    conn: Any
    pipe: Any

    @contextlib.contextmanager
    def _cursor(self, *, pipeline: bool = False) -> Iterator[Any]:
        fence = _active.get()
        if fence is None or self.pipe or not isinstance(fence.store, PostgresLeases):
            if fence is not None:
                fence.check(_WRITING)  # (pipeline mode, leases elsewhere: not atomically)
            with super()._cursor(pipeline=pipeline) as cur:  # type: ignore[misc]
                yield cur
            return
        from langgraph.checkpoint.postgres import _internal
        from psycopg.rows import dict_row

        with self.lock, _internal.get_connection(self.conn) as conn, conn.transaction():
            fence.verify(holder_in(conn, fence.thread_id, postgres=True), _WRITING)
            with conn.cursor(binary=True, row_factory=dict_row) as cur:
                yield cur


class _FencedAsyncPostgres(_FencedWrites):
    """`AsyncPostgresSaver`: as `_FencedPostgres`, with async connections."""

    lock: Any
    conn: Any
    pipe: Any

    @contextlib.asynccontextmanager
    async def _cursor(self, *, pipeline: bool = False) -> AsyncIterator[Any]:
        fence = _active.get()
        if fence is None or self.pipe or not isinstance(fence.store, PostgresLeases):
            if fence is not None:
                await asyncio.to_thread(fence.check, _WRITING)
            async with super()._cursor(pipeline=pipeline) as cur:  # type: ignore[misc]
                yield cur
            return
        from langgraph.checkpoint.postgres import _ainternal
        from psycopg.rows import dict_row

        async with self.lock, _ainternal.get_connection(self.conn) as conn, conn.transaction():
            cur = await conn.execute(
                "SELECT owner, host, pid, heartbeat FROM graphflow_leases WHERE thread_id = %s "
                "FOR SHARE",
                (fence.thread_id,),
            )
            fence.verify(holder_in(_Row(await cur.fetchone()), fence.thread_id), _WRITING)
            async with conn.cursor(binary=True, row_factory=dict_row) as acur:
                yield acur


def _mixin_for(saver_class: type) -> type | None:
    """The fencing mixin for a LangGraph saver class (None: not one graphflow can fence)."""
    names = {c.__module__ + "." + c.__name__ for c in saver_class.__mro__}
    if issubclass(saver_class, InMemorySaver):
        return _FencedMemory
    if "langgraph.checkpoint.sqlite.aio.AsyncSqliteSaver" in names:
        return _FencedAsyncSqlite
    if "langgraph.checkpoint.sqlite.SqliteSaver" in names:
        return _FencedSqlite
    if "langgraph.checkpoint.postgres.aio.AsyncPostgresSaver" in names:
        return _FencedAsyncPostgres
    if "langgraph.checkpoint.postgres.PostgresSaver" in names:
        return _FencedPostgres
    return None


_classes: dict[type, type] = {}
_classes_lock = threading.Lock()


def fenced_class(saver_class: type) -> type:
    """`saver_class` with fenced writes (itself when it is fenced already or unknown)."""
    if issubclass(saver_class, _FencedWrites):
        return saver_class
    mixin = _mixin_for(saver_class)
    if mixin is None:
        return saver_class
    with _classes_lock:
        cls = _classes.get(saver_class)
        if cls is None:
            cls = type(saver_class.__name__, (mixin, saver_class), {})
            cls.__module__ = saver_class.__module__
            cls.__qualname__ = saver_class.__qualname__
            _classes[saver_class] = cls
    return cls


def fenced(saver: Any) -> Any:
    """`saver`, made to check a run's fence on every write (the same object, its class extended).

    Savers of other classes are returned unchanged: their runs are fenced at tool calls only.
    """
    cls = fenced_class(type(saver))
    if cls is not type(saver):
        saver.__class__ = cls
    if issubclass(cls, _FencedAsyncSqlite) and not isinstance(saver.lock, _TaskLock):
        saver.lock = _TaskLock(saver.lock)
    return saver
