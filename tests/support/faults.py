"""Call counters and store readers for tests that feed graphflow a fault and check nothing was lost.

Such a test checks three things: the error's type, that its message names the culprit and the
fix, and that nothing stored was lost (the checkpoints still load; a resume finishes without
repeating completed calls).
"""

from __future__ import annotations

import sqlite3
import threading
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any


class Calls:
    """Counts calls by name across threads (what a resume must not repeat)."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self._lock = threading.Lock()

    def hit(self, name: str) -> None:
        with self._lock:
            self.counts[name] += 1

    def __getitem__(self, name: str) -> int:
        return self.counts[name]

    def step(self, name: str, value: Any = None) -> Callable[[Any], Any]:
        """A FunctionAgent body that counts its calls and returns `value` (default NAME)."""

        def fn(state: Any) -> Any:
            self.hit(name)
            return name.upper() if value is None else value

        fn.__name__ = name
        return fn


def stored_threads(path: Path) -> list[str]:
    """Thread ids with a root checkpoint in the SQLite file at `path` (read without graphflow)."""
    if not path.exists():
        return []
    with sqlite3.connect(path) as conn:
        rows = conn.execute(
            "SELECT DISTINCT thread_id FROM checkpoints WHERE checkpoint_ns = '' ORDER BY 1"
        ).fetchall()
    return [r[0] for r in rows]
