"""An SQLite saver that follows its file: deleted or replaced under a running process, re-opened.

A saver keeps one connection open. When its file is deleted (or moved away and replaced) while
the process runs, that connection goes on reading and writing the unlinked file — runs vanish
into it, and the leases (which open the path afresh) no longer match. Before each use the saver
built from a `sqlite:///` URL compares the file at its path with the one it has open, and opens
the path again (making the file and its tables, as for a first run) when they differ.
"""

from __future__ import annotations

import os
from collections.abc import Callable
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
