"""`Lru`: a small thread-safe mapping that forgets its least recently used entries.

The runtime's caches (compiled graphs, compiled agents, sub-agent graphs) hold the agents they
were built from, so that identities recorded in a fingerprint are not reused while cached. A
bound keeps that from holding every spec a long-lived process ever compiled.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable, Iterator, MutableMapping
from typing import Generic, TypeVar

__all__ = ("Lru",)

V = TypeVar("V")


class Lru(MutableMapping[Hashable, V], Generic[V]):
    """A mapping of at most `size` entries; reading or writing an entry makes it the newest."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._data: OrderedDict[Hashable, V] = OrderedDict()
        self._lock = threading.Lock()

    def __getitem__(self, key: Hashable) -> V:
        with self._lock:
            value = self._data[key]
            self._data.move_to_end(key)
            return value

    def get(self, key: Hashable, default: V | None = None) -> V | None:  # type: ignore[override]
        """The value of `key` (now the newest entry), or `default`."""
        with self._lock:
            if key not in self._data:
                return default
            self._data.move_to_end(key)
            return self._data[key]

    def __setitem__(self, key: Hashable, value: V) -> None:
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self.size:
                self._data.popitem(last=False)

    def __delitem__(self, key: Hashable) -> None:
        with self._lock:
            del self._data[key]

    def __iter__(self) -> Iterator[Hashable]:
        with self._lock:
            return iter(list(self._data))

    def __len__(self) -> int:
        return len(self._data)
