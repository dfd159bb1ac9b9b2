"""An SQLite saver that follows its file: deleted or replaced under a running process, re-opened.

A saver keeps one connection open. When its file is deleted (or moved away and replaced) while
the process runs, that connection goes on reading and writing the unlinked file — runs vanish
into it, and the leases (which open the path afresh) no longer match. Before each use the saver
built from a `sqlite:///` URL compares the file at its path with the one it has open: a write
opens the path again (making the file and its tables, as for a first run) when they differ; a
read of a deleted file finds nothing stored and creates no file (reads never make a store).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from langgraph.checkpoint.sqlite import SqliteSaver

__all__ = ("FollowingSqliteSaver",)


def file_identity(path: str) -> tuple[int, int] | None:
    """(device, inode) of the file at `path`, or None when there is none."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


class FollowingSqliteSaver(SqliteSaver):
    """`SqliteSaver` that re-opens its path when the file there is not the one it has open."""

    def follow(self, path: str, reopen: Callable[[], Any]) -> None:
        """Follow the file at `path`; `reopen()` makes a checked connection to it."""
        self._gf_path = path
        self._gf_reopen = reopen
        self._gf_identity = file_identity(path)
        self._gf_empty: sqlite3.Connection | None = None

    def gone(self) -> bool:
        """Whether the followed file has been deleted (a read then finds nothing stored)."""
        path = getattr(self, "_gf_path", None)
        return path is not None and file_identity(path) is None

    def setup(self) -> None:
        """LangGraph's setup, after re-opening a file deleted or replaced since (under the lock)."""
        path = getattr(self, "_gf_path", None)
        if path is not None and self.is_setup and file_identity(path) != self._gf_identity:
            old = self.conn
            self.conn = self._gf_reopen()
            self.is_setup = False
            try:
                old.close()
            except Exception:  # noqa: BLE001 - the unlinked file's connection: nothing to keep
                pass
        super().setup()
        if path is not None:
            self._gf_identity = file_identity(path)

    @contextmanager
    def cursor(self, transaction: bool = True) -> Iterator[sqlite3.Cursor]:
        """LangGraph's cursor; a read (no transaction) of a deleted file reads an empty store.

        The file is not made again for a read (nor is the deleted one read on: its runs are
        gone); the next write makes it.
        """
        if transaction:
            with super().cursor(transaction) as cur:
                yield cur
            return
        with self.lock:  # (LangGraph's read cursor, with the check under the same lock)
            if not self.gone():
                self.setup()
                cur = self.conn.cursor()
            else:
                cur = self._empty().cursor()
            try:
                yield cur
            finally:
                cur.close()

    def _empty(self) -> sqlite3.Connection:
        """An in-memory database with the saver's tables and no rows (made once)."""
        if self._gf_empty is None:
            empty = SqliteSaver(sqlite3.connect(":memory:", check_same_thread=False))
            empty.setup()
            self._gf_empty = empty.conn
        return self._gf_empty
