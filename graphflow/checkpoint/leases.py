"""One run per thread at a time: a lease in the checkpoint store, with owner and heartbeat.

Before a run method touches a thread it takes the thread's lease; a second run on a thread that
is running is refused with `ThreadBusyError` — in another thread of this process, or in another
process that shares the store. The owner (`host:pid`) renews its lease every few seconds from a
background thread; a lease whose heartbeat is older than `LEASE_TTL`, or whose owner is a dead
process on this host, has expired, so a crashed run can be resumed (and `runs()` reports it as
`crashed`, not `running`).

Where the lease lives follows the checkpointer: a table `graphflow_leases` in the same SQLite file
or PostgreSQL database (whether the saver was named by URL or passed as an instance), or this
process's memory for in-memory and other savers.

**Fencing.** A holder whose process was paused past `LEASE_TTL` (SIGSTOP, a frozen VM) has lost
its lease: another run may take the thread over. The owner id — new at every acquisition — is
the fencing token: `hold` yields a `Fence`, the run carries it in its config, and every
checkpoint write checks that the lease row still names this owner *in the same transaction as
the write* (`graphflow.checkpoint._fencing`), as every tool call does before it starts. A run
that lost its thread stops with `LeaseLostError` and writes nothing more.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sqlite3
import threading
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from graphflow._internal.passwords import hide_passwords
from graphflow.exceptions import CheckpointStoreError, LeaseLostError, ThreadBusyError

__all__ = (
    "FENCE_KEY",
    "LEASE_TTL",
    "Fence",
    "Lease",
    "LeaseStore",
    "ahold",
    "fence_of",
    "hold",
    "lease_store",
)

LEASE_TTL = 30.0
"""Seconds a lease stays valid without a heartbeat (renewed every third of that)."""
HOST = socket.gethostname()
LOCK_WAIT = 10.0
"""Seconds a lease operation waits for an SQLite file another connection has locked."""


@dataclass(frozen=True, kw_only=True)
class Lease:
    """Who holds a thread."""

    thread_id: str
    owner: str
    """A unique id of the run holding it."""
    host: str
    pid: int
    heartbeat: float
    """Unix time of the last renewal."""

    @property
    def where(self) -> str:
        """`host:pid` of the holder."""
        return f"{self.host}:{self.pid}"

    def alive(self, now: float | None = None) -> bool:
        """Whether the lease still holds: renewed recently, by a process that exists."""
        if (now if now is not None else time.time()) - self.heartbeat > LEASE_TTL:
            return False
        if self.host == HOST and self.pid == os.getpid():
            # ours: held only while its run goes on (a run whose store failed could not
            # release it, and must not lock its own process out of the resume)
            return _running_here(self.owner)
        if self.host == HOST:
            return _pid_alive(self.pid)
        return True


_running: set[str] = set()
"""Owners (one per run) of this process that hold, or are taking, a lease."""
_running_lock = threading.Lock()


def _running_here(owner: str) -> bool:
    with _running_lock:
        return owner in _running


@contextlib.contextmanager
def _run_as(owner: str) -> Iterator[None]:
    with _running_lock:
        _running.add(owner)
    try:
        yield
    finally:
        with _running_lock:
            _running.discard(owner)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class LeaseStore(Protocol):
    """Where leases are kept."""

    def acquire(self, thread_id: str, owner: str) -> Lease | None:
        """Take the lease (None), or return the live lease that holds the thread."""
        ...

    def renew(self, thread_id: str, owner: str) -> None:
        """Refresh the heartbeat of a lease this owner holds."""
        ...

    def release(self, thread_id: str, owner: str) -> None:
        """Give the lease up (only if this owner holds it)."""
        ...

    def holder(self, thread_id: str) -> Lease | None:
        """The lease on the thread, live or not, if any."""
        ...


def _lease_row(thread_id: str, row: Any) -> Lease | None:
    """The lease a `SELECT owner, host, pid, heartbeat` row describes (None for no row)."""
    if row is None:
        return None
    return Lease(thread_id=thread_id, owner=row[0], host=row[1], pid=row[2], heartbeat=row[3])


def _database_error(exc: BaseException) -> bool:
    return isinstance(exc, sqlite3.Error) or type(exc).__module__.startswith("psycopg")


@contextlib.contextmanager
def _failures(store: str, doing: str) -> Iterator[None]:
    """Turn the lease table's database errors into one `CheckpointStoreError` naming the store.

    A lease is taken before anything runs, so the message says nothing ran (no resume hint: a
    new thread has nothing to resume).
    """
    try:
        yield
    except Exception as exc:
        if not _database_error(exc):
            raise
        reason = " ".join(str(exc).split()).rstrip(".") or type(exc).__name__
        fix = (
            f"another connection has held a write lock on the file for over {LOCK_WAIT:g} s (a "
            "long transaction, an sqlite3 shell with BEGIN open); end it and try again"
            if "locked" in reason
            else "check that the store works, then try again"
        )
        raise CheckpointStoreError(
            f"checkpoint store {store}: {doing} failed ({type(exc).__name__}: {reason}); nothing "
            f"ran — {fix}",
            store=store,
        ) from None


class MemoryLeases:
    """Leases in this process (for in-memory and unknown savers)."""

    def __init__(self) -> None:
        self._leases: dict[str, Lease] = {}
        self._lock = threading.Lock()

    @property
    def lock(self) -> threading.Lock:
        """Held by every lease operation: a write made under it cannot race a takeover."""
        return self._lock

    def current(self, thread_id: str) -> Lease | None:
        """The lease on the thread (the caller holds `lock`)."""
        return self._leases.get(thread_id)

    def acquire(self, thread_id: str, owner: str) -> Lease | None:  # noqa: D102
        with self._lock:
            current = self._leases.get(thread_id)
            if current is not None and current.owner != owner and current.alive():
                return current
            self._leases[thread_id] = _new(thread_id, owner)
            return None

    def renew(self, thread_id: str, owner: str) -> None:  # noqa: D102
        with self._lock:
            current = self._leases.get(thread_id)
            if current is not None and current.owner == owner:
                self._leases[thread_id] = _new(thread_id, owner)

    def release(self, thread_id: str, owner: str) -> None:  # noqa: D102
        with self._lock:
            current = self._leases.get(thread_id)
            if current is not None and current.owner == owner:
                del self._leases[thread_id]

    def holder(self, thread_id: str) -> Lease | None:  # noqa: D102
        with self._lock:
            return self._leases.get(thread_id)


_SQLITE_TABLE = (
    "CREATE TABLE IF NOT EXISTS graphflow_leases (thread_id TEXT PRIMARY KEY, owner TEXT NOT NULL, "
    "host TEXT NOT NULL, pid INTEGER NOT NULL, heartbeat REAL NOT NULL)"
)


class _TableLeases:
    """Leases as rows of a `graphflow_leases` table (SQL written with `?` placeholders)."""

    name: str
    _mark = "?"

    def _connect(self, doing: str) -> contextlib.AbstractContextManager[Any]:
        raise NotImplementedError

    def _sql(self, sql: str) -> str:
        return sql.replace("?", self._mark)

    def _select(self, conn: Any, thread_id: str, suffix: str = "") -> Lease | None:
        sql = "SELECT owner, host, pid, heartbeat FROM graphflow_leases WHERE thread_id = ?"
        return _lease_row(thread_id, conn.execute(self._sql(sql) + suffix, (thread_id,)).fetchone())

    def renew(self, thread_id: str, owner: str) -> None:  # noqa: D102
        with self._connect("renewing a lease") as conn:
            conn.execute(
                self._sql(
                    "UPDATE graphflow_leases SET heartbeat = ? WHERE thread_id = ? AND owner = ?"
                ),
                (time.time(), thread_id, owner),
            )

    def release(self, thread_id: str, owner: str) -> None:  # noqa: D102
        with self._connect("releasing a lease") as conn:
            conn.execute(
                self._sql("DELETE FROM graphflow_leases WHERE thread_id = ? AND owner = ?"),
                (thread_id, owner),
            )

    def holder(self, thread_id: str) -> Lease | None:  # noqa: D102
        with self._connect(f"reading the lease of thread {thread_id!r}") as conn:
            return self._select(conn, thread_id)


class SqliteLeases(_TableLeases):
    """Leases in a table of the run's SQLite file.

    Each operation opens its own short connection, so no saver's transaction is disturbed; a
    database error is a `CheckpointStoreError` naming the file.
    """

    def __init__(self, path: str, name: str | None = None) -> None:
        self.path = path
        self.name = name or f"sqlite:///{path}"
        """How errors name the store (the URL the first run gave)."""

    @contextlib.contextmanager
    def _connect(self, doing: str) -> Iterator[sqlite3.Connection]:
        with _failures(self.name, doing):
            conn = sqlite3.connect(self.path, timeout=LOCK_WAIT, isolation_level=None)
            try:
                # every time (a no-op once the table exists): the file may have been deleted
                # and made again since — remembering it once made every later call fail with
                # `no such table` for the rest of the process
                conn.execute(_SQLITE_TABLE)
                yield conn
            finally:
                conn.close()

    # reading, renewing or giving up a lease never makes the file (a read never creates a store:
    # a file deleted under the process holds no lease); only taking one does, as a run's write

    def holder(self, thread_id: str) -> Lease | None:  # noqa: D102
        return super().holder(thread_id) if os.path.exists(self.path) else None

    def renew(self, thread_id: str, owner: str) -> None:  # noqa: D102
        if os.path.exists(self.path):
            super().renew(thread_id, owner)

    def release(self, thread_id: str, owner: str) -> None:  # noqa: D102
        if os.path.exists(self.path):
            super().release(thread_id, owner)

    def acquire(self, thread_id: str, owner: str) -> Lease | None:  # noqa: D102
        with self._connect(f"taking the lease of thread {thread_id!r}") as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                current = self._select(conn, thread_id)
                if current is not None and current.owner != owner and current.alive():
                    conn.execute("ROLLBACK")
                    return current
                lease = _new(thread_id, owner)
                conn.execute(
                    "INSERT OR REPLACE INTO graphflow_leases VALUES (?, ?, ?, ?, ?)",
                    (thread_id, owner, lease.host, lease.pid, lease.heartbeat),
                )
                conn.execute("COMMIT")
                return None
            except BaseException:
                conn.execute("ROLLBACK")
                raise


_PG_TABLE = (
    "CREATE TABLE IF NOT EXISTS graphflow_leases (thread_id TEXT PRIMARY KEY, owner TEXT NOT NULL, "
    "host TEXT NOT NULL, pid INTEGER NOT NULL, heartbeat DOUBLE PRECISION NOT NULL)"
)


class PostgresLeases(_TableLeases):
    """Leases in a table of the run's PostgreSQL database (own connections from its conninfo).

    `url` is a `postgresql://` URL or a libpq conninfo string (from a saver passed as an
    instance); connections wait at most `GRAPHFLOW_PG_CONNECT_TIMEOUT` seconds.
    """

    _mark = "%s"

    def __init__(self, url: str) -> None:
        self.url = url
        self.name = hide_passwords(url)
        self._ready = False

    @contextlib.contextmanager
    def _connect(self, doing: str) -> Iterator[Any]:
        import psycopg

        from graphflow.checkpoint._pg_timeout import pg_timeout

        with (
            _failures(self.name, doing),
            psycopg.connect(self.url, autocommit=True, connect_timeout=int(pg_timeout())) as conn,
        ):
            if not self._ready:
                conn.execute(_PG_TABLE)
                self._ready = True
            yield conn

    def acquire(self, thread_id: str, owner: str) -> Lease | None:  # noqa: D102
        lease = _new(thread_id, owner)
        with self._connect(f"taking the lease of thread {thread_id!r}") as conn, conn.transaction():
            conn.execute(
                "INSERT INTO graphflow_leases VALUES (%s, %s, %s, %s, 0) "
                "ON CONFLICT (thread_id) DO NOTHING",
                (thread_id, owner, lease.host, lease.pid),
            )
            # (a row just inserted has heartbeat 0: expired, so it is ours)
            current = self._select(conn, thread_id, " FOR UPDATE")
            if current is not None and current.owner != owner and current.alive():
                return current
            conn.execute(
                "UPDATE graphflow_leases SET owner = %s, host = %s, pid = %s, heartbeat = %s "
                "WHERE thread_id = %s",
                (owner, lease.host, lease.pid, lease.heartbeat, thread_id),
            )
        return None


_HOLDER_SQL = "SELECT owner, host, pid, heartbeat FROM graphflow_leases WHERE thread_id = ?"


def holder_in(conn: Any, thread_id: str, *, postgres: bool = False) -> Lease | None:
    """The lease on `thread_id` as `conn` (a saver's connection, in its transaction) sees it.

    On PostgreSQL the row is locked `FOR SHARE` until the transaction ends, so a takeover (which
    updates it) waits for the write that checked it. A missing table is no lease.
    """
    sql = _HOLDER_SQL.replace("?", "%s") + " FOR SHARE" if postgres else _HOLDER_SQL
    try:
        row = conn.execute(sql, (thread_id,)).fetchone()
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):
            return None
        raise
    if isinstance(row, dict):  # (PostgreSQL savers' connections return dict rows)
        row = (row["owner"], row["host"], row["pid"], row["heartbeat"])
    return _lease_row(thread_id, row)


FENCE_KEY = "__graphflow_fence"
"""The `configurable` key under which a run carries its `Fence` (LangGraph keeps `__` keys out
of checkpoint metadata)."""


@dataclass(frozen=True, kw_only=True)
class Fence:
    """The lease a run holds: checked before each checkpoint write and each tool call."""

    store: LeaseStore
    thread_id: str
    owner: str
    store_name: str

    def verify(self, current: Lease | None, doing: str) -> None:
        """Raise `LeaseLostError` unless `current` (the thread's lease now) is this run's."""
        if current is not None and current.owner == self.owner:
            return
        me = ":".join(self.owner.split(":")[:2])
        if current is None:
            who = "another run took the thread over and has finished since (its lease is gone)"
            owner = None
        else:
            who = f"another run ({current.where}) has taken the thread over"
            owner = current.where
        raise LeaseLostError(
            f"thread {self.thread_id!r} in {self.store_name}: this run ({me}) lost its lease — "
            f"its heartbeat stopped for over {LEASE_TTL:.0f} s (a paused or frozen process) and "
            f"{who}. It stopped before {doing} and writes nothing more; the thread goes on in "
            "the run that took it over (inspect it with agent.get_state(thread_id))",
            thread_id=self.thread_id,
            owner=owner,
        )

    def check(self, doing: str) -> None:
        """`verify` against the store itself (its own connection): before a tool call starts."""
        if isinstance(self.store, MemoryLeases):
            with self.store.lock:
                self.verify(self.store.current(self.thread_id), doing)
            return
        self.verify(self.store.holder(self.thread_id), doing)


def fence_of(config: Any) -> Fence | None:
    """The `Fence` a run's config carries (under `FENCE_KEY`), if any."""
    fence = ((config or {}).get("configurable") or {}).get(FENCE_KEY)
    return fence if isinstance(fence, Fence) else None


def _new(thread_id: str, owner: str) -> Lease:
    return Lease(
        thread_id=thread_id, owner=owner, host=HOST, pid=os.getpid(), heartbeat=time.time()
    )


_stores: dict[Any, LeaseStore] = {}
_stores_lock = threading.Lock()


def _sqlite_file(saver: Any) -> str | None:
    conn = getattr(saver, "conn", None)
    if not isinstance(conn, sqlite3.Connection):
        return None
    with getattr(saver, "lock", contextlib.nullcontext()):
        rows = conn.execute("PRAGMA database_list").fetchall()
    path = next((r[2] for r in rows if r[1] == "main"), "")
    return path or None  # "" for an in-memory database


_CONNINFO_KEYS = ("host", "hostaddr", "port", "dbname", "user", "password", "sslmode")


def _postgres_conninfo(saver: Any) -> str | None:
    """The conninfo of a PostgreSQL saver passed as an instance (its pool's or connection's).

    Leases then live in its database, so runs in other processes see them.
    """
    conn: Any = getattr(saver, "conn", None)
    module = type(conn).__module__
    if not module.startswith(("psycopg", "psycopg_pool")):
        return None
    from psycopg.conninfo import make_conninfo

    if hasattr(conn, "conninfo") and hasattr(conn, "kwargs"):  # a (sync or async) pool
        extra = {k: v for k, v in (conn.kwargs or {}).items() if k in _CONNINFO_KEYS}
        return make_conninfo(conn.conninfo, **extra)
    info = getattr(conn, "info", None)
    if info is None:
        return None
    # (the dsn a connection reports leaves its password out)
    return make_conninfo(info.dsn, password=info.password) if info.password else info.dsn


def lease_store(spec: Any, saver: Any) -> LeaseStore:
    """The lease store for runs on `saver` (built from `spec`, a URL or the saver itself)."""
    key: Any
    if isinstance(spec, str) and spec.startswith("sqlite:///") and ":memory:" not in spec:
        key = ("sqlite", str(Path(spec[len("sqlite:///") :]).expanduser().resolve()))
    elif isinstance(spec, str) and spec.startswith(("postgresql://", "postgres://")):
        key = ("postgres", spec)
    elif (path := _sqlite_file(saver)) is not None:
        key = ("sqlite", str(Path(path).resolve()))
    elif (conninfo := _postgres_conninfo(saver)) is not None:
        key = ("postgres", conninfo)
    else:
        key = ("memory", id(saver))
    with _stores_lock:
        store = _stores.get(key)
        if store is None:
            if key[0] == "sqlite":
                store = SqliteLeases(key[1], spec if isinstance(spec, str) else None)
            elif key[0] == "postgres":
                store = PostgresLeases(key[1])
            else:
                store = MemoryLeases()
            _stores[key] = store
        return store


class _Heartbeat:
    """One background thread renewing every lease this process holds."""

    def __init__(self) -> None:
        self._held: dict[tuple[int, str, str], LeaseStore] = {}
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def add(self, store: LeaseStore, thread_id: str, owner: str) -> None:
        with self._lock:
            self._held[(id(store), thread_id, owner)] = store
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="graphflow-lease-heartbeat", daemon=True
                )
                self._thread.start()

    def remove(self, store: LeaseStore, thread_id: str, owner: str) -> None:
        with self._lock:
            self._held.pop((id(store), thread_id, owner), None)

    def _run(self) -> None:
        while True:
            time.sleep(LEASE_TTL / 3)
            with self._lock:
                held = list(self._held.items())
            for (_, thread_id, owner), store in held:
                with contextlib.suppress(Exception):  # a store that is down: the lease expires
                    store.renew(thread_id, owner)


_heartbeat = _Heartbeat()


@contextlib.contextmanager
def hold(store: LeaseStore, thread_id: str, *, store_name: str) -> Iterator[Fence]:
    """Hold the thread's lease for the duration of a run; `ThreadBusyError` if another holds it.

    Every run takes its own lease, so two runs on one thread are refused whether they are in
    two processes, two OS threads, or two asyncio tasks of one event loop. Yields the run's
    `Fence` (put it in the run's config under `FENCE_KEY`).
    """
    owner = _owner()
    with _run_as(owner):
        _refuse_if_held(store.acquire(thread_id, owner), thread_id, store_name)
        _heartbeat.add(store, thread_id, owner)
        try:
            yield Fence(store=store, thread_id=thread_id, owner=owner, store_name=store_name)
        finally:
            _heartbeat.remove(store, thread_id, owner)
            with contextlib.suppress(Exception):  # an unreachable store: the lease expires
                store.release(thread_id, owner)


@contextlib.asynccontextmanager
async def ahold(store: LeaseStore, thread_id: str, *, store_name: str) -> AsyncIterator[Fence]:
    """`hold` for async runs (the store is asked from a worker thread: the loop never blocks)."""
    import asyncio  # here: `graphflow runs` reads leases and starts no event loop

    owner = _owner()
    with _run_as(owner):
        current = await asyncio.to_thread(store.acquire, thread_id, owner)
        _refuse_if_held(current, thread_id, store_name)
        _heartbeat.add(store, thread_id, owner)
        try:
            yield Fence(store=store, thread_id=thread_id, owner=owner, store_name=store_name)
        finally:
            _heartbeat.remove(store, thread_id, owner)
            with contextlib.suppress(Exception):
                await asyncio.to_thread(store.release, thread_id, owner)


def _owner() -> str:
    return f"{HOST}:{os.getpid()}:{uuid.uuid4().hex[:12]}"


def _refuse_if_held(current: Lease | None, thread_id: str, store_name: str) -> None:
    if current is None:
        return
    age = max(0.0, time.time() - current.heartbeat)
    raise ThreadBusyError(
        f"thread {thread_id!r} is running in another run (owner {current.where}, last heartbeat "
        f"{age:.0f} s ago, in {store_name}); one run per thread at a time — wait for it to "
        "finish, or use another thread id. If that process died, its lease expires within "
        f"{LEASE_TTL:.0f} s and the run can then be resumed",
        thread_id=thread_id,
        owner=current.where,
    )
