"""A SQLite store's checkpoint rows, read without LangGraph: what `graphflow runs` reads.

Listing the runs of a store needs, per thread, its newest root checkpoint (channel versions,
`agent_status`, time), the metadata the run recorded and the channels of its pending writes:
plain data in the tables LangGraph's `SqliteSaver` writes. Importing that saver costs LangGraph
and LangChain (most of the time `graphflow runs` took); `SqliteRows` reads the same rows with
`sqlite3` and `ormsgpack` and answers the saver's read calls that `checkpoint.stored` makes
(`get_tuple`, `list`). How a run's status is read from them stays in `stored.py` and `runs.py`.

Nothing stored is constructed: a value the serializer would rebuild by calling a class (a
message, an interrupt, a pydantic model) is a `StoredObject` naming the class and holding its
arguments, so a listing neither imports the classes nor runs code a row names. Loading a run
(`show`, `resume`) goes through the saver and its allowlist as before.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ormsgpack

__all__ = ("CheckpointRow", "SqliteRows", "StoredObject", "open_rows")

_SQLITE = "sqlite:///"
# the serializer's msgpack extension codes (langgraph.checkpoint.serde.jsonplus)
_SINGLE_ARG, _POS_ARGS, _KW_ARGS, _METHOD, _PYDANTIC_V1, _PYDANTIC_V2 = range(6)


class StoredObject:
    """A stored object left unbuilt: its class's `module` and `name`, and its arguments.

    Its keyword arguments read as attributes (an interrupt's `.value`), as on the object.
    """

    __slots__ = ("args", "kwargs", "module", "name")

    def __init__(
        self,
        module: str,
        name: str,
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> None:
        self.module, self.name, self.args, self.kwargs = module, name, args, kwargs or {}

    def __getattr__(self, key: str) -> Any:
        try:
            return self.kwargs[key]
        except KeyError:
            raise AttributeError(key) from None

    def __repr__(self) -> str:
        parts = [repr(a) for a in self.args] + [f"{k}={v!r}" for k, v in self.kwargs.items()]
        return f"{self.name}({', '.join(parts)})"


def _ext(code: int, data: bytes) -> Any:
    tup = ormsgpack.unpackb(data, ext_hook=_ext, option=ormsgpack.OPT_NON_STR_KEYS)
    if code in (_SINGLE_ARG, _METHOD):
        return StoredObject(str(tup[0]), str(tup[1]), (tup[2],))
    if code == _POS_ARGS:
        return StoredObject(str(tup[0]), str(tup[1]), tuple(tup[2]))
    if code in (_KW_ARGS, _PYDANTIC_V1, _PYDANTIC_V2):
        return StoredObject(str(tup[0]), str(tup[1]), kwargs=dict(tup[2]))
    return StoredObject("", f"ext{code}", (tup,))  # numpy arrays, delta snapshots


def decode(kind: str | None, blob: bytes | None) -> Any:
    """A stored value as plain data (see `StoredObject`); raises on a damaged value."""
    if kind == "null" or blob is None:
        return None
    if kind == "msgpack":
        return ormsgpack.unpackb(blob, ext_hook=_ext, option=ormsgpack.OPT_NON_STR_KEYS)
    if kind == "json":
        return json.loads(blob)
    if kind in ("bytes", "bytearray"):
        return bytes(blob)
    raise ValueError(f"a value of type {kind!r} is read only by loading the run")


@dataclass(frozen=True)
class CheckpointRow:
    """One checkpoint, shaped as LangGraph's `CheckpointTuple` for the fields reads use."""

    config: dict[str, Any]
    checkpoint: dict[str, Any]
    metadata: dict[str, Any]
    parent_config: dict[str, Any] | None
    pending_writes: list[tuple[str, str, Any]]


class SqliteRows:
    """The checkpoint rows of one SQLite store file, read-only, with the saver's read calls."""

    def __init__(self, path: str) -> None:
        self.conn = sqlite3.connect(path, check_same_thread=False, timeout=30)
        self.lock = threading.Lock()
        with self.lock:
            columns = {r[1] for r in self.conn.execute("PRAGMA table_info(writes)")}
        self._task_path = "task_path" if "task_path" in columns else "''"
        self.tables = bool(columns)
        """Whether the file has LangGraph's tables (a store nothing has run on has none)."""

    def _writes(self, thread_id: str, ns: str, checkpoint_id: str) -> list[tuple[str, str, Any]]:
        rows = self.conn.execute(
            f"SELECT task_id, channel, type, value, {self._task_path}, idx FROM writes "
            "WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?",
            (thread_id, ns, checkpoint_id),
        ).fetchall()
        rows.sort(key=lambda r: (r[4], r[0], r[5]))
        return [
            (str(task), str(channel), decode(kind, value))
            for task, channel, kind, value, _, _ in rows
        ]

    def _row(self, thread_id: str, ns: str, found: tuple[Any, ...]) -> CheckpointRow:
        checkpoint_id, parent_id, kind, blob, metadata = found
        config = {
            "configurable": {
                "thread_id": thread_id,
                "checkpoint_ns": ns,
                "checkpoint_id": checkpoint_id,
            }
        }
        parent = None
        if parent_id:
            parent = {"configurable": {**config["configurable"], "checkpoint_id": parent_id}}
        return CheckpointRow(
            config=config,
            checkpoint=decode(kind, blob),
            metadata=json.loads(metadata) if metadata is not None else {},
            parent_config=parent,
            pending_writes=self._writes(thread_id, ns, checkpoint_id),
        )

    def get_tuple(self, config: dict[str, Any]) -> CheckpointRow | None:
        """The checkpoint `config` names, or the thread's newest in its namespace."""
        if not self.tables:
            return None
        conf = config["configurable"]
        thread_id, ns = str(conf["thread_id"]), str(conf.get("checkpoint_ns", ""))
        columns = "checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata"
        with self.lock:
            if conf.get("checkpoint_id"):
                found = self.conn.execute(
                    f"SELECT {columns} FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? "
                    "AND checkpoint_id = ?",
                    (thread_id, ns, str(conf["checkpoint_id"])),
                ).fetchone()
            else:
                found = self.conn.execute(
                    f"SELECT {columns} FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? "
                    "ORDER BY checkpoint_id DESC LIMIT 1",
                    (thread_id, ns),
                ).fetchone()
            return None if found is None else self._row(thread_id, ns, found)

    def list(self, config: dict[str, Any], *, limit: int | None = None) -> Iterator[CheckpointRow]:
        """The thread's checkpoints, newest first: in one namespace when `config` names one."""
        if not self.tables:
            return
        conf = config["configurable"]
        thread_id = str(conf["thread_id"])
        where, params = "thread_id = ?", [thread_id]
        if "checkpoint_ns" in conf:
            where += " AND checkpoint_ns = ?"
            params.append(str(conf["checkpoint_ns"]))
        query = (
            "SELECT checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata "
            f"FROM checkpoints WHERE {where} ORDER BY checkpoint_id DESC"
        )
        if limit is not None:
            query += f" LIMIT {int(limit)}"
        with self.lock:
            rows = self.conn.execute(query, params).fetchall()
        for ns, *found in rows:
            with self.lock:
                row = self._row(thread_id, str(ns), tuple(found))
            yield row

    def close(self) -> None:
        """Close the file."""
        self.conn.close()


def open_rows(url: str) -> SqliteRows | None:
    """The rows of the SQLite file a `sqlite:///` URL names, if it exists; else None."""
    if not url.startswith(_SQLITE) or ":memory:" in url:
        return None
    path = Path(url[len(_SQLITE) :]).expanduser()
    if not path.is_file():
        return None
    return SqliteRows(str(path))
