"""Identifiers for renderers whose syntax allows only `[A-Za-z0-9_]` ids."""

from __future__ import annotations

import re

_UNSAFE = re.compile(r"[^A-Za-z0-9_]")


class SafeIds:
    """Maps drawing ids to distinct safe ids (`n_<id>` for nodes, `c_<id>` for boxes)."""

    def __init__(self) -> None:
        self._ids: dict[tuple[str, str], str] = {}
        self._used: set[str] = set()

    def __call__(self, drawing_id: str, prefix: str = "n") -> str:
        key = (prefix, drawing_id)
        if key not in self._ids:
            base = f"{prefix}_{_UNSAFE.sub('_', drawing_id)}"
            safe, n = base, 1
            while safe in self._used:
                n += 1
                safe = f"{base}_{n}"
            self._used.add(safe)
            self._ids[key] = safe
        return self._ids[key]
