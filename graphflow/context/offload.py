"""Offload stores: where masked tool results (and summaries) are kept, per thread and agent run.

Masking only changes what the model is sent — the checkpointed history keeps every original —
but a `recall_observation` call runs in the tools step, which does not see the history, and a
summary should not be paid for twice. So the policy writes each original it masks (and each
summary it makes) to an offload store:

* `StoreOffload` — a LangGraph `BaseStore`: the one you give, else the run's `store=` (the
  store the graph was compiled with), else an in-memory store owned by the policy. Use a
  persistent store (or a directory) when runs resume in another process.
* `DirectoryOffload` — one JSON file per entry under `<root>/<thread>/<agent run>/` (the seed's
  "move originals to files"), readable with any tool.

Every entry lives under an `OffloadLocation`: the thread id and the agent run (the checkpoint
namespace of the agent's subgraph), both taken from the run's config, never from the model. Keys
are validated (`obs_<n>` or `sum_<hex>`) before any store or file is touched, so a forged id can
neither read another thread's entries nor leave the directory.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
import threading
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from graphflow.exceptions import GraphflowConfigError, OffloadKeyError

__all__ = (
    "DirectoryOffload",
    "OffloadLocation",
    "OffloadStore",
    "StoreOffload",
    "check_key",
    "current_location",
    "resolve_offload",
)

_KEY = re.compile(r"obs_[1-9][0-9]{0,8}|sum_[0-9a-f]{24}")
_NAMESPACE_ROOT = "graphflow_context"


def check_key(key: object) -> str:
    """`key` if it is an observation id (`obs_17`) or a summary id; else `OffloadKeyError`."""
    if not isinstance(key, str) or not _KEY.fullmatch(key):
        raise OffloadKeyError(
            f"{key!r} is not an observation id; expected obs_<number> as shown in a placeholder "
            'such as recall_observation("obs_17")'
        )
    return key


def _digest(text: str, size: int = 32) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:size]


@dataclass(frozen=True, kw_only=True)
class OffloadLocation:
    """Whose entries: one thread, one run of one agent in it."""

    thread_id: str
    """The run's thread id."""
    scope: str
    """The agent run: its subgraph's checkpoint namespace ('' for a top-level agent)."""

    @property
    def labels(self) -> tuple[str, str]:
        """Two fixed-length hex labels (safe as store namespace labels and directory names)."""
        return _digest(self.thread_id), _digest(self.scope, 16)


def current_location() -> OffloadLocation:
    """The location of the agent run executing now (from LangGraph's run config)."""
    try:
        from langgraph.config import get_config

        configurable = get_config().get("configurable") or {}
    except RuntimeError:  # called outside a graph run (e.g. a hook driven by hand)
        configurable = {}
    namespace = str(configurable.get("checkpoint_ns") or "")
    # the last segment is the step running now (model or tools); the rest names the agent run
    scope = namespace.rsplit("|", 1)[0] if "|" in namespace else ""
    return OffloadLocation(thread_id=str(configurable.get("thread_id") or ""), scope=scope)


class OffloadStore(ABC):
    """Keeps JSON-able entries per `OffloadLocation` and key."""

    @abstractmethod
    def put(self, where: OffloadLocation, key: str, value: dict[str, Any]) -> None:
        """Store `value` under `key` (replacing an entry with that key)."""

    @abstractmethod
    def get(self, where: OffloadLocation, key: str) -> dict[str, Any] | None:
        """The entry under `key`, or None. Raises `OffloadKeyError` for a malformed key."""


class StoreOffload(OffloadStore):
    """Entries in a LangGraph `BaseStore`, namespaced `("graphflow_context", thread, run)`."""

    def __init__(self, store: Any = None) -> None:
        """Use `store`; None means the run's store, else an in-memory store of this object."""
        self.store = store
        """The store given, or None to use the run's."""
        self._own: Any = None
        self._lock = threading.Lock()

    def _resolve(self) -> Any:
        if self.store is not None:
            return self.store
        try:
            from langgraph.config import get_store

            run_store = get_store()
        except (RuntimeError, KeyError, AttributeError):
            run_store = None
        if run_store is not None:
            return run_store
        with self._lock:
            if self._own is None:
                from langgraph.store.memory import InMemoryStore

                self._own = InMemoryStore()
            return self._own

    @staticmethod
    def _namespace(where: OffloadLocation) -> tuple[str, ...]:
        return (_NAMESPACE_ROOT, *where.labels)

    def put(self, where: OffloadLocation, key: str, value: dict[str, Any]) -> None:
        """Store `value` (not vector-indexed)."""
        self._resolve().put(self._namespace(where), check_key(key), value, index=False)

    def get(self, where: OffloadLocation, key: str) -> dict[str, Any] | None:
        """The entry, or None."""
        item = self._resolve().get(self._namespace(where), check_key(key))
        return None if item is None else dict(item.value)


class DirectoryOffload(OffloadStore):
    """Entries as JSON files: `<root>/<thread digest>/<run digest>/<key>.json`."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        """Keep entries under `root` (created when first needed).

        Raises:
            GraphflowConfigError: `root`, or a folder above it, is a file, or the nearest
                existing folder cannot be written.
        """
        self.root = Path(root).expanduser().resolve()
        """The directory holding every thread's entries."""
        _check_writable(self.root)

    def _path(self, where: OffloadLocation, key: str) -> Path:
        thread, scope = where.labels
        path = (self.root / thread / scope / f"{check_key(key)}.json").resolve()
        if not path.is_relative_to(self.root):  # cannot happen with a checked key; kept as a guard
            raise OffloadKeyError(f"{key!r} resolves outside {self.root}")
        return path

    def put(self, where: OffloadLocation, key: str, value: dict[str, Any]) -> None:
        """Write the entry atomically (a temporary file, then a rename)."""
        path = self._path(where, key)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(value, handle, ensure_ascii=False)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def get(self, where: OffloadLocation, key: str) -> dict[str, Any] | None:
        """The entry, or None when there is no such file."""
        path = self._path(where, key)
        try:
            with path.open(encoding="utf-8") as handle:
                value = json.load(handle)
        except FileNotFoundError:
            return None
        return value if isinstance(value, dict) else None


def _check_writable(root: Path) -> None:
    """Refuse a directory that could never hold an entry: below a file, or not writable."""
    existing = root
    while not existing.exists() and existing.parent != existing:
        existing = existing.parent
    if not existing.is_dir():
        where = "" if existing == root else " but a file in its path"
        raise GraphflowConfigError(
            f"offload directory {str(root)!r}: {str(existing)!r} is not a directory{where}; "
            "give a directory path (created when first needed) that no file is in the way of"
        )
    if not os.access(existing, os.W_OK | os.X_OK):
        raise GraphflowConfigError(
            f"offload directory {str(root)!r}: {str(existing)!r} is not writable by this process; "
            "give a directory it can create files in"
        )


def resolve_offload(offload: Any, *, owner: str = "context policy") -> OffloadStore:
    """An `OffloadStore` from a policy's `offload=`: a store, a `BaseStore`, a path, or None.

    Raises:
        GraphflowConfigError: anything else, or a directory that cannot be used.
    """
    if isinstance(offload, OffloadStore):
        return offload
    if offload is None:
        return StoreOffload()
    if isinstance(offload, str | os.PathLike):
        try:
            return DirectoryOffload(offload)
        except GraphflowConfigError as exc:
            raise GraphflowConfigError(f"{owner}: {exc}") from None
    from langgraph.store.base import BaseStore

    if isinstance(offload, BaseStore):
        return StoreOffload(offload)
    raise GraphflowConfigError(
        f"{owner}: offload={offload!r}: expected a LangGraph BaseStore, a directory path, an "
        "OffloadStore or None (the run's store, else in memory)"
    )
