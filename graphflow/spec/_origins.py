"""What objects made from a spec came from, so `to_spec` writes the same spec value back.

Keyed by identity and held weakly where the object allows it (functions, tools, models): an
entry leaves when its object is collected, so loading specs again and again does not keep every
object (and every MCP server) alive. Objects that cannot be weakly referenced are held, so their
id cannot be reused while the entry exists.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from typing import Any

__all__ = ("mcp_entry", "origin", "remember", "remember_mcp")

_lock = threading.Lock()
# id(obj) -> (a callable that gives obj back or None, what it came from)
_origins: dict[int, tuple[Callable[[], Any], Any]] = {}
# id(tool) -> (the tool, id of its `{mcp: ...}` entry's toolset, the entry)
_mcp: dict[int, tuple[Callable[[], Any], int, Any]] = {}


def _hold(obj: Any, table: dict[int, Any]) -> Callable[[], Any]:
    key = id(obj)
    try:
        ref: Callable[[], Any] = weakref.ref(obj)
    except TypeError:
        return lambda: obj
    weakref.finalize(obj, _forget, table, key, ref)
    return ref


def _forget(table: dict[int, Any], key: int, ref: Callable[[], Any]) -> None:
    with _lock:
        entry = table.get(key)
        if entry is not None and entry[0] is ref:
            del table[key]


def remember(obj: Any, came_from: Any) -> None:
    """Record that `obj` was made from the spec value `came_from`."""
    with _lock:
        _origins[id(obj)] = (_hold(obj, _origins), came_from)


def origin(obj: Any) -> tuple[bool, Any]:
    """`(True, spec value)` when `obj` was made from a spec value, else `(False, None)`."""
    entry = _origins.get(id(obj))
    if entry is not None and entry[0]() is obj:
        return True, entry[1]
    return False, None


def remember_mcp(tool: Any, toolset: Any, entry: Any) -> None:
    """Record that `tool` is one of the tools of the `{mcp: ...}` item `entry`."""
    with _lock:
        _mcp[id(tool)] = (_hold(tool, _mcp), id(toolset), entry)


def mcp_entry(tool: Any) -> tuple[int, Any] | None:
    """`(toolset id, the {mcp: ...} item)` for a tool that came from one, else None."""
    entry = _mcp.get(id(tool))
    if entry is not None and entry[0]() is tool:
        return entry[1], entry[2]
    return None
